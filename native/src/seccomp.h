/* The seccomp layer of a sandboxed command: the deny list, the view's stand-in rules for what a
 * missing namespace leaves open, and the net guard's supervision of connect(). */
#ifndef RUNE_SECCOMP_H
#define RUNE_SECCOMP_H

#include <sys/types.h>

#include "report.h"

/* What the net guard supervises: NOTIFY_CONNECT only connect() (pathname UNIX sockets), NOTIFY_NET
 * also shutdown() and Fast Open (allowed domains: host sockets exist). */
enum { NOTIFY_CONNECT = 1, NOTIFY_NET = 2 };

struct seccomp_result {
  int applied;  /* the filter is in force */
  int listener; /* the metadata guard's user-notification fd, or -1 */
};

/* The deny list, for the init and the command alike. `lost` names what the namespaces and the view
 * could not provide (LOST_* of view.h); `rune_pid` is kept out of reach without a PID namespace.
 * With `meta`, chmod and chown go to the metadata guard through the listener returned. */
struct seccomp_result seccomp_apply(struct reporter *r, unsigned lost, pid_t rune_pid, int meta);

/* In the command's process, before its exec: the net guard's filter on top of the deny list. The
 * listener and the guard's end of the connector's channel go to the parent over `guard_sock`. */
void seccomp_supervise_connects(struct reporter *r, int guard_sock, int channel, int mode, int view_built);

#endif
