/* The rules the sandbox helper adds over its view (view.c): Landlock over the same grants, as an
 * independent second layer, and the seccomp rules that stand in for what a refused namespace or view
 * would have removed, with the line that names what is lost. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "bpf.h"
#include "landlock_uapi.h"
#include "view.h"

/* ---------------------------------------------------------------- Landlock over the same grants */

#define LL_READ (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)
#define MAX_SPLIT_RULES 4096

static int ll_ruleset;
static uint64_t ll_handled;
static int n_split_rules;
/* Whether a split folder may still be listed. Landlock's READ_DIR reaches every folder below, the
 * hidden ones included: with the view they are empty mounts, without it their names would show. */
static int ll_list_split;

/* One rule on the object open at `fd` (of type `mode`); files get only the rights that apply to files. */
static int ll_rule_mode(int fd, mode_t mode, uint64_t rights) {
  if (!S_ISDIR(mode)) rights &= LL_FILE_RIGHTS;
  struct ll_path_beneath_attr attr = {.allowed_access = rights & ll_handled, .parent_fd = fd};
  if (!attr.allowed_access) return 0;
  return syscall(LL_ADD_RULE, ll_ruleset, LL_RULE_PATH_BENEATH, &attr, 0) == 0 ? 1 : -1;
}

static int ll_rule_fd(int fd, uint64_t rights) {
  struct stat st;
  /* Unknown type: a folder's rights, which the kernel refuses on a file (the rule then fails). */
  return ll_rule_mode(fd, fstat(fd, &st) == 0 ? st.st_mode : S_IFDIR, rights);
}

static int ll_rule(const char *path, uint64_t rights) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ELOOP ? 0 : -1;
  int rc = ll_rule_fd(fd, rights);
  int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

/* Landlock grants a right to everything below a folder, so a read-only folder holding hidden paths
 * is granted as its parts instead: each entry that is not hidden gets the rights, folders on the way
 * to a hidden path are split again, and the folder itself may be listed only when the view hides
 * what is below (ll_list_split). Symlinks get no rule (a rule on one would grant its target). */
static int ll_rule_minus(int dirfd, const char *name, const char *path, uint64_t rights) {
  if (view_is_hidden(path)) return 0;
  int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {
    close(fd);
    return 0;
  }
  if (!S_ISDIR(st.st_mode) || !view_hides_inside(path) || n_split_rules >= MAX_SPLIT_RULES) {
    /* The type is known from the fstat above: one system call fewer per entry of a split folder. */
    int rc = ll_rule_mode(fd, st.st_mode, rights);
    close(fd);
    return rc;
  }
  int rc = ll_list_split ? ll_rule_mode(fd, st.st_mode, LL_FS_READ_DIR) : 0;
  n_split_rules++;
  int list = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = list >= 0 ? fdopendir(list) : NULL;
  if (!d) {
    if (list >= 0) close(list);
    close(fd);
    return rc;
  }
  struct dirent *e;
  while (rc >= 0 && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char child[PATH_MAX];
    if (snprintf(child, sizeof child, "%s/%s", strcmp(path, "/") == 0 ? "" : path, e->d_name) >= (int)sizeof child) continue;
    n_split_rules++;
    if (ll_rule_minus(fd, e->d_name, child, rights) < 0) rc = -1;
  }
  closedir(d);
  close(fd);
  return rc;
}

static int ll_read_only(const char *path) {
  if (!view_hides_inside(path)) return ll_rule(path, LL_READ);
  return ll_rule_minus(AT_FDCWD, path, path, LL_READ);
}

