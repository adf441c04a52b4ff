/* rune-sandbox: applies every sandbox layer in one step and execve's the command. A static,
 * single-threaded C program, because a Node start costs ~65 ms and unshare(CLONE_NEWUSER) fails
 * inside Node's threads. rune embeds it as a SEA asset and runs it for every tool process.
 *
 *   rune-sandbox [options] -- PROGRAM ARGS...
 *
 * The parent stays in the host namespaces: it waits for the sandboxed child, and with --allow-addr
 * it is also the net guard (seccomp user notification + SECCOMP_IOCTL_NOTIF_ADDFD, see
 * docs/adr). The child is created with clone(NEWUSER|NEWNET|NEWNS|NEWPID), so it is PID 1 of its
 * namespace: when it exits, the kernel kills everything it left behind. Without namespaces (a
 * container runtime's seccomp profile) the parent is the call's child subreaper and does that
 * itself (reaper.c), and seccomp keeps every process in the call's process group.
 *
 * Layer reports go to --report FD as lines "layer<TAB>applied|skipped|failed<TAB>detail"; the fd is
 * close-on-exec, so its EOF tells rune the command was exec'd (or "exec<TAB>failed<TAB>why"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <termios.h>
#include <unistd.h>

#include "bpf.h"
#include "metaguard.h"
#include "netguard.h"
#include "probe.h"
#include "reaper.h"
#include "view.h"

/* ---- Landlock UAPI, defined here: Debian's header is older than the kernel ---- */
#define LL_CREATE_RULESET 444
#define LL_ADD_RULE 445
#define LL_RESTRICT_SELF 446
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

/* ---- syscalls newer than the headers ---- */
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif
#ifndef __NR_memfd_secret
#define __NR_memfd_secret 447
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

#define MAX_PATHS 256
#define MAX_PROTECT 4096 /* every git folder under the writable roots adds a few (src/sandbox/git.ts) */
#define MAX_ADDRS 256

static struct {
  const char *sys[MAX_PATHS]; /* system folders of the view: read-only, symlinks kept */
  int n_sys;
  const char *ro[MAX_PATHS];
  int n_ro;
  const char *rw[MAX_PATHS];
  int n_rw;
  const char *protect[MAX_PROTECT];
  int n_protect;
  const char *pin[MAX_PROTECT]; /* bound onto themselves so they cannot be renamed or removed */
  int n_pin;
  const char *hide[MAX_PATHS]; /* replaced by an empty file or folder */
  const char *closed_in[8];    /* --hide-closed: folders whose entries closed to others are hidden too */
  int n_closed_in;
  int n_hide;
  const char *tmpdir; /* the command's TMPDIR when it lies under /tmp */
  const char *link_path[MAX_PATHS]; /* grants named through a symlink: that name, then the real path */
  const char *link_target[MAX_PATHS];
  int n_link;
  const char *hosts[MAX_PATHS]; /* "name ip" lines for /etc/hosts */
  int n_hosts;
  struct ng_allow allow[MAX_ADDRS]; /* the net guard's (address, port) pairs */
  int n_allow;
  int landlock, seccomp, namespaces, net_isolate, strict;
  long tmp_mb;
  long long fsize, data;
  long nofile, nproc;
  const char *cwd;
  const char *cgroup[8]; /* one per hierarchy (cgroup v2, or each v1 controller) */
  int n_cgroup;
  int report_fd;
  char **argv;
} opt = {.landlock = 1, .seccomp = 1, .namespaces = 1, .net_isolate = 1, .report_fd = -1, .fsize = -1, .data = -1,
         .nofile = -1, .nproc = -1};

static int layer_failed; /* set when a layer the caller required could not be applied */
static pid_t rune_pid;   /* the helper's parent: rune, which started the call */
static int seccomp_applied;   /* the filter is in force */
static int landlock_tcp_denied; /* Landlock (ABI 4+) denies TCP bind and connect */

void report(const char *layer, const char *state, const char *fmt, ...) {
  if (opt.report_fd < 0) return;
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "%s\t%s\t", layer, state);
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof buf - 1) n = (int)sizeof buf - 2;
  buf[n++] = '\n';
  ssize_t w = write(opt.report_fd, buf, (size_t)n);
  (void)w;
}

/* A layer that could not be applied: reported; in strict mode the command is not started. */
void skip(const char *layer, const char *fmt, const char *arg, int err) {
  char why[512];
  snprintf(why, sizeof why, fmt, arg);
  report(layer, opt.strict ? "failed" : "skipped", "%s%s%s", why, err ? ": " : "", err ? strerror(err) : "");
  if (opt.strict) layer_failed = 1;
}

void die(const char *what) {
  report("setup", "failed", "%s: %s", what, strerror(errno));
  fprintf(stderr, "rune-sandbox: %s: %s\n", what, strerror(errno));
  _exit(125);
}

static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  int saved = errno;
  close(fd);
  errno = saved;
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* ---------------------------------------------------------------- mount namespace */

/* The view (view.c) from the options, with the generated /etc/hosts when names are allowed. Landlock
 * and seccomp read it too, with or without namespaces. */
static void set_view_spec(void) {
  view.sys = opt.sys;
  view.n_sys = opt.n_sys;
  view.ro = opt.ro;
  view.n_ro = opt.n_ro;
  view.rw = opt.rw;
  view.n_rw = opt.n_rw;
  view.protect = opt.protect;
  view.n_protect = opt.n_protect;
  view.pin = opt.pin;
  view.n_pin = opt.n_pin;
  view.hide = opt.hide;
  view.n_hide = opt.n_hide;
  view.link_path = opt.link_path;
  view.link_target = opt.link_target;
  view.n_link = opt.n_link;
  view.tmp_mb = opt.tmp_mb;
  view.tmpdir = opt.tmpdir;
  static char hosts[65536];
  if (opt.n_allow > 0 || opt.n_hosts > 0) {
    size_t used = (size_t)snprintf(hosts, sizeof hosts, "127.0.0.1 localhost\n::1 localhost\n");
    for (int i = 0; i < opt.n_hosts && used < sizeof hosts; i++)
      used += (size_t)snprintf(hosts + used, sizeof hosts - used, "%s\n", opt.hosts[i]);
    view.hosts_text = hosts;
    /* No resolver is reachable from the namespace: names not in the hosts file do not resolve. */
    view.resolv_text = "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n";
  }
}

