/* File-system primitives of the view (view.c): opening paths without following symlinks, binding
 * and mounting on opened objects (through /proc/self/fd, so a path cannot change between the check
 * and the mount), and adding mount flags recursively. */
#define _GNU_SOURCE
#include "view-fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

struct mount_attr_v0 {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

#define MAX_OWN_DEVS 8

/* Devices of the tmpfs mounts made here: only inside them may mount points be created. */
static dev_t own_dev[MAX_OWN_DEVS];
static int n_own_dev;

void forget_own(void) { n_own_dev = 0; }

int is_own_tmpfs(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return 0;
  for (int i = 0; i < n_own_dev; i++)
    if (own_dev[i] == st.st_dev) return 1;
  return 0;
}

void remember_own(int fd) {
  struct stat st;
  if (n_own_dev < MAX_OWN_DEVS && fstat(fd, &st) == 0) own_dev[n_own_dev++] = st.st_dev;
}


/* Opens absolute `path` below `root` component by component, never following a symlink (a symlink
 * anywhere, the last component included, gives ELOOP). WALK_DIR/WALK_FILE create what is missing,
 * but only on tmpfs mounts made here: a mount point is never created inside a bound host folder.
 * Returns an O_PATH fd. */
int walk(int root, const char *path, int mode) {
  char buf[PATH_MAX];
  if (path[0] != '/') {
    errno = EINVAL;
    return -1;
  }
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int cur = fcntl(root, F_DUPFD_CLOEXEC, 0);
  if (cur < 0) return -1;
  char *p = buf;
  for (;;) {
    while (*p == '/') p++;
    if (!*p) return cur;
    char *end = strchr(p, '/');
    if (end) *end = 0;
    int last = !end || !end[1 + strspn(end + 1, "/")];
    int err = 0;
    int fd = -1;
    if (strcmp(p, ".") == 0 || strcmp(p, "..") == 0) {
      err = EINVAL; /* real paths have neither */
    } else {
      fd = openat(cur, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT && mode != WALK_OPEN && is_own_tmpfs(cur)) {
        if (!last || mode == WALK_DIR) {
          if (mkdirat(cur, p, 0755) == 0 || errno == EEXIST) fd = openat(cur, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        } else {
          int f = openat(cur, p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
          if (f >= 0) close(f);
          if (f >= 0 || errno == EEXIST) fd = openat(cur, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        }
      }
      if (fd < 0) err = errno;
    }
    close(cur);
    struct stat st;
    if (!err && fstat(fd, &st) != 0) err = errno;
    else if (!err && S_ISLNK(st.st_mode)) err = ELOOP;
    else if (!err && !last && !S_ISDIR(st.st_mode)) err = ENOTDIR;
    if (err) {
      if (fd >= 0) close(fd);
      errno = err;
      return -1;
    }
    if (last) return fd;
    cur = fd;
    p = end + 1;
  }
}

void fd_path(char *buf, size_t size, int fd) { snprintf(buf, size, "/proc/self/fd/%d", fd); }

/* Binds the object open at `src` onto the one open at `dst` (both O_PATH fds), recursively. */
int bind_fds(int src, int dst) {
  char s[32], d[32];
  fd_path(s, sizeof s, src);
  fd_path(d, sizeof d, dst);
  return mount(s, d, NULL, MS_BIND | MS_REC, NULL);
}

int mount_fs_on(const char *type, int dst, unsigned long flags, const char *data) {
  char d[32];
  fd_path(d, sizeof d, dst);
  return mount(type, d, type, flags, data);
}

/* Adds mount flags to the mount at `fd` (and below it when `recursive`). Kernels before
 * mount_setattr (5.12) remount the top mount only, keeping the flags a user namespace may not drop. */
int add_flags(int fd, uint64_t set, int recursive) {
  struct mount_attr_v0 attr = {.attr_set = set};
  if (syscall(__NR_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof attr) == 0)
    return 0;
  if (errno != ENOSYS) return -1;
  char p[32];
  fd_path(p, sizeof p, fd);
  struct statvfs sv;
  unsigned long flags = MS_REMOUNT | MS_BIND;
  if (fstatvfs(fd, &sv) == 0) {
    if (sv.f_flag & ST_RDONLY) flags |= MS_RDONLY;
    if (sv.f_flag & ST_NOSUID) flags |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV) flags |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME) flags |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  }
  if (set & ATTR_RDONLY) flags |= MS_RDONLY;
  if (set & ATTR_NOSUID) flags |= MS_NOSUID;
  if (set & ATTR_NODEV) flags |= MS_NODEV;
  if (set & ATTR_NOEXEC) flags |= MS_NOEXEC;
  return mount(NULL, p, NULL, flags, NULL);
}

/* After a mount on `path`, an fd of the mount's root (the fd used as target still names the
 * folder underneath). */
int reopen(int root, const char *path) { return walk(root, path, WALK_OPEN); }

/* Binds `src` (an O_PATH fd on the host) at `path` in the view and adds `flags` to every mount of
 * the bind. Returns 0, or -1 with errno. */
int place(int root, int src, const char *path, uint64_t flags) {
  struct stat st;
  if (fstat(src, &st) != 0) return -1;
  int dst = walk(root, path, S_ISDIR(st.st_mode) ? WALK_DIR : WALK_FILE);
  if (dst < 0) return -1;
  int rc = bind_fds(src, dst);
  int saved = errno;
  close(dst);
  if (rc != 0) {
    errno = saved;
    return -1;
  }
  int top = reopen(root, path);
  if (top < 0) return -1;
  rc = flags ? add_flags(top, flags, 1) : 0;
  saved = errno;
  close(top);
  errno = saved;
  return rc;
}
