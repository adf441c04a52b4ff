/* File-system primitives of the view (view-fs.c). */
#ifndef RUNE_VIEW_FS_H
#define RUNE_VIEW_FS_H

#include <stddef.h>
#include <stdint.h>

/* Mount attributes for add_flags (mount_setattr's MOUNT_ATTR_*). */
#define ATTR_RDONLY 0x1ULL
#define ATTR_NOSUID 0x2ULL
#define ATTR_NODEV 0x4ULL
#define ATTR_NOEXEC 0x8ULL

enum { WALK_OPEN, WALK_DIR, WALK_FILE };

/* The tmpfs mounts made for the view: mount points may be created only inside them. */
void remember_own(int fd);
void forget_own(void);
int is_own_tmpfs(int fd);

/* Opens absolute `path` below `root` without following any symlink (ELOOP); WALK_DIR/WALK_FILE
 * create what is missing on the view's own tmpfs mounts. Returns an O_PATH fd. */
int walk(int root, const char *path, int mode);
void fd_path(char *buf, size_t size, int fd);
/* Binds the object open at `src` onto the one open at `dst`, recursively. */
int bind_fds(int src, int dst);
int mount_fs_on(const char *type, int dst, unsigned long flags, const char *data);
/* Adds mount flags to the mount open at `fd` (and below it when `recursive`). */
int add_flags(int fd, uint64_t set, int recursive);
/* An fd of what is mounted at `path` now (the fd used as a target names the folder underneath). */
int reopen(int root, const char *path);
/* Binds `src` at `path` in the view and adds `flags` to every mount of the bind. */
int place(int root, int src, const char *path, uint64_t flags);

#endif