static void build_view(struct view_result *result, const char *namespaces) {
  if (view_build(result) != 0) {
    skip("namespaces", "%s", result->why, 0);
    return;
  }
  view_report(namespaces, result);
  if (view.hosts_text) {
    if (result->dns_bound)
      report("dns", "applied", "/etc/hosts holds %d allowed name(s); no resolver reachable", opt.n_hosts);
    else
      skip("dns", "binding the generated /etc/hosts%s", "", errno);
  }
}

static void loopback_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) { /* a down loopback only costs localhost inside */
    }
  }
  close(s);
}

/* ---------------------------------------------------------------- Landlock */

static uint64_t landlock_fs_rights(int abi) {
  uint64_t r = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
  if (abi >= 2) r |= LL_FS_REFER;
  if (abi >= 3) r |= LL_FS_TRUNCATE;
  if (abi >= 5) r |= LL_FS_IOCTL_DEV;
  return r;
}

static void apply_landlock(int view_built) {
  int abi = (int)syscall(LL_CREATE_RULESET, NULL, 0, 1U /* VERSION */);
  if (abi <= 0) {
    skip("landlock", "Landlock is not available%s", "", errno);
    return;
  }
  struct ll_ruleset_attr attr = {0};
  attr.handled_access_fs = landlock_fs_rights(abi);
  size_t size = 8;
  if (abi >= 4) {
    /* No TCP port is allowed: permitted connections arrive already connected from the net guard. */
    attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
    size = 16;
  }
  if (abi >= 6) {
    attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
    size = 24;
  }
  int ruleset = (int)syscall(LL_CREATE_RULESET, &attr, size, 0);
  if (ruleset < 0) {
    skip("landlock", "landlock_create_ruleset%s", "", errno);
    return;
  }
  int n_ro = 0, n_rw = 0, n_split = 0;
  if (view_landlock_rules(ruleset, attr.handled_access_fs, view_built, &n_ro, &n_rw, &n_split) != 0) {
    skip("landlock", "adding the rules%s", "", errno);
    close(ruleset);
    return;
  }
  if (syscall(LL_RESTRICT_SELF, ruleset, 0) != 0) {
    skip("landlock", "landlock_restrict_self%s", "", errno);
    close(ruleset);
    return;
  }
  close(ruleset);
  landlock_tcp_denied = abi >= 4;
  report("landlock", "applied", "ABI %d, %d read-only + %d writable path(s)%s%s%s", abi, n_ro, n_rw,
         n_split ? " (read-only folders split around hidden paths)" : "", abi >= 4 ? ", TCP bind/connect denied" : "",
         abi >= 6 ? ", abstract-socket and signal scoping" : "");
}

/* ---------------------------------------------------------------- seccomp-BPF */

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


/* What the namespaces and the view could not provide (LOST_* of view.h): seccomp refuses it. */
static unsigned view_lost;

/* Room for the longest filter build_filter makes (all of the view's fallback rules included). */
#define MAX_FILTER 1024

static int build_filter(struct sock_filter *f, int meta) {
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
  n = view_filter_rules(f, n, view_lost);
  /* No PID namespace hides the helper and rune, which end the call's processes: out of its reach. */
  if (view_lost & LOST_PID) n = reaper_filter(f, n, getppid(), rune_pid);
  /* Without a view, chmod and chown go to the metadata guard (metaguard.c), after the rules above
   * have refused setuid and setgid modes. */
  if (meta) n = metaguard_filter(f, n);
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
  if (n > MAX_FILTER) die("the seccomp filter outgrew its buffer");
  return n;
}

/* The deny list, for the init and the command alike. Returns the metadata guard's listener fd (or -1
 * without one). The net guard's supervision is the command's own filter (supervise_connects). */
static int apply_seccomp(int *meta) {
  static struct sock_filter filter[MAX_FILTER];
  int n = build_filter(filter, *meta);
  struct sock_fprog prog = {.len = (unsigned short)n, .filter = filter};
  unsigned flags = *meta ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
  long rc = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (rc < 0 && *meta) {
    /* No user notification here: keep the deny list. */
    report("seccomp", "skipped", "chmod/chown supervision: seccomp user notification failed (%s)", strerror(errno));
    *meta = 0;
    n = build_filter(filter, 0);
    prog.len = (unsigned short)n;
    rc = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
  }
  if (rc < 0) {
    skip("seccomp", "seccomp filter%s", "", errno);
    return -1;
  }
  seccomp_applied = 1;
  report("seccomp", "applied", "x86_64 only, %d denied calls, clone3 ENOSYS, namespace clone flags, "
         "TIOCSTI/TIOCLINUX, socket families unix/inet/inet6 without raw, no UNIX datagram sockets, no_new_privs",
         (int)(sizeof denied / sizeof denied[0]));
  if (*meta) report("seccomp", "applied", "chmod and chown supervised: only inside writable grants, by the owner");
  return *meta ? (int)rc : -1;
}

/* ---------------------------------------------------------------- capabilities, fds, signals */

/* Running as root maps uid 0 into the namespace; root keeps its capabilities across execve unless
 * securebits say otherwise. Drop everything so the command never holds a capability. */
static void drop_capabilities(void) {
  for (int cap = 0; cap <= 63; cap++) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                               SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                               SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
        0, 0, 0);
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  syscall(__NR_capset, &hdr, data);
}

