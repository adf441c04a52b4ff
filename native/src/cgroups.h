/* The cgroups layer of a sandboxed command: the parent moves the child into the call's cgroups
 * (--cgroup, one per hierarchy) while the child builds its view, and the child waits for the word
 * before it starts anything, so everything of the call runs inside. */
#ifndef RUNE_CGROUPS_H
#define RUNE_CGROUPS_H

#include <sys/types.h>

#include "report.h"

/* In the parent: moves `child` into every --cgroup folder, then sends the verdict on `done_fd` (a
 * failed join in strict mode stops the child) and closes it. Nothing to do when `done_fd` < 0. */
void cgroups_join(struct reporter *r, pid_t child, int done_fd);

/* In the child: blocks until the parent has moved it (cgroups_join). A parent gone before saying so
 * ends the call; a failed join in strict mode is a failed layer. With a cgroup namespace (`ns` holds
 * CLONE_NEWCGROUP), a new one is made now, rooted at the call's own cgroup rather than rune's. */
void cgroups_wait(struct reporter *r, int wait_fd, unsigned long ns);

#endif
