/* rune mount's file system, the native half: a fixed tree of folders and files whose names and
 * attributes are answered here, on the FUSE thread, and dynamic files (the tool endpoints and their
 * logs) whose open/read/write/release are posted as events and answered later, by id, from
 * JavaScript. Nothing here waits for JavaScript: a pending read holds a request, not a thread. */
#ifndef RUNE_FUSE_FS_H
#define RUNE_FUSE_FS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum rune_fuse_op {
  RUNE_FUSE_OPEN = 1,
  RUNE_FUSE_READ,
  RUNE_FUSE_WRITE,
  RUNE_FUSE_RELEASE,
  RUNE_FUSE_INTERRUPT,
  RUNE_FUSE_ENDED, /* the kernel ended the mount (fusermount3 -u, umount): no more events */
};

/* One event for JavaScript; `data` (WRITE only) is malloc'd and freed with the event. */
struct rune_fuse_event {
  enum rune_fuse_op op;
  uint64_t id; /* the request to answer; 0 for RELEASE and ENDED */
  uint64_t ino;
  uint64_t fh; /* JavaScript's handle number (READ, WRITE, RELEASE) */
  int32_t pid, sid, flags;
  uint32_t uid;
  uint64_t offset;
  size_t size;
  char *data;
};

/* A node of the tree: a folder, a file with fixed content, or a dynamic file (content == NULL). */
struct rune_fuse_node {
  uint64_t ino, parent;
  char *name;
  int dir;
  mode_t mode;
  const char *content;
  size_t content_len;
};

struct rune_fuse_mount;
typedef void (*rune_fuse_post_fn)(void *ctx, struct rune_fuse_event *event);

/* Mounts at `mountpoint` with libfuse options `options` (-o syntax) and starts the FUSE thread.
 * NULL on failure, with the reason in `error`. */
struct rune_fuse_mount *rune_fuse_start(const char *mountpoint, const char *options, rune_fuse_post_fn post,
                                        void *post_ctx, char *error, size_t error_size);

/* Replaces the tree (the nodes and their strings are copied). 0, or -errno. */
int rune_fuse_set_tree(struct rune_fuse_mount *m, const struct rune_fuse_node *nodes, size_t count);

/* Answers a posted request. 0, or -ENOENT when `id` is not pending (answered, or never posted). */
int rune_fuse_reply_open(struct rune_fuse_mount *m, uint64_t id, uint64_t fh);
int rune_fuse_reply_data(struct rune_fuse_mount *m, uint64_t id, const char *data, size_t size);
int rune_fuse_reply_write(struct rune_fuse_mount *m, uint64_t id, size_t count);
int rune_fuse_reply_error(struct rune_fuse_mount *m, uint64_t id, int err);

/* Stops the FUSE thread, fails what is still pending with `err`, unmounts and frees `m`. */
void rune_fuse_stop(struct rune_fuse_mount *m, int err);

#endif
