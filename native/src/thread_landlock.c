/* Landlock for one thread of rune's own process (the kernel interface: landlock_uapi.h). */
#define _GNU_SOURCE
#include "thread_landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock_uapi.h"

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
  struct ll_path_beneath_attr rule = {
      .allowed_access = (S_ISDIR(st.st_mode) ? want : (want & LL_FS_READ_FILE)) & handled,
      .parent_fd = fd,
  };
  long rc = rule.allowed_access == 0 ? 0 : syscall(LL_ADD_RULE, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
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
  long abi = syscall(LL_CREATE_RULESET, NULL, 0, LL_CREATE_RULESET_VERSION);
  if (abi < 1) return fail(out, "abi");

  struct ll_ruleset_attr attr;
  size_t size = ll_ruleset_for((int)abi, &attr);
  int ruleset = (int)syscall(LL_CREATE_RULESET, &attr, size, 0);
  if (ruleset < 0) return fail(out, "ruleset");
  for (unsigned i = 0; i < n_read; i++) {
    if (add_path(ruleset, read[i], LL_FS_READ_FILE | LL_FS_READ_DIR, attr.handled_access_fs, out) != 0) {
      int saved = errno;
      close(ruleset);
      errno = saved;
      return fail(out, "rule");
    }
  }
  for (unsigned i = 0; i < n_list; i++) {
    if (add_path(ruleset, list[i], LL_FS_READ_DIR, attr.handled_access_fs, out) != 0) {
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
  if (syscall(LL_RESTRICT_SELF, ruleset, 0) != 0) {
    int saved = errno;
    close(ruleset);
    errno = saved;
    return fail(out, "restrict");
  }
  close(ruleset);
  out->abi = (int)abi;
  return 0;
}
