/* The seccomp layer (seccomp.h). */
#define _GNU_SOURCE
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "bpf.h"
#include "fds.h"
#include "metaguard.h"
#include "netguard.h"
#include "reaper.h"
#include "view.h"

/* ---- syscalls newer than the headers ---- */
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif
#ifndef __NR_memfd_secret
#define __NR_memfd_secret 447
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

/* The filter is written for x86_64 (syscall numbers, the x32 bit). Another architecture needs its
 * own AUDIT_ARCH and deny list; refuse to build rather than ship a filter that does not fit. */
#if !defined(__x86_64__)
#error "rune-sandbox: the seccomp filter supports x86_64 only so far"
#endif
#define ARCH_NR AUDIT_ARCH_X86_64
#define NS_FLAGS                                                                                        \
  (CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | \
   0x00000080 /* CLONE_NEWTIME */)

static const int denied[] = {
    __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev, __NR_mount, __NR_umount2, __NR_pivot_root,
    __NR_open_tree, __NR_open_tree_attr, __NR_move_mount, __NR_fsopen, __NR_fsmount, __NR_fsconfig,
    __NR_fspick, __NR_mount_setattr, __NR_kexec_load, __NR_kexec_file_load, __NR_bpf, __NR_perf_event_open,
    __NR_userfaultfd, __NR_keyctl, __NR_add_key, __NR_request_key, __NR_init_module, __NR_finit_module,
    __NR_delete_module, __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register, __NR_unshare,
    __NR_setns, __NR_iopl, __NR_ioperm, __NR_chroot, __NR_acct, __NR_swapon, __NR_swapoff, __NR_reboot,
    __NR_syslog, __NR_open_by_handle_at, __NR_name_to_handle_at, __NR_pidfd_getfd, __NR_quotactl,
    __NR_vhangup, __NR_settimeofday, __NR_clock_settime, __NR_clock_adjtime, __NR_adjtimex, __NR_lookup_dcookie,
    __NR_memfd_secret,
};

/* Room for the longest filter build_filter makes (all of the view's fallback rules included). */
#define MAX_FILTER 1024

/* clone without namespace flags, ioctl without terminal injection, personality queries only, and
 * socket() for unix, inet and inet6 without raw or packet sockets. */
static int argument_rules(struct sock_filter *f, int n) {
  /* clone3 hides its flags in memory BPF cannot read: make libc fall back to clone. */
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1);
  f[n++] = ERRNO(ENOSYS);

  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4);
  f[n++] = LOAD_ARG(0);
  f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, NS_FLAGS, 0, 1);
  f[n++] = ERRNO(EPERM);
  f[n++] = RET(SECCOMP_RET_ALLOW);

  /* ioctl request numbers are compared on their low 32 bits (the kernel truncates them too). */
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 5);
  f[n++] = LOAD_ARG(1);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0);
  f[n++] = RET(SECCOMP_RET_ALLOW);
  f[n++] = ERRNO(EPERM);

  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 0, 4);
  f[n++] = LOAD_ARG(0);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffU /* query only */, 1, 0);
  f[n++] = ERRNO(EPERM);
  f[n++] = RET(SECCOMP_RET_ALLOW);

  /* socket(): unix, inet and inet6 only, and never raw or packet sockets. */
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 10);
  f[n++] = LOAD_ARG(0);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 3, 0);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0);
  f[n++] = ERRNO(EAFNOSUPPORT);
  f[n++] = LOAD_ARG(1);
  f[n++] = STMT(BPF_ALU | BPF_AND | BPF_K, 0xf);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_RAW, 1, 0);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_PACKET, 0, 1);
  f[n++] = ERRNO(EPERM);
  f[n++] = RET(SECCOMP_RET_ALLOW);
  return n;
}

static int build_filter(struct reporter *r, struct sock_filter *f, unsigned lost, pid_t rune_pid, int meta) {
  int n = 0;
  f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_NR, 1, 0);
  f[n++] = RET(SECCOMP_RET_KILL_PROCESS); /* i386 or any foreign architecture */
  f[n++] = LOAD_NR;
  f[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U /* __X32_SYSCALL_BIT */, 0, 1);
  f[n++] = RET(SECCOMP_RET_KILL_PROCESS);
  for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
    f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)denied[i], 0, 1);
    f[n++] = ERRNO(EPERM);
  }
  /* The view's rules (view.c): no setuid files ever, and what a missing namespace leaves open. */
  n = view_filter_rules(f, n, lost);
  /* No PID namespace hides the helper and rune, which end the call's processes: out of its reach. */
  if (lost & LOST_PID) n = reaper_filter(f, n, getppid(), rune_pid);
  /* Without a view, chmod and chown go to the metadata guard (metaguard.c), after the rules above
   * have refused setuid and setgid modes. */
  if (meta) n = metaguard_filter(f, n);
  n = argument_rules(f, n);
  if (n > MAX_FILTER) die(r, "the seccomp filter outgrew its buffer");
  return n;
}