int view_landlock_rules(int ruleset, uint64_t handled, int built, int *n_ro, int *n_rw, int *n_split) {
  ll_ruleset = ruleset;
  ll_handled = handled;
  n_split_rules = 0;
  ll_list_split = built;
  /* Without the view, the hide list is what Landlock alone must keep out of read-only folders. */
  if (!built) {
    for (int i = 0; i < view.n_hide; i++) {
      char real[PATH_MAX];
      if (realpath(view.hide[i], real)) view_remember_hidden(real);
      view_remember_hidden(view.hide[i]);
    }
  }
  uint64_t rw = handled;
  int ro_count = 0, rw_count = 0, rc;
#define COUNT(expr, counter)  \
  do {                        \
    if ((rc = (expr)) < 0) return -1; \
    counter += rc;            \
  } while (0)
  for (int i = 0; i < view.n_sys; i++) COUNT(ll_read_only(view.sys[i]), ro_count);
  for (int i = 0; i < view.n_ro; i++) COUNT(ll_read_only(view.ro[i]), ro_count);
  COUNT(ll_rule("/proc", LL_READ & ~LL_FS_EXECUTE), ro_count);
  COUNT(ll_rule("/sys", LL_READ & ~LL_FS_EXECUTE), ro_count);
  if (built) {
    /* Everything in the view was granted: its folders may all be listed. */
    COUNT(ll_rule("/", LL_FS_READ_DIR), ro_count);
    /* The view's /dev holds only harmless nodes, its own ptys and a private shm. */
    COUNT(ll_rule("/dev", LL_READ & ~LL_FS_EXECUTE), ro_count);
    static const char *const dev_rw[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/shm", "/tmp"};
    for (size_t i = 0; i < sizeof dev_rw / sizeof dev_rw[0]; i++) COUNT(ll_rule(dev_rw[i], rw), rw_count);
  } else {
    /* The host's /dev: list it, use the harmless nodes; its disks, ptys and shm stay out. */
    COUNT(ll_rule("/dev", LL_FS_READ_DIR), ro_count);
    static const char *const dev_read[] = {"/dev/random", "/dev/urandom"};
    static const char *const dev_write[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"};
    for (size_t i = 0; i < 2; i++) COUNT(ll_rule(dev_read[i], LL_READ & ~LL_FS_EXECUTE), ro_count);
    for (size_t i = 0; i < 4; i++) COUNT(ll_rule(dev_write[i], rw), rw_count);
  }
  for (int i = 0; i < view.n_rw; i++) COUNT(ll_rule(view.rw[i], rw), rw_count);
#undef COUNT
  *n_ro = ro_count;
  *n_rw = rw_count;
  *n_split = n_split_rules;
  return 0;
}

/* ---------------------------------------------------------------- seccomp rules of the view */

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
/* _IOW('T', 0x2B..0x2D, struct termios2): the header's macros need a struct glibc does not declare. */
#define TERMIOS2_SET 0x402C542BU
#define TERMIOS2_SETW 0x402C542CU
#define TERMIOS2_SETF 0x402C542DU
#ifndef TIOCVHANGUP
#define TIOCVHANGUP 0x5437
#endif
#define SETID_BITS (S_ISUID | S_ISGID)
#define O_TMPFILE_BIT 020000000

/* `nr` with argument `arg` having any of `bits` → errno. */
static int deny_arg_bits(struct sock_filter *f, int n, int nr, int arg, unsigned bits, int err) {
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 4);
  f[n++] = LOAD_ARG(arg);
  f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, bits, 0, 1);
  f[n++] = ERRNO(err);
  f[n++] = LOAD_NR;
  return n;
}

/* open-like calls: a setuid/setgid mode only counts when the flags create a file. */
static int deny_create_mode(struct sock_filter *f, int n, int nr, int flags_arg, int mode_arg) {
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 6);
  f[n++] = LOAD_ARG(flags_arg);
  f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT | O_TMPFILE_BIT, 0, 3);
  f[n++] = LOAD_ARG(mode_arg);
  f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, SETID_BITS, 0, 1);
  f[n++] = ERRNO(EPERM);
  f[n++] = LOAD_NR;
  return n;
}

static int deny_calls(struct sock_filter *f, int n, const int *nrs, size_t count, int err) {
  for (size_t i = 0; i < count; i++) {
    f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i], 0, 1);
    f[n++] = ERRNO(err);
  }
  return n;
}

static int deny_ioctls(struct sock_filter *f, int n, const unsigned *codes, size_t m) {
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, (unsigned char)(m + 3));
  f[n++] = LOAD_ARG(1);
  for (size_t j = 0; j < m; j++) f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, codes[j], (unsigned char)(m - j), 0);
  f[n++] = JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
  f[n++] = ERRNO(EPERM);
  f[n++] = LOAD_NR;
  return n;
}

static int deny_socket_families(struct sock_filter *f, int n, const unsigned *families, size_t m, int err) {
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, (unsigned char)(m + 3));
  f[n++] = LOAD_ARG(0);
  for (size_t j = 0; j < m; j++) f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, families[j], (unsigned char)(m - j), 0);
  f[n++] = JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
  f[n++] = ERRNO(err);
  f[n++] = LOAD_NR;
  return n;
}

/* socket() and socketpair() of AF_UNIX datagram sockets (SOCK_RAW is one for AF_UNIX). The type is
 * compared without SOCK_NONBLOCK and SOCK_CLOEXEC. */
static int deny_unix_datagram(struct sock_filter *f, int n) {
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socketpair, 0, 7);
  f[n++] = LOAD_ARG(0);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 5);
  f[n++] = LOAD_ARG(1);
  f[n++] = STMT(BPF_ALU | BPF_AND | BPF_K, 0xf /* SOCK_TYPE_MASK */);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_DGRAM, 1, 0);
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_RAW, 0, 1);
  f[n++] = ERRNO(EACCES);
  f[n++] = LOAD_NR;
  return n;
}

