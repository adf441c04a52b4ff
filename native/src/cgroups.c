/* The cgroups layer (cgroups.h). A move into a cgroup v1 hierarchy waits out an RCU grace period,
 * so the parent makes it while the child builds its view rather than before the clone. */
#define _GNU_SOURCE
#include "cgroups.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "args.h"
#include "fds.h"

void cgroups_join(struct reporter *r, pid_t child, int done_fd) {
  if (done_fd < 0) return;
  char pid_text[32];
  snprintf(pid_text, sizeof pid_text, "%d", (int)child);
  const char **dirs = flag_values(FLAG_CGROUP);
  for (int k = 0; k < flag_count(FLAG_CGROUP); k++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cgroup.procs", dirs[k]);
    if (write_file(path, pid_text) != 0) skip(r, LAYER_CGROUPS, "joining %s", dirs[k], errno);
    else report(r, LAYER_CGROUPS, STATE_APPLIED, "joined %s", dirs[k]);
  }
  /* In strict mode a failed join stops the child (skip set the parent's `failed`, not the child's). */
  char verdict = r->failed ? 'f' : 'j';
  ssize_t n = send(done_fd, &verdict, 1, MSG_NOSIGNAL);
  (void)n;
  close(done_fd);
}

void cgroups_wait(struct reporter *r, int wait_fd, unsigned long ns) {
  if (wait_fd < 0) return;
  char verdict = 0;
  ssize_t n;
  do n = read(wait_fd, &verdict, 1);
  while (n < 0 && errno == EINTR);
  close(wait_fd);
  if (n != 1) die(r, "waiting for the cgroups");
  if (verdict == 'f') r->failed = 1;
  if ((ns & CLONE_NEWCGROUP) && unshare(CLONE_NEWCGROUP) != 0) die(r, "cgroup namespace");
}
