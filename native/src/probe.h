/* What this kernel offers rune's sandbox, measured with real system calls. The record is declared
 * once, below: the struct, the addon's object (addon.c) and the helper's --probe JSON are expanded
 * from it, and src/sandbox/native-contract.ts (KernelProbe) is generated from it by
 * src/sandbox/native-contract.test.ts, which fails while they disagree. */
#ifndef RUNE_PROBE_H
#define RUNE_PROBE_H

/* X(c_name, "jsName", "meaning"): one int each, one entry per line (the generator reads them). */
#define RUNE_PROBE_FIELDS(X)                                                                              \
  X(landlock_abi, "landlockAbi", "> 0: the Landlock ABI version; otherwise -errno")                        \
  X(seccomp_filter, "seccompFilter", "0 when SECCOMP_SET_MODE_FILTER is usable; otherwise -errno")         \
  X(seccomp_user_notif, "seccompUserNotif", "0 when SECCOMP_GET_NOTIF_SIZES answers; otherwise -errno")    \
  X(current_seccomp, "currentSeccomp", "PR_GET_SECCOMP: 0 none, 2 a filter is applied already")          \
  X(no_new_privs, "noNewPrivs", "PR_GET_NO_NEW_PRIVS")                                                     \
  X(userns, "userns", "0 when a child could unshare(CLONE_NEWUSER); otherwise -errno")                     \
  X(netns, "netns", "the same for CLONE_NEWNET inside that user namespace")                                \
  X(mountns, "mountns", "the same for CLONE_NEWNS")                                                        \
  X(pidns, "pidns", "the same for CLONE_NEWPID")                                                           \
  X(unshare_noop, "unshareNoop", "unshare(0), always granted by the kernel: -EPERM means a seccomp filter refuses unshare itself (a container runtime's default profile)")

struct rune_probe {
#define X(c_name, js_name, meaning) int c_name;
  RUNE_PROBE_FIELDS(X)
#undef X
};

void rune_probe_kernel(struct rune_probe *out);

#endif
