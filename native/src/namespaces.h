/* The namespaces layer of a sandboxed command: the clone that creates them (user, mount, PID, net,
 * and IPC, UTS and cgroup where the kernel allows), and inside them the id maps, the loopback and
 * the view (view.c). */
#ifndef RUNE_NAMESPACES_H
#define RUNE_NAMESPACES_H

#include <sys/types.h>

#include "report.h"
#include "view.h"

/* Forks the child into new namespaces (with a new network namespace when `net_isolate`). Returns
 * as fork does; `*ns` holds the namespaces made, 0 when the kernel refused them all (no child then:
 * the caller forks without). */
pid_t namespaces_clone(struct reporter *r, int net_isolate, unsigned long *ns);

/* In the child, inside the namespaces `ns`: maps `uid` and `gid`, brings up the loopback and builds
 * the view into `built`. */
void namespaces_enter(struct reporter *r, unsigned long ns, uid_t uid, gid_t gid, struct view_result *built);

#endif
