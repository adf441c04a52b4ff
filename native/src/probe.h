/* What this kernel offers rune's sandbox, measured with real system calls. */
#ifndef RUNE_PROBE_H
#define RUNE_PROBE_H

struct rune_probe {
  int landlock_abi;        /* > 0: ABI version; otherwise -errno */
  int seccomp_filter;      /* 0 when SECCOMP_SET_MODE_FILTER is usable; otherwise -errno */
  int seccomp_user_notif;  /* 0 when SECCOMP_GET_NOTIF_SIZES answers; otherwise -errno */
  int current_seccomp;     /* PR_GET_SECCOMP: 0 none, 2 filter already applied */
  int no_new_privs;        /* PR_GET_NO_NEW_PRIVS */
  int userns;              /* 0 when a child could unshare(CLONE_NEWUSER); otherwise -errno */
  int netns;               /* the same for CLONE_NEWNET inside that user namespace */
  int mountns;             /* CLONE_NEWNS */
  int pidns;               /* CLONE_NEWPID */
  int unshare_noop;        /* unshare(0), which the kernel always grants: -EPERM means a seccomp filter
                              refuses unshare itself (a container runtime's default profile) */
};

void rune_probe_kernel(struct rune_probe *out);

#endif
