/* Probes the sandbox primitives of the running kernel. Namespace creation is tried in a forked
 * child, because unshare(CLONE_NEWUSER) fails with EINVAL in a multi-threaded process like Node. */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef SECCOMP_GET_ACTION_AVAIL
#define SECCOMP_GET_ACTION_AVAIL 2
#endif
#ifndef SECCOMP_GET_NOTIF_SIZES
#define SECCOMP_GET_NOTIF_SIZES 3
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif

static int neg_errno(long rc) { return rc < 0 ? -errno : (int)rc; }

/* The child reports the step that failed and its errno through a shared page: an exit status has
 * too few bits for errno (ENOSYS, 38, which Podman's and containerd's profiles return for unshare,
 * once came out as ENXIO). Without the page, the exit status carries the step and errno & 31. */
enum { STEP_USER = 1, STEP_NET = 2, STEP_MOUNT = 3, STEP_PID = 4 };

static void probe_namespaces(struct rune_probe *out) {
  out->userns = out->netns = out->mountns = out->pidns = -ENOSYS;
  int *shared = mmap(NULL, 2 * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) shared = NULL;
  else shared[0] = shared[1] = 0;
  pid_t pid = fork();
  if (pid < 0) {
    out->userns = out->netns = out->mountns = out->pidns = -errno;
    if (shared) munmap(shared, 2 * sizeof(int));
    return;
  }
  if (pid == 0) {
    static const int flags[] = {0, CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID};
    for (int step = STEP_USER; step <= STEP_PID; step++) {
      if (unshare(flags[step]) != 0) {
        int err = errno;
        if (shared) {
          shared[0] = step;
          shared[1] = err;
        }
        _exit((step << 5) | (err & 31));
      }
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : (STEP_USER << 5) | ECHILD;
  int failed_step = code >> 5;
  int err = code & 31;
  if (shared) {
    if (failed_step != 0 && shared[0] == failed_step && shared[1] > 0) err = shared[1];
    munmap(shared, 2 * sizeof(int));
  }
  int *results[] = {NULL, &out->userns, &out->netns, &out->mountns, &out->pidns};
  for (int step = STEP_USER; step <= STEP_PID; step++) {
    if (failed_step == 0 || step < failed_step) *results[step] = 0;
    else if (step == failed_step) *results[step] = -err;
    else *results[step] = -ECANCELED; /* not tried: an earlier step failed */
  }
}

void rune_probe_kernel(struct rune_probe *out) {
  out->landlock_abi = neg_errno(syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION));

  unsigned int action = SECCOMP_RET_KILL_PROCESS;
  out->seccomp_filter = neg_errno(syscall(__NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action));
  struct seccomp_notif_sizes sizes;
  out->seccomp_user_notif = neg_errno(syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes));
  out->current_seccomp = neg_errno(prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
  out->no_new_privs = neg_errno(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
  out->unshare_noop = neg_errno(unshare(0));

  probe_namespaces(out);
}