int view_filter_rules(struct sock_filter *f, int n, unsigned lost) {
  /* Always: no file leaves the sandbox setuid or setgid. A tool running as root could otherwise
   * plant a setuid-root program in a writable folder for any local user to run later. */
  n = deny_arg_bits(f, n, __NR_chmod, 1, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_fchmod, 1, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_fchmodat, 2, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_fchmodat2, 2, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_mknod, 1, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_mknodat, 2, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_creat, 1, SETID_BITS, EPERM);
  n = deny_create_mode(f, n, __NR_open, 1, 2);
  n = deny_create_mode(f, n, __NR_openat, 2, 3);
  /* openat2 keeps its mode in memory BPF cannot read; callers fall back to openat on ENOSYS. */
  static const int no_openat2[] = {__NR_openat2};
  n = deny_calls(f, n, no_openat2, 1, ENOSYS);
  /* Always: no UNIX datagram socket. One reaches any bound datagram socket it can name with
   * sendto() or sendmsg() (a socketpair() one too, unless its target is connected elsewhere), with
   * no connect() a guard could check, and sendmsg()'s address is in memory BPF cannot read. */
  n = deny_unix_datagram(f, n);
  static const int never[] = {__NR_fanotify_init};
  n = deny_calls(f, n, never, 1, EPERM);
  /* Line disciplines and console redirection: kernel attack surface no tool needs. */
  static const unsigned tty_always[] = {TIOCSETD, TIOCCONS};
  n = deny_ioctls(f, n, tty_always, 2);

  if (lost & LOST_VIEW) {
    /* The host's tree is visible (to Landlock's rules only): its UNIX sockets, terminals and
     * folders must be refused by what is left. socketpair() still works. */
    static const unsigned unix_family[] = {AF_UNIX};
    n = deny_socket_families(f, n, unix_family, 1, EACCES);
    static const unsigned tty_control[] = {TIOCSCTTY, TCSETS,   TCSETSW,   TCSETSF, TCSETA,   TCSETAW,
                                           TCSETAF,   TERMIOS2_SET, TERMIOS2_SETW, TERMIOS2_SETF, TIOCSWINSZ, TIOCSPGRP,
                                           TCXONC,    TCFLSH,   TIOCEXCL,  TIOCSBRK, TIOCVHANGUP, TIOCSLCKTRMIOS};
    n = deny_ioctls(f, n, tty_control, sizeof tty_control / sizeof tty_control[0]);
    static const int watch_and_xattr[] = {__NR_inotify_add_watch};
    n = deny_calls(f, n, watch_and_xattr, 1, EACCES);
    static const int xattr_writes[] = {__NR_setxattr,    __NR_lsetxattr,    __NR_fsetxattr,   __NR_removexattr,
                                       __NR_lremovexattr, __NR_fremovexattr, __NR_setxattrat, __NR_removexattrat};
    n = deny_calls(f, n, xattr_writes, sizeof xattr_writes / sizeof xattr_writes[0], EPERM);
  }
  if (lost & LOST_IPC) {
    static const int ipc[] = {__NR_shmget, __NR_shmat,   __NR_shmctl,        __NR_shmdt,           __NR_semget,
                              __NR_semop,  __NR_semctl,  __NR_semtimedop,    __NR_msgget,          __NR_msgsnd,
                              __NR_msgrcv, __NR_msgctl,  __NR_mq_open,       __NR_mq_unlink,       __NR_mq_timedsend,
                              __NR_mq_timedreceive, __NR_mq_notify, __NR_mq_getsetattr};
    n = deny_calls(f, n, ipc, sizeof ipc / sizeof ipc[0], EPERM);
  }
  if (lost & LOST_NET) {
    /* No namespace to make the network empty: no inet socket at all (the net guard needs one). */
    static const unsigned inet[] = {AF_INET, AF_INET6};
    n = deny_socket_families(f, n, inet, 2, EACCES);
  }
  if (lost & LOST_PID) {
    /* No PID namespace whose end kills everything: the call's process group is what rune kills on a
     * timeout or cancel, so no process may leave it (a new session or group). glibc's setpgrp and
     * daemon() are these calls too. */
    static const int leave_group[] = {__NR_setsid, __NR_setpgid};
    n = deny_calls(f, n, leave_group, 2, EPERM);
  }
  return n;
}

const char *view_lost_summary(unsigned lost) {
  static char text[1024];
  size_t used = 0;
  text[0] = 0;
#define ADD(...) used += (size_t)snprintf(text + used, used < sizeof text ? sizeof text - used : 0, __VA_ARGS__)
  if (lost & LOST_VIEW)
    ADD("no view: seccomp refuses new UNIX sockets, inotify watches, xattr changes and terminal-control ioctls; "
        "Landlock keeps the host's disks, /dev/shm and the hidden files of read-only folders out (such folders "
        "cannot be listed, only their other entries used); no "
        "pseudo-terminals (the host's /dev/pts is not granted); no private /tmp (TMPDIR names a folder of the "
        "call's own, removed after it); still possible: stat of folders never granted, "
        "utimes on read-only paths (chmod and chown only inside writable grants), reading the host's /proc and /sys (other processes, cgroups, timers), "
        "hidden or protected paths inside writable grants, writes to read-only grants under writable ones");
  if (lost & LOST_IPC) ADD("%sno IPC namespace: System V IPC and POSIX message queues refused", used ? "; " : "");
  if (lost & LOST_NET) ADD("%sno network namespace: inet sockets refused", used ? "; " : "");
#undef ADD
  return text;
}
