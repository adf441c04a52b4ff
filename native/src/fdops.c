/* Descriptor-relative file operations for rune's own code outside the sandbox (src/core/fd/). */
#define _GNU_SOURCE
#include "fdops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_MAGICLINKS 0x02
#endif
#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_SYMLINKS 0x04
#endif
#ifndef RESOLVE_BENEATH
#define RESOLVE_BENEATH 0x08
#endif
#ifndef O_PATH
#define O_PATH 010000000
#endif

struct open_how_v0 {
  uint64_t flags, mode, resolve;
};

/* -1 unknown, 0 absent (ENOSYS, or a seccomp filter refusing it), 1 present. */
static int have_openat2 = -1;
static int walk_forced = 0;

int rune_fd_component(const char *name) {
  if (name[0] == '\0' || strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
    return -EINVAL;
  return 0;
}

/* Every component of a relative path is a name: no leading or doubled slash, no "." or "..". */
static int check_path(const char *path) {
  if (strcmp(path, ".") == 0) return 0; /* the folder itself, opened anew (another mode) */
  if (path[0] == '\0' || path[0] == '/') return -EINVAL;
  const char *at = path;
  for (;;) {
    const char *slash = strchr(at, '/');
    size_t len = slash ? (size_t)(slash - at) : strlen(at);
    if (len == 0 || (len == 1 && at[0] == '.') || (len == 2 && at[0] == '.' && at[1] == '.')) return -EINVAL;
    if (!slash) return 0;
    at = slash + 1;
  }
}

/* A component that is not a folder: -ELOOP when it is a link (as openat2 says), else -ENOTDIR. */
static int not_folder(int dirfd, const char *name) {
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) return -ELOOP;
  return -ENOTDIR;
}

