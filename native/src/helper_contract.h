/* The sandbox helper's contract with rune, declared once: the flags rune writes (src/sandbox/plan.ts)
 * and args.c reads, and the words of the report rune parses (src/sandbox/layers.ts). The TypeScript
 * side, src/sandbox/native-contract.ts, is generated from these tables by
 * src/sandbox/native-contract.test.ts, which fails while the two disagree (regenerate it with
 * `npx vitest run src/sandbox/native-contract.test.ts --update`).
 *
 * Each table is an X-macro: a file defines X, expands the table, undefines X. The TypeScript
 * generator reads the X(...) lines themselves, so keep one entry per line, strings in double quotes. */
#ifndef RUNE_HELPER_CONTRACT_H
#define RUNE_HELPER_CONTRACT_H

#define MAX_PATHS 256
#define MAX_PROTECT 4096 /* every git folder under the writable roots adds a few (src/sandbox/git.ts) */
#define MAX_ADDRS 256
#define MAX_FOLDERS 8

/* X(ID, "--flag", values, max, keep, "VALUE", "what it says")
 *   values: how many argv words follow the flag (0: a switch);
 *   max:    how often it may be given: 1 keeps the last one; more make a list;
 *   keep:   1 when a list longer than max is refused (leaving an entry out would loosen the
 *           sandbox or drop a limit), 0 when the surplus is left out (fewer grants, fewer names). */
#define RUNE_HELPER_FLAGS(X)                                                                                        \
  X(REPORT, "--report", 1, 1, 0, "FD", "fd the layer reports are written to (close-on-exec: EOF means exec'd)")     \
  X(CWD, "--cwd", 1, 1, 0, "DIR", "the command's working directory")                                              \
  X(SYS, "--sys", 1, MAX_PATHS, 0, "DIR", "a system folder of the view, read-only (a symlink stays one)")          \
  X(RO, "--ro", 1, MAX_PATHS, 0, "PATH", "a read-only grant (a real path)")                                        \
  X(RW, "--rw", 1, MAX_PATHS, 0, "PATH", "a writable grant (a real path)")                                         \
  X(LINK, "--link", 2, MAX_PATHS, 0, "PATH TARGET", "a grant named through a symlink: PATH points at TARGET")     \
  X(TMPDIR, "--tmpdir", 1, 1, 0, "DIR", "the command's TMPDIR, made empty in the private /tmp")                    \
  X(PIN, "--pin", 1, MAX_PROTECT, 1, "DIR", "bound onto itself so it cannot be renamed or removed")               \
  X(PROTECT, "--protect", 1, MAX_PROTECT, 1, "PATH", "read-only inside a writable grant")                          \
  X(HIDE, "--hide", 1, MAX_PATHS, 1, "PATH", "replaced by an empty file or folder")                               \
  X(HIDE_CLOSED, "--hide-closed", 1, MAX_FOLDERS, 1, "DIR", "every entry of DIR others may not read is hidden")    \
  X(HOST, "--host", 1, MAX_PATHS, 0, "'NAME IP'", "a line of the view's /etc/hosts")                              \
  X(ALLOW_ADDR, "--allow-addr", 1, MAX_ADDRS, 1, "IP[:PORT]|[IP6]:PORT", "what the net guard lets TCP reach")     \
  X(TMP_MB, "--tmp-mb", 1, 1, 0, "N", "size of the private /tmp in MiB")                                           \
  X(FSIZE, "--fsize", 1, 1, 0, "B", "RLIMIT_FSIZE in bytes")                                                        \
  X(NOFILE, "--nofile", 1, 1, 0, "N", "RLIMIT_NOFILE")                                                              \
  X(NPROC, "--nproc", 1, 1, 0, "N", "RLIMIT_NPROC")                                                                 \
  X(DATA, "--data", 1, 1, 0, "B", "RLIMIT_DATA in bytes")                                                           \
  X(CGROUP, "--cgroup", 1, MAX_FOLDERS, 1, "DIR", "a cgroup the call joins (one per hierarchy)")                   \
  X(STRICT, "--strict", 0, 1, 0, "", "a layer that cannot be applied stops the call")                              \
  X(NO_LANDLOCK, "--no-landlock", 0, 1, 0, "", "no Landlock for this call")                                        \
  X(NO_SECCOMP, "--no-seccomp", 0, 1, 0, "", "no seccomp filter for this call")                                    \
  X(NO_NAMESPACES, "--no-namespaces", 0, 1, 0, "", "no namespaces and no view for this call")                      \
  X(SHARE_NET, "--share-net", 0, 1, 0, "", "keep the host's network namespace")                                    \
  X(CLOSED, "--closed", 1, MAX_FOLDERS, 1, "DIR", "print the entries of DIR others may not read (JSON), then exit") \
  X(PROBE, "--probe", 0, 1, 0, "", "print the kernel probe (JSON), then exit")

/* X(ID, "name", layer): what a report line is about. layer 1: a sandbox layer, in the order rune
 * shows them; 0: the helper's own set-up and the command's exec, which only ever fail. */
#define RUNE_REPORT_SUBJECTS(X) \
  X(CGROUPS, "cgroups", 1)      \
  X(NETWORK, "network", 1)      \
  X(DNS, "dns", 1)              \
  X(SECCOMP, "seccomp", 1)      \
  X(LANDLOCK, "landlock", 1)    \
  X(NAMESPACES, "namespaces", 1) \
  X(RLIMITS, "rlimits", 1)      \
  X(SETUP, "setup", 0)          \
  X(EXEC, "exec", 0)

/* X(ID, "word"): a report line's second field. */
#define RUNE_REPORT_STATES(X) \
  X(APPLIED, "applied")       \
  X(SKIPPED, "skipped")       \
  X(FAILED, "failed")

enum helper_flag {
#define X(id, ...) FLAG_##id,
  RUNE_HELPER_FLAGS(X)
#undef X
      FLAG_COUNT
};

enum report_subject {
#define X(id, ...) LAYER_##id,
  RUNE_REPORT_SUBJECTS(X)
#undef X
      LAYER_COUNT
};

enum report_state {
#define X(id, ...) STATE_##id,
  RUNE_REPORT_STATES(X)
#undef X
      STATE_COUNT
};

#endif
