/* Landlock for one thread of rune's own process. The UAPI constants are defined here because
 * Debian's kernel headers are older than the kernels rune runs on (see PROBE-FINDINGS). */
#define _GNU_SOURCE
#include "thread_landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define RL_CREATE_RULESET_VERSION (1U << 0)
#define RL_RULE_PATH_BENEATH 1

#define RL_FS_READ_FILE (1ULL << 2)
#define RL_FS_READ_DIR (1ULL << 3)
#define RL_FS_ABI1 ((1ULL << 13) - 1) /* EXECUTE … MAKE_SYM */
#define RL_FS_REFER (1ULL << 13)      /* ABI 2 */
#define RL_FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define RL_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#define RL_NET_ALL ((1ULL << 0) | (1ULL << 1))   /* BIND_TCP, CONNECT_TCP: ABI 4 */
#define RL_SCOPE_ALL ((1ULL << 0) | (1ULL << 1)) /* ABSTRACT_UNIX_SOCKET, SIGNAL: ABI 6 */

struct rl_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct rl_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

static int fail(struct rune_thread_landlock *out, const char *step) {
  out->error = errno;
  out->step = step;
  return -1;
}

static int add_path(int ruleset, const char *path, uint64_t want, uint64_t handled, struct rune_thread_landlock *out) {
  int fd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    out->skipped++;
    return 0;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
    close(fd);
    out->skipped++;
    return 0;
  }
  /* A rule on a file may hold file rights only (else EINVAL). */
  struct rl_path_beneath_attr rule = {
      .allowed_access = (S_ISDIR(st.st_mode) ? want : (want & RL_FS_READ_FILE)) & handled,
      .parent_fd = fd,
  };
  long rc = rule.allowed_access == 0 ? 0 : syscall(__NR_landlock_add_rule, ruleset, RL_RULE_PATH_BENEATH, &rule, 0);
  int saved = errno;
  close(fd);
  errno = saved;
  if (rc != 0) return -1;
  if (rule.allowed_access != 0) out->rules++;
  return 0;
}

int rune_thread_landlock(const char *const *read, unsigned n_read, const char *const *list, unsigned n_list,
                         struct rune_thread_landlock *out) {
  out->abi = 0;
  out->rules = 0;
  out->skipped = 0;
  out->error = 0;
  out->step = "";
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, RL_CREATE_RULESET_VERSION);
  if (abi < 1) return fail(out, "abi");

  struct rl_ruleset_attr attr = {0};
  attr.handled_access_fs = RL_FS_ABI1;
  if (abi >= 2) attr.handled_access_fs |= RL_FS_REFER;
  if (abi >= 3) attr.handled_access_fs |= RL_FS_TRUNCATE;
  if (abi >= 5) attr.handled_access_fs |= RL_FS_IOCTL_DEV;
  if (abi >= 4) attr.handled_access_net = RL_NET_ALL;
  if (abi >= 6) attr.scoped = RL_SCOPE_ALL;
  size_t size = abi >= 6 ? sizeof(attr) : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);

  int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) return fail(out, "ruleset");
  for (unsigned i = 0; i < n_read; i++) {
    if (add_path(ruleset, read[i], RL_FS_READ_FILE | RL_FS_READ_DIR, attr.handled_access_fs, out) != 0) {
      int saved = errno;
      close(ruleset);
      errno = saved;
      return fail(out, "rule");
    }
  }
  for (unsigned i = 0; i < n_list; i++) {
    if (add_path(ruleset, list[i], RL_FS_READ_DIR, attr.handled_access_fs, out) != 0) {
      int saved = errno;
      close(ruleset);
      errno = saved;
      return fail(out, "rule");
    }
  }
  /* Both act on the calling thread only: the rest of the process keeps its rights. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    int saved = errno;
    close(ruleset);
    errno = saved;
    return fail(out, "no_new_privs");
  }
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) {
    int saved = errno;
    close(ruleset);
    errno = saved;
    return fail(out, "restrict");
  }
  close(ruleset);
  out->abi = (int)abi;
  return 0;
}
