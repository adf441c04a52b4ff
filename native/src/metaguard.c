/* rune's metadata guard, for a sandbox without a view. Where a container runtime's seccomp profile
 * refuses namespaces there is no read-only mount, and Landlock does not mediate chmod(2) or
 * chown(2): a command running as root owns the host's files and could loosen ~/.ssh/id_rsa, make
 * /etc/shadow world-readable for a later process, or strip the setuid bit from sudo (chmod or
 * chown clears it). So these calls are supervised (seccomp user notification) and performed here
 * on the command's behalf, only on a file inside a writable grant.
 *
 * Race-free by construction: the path is copied from the command's memory once and opened here
 * (relative to the command's cwd or dirfd through /proc/PID), and the check and the change both
 * act on that one open file. Whatever another thread rewrites meanwhile can only change which
 * file is opened, and a file outside the writable grants is refused whichever it is. The kernel's
 * own rule without CAP_FOWNER/CAP_CHOWN (the command has no capability) is applied too: only the
 * owner changes a mode; an owner may change only the group, to its own.
 * The utime family is not supervised: a time stamp on a read-only path stays possible (the layer
 * report says so). */
#define _GNU_SOURCE
#include "metaguard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bpf.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

static const int supervised[] = {__NR_chmod, __NR_fchmod, __NR_fchmodat, __NR_fchmodat2,
                                 __NR_chown, __NR_fchown, __NR_lchown, __NR_fchownat};

int metaguard_filter(struct sock_filter *f, int n) {
  for (size_t i = 0; i < sizeof supervised / sizeof supervised[0]; i++) {
    f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)supervised[i], 0, 1);
    f[n++] = RET(SECCOMP_RET_USER_NOTIF);
  }
  return n;
}

static struct {
  int listener;
  struct seccomp_notif_sizes sizes;
  char rw[64][PATH_MAX];
  int n_rw;
  const char *const *keep;
  int n_keep;
} m;

static int inside(const char *path, const char *dir) {
  size_t len = strlen(dir);
  if (strcmp(dir, "/") == 0) return 1;
  return strncmp(path, dir, len) == 0 && (path[len] == '/' || path[len] == 0);
}

/* Inside a writable grant and not at or below a hidden or protected path. */
static int changeable(const char *real) {
  for (int i = 0; i < m.n_keep; i++)
    if (inside(real, m.keep[i])) return 0;
  for (int i = 0; i < m.n_rw; i++)
    if (inside(real, m.rw[i])) return 1;
  return 0;
}

static int read_path(pid_t pid, unsigned long addr, char *buf) {
  /* Page by page: a short string near the end of a mapping must not fail the read. */
  size_t used = 0;
  while (used < PATH_MAX) {
    size_t room = 4096 - ((addr + used) & 4095);
    if (room > PATH_MAX - used) room = PATH_MAX - used;
    struct iovec local = {.iov_base = buf + used, .iov_len = room};
    struct iovec remote = {.iov_base = (void *)(addr + used), .iov_len = room};
    ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) return -EFAULT;
    if (memchr(buf + used, 0, (size_t)got)) return 0;
    used += (size_t)got;
  }
  return -ENAMETOOLONG;
}

/* fsuid and fsgid of the calling thread (the 4th field of Uid:/Gid: in its status). */
static int fs_ids(pid_t pid, uid_t *uid, gid_t *gid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  FILE *f = fopen(path, "re");
  if (!f) return -1;
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned a, b, c, d;
    if (sscanf(line, "Uid:\t%u\t%u\t%u\t%u", &a, &b, &c, &d) == 4) *uid = d, found |= 1;
    if (sscanf(line, "Gid:\t%u\t%u\t%u\t%u", &a, &b, &c, &d) == 4) *gid = d, found |= 2;
  }
  fclose(f);
  return found == 3 ? 0 : -1;
}

