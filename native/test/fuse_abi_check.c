/* Compares native/src/fuse_abi.h with libfuse's own headers: compiled and run by
 * src/mount/abi.test.ts wherever libfuse3-dev is installed (.ci/run installs it). A layout that
 * drifted fails to compile (offsets, sizes) or exits 1 (the bits of fuse_file_info). */
#define FUSE_USE_VERSION 31
#include <fuse3/fuse_lowlevel.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "fuse_abi.h"

#define SAME(theirs, ours, field) \
  _Static_assert(offsetof(struct theirs, field) == offsetof(struct ours, field), #theirs "." #field " moved")

SAME(fuse_args, rfuse_args, argc);
SAME(fuse_args, rfuse_args, argv);
SAME(fuse_args, rfuse_args, allocated);
_Static_assert(sizeof(struct fuse_args) == sizeof(struct rfuse_args), "fuse_args size");

SAME(fuse_file_info, rfuse_file_info, flags);
SAME(fuse_file_info, rfuse_file_info, fh);
SAME(fuse_file_info, rfuse_file_info, lock_owner);
SAME(fuse_file_info, rfuse_file_info, poll_events);
_Static_assert(sizeof(struct rfuse_file_info) >= sizeof(struct fuse_file_info), "fuse_file_info grew");

SAME(fuse_entry_param, rfuse_entry_param, ino);
SAME(fuse_entry_param, rfuse_entry_param, generation);
SAME(fuse_entry_param, rfuse_entry_param, attr);
SAME(fuse_entry_param, rfuse_entry_param, attr_timeout);
SAME(fuse_entry_param, rfuse_entry_param, entry_timeout);
_Static_assert(sizeof(struct fuse_entry_param) == sizeof(struct rfuse_entry_param), "fuse_entry_param size");

SAME(fuse_ctx, rfuse_ctx, uid);
SAME(fuse_ctx, rfuse_ctx, gid);
SAME(fuse_ctx, rfuse_ctx, pid);
SAME(fuse_ctx, rfuse_ctx, umask);

SAME(fuse_buf, rfuse_buf, size);
SAME(fuse_buf, rfuse_buf, flags);
SAME(fuse_buf, rfuse_buf, mem);
SAME(fuse_buf, rfuse_buf, fd);
SAME(fuse_buf, rfuse_buf, pos);
_Static_assert(sizeof(struct fuse_buf) <= RFUSE_BUF_ROOM, "fuse_buf outgrew RFUSE_BUF_ROOM");

#define OP(name) SAME(fuse_lowlevel_ops, rfuse_lowlevel_ops, name)
OP(init);
OP(destroy);
OP(lookup);
OP(forget);
OP(getattr);
OP(setattr);
OP(readlink);
OP(mknod);
OP(mkdir);
OP(unlink);
OP(rmdir);
OP(symlink);
OP(rename);
OP(link);
OP(open);
OP(read);
OP(write);
OP(flush);
OP(release);
OP(fsync);
OP(opendir);
OP(readdir);
_Static_assert(sizeof(struct rfuse_lowlevel_ops) <= sizeof(struct fuse_lowlevel_ops), "more ops than libfuse has");

/* Each flag bit rune declares, set alone, must be the same flag in libfuse's struct. */
#define BIT(name)                                          \
  do {                                                     \
    struct rfuse_file_info ours;                           \
    struct fuse_file_info theirs;                          \
    memset(&ours, 0, sizeof ours);                         \
    ours.name = 1;                                         \
    memcpy(&theirs, &ours, sizeof theirs);                 \
    struct fuse_file_info expected;                        \
    memset(&expected, 0, sizeof expected);                 \
    expected.name = 1;                                     \
    if (memcmp(&theirs, &expected, sizeof theirs) != 0) {  \
      printf("fuse_file_info.%s is another bit\n", #name); \
      failed = 1;                                          \
    }                                                      \
  } while (0)

int main(void) {
  int failed = 0;
  BIT(writepage);
  BIT(direct_io);
  BIT(keep_cache);
  BIT(flush);
  BIT(nonseekable);
  BIT(flock_release);
  BIT(cache_readdir);
  BIT(noflush);
  if (!failed) printf("fuse_abi.h matches libfuse %d.%d\n", FUSE_MAJOR_VERSION, FUSE_MINOR_VERSION);
  return failed;
}