static void reset_process_state(void) {
  /* Node marks 0-2 close-on-exec and non-blocking, and ignores SIGPIPE/SIGXFSZ: undo all of it. */
  for (int fd = 0; fd <= 2; fd++) {
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0) fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
    int st = fcntl(fd, F_GETFL);
    if (st >= 0 && (st & O_NONBLOCK)) fcntl(fd, F_SETFL, st & ~O_NONBLOCK);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &sa, NULL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

static void set_limit(int resource, long long value, const char *name, char *summary, size_t size) {
  if (value < 0) return;
  struct rlimit rl = {(rlim_t)value, (rlim_t)value};
  struct rlimit cur;
  if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < rl.rlim_max)
    rl.rlim_cur = rl.rlim_max = cur.rlim_max;
  if (setrlimit(resource, &rl) != 0) {
    skip("rlimits", "%s", name, errno);
    return;
  }
  size_t used = strlen(summary);
  snprintf(summary + used, size - used, "%s%s=%lld", used ? " " : "", name, (long long)rl.rlim_cur);
}

/* ---------------------------------------------------------------- the sandboxed child */

struct child_args {
  int sock;      /* to the supervisor: carries the notification listener */
  int sync_read; /* the parent writes the id maps... no: closed when the parent is ready */
  uid_t uid;
  gid_t gid;
};

/* Hands fds to the other end of a unix socket; the byte says how many. */
static int send_fds(int sock, const int *fds, int n) {
  char byte = (char)n;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(3 * sizeof(int))];
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = CMSG_SPACE((size_t)n * sizeof(int))};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
  memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
  return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/* Receives up to three fds into fds[] (the rest -1); returns how many arrived. */
static int recv_fds(int sock, int *fds) {
  char byte;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(3 * sizeof(int))];
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  fds[0] = fds[1] = fds[2] = -1;
  if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1) return 0;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS) return 0;
  int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
  if (n > 3) n = 3;
  memcpy(fds, CMSG_DATA(c), (size_t)n * sizeof(int));
  return n;
}

/* What the net guard supervises: NOTIFY_CONNECT only connect() (pathname UNIX sockets), NOTIFY_NET
 * also shutdown() and Fast Open (allowed domains: host sockets exist). */
enum { NOTIFY_CONNECT = 1, NOTIFY_NET = 2 };

/* What keeps the host's pathname UNIX sockets in granted folders out, said on the network layer.
 * The view comes with a PID namespace (one clone makes both), so the connector can tell a listener
 * inside from one outside. */
static void report_unix_sockets(int guarded) {
  if (!guarded)
    report("network", "applied", "pathname UNIX sockets: no new UNIX socket (seccomp; socketpair still works): "
           "no seccomp user notification to check a connect()");
  else
    report("network", "applied", "pathname UNIX sockets in granted folders: connect() made by the net guard's "
           "connector, kept only when SO_PEERCRED names a listener inside the sandbox's PID namespace (EACCES "
           "otherwise); UNIX datagram sockets refused (seccomp)");
}

/* In the command's process, before its exec: the net guard's filter on top of the deny list, so the
 * init above it, the guard's connector, stays unsupervised (its connects must not come back to the
 * guard). The listener and the guard's end of the connector's channel go to the parent. Without
 * seccomp user notification, no new UNIX socket (pathname connects could not be checked) and no
 * allowed domain. */
static void supervise_connects(int guard_sock, int channel, int mode, int view_built) {
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
    if (send_fds(guard_sock, fds, netns >= 0 ? 3 : 2) != 0) die("handing the listener to the net guard");
    close(listener);
    if (netns >= 0) close(netns);
    report("seccomp", "applied", mode == NOTIFY_NET ? "connect/shutdown/Fast Open supervised by the net guard"
                                                   : "connect supervised by the net guard");
  } else {
    int err = errno;
    if (mode == NOTIFY_NET)
      report("network", "skipped", "allowed domains unreachable: seccomp user notification failed (%s)", strerror(err));
    n = 0;
    f[n++] = LOAD_NR;
    f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3);
    f[n++] = LOAD_ARG(0);
    f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1);
    f[n++] = ERRNO(EACCES);
    f[n++] = RET(SECCOMP_RET_ALLOW);
    prog.len = (unsigned short)n;
    if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) die("refusing UNIX sockets");
  }
  if (view_built) report_unix_sockets(listener >= 0);
  close(channel);
  close(guard_sock);
}

/* Closes every fd from `from` up, except `keep_a` and `keep_b`. */
static void close_all_but(int keep_a, int keep_b, int from) {
  int keep[2] = {keep_a < keep_b ? keep_a : keep_b, keep_a < keep_b ? keep_b : keep_a};
  int next = from;
  for (int k = 0; k < 2; k++) {
    if (keep[k] < next) continue;
    if (keep[k] > next && syscall(__NR_close_range, next, keep[k] - 1, 0) != 0)
      for (int fd = next; fd < keep[k]; fd++) close(fd);
    next = keep[k] + 1;
  }
  if (syscall(__NR_close_range, next, ~0U, 0) != 0)
    for (int fd = next; fd < 65536; fd++) close(fd);
}

static pid_t init_cmd;
static int status_fd = -1; /* write end: the command's raw wait status, for the outer helper */

static void init_forward(int sig) {
  if (init_cmd > 0) kill(init_cmd, sig);
}