/* The file the call names, opened O_PATH here; -errno when it cannot be. */
static int open_target(pid_t pid, long long dirfd, unsigned long path_ptr, int has_path, int nofollow, int empty_ok) {
  char proc[64];
  if (!has_path) {
    snprintf(proc, sizeof proc, "/proc/%d/fd/%d", pid, (int)dirfd);
    int fd = open(proc, O_PATH | O_CLOEXEC);
    return fd >= 0 ? fd : (errno == ENOENT ? -EBADF : -errno);
  }
  static char path[PATH_MAX];
  int rc = read_path(pid, path_ptr, path);
  if (rc < 0) return rc;
  if (path[0] == 0 && !empty_ok) return -ENOENT;
  if ((int)dirfd == AT_FDCWD) snprintf(proc, sizeof proc, "/proc/%d/cwd", pid);
  else snprintf(proc, sizeof proc, "/proc/%d/fd/%d", pid, (int)dirfd);
  int base = open(proc, O_PATH | O_CLOEXEC);
  if (base < 0) return errno == ENOENT ? -EBADF : -errno;
  int fd = path[0] == 0 ? dup(base) : openat(base, path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
  int err = errno;
  close(base);
  return fd >= 0 ? fd : -err;
}

static void answer(uint64_t id, int err) {
  struct seccomp_notif_resp *resp = calloc(1, m.sizes.seccomp_notif_resp);
  if (!resp) return;
  resp->id = id;
  resp->error = err ? -err : 0;
  ioctl(m.listener, SECCOMP_IOCTL_NOTIF_SEND, resp); /* ENOENT: the caller is gone or interrupted */
  free(resp);
}

static int handle(const struct seccomp_notif *req) {
  pid_t pid = (pid_t)req->pid;
  const unsigned long long *a = req->data.args;
  int nr = req->data.nr;
  int is_chmod = nr == __NR_chmod || nr == __NR_fchmod || nr == __NR_fchmodat || nr == __NR_fchmodat2;
  long long dirfd = AT_FDCWD;
  unsigned long path = 0;
  int has_path = 1, nofollow = 0, flags = 0;
  unsigned long long mode = 0, uid = 0, gid = 0;
  switch (nr) {
  case __NR_chmod: path = a[0], mode = a[1]; break;
  case __NR_fchmod: dirfd = (int)a[0], has_path = 0, mode = a[1]; break;
  case __NR_fchmodat: dirfd = (int)a[0], path = a[1], mode = a[2]; break;
  case __NR_fchmodat2: dirfd = (int)a[0], path = a[1], mode = a[2], flags = (int)a[3]; break;
  case __NR_chown: path = a[0], uid = a[1], gid = a[2]; break;
  case __NR_lchown: path = a[0], uid = a[1], gid = a[2], nofollow = 1; break;
  case __NR_fchown: dirfd = (int)a[0], has_path = 0, uid = a[1], gid = a[2]; break;
  case __NR_fchownat: dirfd = (int)a[0], path = a[1], uid = a[2], gid = a[3], flags = (int)a[4]; break;
  default: return ENOSYS;
  }
  if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return EINVAL;
  if (flags & AT_SYMLINK_NOFOLLOW) nofollow = 1;
  if (is_chmod && (mode & (S_ISUID | S_ISGID))) return EPERM; /* never a setuid or setgid file */
  uid_t fsuid = 0;
  gid_t fsgid = 0;
  if (fs_ids(pid, &fsuid, &fsgid) != 0) return ESRCH;
  int fd = open_target(pid, dirfd, path, has_path, nofollow, (flags & AT_EMPTY_PATH) != 0);
  /* The pid may have been reused by now: answer only for the call that asked. */
  if (ioctl(m.listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  if (fd < 0) return -fd;
  char link[64], real[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t len = readlink(link, real, sizeof real - 1);
  struct stat st;
  int err = 0;
  if (len <= 0 || fstat(fd, &st) != 0) err = EACCES;
  else real[len] = 0;
  /* Inside a writable grant, and a file, folder or (for lchown) link: devices are the host's. */
  if (!err && (!changeable(real) || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))))
    err = EPERM;
  if (!err && is_chmod && S_ISLNK(st.st_mode)) err = EOPNOTSUPP;
  if (!err && st.st_uid != fsuid) err = EPERM; /* no CAP_FOWNER / CAP_CHOWN in the sandbox */
  if (!err && !is_chmod) {
    if (uid != (unsigned long long)(uid_t)-1 && (uid_t)uid != st.st_uid) err = EPERM;
    if (gid != (unsigned long long)(gid_t)-1 && (gid_t)gid != st.st_gid && (gid_t)gid != fsgid) err = EPERM;
  }
  if (!err) {
    int rc = is_chmod ? fchmodat(AT_FDCWD, link, (mode_t)(mode & 07777), 0)
                      : fchownat(fd, "", (uid_t)uid, (gid_t)gid, AT_EMPTY_PATH);
    if (rc != 0) err = errno;
  }
  close(fd);
  return err;
}

void metaguard_run(int listener, pid_t child, const char *const *rw, int n_rw, const char *const *keep, int n_keep) {
  m.listener = listener;
  m.keep = keep;
  m.n_keep = n_keep;
  for (int i = 0; i < n_rw && m.n_rw < 64; i++)
    if (realpath(rw[i], m.rw[m.n_rw])) m.n_rw++;
  if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &m.sizes) != 0) return;
  struct seccomp_notif *req = calloc(1, m.sizes.seccomp_notif > sizeof *req ? m.sizes.seccomp_notif : sizeof *req);
  if (!req) return;
  /* The call ends with its first process: a background process it left (killed by its cgroup or
   * process group afterwards) must not keep the helper waiting. */
  int pidfd = (int)syscall(__NR_pidfd_open, child, 0);
  for (;;) {
    struct pollfd fds[2] = {{.fd = listener, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
    if (poll(fds, pidfd >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    struct pollfd p = fds[0];
    if (pidfd >= 0 && fds[1].revents) break;
    if (p.revents & POLLIN) {
      memset(req, 0, m.sizes.seccomp_notif);
      if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0) {
        int err = handle(req);
        if (err >= 0) answer(req->id, err);
      }
      continue;
    }
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) break; /* every supervised process is gone */
  }
  free(req);
  if (pidfd >= 0) close(pidfd);
}
