/* Descriptor-relative file operations for rune's own code outside the sandbox (src/core/fd/): every
 * path a sandboxed command could have changed is resolved from a pinned folder descriptor, one
 * component after the other, never through a symbolic link. All return -errno on failure. */
#ifndef RUNE_FDOPS_H
#define RUNE_FDOPS_H

#include <stdint.h>
#include <sys/types.h>

/*
 * Opens `path` (relative: components separated by '/', none of them empty, "." or "..") below the
 * folder `dirfd` (or "." for the folder itself) with flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, following no symbolic link on the
 * way (a link anywhere gives -ELOOP). openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS) where the kernel has it; otherwise a walk opening each folder with
 * O_PATH | O_DIRECTORY | O_NOFOLLOW. `mode` is used with O_CREAT. Returns the descriptor.
 */
int rune_fd_resolve(int dirfd, const char *path, int flags, mode_t mode);

/* 1 when rune_fd_resolve uses openat2, 0 when it walks; `force_walk` (tests) makes it walk. */
int rune_fd_openat2(int force_walk);

/* mkdirat / unlinkat / readlinkat with one component `name` below `dirfd`. */
int rune_fd_mkdirat(int dirfd, const char *name, mode_t mode);
int rune_fd_unlinkat(int dirfd, const char *name, int remove_dir);
/* The link's text into buf (NUL-terminated); its length. */
int rune_fd_readlinkat(int dirfd, const char *name, char *buf, size_t size);

/* renameat2(olddir, oldname, newdir, newname, flags); flags 0 falls back to renameat. */
int rune_fd_renameat(int olddir, const char *oldname, int newdir, const char *newname, unsigned flags);

struct rune_fd_stat {
  uint32_t mode, nlink, uid, gid;
  uint64_t dev, ino, size;
  int64_t mtime_ns, ctime_ns;
};

/* fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW); an empty name stats dirfd itself. */
int rune_fd_statat(int dirfd, const char *name, struct rune_fd_stat *out);

/* lstat of the last component of `path` (relative, as for rune_fd_resolve; "" for dirfd itself),
 * its folders resolved through no link: one call for what open + fstatat + close would do. */
int rune_fd_stat_path(int dirfd, const char *path, struct rune_fd_stat *out);

/* Opens the one component `name` below `dirfd` for reading as rune_fd_resolve does, with O_NONBLOCK
 * (a FIFO put there cannot block the open), and its fstat into `out`: one call for open + fstat. */
int rune_fd_open_read(int dirfd, const char *name, struct rune_fd_stat *out);

/* Reads `fd` from offset 0 into buf, at most `size` bytes; the first `sniff` bytes are read alone and
 * the rest is not read when they hold a NUL (a binary file). Always closes fd. Returns the length. */
long rune_fd_read_close(int fd, char *buf, size_t size, size_t sniff);

/* 0 when `name` is one path component (not empty, ".", ".." and without '/'), else -EINVAL. */
int rune_fd_component(const char *name);

#endif