static void init_exit(int st) {
  if (status_fd >= 0) {
    ssize_t n = write(status_fd, &st, sizeof st);
    (void)n;
  }
  /* Returning kills everything still running in the namespace. */
  _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

static void init_child_exited(int sig) {
  (void)sig; /* only interrupts ppoll */
}

/* `channel`: the net guard's connector requests (netguard.c), served between reaps; -1 for none. */
static void __attribute__((noreturn)) init_loop(pid_t cmd, int channel) {
  init_cmd = cmd;
  /* Hold nothing of the host's: only the status pipe and the connector's channel stay open. */
  close_all_but(status_fd, channel, 0);
  static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) signal(forwarded[i], init_forward);
  sigset_t during_poll;
  if (channel >= 0) {
    /* SIGCHLD stays blocked except inside ppoll, so a child's exit always interrupts the wait. */
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &during_poll);
    sigdelset(&during_poll, SIGCHLD);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = init_child_exited;
    sigaction(SIGCHLD, &sa, NULL);
  }
  for (;;) {
    int st = 0;
    pid_t w = waitpid(-1, &st, channel >= 0 ? WNOHANG : 0);
    if (w == cmd) init_exit(st);
    if (w > 0) continue; /* a reaped orphan, or a connect the connector waited for */
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) _exit(125);
    struct pollfd p = {.fd = channel, .events = POLLIN};
    if (ppoll(&p, 1, NULL, &during_poll) > 0 && netguard_connector_serve(channel) != 0) {
      close(channel); /* the guard is gone: no more connects (the command's end with its listener) */
      channel = -1;
      sigprocmask(SIG_SETMASK, &during_poll, NULL);
    }
  }
}

/* "user+mount+pid+net+ipc+uts+cgroup": the namespaces a clone created. */
static const char *namespace_names(unsigned long ns) {
  static char names[96];
  static const struct {
    unsigned long flag;
    const char *name;
  } all[] = {{CLONE_NEWUSER, "user"}, {CLONE_NEWNS, "mount"}, {CLONE_NEWPID, "pid"},      {CLONE_NEWNET, "net"},
             {CLONE_NEWIPC, "ipc"},   {CLONE_NEWUTS, "uts"},  {CLONE_NEWCGROUP, "cgroup"}};
  names[0] = 0;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (!(ns & all[i].flag)) continue;
    size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s%s", used ? "+" : "", all[i].name);
  }
  return names;
}

/* No network namespace (a container runtime's seccomp profile refuses them): the network is still
 * closed, by seccomp refusing every inet socket and, for TCP, by Landlock independently. Reported
 * as what holds, after both were applied, so a run never reads "network skipped" while nothing can
 * reach it, nor "applied" while something can. */
static void report_network_without_namespace(void) {
  if (!seccomp_applied) {
    skip("network", "no network namespace and no seccomp filter: the host's network is reachable%s", "", 0);
    return;
  }
  report("network", "applied",
         "no network namespace: seccomp refuses inet and inet6 sockets%s%s",
         landlock_tcp_denied ? "; Landlock denies TCP bind and connect (a second layer for TCP; UDP has seccomp only)"
                             : " (the only layer: Landlock has no TCP rule on this kernel)",
         opt.n_allow > 0 ? "; allowed domains unreachable: the net guard needs a network namespace" : "");
}

static int subreaper; /* the parent is the call's child subreaper (no PID namespace), see reaper.c */

/* What ends the call's processes without a PID namespace, said once seccomp is (or is not) in force. */
static void report_containment_without_namespace(void) {
  const char *reaper = subreaper ? "the helper is the call's child subreaper (orphans re-parent to it, never to init) and "
                                   "kills every process left when the command ends"
                                 : "no child subreaper (PR_SET_CHILD_SUBREAPER failed): orphans re-parent to init";
  if (seccomp_applied)
    report("namespaces", "skipped", "no PID namespace: %s; setsid and setpgid refused (seccomp), so every process stays "
           "in the call's process group, which rune kills on a timeout or cancel, and none may signal the helper or "
           "rune, change their limits or kill(-1): nothing outlives the call", reaper);
  else
    report("namespaces", "skipped", "no PID namespace and no seccomp: %s; a process can leave the call's process group "
           "(setsid), so one that did outlives a kill on timeout or cancel", reaper);
}

static int hide_closed_entries(void);
static int cgroup_wait_fd = -1; /* read end: the parent's word that the child is in the call's cgroups */

/* Blocks until the parent has moved this process into the call's cgroups (join_cgroups). A parent
 * gone before saying so ends the call; a failed join in strict mode is a failed layer. With a cgroup
 * namespace, a new one is made now, rooted at the call's own cgroup rather than rune's. */
static void wait_for_cgroups(unsigned long ns) {
  if (cgroup_wait_fd < 0) return;
  char verdict = 0;
  ssize_t n;
  do n = read(cgroup_wait_fd, &verdict, 1);
  while (n < 0 && errno == EINTR);
  close(cgroup_wait_fd);
  cgroup_wait_fd = -1;
  if (n != 1) die("waiting for the cgroups");
  if (verdict == 'f') layer_failed = 1;
  if ((ns & CLONE_NEWCGROUP) && unshare(CLONE_NEWCGROUP) != 0) die("cgroup namespace");
}

