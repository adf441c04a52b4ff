// Generated from native/src/helper_contract.h and native/src/probe.h by
// src/sandbox/native-contract.test.ts, which fails while they disagree: edit the headers, then run
// `npx vitest run src/sandbox/native-contract.test.ts --update`. Not edited by hand.

/** The sandbox helper's flags (native/src/args.c) and how many argv words follow each. */
export const HELPER_FLAGS = {
  /** FD: fd the layer reports are written to (close-on-exec: EOF means exec'd) */
  '--report': 1,
  /** DIR: the command's working directory */
  '--cwd': 1,
  /** DIR: a system folder of the view, read-only (a symlink stays one) */
  '--sys': 1,
  /** PATH: a read-only grant (a real path) */
  '--ro': 1,
  /** PATH: a writable grant (a real path) */
  '--rw': 1,
  /** PATH TARGET: a grant named through a symlink: PATH points at TARGET */
  '--link': 2,
  /** DIR: the command's TMPDIR, made empty in the private /tmp */
  '--tmpdir': 1,
  /** DIR: bound onto itself so it cannot be renamed or removed */
  '--pin': 1,
  /** PATH: read-only inside a writable grant */
  '--protect': 1,
  /** PATH: replaced by an empty file or folder */
  '--hide': 1,
  /** DIR: every entry of DIR others may not read is hidden */
  '--hide-closed': 1,
  /** 'NAME IP': a line of the view's /etc/hosts */
  '--host': 1,
  /** IP[:PORT]|[IP6]:PORT: what the net guard lets TCP reach */
  '--allow-addr': 1,
  /** N: size of the private /tmp in MiB */
  '--tmp-mb': 1,
  /** B: RLIMIT_FSIZE in bytes */
  '--fsize': 1,
  /** N: RLIMIT_NOFILE */
  '--nofile': 1,
  /** N: RLIMIT_NPROC */
  '--nproc': 1,
  /** B: RLIMIT_DATA in bytes */
  '--data': 1,
  /** DIR: a cgroup the call joins (one per hierarchy) */
  '--cgroup': 1,
  /** a layer that cannot be applied stops the call */
  '--strict': 0,
  /** no Landlock for this call */
  '--no-landlock': 0,
  /** no seccomp filter for this call */
  '--no-seccomp': 0,
  /** no namespaces and no view for this call */
  '--no-namespaces': 0,
  /** keep the host's network namespace */
  '--share-net': 0,
  /** DIR: print the entries of DIR others may not read (JSON), then exit */
  '--closed': 1,
  /** print the kernel probe (JSON), then exit */
  '--probe': 0,
} as const;

/** The sandbox layers a report speaks of, in the order rune shows them. */
export const LAYER_ORDER = [
  'cgroups',
  'network',
  'dns',
  'seccomp',
  'landlock',
  'namespaces',
  'rlimits',
] as const;

/** Report lines about the helper itself rather than a layer: they only ever say "failed". */
export const REPORT_STEPS = ['setup', 'exec'] as const;

/** A report line's second field. */
export const REPORT_STATES = ['applied', 'skipped', 'failed'] as const;

/** What native/src/probe.c measures: values > 0 or 0 mean available, negative values are -errno. */
export interface KernelProbe {
  /** > 0: the Landlock ABI version; otherwise -errno */
  landlockAbi: number;
  /** 0 when SECCOMP_SET_MODE_FILTER is usable; otherwise -errno */
  seccompFilter: number;
  /** 0 when SECCOMP_GET_NOTIF_SIZES answers; otherwise -errno */
  seccompUserNotif: number;
  /** PR_GET_SECCOMP: 0 none, 2 a filter is applied already */
  currentSeccomp: number;
  /** PR_GET_NO_NEW_PRIVS */
  noNewPrivs: number;
  /** 0 when a child could unshare(CLONE_NEWUSER); otherwise -errno */
  userns: number;
  /** the same for CLONE_NEWNET inside that user namespace */
  netns: number;
  /** the same for CLONE_NEWNS */
  mountns: number;
  /** the same for CLONE_NEWPID */
  pidns: number;
  /** unshare(0), always granted by the kernel: -EPERM means a seccomp filter refuses unshare itself (a container runtime's default profile) */
  unshareNoop: number;
}

/** Every field of KernelProbe, in the order of the record. */
export const PROBE_FIELDS = [
  'landlockAbi',
  'seccompFilter',
  'seccompUserNotif',
  'currentSeccomp',
  'noNewPrivs',
  'userns',
  'netns',
  'mountns',
  'pidns',
  'unshareNoop',
] as const satisfies readonly (keyof KernelProbe)[];
