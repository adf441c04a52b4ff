/* The helper's own process once the child exists: it stays in the host's namespaces, serves the net
 * guard or the metadata guard, forwards signals, and ends the way the command ended. Without a PID
 * namespace it is also the call's child subreaper and ends whatever the command left (reaper.c). */
#ifndef RUNE_PARENT_H
#define RUNE_PARENT_H

#include <sys/types.h>

#include "netguard.h"
#include "report.h"

/* Before the fork, when there is no PID namespace: not dumpable, the call's child subreaper, and
 * ending the call's tree when rune (`starter`) dies. Returns whether the subreaper holds. */
int parent_contain(struct reporter *r, pid_t starter);

/* After the fork: `child` is the call; orphans are reaped as they end when `contained`. */
void parent_watch(pid_t child, int contained);

/* SIGTERM, SIGINT and SIGHUP go on to the child from now on. */
void parent_forward_signals(void);

/* Serves the net guard (over `guard_fd`) and then the metadata guard (over `meta_fd`) until the
 * command's filters are gone. -1 when the call must end (the child was killed). */
int parent_serve_guards(struct reporter *r, int guard_fd, int meta_fd, const struct ng_allow *allow, int n_allow);

/* Waits for the child and returns the helper's exit status: the command's own, or, when it was
 * killed by a signal, the same signal raised on this process. `status_fd`: the init's report of the
 * command's raw wait status (with namespaces), or -1. */
int parent_finish(int contained, int status_fd);

#endif