static void run_child(unsigned long ns, int guard_sock, int meta_sock, uid_t uid, gid_t gid) {
  int in_namespaces = ns != 0;
  struct view_result built = {0};
  if (in_namespaces) {
    if (hide_closed_entries() != 0) _exit(125);
    char map[64];
    if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT) die("setgroups deny");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if (write_file("/proc/self/uid_map", map) != 0) die("uid_map");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (write_file("/proc/self/gid_map", map) != 0) die("gid_map");
    if (ns & CLONE_NEWNET) loopback_up();
    build_view(&built, namespace_names(ns));
    if (ns & CLONE_NEWPID)
      report("namespaces", "applied", "PID namespace: when the command ends, every process it left is killed");
  }
  wait_for_cgroups(ns);
  /* What is missing is refused by seccomp instead (view_filter_rules) and named in the report. */
  view_lost = (built.built ? 0 : LOST_VIEW) | (ns & CLONE_NEWIPC ? 0 : LOST_IPC) |
              (opt.net_isolate && !(ns & CLONE_NEWNET) ? LOST_NET : 0) | (ns & CLONE_NEWPID ? 0 : LOST_PID);
  if (view_lost) report("namespaces", "skipped", "%s", view_lost_summary(view_lost));
  if (opt.cwd && chdir(opt.cwd) != 0) die("chdir");
  /* Outside a PID namespace the caller's process-group kill is what ends stragglers: keep the group. */
  if (in_namespaces && setsid() < 0 && errno != EPERM) die("setsid");

  char limits[256] = "";
  set_limit(RLIMIT_FSIZE, opt.fsize, "fsize", limits, sizeof limits);
  set_limit(RLIMIT_NOFILE, opt.nofile, "nofile", limits, sizeof limits);
  set_limit(RLIMIT_NPROC, opt.nproc, "nproc", limits, sizeof limits);
  set_limit(RLIMIT_DATA, opt.data, "data", limits, sizeof limits);
  set_limit(RLIMIT_CORE, 0, "core", limits, sizeof limits);
  report("rlimits", "applied", "%s", limits);

  drop_capabilities();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("PR_SET_NO_NEW_PRIVS");
  if (opt.landlock) apply_landlock(built.built);
  else report("landlock", "skipped", "switched off for this call");
  /* The net guard: for allowed domains (TCP through the guard), and whenever the view holds granted
   * folders, whose pathname UNIX sockets may have listeners outside the sandbox (a read-only mount
   * does not stop connect(2), nor does Landlock before ABI 9). Without the view seccomp refuses
   * every new UNIX socket instead (view_filter_rules). Its connector is this process, the init. */
  int tcp_guard = opt.n_allow > 0 && (ns & CLONE_NEWNET);
  if (guard_sock >= 0 && (!opt.seccomp || (!tcp_guard && !built.built))) {
    close(guard_sock); /* its EOF tells the parent: no net guard */
    guard_sock = -1;
  }
  if (opt.seccomp) {
    int meta = (view_lost & LOST_VIEW) && guard_sock < 0 && meta_sock >= 0;
    int listener = apply_seccomp(&meta);
    if (meta && listener >= 0) {
      if (send_fds(meta_sock, &listener, 1) != 0) die("handing the listener to the metadata guard");
      close(listener);
    }
    if (view_lost) report("seccomp", "applied", "standing in for the missing view/namespaces (see namespaces)");
  } else {
    report("seccomp", "skipped", "switched off for this call");
    if (built.built)
      report("network", "applied", "pathname UNIX sockets in granted folders stay reachable: no net guard without seccomp");
  }
  if (view_lost & LOST_NET) report_network_without_namespace();
  if (view_lost & LOST_PID) report_containment_without_namespace();
  if (meta_sock >= 0) close(meta_sock); /* its EOF tells the parent: no metadata guard */
  if (layer_failed) {
    report("setup", "failed", "strict mode: a layer could not be applied");
    _exit(125);
  }

  if (in_namespaces) {
    /* This process is PID 1 of the namespace: it stays as a minimal init (reaps orphans, forwards
     * signals, and is the net guard's connector), so the command gets ordinary signal semantics
     * instead of PID 1's. Not dumpable, so the command can neither open /proc/1/fd (its status pipe)
     * nor even see /proc/1 (hidepid); it cannot kill it either (PID 1 of its namespace). */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) die("PR_SET_DUMPABLE");
    int channel[2] = {-1, -1};
    if (guard_sock >= 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, channel) != 0) die("socketpair");
    if (guard_sock >= 0) netguard_connector_rule(ns & CLONE_NEWPID ? NETGUARD_UNIX_SAME_PIDNS : NETGUARD_UNIX_REFUSE);
    pid_t cmd = fork();
    if (cmd < 0) die("fork");
    if (cmd > 0) init_loop(cmd, channel[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (guard_sock >= 0) {
      close(channel[0]);
      supervise_connects(guard_sock, channel[1], tcp_guard ? NOTIFY_NET : NOTIFY_CONNECT, built.built);
    }
  }
  reset_process_state();
  /* Every fd above 2 goes at exec, the report pipe included: its EOF means "exec'd". */
  if (syscall(__NR_close_range, 3, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */) != 0) {
    for (int fd = 3; fd < 65536; fd++)
      if (fd != opt.report_fd) close(fd);
    if (opt.report_fd >= 0) fcntl(opt.report_fd, F_SETFD, FD_CLOEXEC);
  }
  execvp(opt.argv[0], opt.argv);
  int err = errno;
  report("exec", "failed", "%s: %s", opt.argv[0], strerror(err));
  fprintf(stderr, "rune-sandbox: %s: %s\n", opt.argv[0], strerror(err));
  _exit(err == ENOENT ? 127 : 126);
}

/* ---------------------------------------------------------------- the parent */

static pid_t child_pid;
static volatile sig_atomic_t child_reaped; /* reap_orphans took the child's status already */
static int child_status;

/* Without a PID namespace the call's orphans re-parent to this process (child subreaper): reaped as
 * they end, so they do not pile up as zombies (each holds a pid, counted by RLIMIT_NPROC). */
static void reap_orphans(int sig) {
  (void)sig;
  int saved = errno;
  int st;
  pid_t w;
  while ((w = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
    if (w == child_pid) {
      child_status = st;
      child_reaped = 1;
    }
  errno = saved;
}

/* rune died (this process's parent-death signal without a PID namespace): end the call's tree
 * before going, as a PID namespace's end would. */
static void rune_gone(int sig) {
  (void)sig;
  reaper_end_call(2000);
  if (getpgrp() == getpid()) kill(0, SIGKILL); /* rune started this process in a group of its own */
  _exit(125);
}

/* Without a PID namespace nothing ends the call's processes for us: this process becomes their
 * child subreaper and ends them itself (reaper.c), also when rune dies, through a parent-death
 * signal it handles instead of SIGKILL. Not dumpable: the command runs as the same user with the
 * host's /proc, and must not read or write this unconfined process's memory (/proc/PID/mem). */
static void contain_without_pid_namespace(pid_t starter) {
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) die("PR_SET_DUMPABLE");
  subreaper = reaper_become() == 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = rune_gone;
  sigfillset(&sa.sa_mask);
  sigaction(SIGRTMIN + 4, &sa, NULL);
  prctl(PR_SET_PDEATHSIG, SIGRTMIN + 4, 0, 0, 0);
  if (getppid() != starter) rune_gone(0);
}

/* After the fork, in this process: orphans reaped as they end (the child's status kept). */
static void reap_during_call(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = reap_orphans;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigfillset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
}

/* The child's wait status. Without a PID namespace, once it is known, every process the call left
 * is killed and reaped (reaper.c) before this process reports the end. */
static int wait_child(pid_t pid, int contained, int *status) {
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old);
  int ok = 1;
  if (child_reaped) *status = child_status;
  else {
    while (waitpid(pid, status, __WALL) < 0)
      if (errno != EINTR) {
        ok = 0;
        break;
      }
  }
  if (contained) reaper_end_call(5000);
  sigprocmask(SIG_SETMASK, &old, NULL);
  return ok;
}