struct seccomp_result seccomp_apply(struct reporter *r, unsigned lost, pid_t rune_pid, int meta) {
  static struct sock_filter filter[MAX_FILTER];
  int n = build_filter(r, filter, lost, rune_pid, meta);
  struct sock_fprog prog = {.len = (unsigned short)n, .filter = filter};
  unsigned flags = meta ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
  long rc = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (rc < 0 && meta) {
    /* No user notification here: keep the deny list. */
    report(r, LAYER_SECCOMP, STATE_SKIPPED, "chmod/chown supervision: seccomp user notification failed (%s)",
           strerror(errno));
    meta = 0;
    n = build_filter(r, filter, lost, rune_pid, 0);
    prog.len = (unsigned short)n;
    rc = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
  }
  if (rc < 0) {
    skip(r, LAYER_SECCOMP, "seccomp filter%s", "", errno);
    return (struct seccomp_result){.applied = 0, .listener = -1};
  }
  report(r, LAYER_SECCOMP, STATE_APPLIED,
         "x86_64 only, %d denied calls, clone3 ENOSYS, namespace clone flags, "
         "TIOCSTI/TIOCLINUX, socket families unix/inet/inet6 without raw, no UNIX datagram sockets, no_new_privs",
         (int)(sizeof denied / sizeof denied[0]));
  if (meta) report(r, LAYER_SECCOMP, STATE_APPLIED, "chmod and chown supervised: only inside writable grants, by the owner");
  return (struct seccomp_result){.applied = 1, .listener = meta ? (int)rc : -1};
}

/* What keeps the host's pathname UNIX sockets in granted folders out, said on the network layer.
 * The view comes with a PID namespace (one clone makes both), so the connector can tell a listener
 * inside from one outside. */
static void report_unix_sockets(struct reporter *r, int guarded) {
  if (!guarded)
    report(r, LAYER_NETWORK, STATE_APPLIED,
           "pathname UNIX sockets: no new UNIX socket (seccomp; socketpair still works): "
           "no seccomp user notification to check a connect()");
  else
    report(r, LAYER_NETWORK, STATE_APPLIED,
           "pathname UNIX sockets in granted folders: connect() made by the net guard's "
           "connector, kept only when SO_PEERCRED names a listener inside the sandbox's PID namespace (EACCES "
           "otherwise); UNIX datagram sockets refused (seccomp)");
}

/* The filter sits on top of the deny list, so the init above it, the guard's connector, stays
 * unsupervised (its connects must not come back to the guard). Without seccomp user notification:
 * no new UNIX socket (pathname connects could not be checked) and no allowed domain. */
void seccomp_supervise_connects(struct reporter *r, int guard_sock, int channel, int mode, int view_built) {
  struct sock_filter f[32];
  int n = 0;
  f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_NR, 1, 0);
  f[n++] = RET(SECCOMP_RET_ALLOW); /* the deny list below kills foreign architectures */
  f[n++] = LOAD_NR;
  n += netguard_filter(f + n, mode == NOTIFY_CONNECT);
  f[n++] = RET(SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
  int listener = (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (listener >= 0) {
    /* With the sandbox's network namespace: the guard tells the command's own sockets by it, and
     * may not open the (undumpable) init's /proc/PID/ns/net itself unless it runs as root. */
    int netns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int fds[3] = {listener, channel, netns};
    if (send_fds(guard_sock, fds, netns >= 0 ? 3 : 2) != 0) die(r, "handing the listener to the net guard");
    close(listener);
    if (netns >= 0) close(netns);
    report(r, LAYER_SECCOMP, STATE_APPLIED,
           mode == NOTIFY_NET ? "connect/shutdown/Fast Open supervised by the net guard"
                              : "connect supervised by the net guard");
  } else {
    int err = errno;
    if (mode == NOTIFY_NET)
      report(r, LAYER_NETWORK, STATE_SKIPPED, "allowed domains unreachable: seccomp user notification failed (%s)",
             strerror(err));
    n = 0;
    f[n++] = LOAD_NR;
    f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3);
    f[n++] = LOAD_ARG(0);
    f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1);
    f[n++] = ERRNO(EACCES);
    f[n++] = RET(SECCOMP_RET_ALLOW);
    prog.len = (unsigned short)n;
    if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) die(r, "refusing UNIX sockets");
  }
  if (view_built) report_unix_sockets(r, listener >= 0);
  close(channel);
  close(guard_sock);
}