static int walk_open(int dirfd, const char *path, int flags, mode_t mode) {
  char part[4096];
  int current = dirfd;
  const char *at = path;
  for (;;) {
    const char *slash = strchr(at, '/');
    if (!slash) break;
    size_t len = (size_t)(slash - at);
    if (len >= sizeof part) {
      if (current != dirfd) close(current);
      return -ENAMETOOLONG;
    }
    memcpy(part, at, len);
    part[len] = '\0';
    int next = openat(current, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc = next < 0 ? (errno == ENOTDIR ? not_folder(current, part) : -errno) : 0;
    if (current != dirfd) close(current);
    if (rc < 0) return rc;
    current = next;
    at = slash + 1;
  }
  int fd = openat(current, at, flags, mode);
  int rc = fd < 0 ? -errno : fd;
  if (current != dirfd) close(current);
  return rc;
}

int rune_fd_openat2(int force_walk) {
  walk_forced = force_walk;
  return !walk_forced && have_openat2 != 0;
}

int rune_fd_resolve(int dirfd, const char *path, int flags, mode_t mode) {
  int bad = check_path(path);
  if (bad < 0) return bad;
  flags |= O_NOFOLLOW | O_CLOEXEC;
  /* openat2 refuses any other flag beside O_PATH (EINVAL); the others mean nothing there anyway. */
  if (flags & O_PATH)
    flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  else
    flags |= O_NOCTTY;
  if (!(flags & (O_CREAT | O_TMPFILE))) mode = 0;
  int fd = -ENOSYS;
  if (!walk_forced && have_openat2 != 0) {
    struct open_how_v0 how = {(uint64_t)flags, (uint64_t)mode,
                              RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    /* EAGAIN: a rename or mount raced the lookup; the kernel asks to try again. */
    for (int tries = 0; tries < 8; tries++) {
      long r = syscall(__NR_openat2, dirfd, path, &how, sizeof how);
      fd = r < 0 ? -errno : (int)r;
      if (fd != -EAGAIN) break;
    }
    /* ENOSYS: an older kernel; EPERM: a seccomp filter that refuses calls it does not know. */
    if (have_openat2 < 0 && (fd == -ENOSYS || fd == -EPERM)) {
      int probe = (int)syscall(__NR_openat2, -1, "", NULL, (size_t)0);
      have_openat2 = probe < 0 && (errno == ENOSYS || errno == EPERM) ? 0 : 1;
    } else if (have_openat2 < 0) {
      have_openat2 = 1;
    }
  }
  if (walk_forced || have_openat2 == 0) fd = walk_open(dirfd, path, flags, mode);
  if (fd >= 0 && (flags & O_PATH)) {
    /* O_PATH | O_NOFOLLOW opens a trailing link itself: that is a link on the way too. */
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {
      close(fd);
      return -ELOOP;
    }
  }
  return fd;
}

int rune_fd_mkdirat(int dirfd, const char *name, mode_t mode) {
  int bad = rune_fd_component(name);
  if (bad < 0) return bad;
  return mkdirat(dirfd, name, mode) == 0 ? 0 : -errno;
}

int rune_fd_unlinkat(int dirfd, const char *name, int remove_dir) {
  int bad = rune_fd_component(name);
  if (bad < 0) return bad;
  return unlinkat(dirfd, name, remove_dir ? AT_REMOVEDIR : 0) == 0 ? 0 : -errno;
}

int rune_fd_readlinkat(int dirfd, const char *name, char *buf, size_t size) {
  int bad = rune_fd_component(name);
  if (bad < 0) return bad;
  ssize_t n = readlinkat(dirfd, name, buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return (int)n;
}

int rune_fd_renameat(int olddir, const char *oldname, int newdir, const char *newname, unsigned flags) {
  int bad = rune_fd_component(oldname);
  if (bad == 0) bad = rune_fd_component(newname);
  if (bad < 0) return bad;
  if (flags == 0) return renameat(olddir, oldname, newdir, newname) == 0 ? 0 : -errno;
  return syscall(SYS_renameat2, olddir, oldname, newdir, newname, flags) == 0 ? 0 : -errno;
}

static void fill_stat(const struct stat *st, struct rune_fd_stat *out);

int rune_fd_statat(int dirfd, const char *name, struct rune_fd_stat *out) {
  struct stat st;
  int r;
  if (name[0] == '\0') {
    r = fstat(dirfd, &st);
  } else {
    int bad = rune_fd_component(name);
    if (bad < 0) return bad;
    r = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW);
  }
  if (r != 0) return -errno;
  fill_stat(&st, out);
  return 0;
}

int rune_fd_stat_path(int dirfd, const char *path, struct rune_fd_stat *out) {
  if (path[0] == '\0') return rune_fd_statat(dirfd, "", out);
  const char *slash = strrchr(path, '/');
  if (!slash) return rune_fd_statat(dirfd, path, out);
  char parent[4096];
  size_t len = (size_t)(slash - path);
  if (len >= sizeof parent) return -ENAMETOOLONG;
  memcpy(parent, path, len);
  parent[len] = '\0';
  int fd = rune_fd_resolve(dirfd, parent, O_PATH | O_DIRECTORY, 0);
  if (fd < 0) return fd;
  int rc = rune_fd_statat(fd, slash + 1, out);
  close(fd);
  return rc;
}

int rune_fd_open_read(int dirfd, const char *name, struct rune_fd_stat *out) {
  int bad = rune_fd_component(name);
  if (bad < 0) return bad;
  int fd = rune_fd_resolve(dirfd, name, O_RDONLY | O_NONBLOCK, 0);
  if (fd < 0) return fd;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int rc = -errno;
    close(fd);
    return rc;
  }
  fill_stat(&st, out);
  return fd;
}

long rune_fd_read_close(int fd, char *buf, size_t size, size_t sniff) {
  size_t length = 0;
  long rc = 0;
  while (length < size) {
    size_t want = length == 0 && sniff > 0 && sniff < size ? sniff : size - length;
    ssize_t n = pread(fd, buf + length, want, (off_t)length);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      rc = -errno;
      break;
    }
    if (n == 0) break;
    length += (size_t)n;
    if (length == (size_t)n && length < size && memchr(buf, 0, length) != NULL) break;
  }
  close(fd);
  return rc < 0 ? rc : (long)length;
}

static void fill_stat(const struct stat *stp, struct rune_fd_stat *out) {
  const struct stat st = *stp;
  out->mode = st.st_mode;
  out->nlink = (uint32_t)st.st_nlink;
  out->uid = st.st_uid;
  out->gid = st.st_gid;
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  out->size = (uint64_t)st.st_size;
  out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
  out->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
}