/* Passed on as is, so SIGTERM stays a request to exit cleanly (MCP shutdown). The namespace's init
 * forwards it to the command once it has its handlers; one that arrives earlier is dropped (PID 1
 * ignores unhandled signals), and callers escalate to SIGKILL of the group after a grace time. */
static void forward_signal(int sig) {
  if (child_pid > 0) kill(child_pid, sig);
}

/* view_each_closed's callback for --hide-closed: the path joins the hide list (a copy: the walk's
 * buffer is reused). Nonzero when the list is full. */
static int hide_closed(const char *path, void *ctx) {
  (void)ctx;
  /* Named by --hide already (/etc/shadow): hiding a path twice stacks two binds of the empty file,
   * which then cannot be removed from the view's root. */
  for (int k = 0; k < opt.n_hide; k++)
    if (strcmp(opt.hide[k], path) == 0) return 0;
  if (opt.n_hide >= MAX_PATHS) return -1;
  char *copy = strdup(path);
  if (!copy) return -1;
  opt.hide[opt.n_hide++] = copy;
  return 0;
}

/* Moves the child (the namespace's init, or the command before its exec) into the call's cgroups
 * before it starts anything: it waits for the byte written here, after the moves. Everything of
 * the call is forked by it after that, so the whole call is inside. */
static void join_cgroups(pid_t child, int done_fd) {
  if (done_fd < 0) return;
  char pid_text[32];
  snprintf(pid_text, sizeof pid_text, "%d", (int)child);
  for (int k = 0; k < opt.n_cgroup; k++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cgroup.procs", opt.cgroup[k]);
    if (write_file(path, pid_text) != 0) skip("cgroups", "joining %s", opt.cgroup[k], errno);
    else report("cgroups", "applied", "joined %s", opt.cgroup[k]);
  }
  /* In strict mode a failed join stops the child (skip set layer_failed here, not there). */
  char verdict = layer_failed ? 'f' : 'j';
  ssize_t n = send(done_fd, &verdict, 1, MSG_NOSIGNAL);
  (void)n;
  close(done_fd);
}

/* Adds the entries of the --hide-closed folders to the hide list (and the view's). Done by the
 * process that applies it: the child with namespaces (while this process joins the cgroups), this
 * process before a fork without them, or for the metadata guard. -1 when the list is full: fail
 * closed, a secret left out would be readable. */
static int hide_closed_entries(void) {
  for (int k = 0; k < opt.n_closed_in; k++)
    if (view_each_closed(opt.closed_in[k], hide_closed, NULL) != 0) {
      fprintf(stderr, "rune-sandbox: %s holds more entries closed to others than can be hidden (%d)\n",
              opt.closed_in[k], MAX_PATHS);
      report("setup", "failed", "%s holds more entries closed to others than can be hidden", opt.closed_in[k]);
      return -1;
    }
  opt.n_closed_in = 0; /* once per process */
  view.n_hide = opt.n_hide;
  return 0;
}

static void usage(const char *why) {
  fprintf(stderr,
          "rune-sandbox: %s\nusage: rune-sandbox [--ro P] [--rw P] [--protect P] [--allow-addr IP[:PORT]|[IP6]:PORT] "
          "[--sys DIR] [--link PATH TARGET] [--tmpdir DIR] [--pin DIR] [--hide P] [--hide-closed DIR] [--host 'NAME IP'] [--tmp-mb N] [--fsize B] [--nofile N] [--nproc N] [--data B] [--cwd DIR] "
          "[--cgroup DIR] [--report FD] [--strict] [--no-landlock] [--no-seccomp] [--no-namespaces] "
          "[--share-net] [--closed DIR] [--probe] -- PROGRAM ARGS...\n",
          why);
  exit(2);
}

static void print_probe(void) {
  struct rune_probe p;
  rune_probe_kernel(&p);
  printf("{\"landlockAbi\":%d,\"seccompFilter\":%d,\"seccompUserNotif\":%d,\"currentSeccomp\":%d,"
         "\"noNewPrivs\":%d,\"userns\":%d,\"netns\":%d,\"mountns\":%d,\"pidns\":%d,\"unshareNoop\":%d}\n",
         p.landlock_abi, p.seccomp_filter, p.seccomp_user_notif, p.current_seccomp, p.no_new_privs, p.userns,
         p.netns, p.mountns, p.pidns, p.unshare_noop);
}

