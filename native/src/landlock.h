/* The Landlock layer of a sandboxed command: the view's grants again, as an independent second
 * layer, TCP bind/connect denied (ABI 4+), abstract sockets and signals scoped (ABI 6+). */
#ifndef RUNE_LANDLOCK_H
#define RUNE_LANDLOCK_H

#include "report.h"

/* Applies it to this process (no_new_privs must be set). Returns 1 when it applied and denies TCP
 * bind and connect, 0 otherwise; what it did or could not do is reported. */
int landlock_apply(struct reporter *r, int view_built);

#endif
