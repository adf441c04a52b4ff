/* Landlock's kernel interface, defined here because Debian's kernel headers are older than the
 * kernels rune runs on (PROBE-FINDINGS): the helper's layer (landlock.c), the view's rules
 * (view-rules.c) and the walk worker's thread (thread_landlock.c) share it. */
#ifndef RUNE_LANDLOCK_UAPI_H
#define RUNE_LANDLOCK_UAPI_H

#include <stddef.h>
#include <stdint.h>

#define LL_CREATE_RULESET 444 /* __NR_landlock_create_ruleset */
#define LL_ADD_RULE 445
#define LL_RESTRICT_SELF 446
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_MAKE_SYM (1ULL << 12) /* the last right of ABI 1 */
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)
/* The rights a rule on a plain file may hold (more is EINVAL). */
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

/* Every file-system right the kernel of Landlock ABI `abi` handles. */
static inline uint64_t ll_fs_rights(int abi) {
  uint64_t r = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
  if (abi >= 2) r |= LL_FS_REFER;
  if (abi >= 3) r |= LL_FS_TRUNCATE;
  if (abi >= 5) r |= LL_FS_IOCTL_DEV;
  return r;
}

/* The ruleset attribute for ABI `abi`: what it handles and the size the kernel of that ABI reads. */
static inline size_t ll_ruleset_for(int abi, struct ll_ruleset_attr *attr) {
  *attr = (struct ll_ruleset_attr){.handled_access_fs = ll_fs_rights(abi)};
  if (abi >= 6) attr->scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
  if (abi >= 4) attr->handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
  return abi >= 6 ? sizeof *attr : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
}

#endif