int main(int argc, char **argv) {
  /* rune started this call (in its own process group): if rune dies, so does the call, net guard
   * and namespace with it (its init has PDEATHSIG on this process). Nothing outlives rune. */
  pid_t starter = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != starter) _exit(125);
  rune_pid = starter;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE \
  if (!v) usage("missing value"); \
  i++
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    } else if (strcmp(a, "--sys") == 0) {
      NEED_VALUE;
      if (opt.n_sys < MAX_PATHS) opt.sys[opt.n_sys++] = v;
    } else if (strcmp(a, "--link") == 0) {
      /* --link PATH TARGET: PATH names a grant through a symlink; the view has it point at TARGET. */
      NEED_VALUE;
      if (i + 1 >= argc) usage("--link needs a path and a target");
      if (opt.n_link < MAX_PATHS) {
        opt.link_path[opt.n_link] = v;
        opt.link_target[opt.n_link++] = argv[i + 1];
      }
      i++;
    } else if (strcmp(a, "--tmpdir") == 0) {
      NEED_VALUE;
      opt.tmpdir = v;
    } else if (strcmp(a, "--ro") == 0) {
      NEED_VALUE;
      if (opt.n_ro < MAX_PATHS) opt.ro[opt.n_ro++] = v;
    } else if (strcmp(a, "--rw") == 0) {
      NEED_VALUE;
      if (opt.n_rw < MAX_PATHS) opt.rw[opt.n_rw++] = v;
    } else if (strcmp(a, "--protect") == 0) {
      NEED_VALUE;
      if (opt.n_protect >= MAX_PROTECT) usage("too many --protect paths"); /* never drop one silently */
      opt.protect[opt.n_protect++] = v;
    } else if (strcmp(a, "--pin") == 0) {
      NEED_VALUE;
      if (opt.n_pin >= MAX_PROTECT) usage("too many --pin paths");
      opt.pin[opt.n_pin++] = v;
    } else if (strcmp(a, "--hide") == 0) {
      NEED_VALUE;
      if (opt.n_hide >= MAX_PATHS) usage("too many --hide paths"); /* never drop one silently */
      int seen = 0;
      for (int k = 0; k < opt.n_hide && !seen; k++) seen = strcmp(opt.hide[k], v) == 0;
      if (!seen) opt.hide[opt.n_hide++] = v; /* twice would stack two binds (see hide_closed) */
    } else if (strcmp(a, "--hide-closed") == 0) {
      /* --hide-closed DIR: every entry of DIR others may not read is hidden as if named by --hide. */
      NEED_VALUE;
      if (opt.n_closed_in >= 8) usage("too many --hide-closed folders");
      opt.closed_in[opt.n_closed_in++] = v;
    } else if (strcmp(a, "--host") == 0) {
      NEED_VALUE;
      if (strchr(v, '\n')) usage("a --host entry contains a newline");
      if (opt.n_hosts < MAX_PATHS) opt.hosts[opt.n_hosts++] = v;
    } else if (strcmp(a, "--allow-addr") == 0) {
      NEED_VALUE;
      if (opt.n_allow >= MAX_ADDRS || netguard_parse_allow(v, &opt.allow[opt.n_allow]) != 0) usage("bad --allow-addr");
      opt.n_allow++;
    } else if (strcmp(a, "--tmp-mb") == 0) {
      NEED_VALUE;
      opt.tmp_mb = atol(v);
    } else if (strcmp(a, "--fsize") == 0) {
      NEED_VALUE;
      opt.fsize = atoll(v);
    } else if (strcmp(a, "--data") == 0) {
      NEED_VALUE;
      opt.data = atoll(v);
    } else if (strcmp(a, "--nofile") == 0) {
      NEED_VALUE;
      opt.nofile = atol(v);
    } else if (strcmp(a, "--nproc") == 0) {
      NEED_VALUE;
      opt.nproc = atol(v);
    } else if (strcmp(a, "--cwd") == 0) {
      NEED_VALUE;
      opt.cwd = v;
    } else if (strcmp(a, "--cgroup") == 0) {
      NEED_VALUE;
      if (opt.n_cgroup >= 8) usage("too many --cgroup folders"); /* a limit dropped silently would not hold */
      opt.cgroup[opt.n_cgroup++] = v;
    } else if (strcmp(a, "--report") == 0) {
      NEED_VALUE;
      opt.report_fd = atoi(v);
    } else if (strcmp(a, "--strict") == 0) {
      opt.strict = 1;
    } else if (strcmp(a, "--no-landlock") == 0) {
      opt.landlock = 0;
    } else if (strcmp(a, "--no-seccomp") == 0) {
      opt.seccomp = 0;
    } else if (strcmp(a, "--no-namespaces") == 0) {
      opt.namespaces = 0;
    } else if (strcmp(a, "--share-net") == 0) {
      opt.net_isolate = 0;
    } else if (strcmp(a, "--closed") == 0) {
      /* --closed DIR [--probe]: the entries of DIR others may not read, then the probe if asked. */
      NEED_VALUE;
      view_print_closed(v);
      if (i + 1 >= argc) return 0;
    } else if (strcmp(a, "--probe") == 0) {
      print_probe();
      return 0;
    } else {
      usage("unknown option");
    }
  }
  if (i >= argc) usage("no command after --");
  opt.argv = argv + i;
  if (opt.report_fd >= 0 && fcntl(opt.report_fd, F_SETFD, FD_CLOEXEC) != 0) opt.report_fd = -1;
  /* Nothing inherited beyond stdio and the report pipe reaches the namespace's init or the command. */
  close_all_but(opt.report_fd, -1, 3);
  set_view_spec();

  /* The call's cgroups are joined by this process for the child while the child builds its view
   * (join_cgroups): a move into a cgroup v1 hierarchy waits out an RCU grace period (~7 ms here),
   * which no longer adds to the call's start. */
  int cg_pipe[2] = {-1, -1};
  /* A socket, not a pipe: the word is sent with MSG_NOSIGNAL, so a child that died while building
   * its view cannot end this process with SIGPIPE. */
  if (opt.n_cgroup > 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cg_pipe) != 0) die("socketpair");

  int guard[2] = {-1, -1};
  /* The child decides whether it is used (run_child): for allowed domains, and for the pathname UNIX
   * sockets of the view's grants. */
  int use_guard = opt.namespaces && opt.seccomp;
  /* Without namespaces report_network_without_namespace says it, once the layers are in force. */
  if (opt.n_allow > 0 && !(use_guard && opt.net_isolate) && opt.namespaces)
    skip("network", "the net guard needs namespaces and seccomp%s", "", 0);
  if (use_guard && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, guard) != 0) die("socketpair");
  /* Carries the metadata guard's listener when the view cannot be built (decided in the child). */
  int meta[2] = {-1, -1};
  if (opt.seccomp && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, meta) != 0)
    meta[0] = meta[1] = -1;

  uid_t uid = geteuid();
  gid_t gid = getegid();
  int status_pipe[2] = {-1, -1};
  if (opt.namespaces && pipe2(status_pipe, O_CLOEXEC) != 0) die("pipe");
  pid_t pid = -1;
  unsigned long ns = 0;
  if (opt.namespaces) {
    /* IPC, UTS and cgroup namespaces when the kernel allows them; without them the rest still helps
     * and seccomp refuses System V IPC instead. */
    unsigned long base = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | (opt.net_isolate ? CLONE_NEWNET : 0);
    ns = base | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
    pid = (pid_t)syscall(__NR_clone, ns | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid < 0) {
      int err = errno;
      ns = base;
      pid = (pid_t)syscall(__NR_clone, ns | SIGCHLD, NULL, NULL, NULL, NULL);
      if (pid > 0) skip("namespaces", "ipc+uts+cgroup namespaces%s", "", err);
    }
    if (pid < 0) {
      ns = 0;
      skip("namespaces", "clone with new namespaces%s", "", errno);
    }
  } else {
    report("namespaces", "skipped", "not used for this call (--no-namespaces)");
  }
  int in_namespaces = ns != 0;
  if (!in_namespaces) {
    if (hide_closed_entries() != 0) return 125;
    contain_without_pid_namespace(starter);
    pid = fork(); /* the network is reported once seccomp and Landlock are in force (run_child) */
    if (pid < 0) die("fork");
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (cg_pipe[1] >= 0) close(cg_pipe[1]);
    cgroup_wait_fd = cg_pipe[0];
    if (status_pipe[0] >= 0) close(status_pipe[0]);
    status_fd = in_namespaces ? status_pipe[1] : -1;
    if (!in_namespaces && status_pipe[1] >= 0) close(status_pipe[1]);
    if (guard[0] >= 0) close(guard[0]);
    if (!in_namespaces && guard[1] >= 0) close(guard[1]); /* no net guard without namespaces */
    if (meta[0] >= 0) close(meta[0]);
    if (in_namespaces && opt.net_isolate) {
      if (use_guard && opt.n_allow > 0)
        report("network", "applied", "empty network namespace; TCP to %d allowed address[:port] pair(s) through the "
               "net guard", opt.n_allow);
      else
        report("network", "applied", "empty network namespace (loopback only)");
    }
    run_child(ns, use_guard && in_namespaces ? guard[1] : -1, meta[1], uid, gid);
  }

  child_pid = pid;
  if (!in_namespaces) reap_during_call();
  if (cg_pipe[0] >= 0) close(cg_pipe[0]);
  join_cgroups(pid, cg_pipe[1]);
  signal(SIGTERM, forward_signal);
  signal(SIGINT, forward_signal);
  signal(SIGHUP, forward_signal);
  if (opt.report_fd >= 0) close(opt.report_fd);
  if (use_guard) {
    close(guard[1]);
    int fds[3];
    recv_fds(guard[0], fds);
    close(guard[0]);
    if (fds[0] >= 0) netguard_run(fds[0], fds[1], fds[2], opt.allow, opt.n_allow);
    for (int k = 0; k < 3; k++)
      if (fds[k] >= 0) close(fds[k]);
  }
  if (meta[1] >= 0) close(meta[1]);
  if (meta[0] >= 0) {
    int fds[3];
    recv_fds(meta[0], fds);
    close(meta[0]);
    if (fds[0] >= 0) {
      /* The view could not be built: the child found the closed entries, this process needs them too. */
      if (hide_closed_entries() != 0) {
        kill(pid, SIGKILL);
        return 125;
      }
      /* Hidden and protected paths keep their mode and owner even inside a writable grant. */
      static const char *keep[MAX_PROTECT + MAX_PATHS];
      int n_keep = 0;
      for (int k = 0; k < opt.n_hide; k++) keep[n_keep++] = opt.hide[k];
      for (int k = 0; k < opt.n_protect; k++) keep[n_keep++] = opt.protect[k];
      metaguard_run(fds[0], pid, opt.rw, opt.n_rw, keep, n_keep);
      close(fds[0]);
    }
    for (int k = 1; k < 3; k++)
      if (fds[k] >= 0) close(fds[k]);
  }
  if (status_pipe[1] >= 0) close(status_pipe[1]);
  int status = 0;
  if (!wait_child(pid, !in_namespaces, &status)) return 125;
  /* The init's own exit code cannot say "killed by a signal": the command's raw status can. It is
   * taken only when it is exactly one status that agrees with the init's exit code, so whatever
   * might still write into the pipe cannot make this process stop itself or lie about the end. */
  if (in_namespaces && WIFEXITED(status)) {
    int raw[2];
    if (read(status_pipe[0], raw, sizeof raw) == (ssize_t)sizeof raw[0]) {
      int code = WIFEXITED(raw[0]) ? WEXITSTATUS(raw[0]) : WIFSIGNALED(raw[0]) ? (128 + WTERMSIG(raw[0])) & 0xff : -1;
      if (code == WEXITSTATUS(status)) status = raw[0];
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    /* Die the same way, so the caller sees the command's signal; a signal whose default is to stop
     * or to be ignored is turned into its exit code instead. */
    int sig = WTERMSIG(status);
    if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig == SIGCONT || sig == SIGCHLD ||
        sig == SIGURG || sig == SIGWINCH || sig <= 0 || sig >= NSIG)
      return 128 + sig;
    signal(sig, SIG_DFL);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    kill(getpid(), sig);
    return 128 + sig;
  }
  return 125;
}
