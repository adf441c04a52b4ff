/* The part of libfuse 3's low-level ABI that rune mount uses, declared here so the addon builds
 * without libfuse's headers and loads the library only at run time (dlopen). libfuse keeps these
 * layouts stable across 3.x (fields are only appended, padding is explicit); fuse_abi_check.c,
 * compiled against the real headers by src/mount/abi.test.ts, fails when one of them drifts.
 * ADR 0030 says why this and not the headers. */
#ifndef RUNE_FUSE_ABI_H
#define RUNE_FUSE_ABI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef uint64_t rfuse_ino_t;
typedef struct fuse_req *rfuse_req_t;
struct fuse_session;
struct fuse_conn_info;

struct rfuse_args {
  int argc;
  char **argv;
  int allocated;
};

/* struct fuse_file_info. The tail (backing_id, compat_flags, reserved) is what libfuse 3.17 added;
 * a copy rune hands to fuse_reply_open must be as long as the newest library reads. */
struct rfuse_file_info {
  int32_t flags;
  uint32_t writepage : 1;
  uint32_t direct_io : 1;
  uint32_t keep_cache : 1;
  uint32_t flush : 1;
  uint32_t nonseekable : 1;
  uint32_t flock_release : 1;
  uint32_t cache_readdir : 1;
  uint32_t noflush : 1;
  uint32_t padding : 24;
  uint32_t padding2;
  uint32_t padding3;
  uint64_t fh;
  uint64_t lock_owner;
  uint32_t poll_events;
  int32_t backing_id;
  uint64_t compat_flags;
  uint64_t reserved[6];
};

struct rfuse_entry_param {
  rfuse_ino_t ino;
  uint64_t generation;
  struct stat attr;
  double attr_timeout;
  double entry_timeout;
};

struct rfuse_ctx {
  uid_t uid;
  gid_t gid;
  pid_t pid;
  mode_t umask;
};

/* struct fuse_buf; libfuse 3.17 appended mem_size, and a later one may append more: it is always
 * used inside RFUSE_BUF_ROOM zeroed bytes. */
struct rfuse_buf {
  size_t size;
  int flags;
  void *mem;
  int fd;
  off_t pos;
  size_t mem_size;
};
#define RFUSE_BUF_ROOM 256

/* The first members of struct fuse_lowlevel_ops, in libfuse's order; fuse_session_new copies
 * op_size bytes and leaves the rest unset (the kernel then gets ENOSYS, or libfuse's default). */
struct rfuse_lowlevel_ops {
  void (*init)(void *userdata, struct fuse_conn_info *conn);
  void (*destroy)(void *userdata);
  void (*lookup)(rfuse_req_t req, rfuse_ino_t parent, const char *name);
  void (*forget)(rfuse_req_t req, rfuse_ino_t ino, uint64_t nlookup);
  void (*getattr)(rfuse_req_t req, rfuse_ino_t ino, struct rfuse_file_info *fi);
  void (*setattr)(rfuse_req_t req, rfuse_ino_t ino, struct stat *attr, int to_set, struct rfuse_file_info *fi);
  void (*readlink)(rfuse_req_t req, rfuse_ino_t ino);
  void (*mknod)(rfuse_req_t req, rfuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
  void (*mkdir)(rfuse_req_t req, rfuse_ino_t parent, const char *name, mode_t mode);
  void (*unlink)(rfuse_req_t req, rfuse_ino_t parent, const char *name);
  void (*rmdir)(rfuse_req_t req, rfuse_ino_t parent, const char *name);
  void (*symlink)(rfuse_req_t req, const char *link, rfuse_ino_t parent, const char *name);
  void (*rename)(rfuse_req_t req, rfuse_ino_t parent, const char *name, rfuse_ino_t newparent,
                 const char *newname, unsigned int flags);
  void (*link)(rfuse_req_t req, rfuse_ino_t ino, rfuse_ino_t newparent, const char *newname);
  void (*open)(rfuse_req_t req, rfuse_ino_t ino, struct rfuse_file_info *fi);
  void (*read)(rfuse_req_t req, rfuse_ino_t ino, size_t size, off_t off, struct rfuse_file_info *fi);
  void (*write)(rfuse_req_t req, rfuse_ino_t ino, const char *buf, size_t size, off_t off,
                struct rfuse_file_info *fi);
  void (*flush)(rfuse_req_t req, rfuse_ino_t ino, struct rfuse_file_info *fi);
  void (*release)(rfuse_req_t req, rfuse_ino_t ino, struct rfuse_file_info *fi);
  void (*fsync)(rfuse_req_t req, rfuse_ino_t ino, int datasync, struct rfuse_file_info *fi);
  void (*opendir)(rfuse_req_t req, rfuse_ino_t ino, struct rfuse_file_info *fi);
  void (*readdir)(rfuse_req_t req, rfuse_ino_t ino, size_t size, off_t off, struct rfuse_file_info *fi);
};

typedef void (*rfuse_interrupt_func_t)(rfuse_req_t req, void *data);
typedef void (*rfuse_log_func_t)(int level, const char *fmt, va_list ap);

/* The functions rune resolves, each with the symbol version whose ABI is declared above. */
#define RFUSE_FUNCTIONS(X)                                                                           \
  X(struct fuse_session *, session_new, "fuse_session_new",                                          \
    (struct rfuse_args * args, const struct rfuse_lowlevel_ops *op, size_t op_size, void *userdata)) \
  X(int, session_mount, "fuse_session_mount", (struct fuse_session * se, const char *mountpoint))    \
  X(void, session_unmount, "fuse_session_unmount", (struct fuse_session * se))                       \
  X(void, session_destroy, "fuse_session_destroy", (struct fuse_session * se))                       \
  X(int, session_fd, "fuse_session_fd", (struct fuse_session * se))                                  \
  X(int, session_receive_buf, "fuse_session_receive_buf", (struct fuse_session * se, struct rfuse_buf * buf)) \
  X(void, session_process_buf, "fuse_session_process_buf",                                           \
    (struct fuse_session * se, const struct rfuse_buf *buf))                                         \
  X(void *, req_userdata, "fuse_req_userdata", (rfuse_req_t req))                                    \
  X(const struct rfuse_ctx *, req_ctx, "fuse_req_ctx", (rfuse_req_t req))                            \
  X(void, req_interrupt_func, "fuse_req_interrupt_func",                                             \
    (rfuse_req_t req, rfuse_interrupt_func_t func, void *data))                                      \
  X(int, reply_err, "fuse_reply_err", (rfuse_req_t req, int err))                                    \
  X(void, reply_none, "fuse_reply_none", (rfuse_req_t req))                                          \
  X(int, reply_entry, "fuse_reply_entry", (rfuse_req_t req, const struct rfuse_entry_param *e))       \
  X(int, reply_attr, "fuse_reply_attr", (rfuse_req_t req, const struct stat *attr, double timeout))   \
  X(int, reply_open, "fuse_reply_open", (rfuse_req_t req, const struct rfuse_file_info *fi))          \
  X(int, reply_buf, "fuse_reply_buf", (rfuse_req_t req, const char *buf, size_t size))              \
  X(int, reply_write, "fuse_reply_write", (rfuse_req_t req, size_t count))                          \
  X(size_t, add_direntry, "fuse_add_direntry",                                                       \
    (rfuse_req_t req, char *buf, size_t bufsize, const char *name, const struct stat *stbuf, off_t off)) \
  X(void, opt_free_args, "fuse_opt_free_args", (struct rfuse_args * args))                           \
  X(const char *, pkgversion, "fuse_pkgversion", (void))

#endif
