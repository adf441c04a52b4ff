/* The view's part of the helper's command line: the view spec (view.h) from the flags, the hide list
 * grown by --hide-closed, and the generated /etc/hosts of --host. */
#ifndef RUNE_VIEW_ARGS_H
#define RUNE_VIEW_ARGS_H

#include "report.h"

/* Fills `view` from the flags. `guarded` is how many addresses the net guard allows: with any, or
 * with --host names, the view gets the generated /etc/hosts and resolv.conf. */
void view_args_apply(int guarded);

/* Adds the entries of the --hide-closed folders to the hide list (and the view's). Done by the
 * process that applies it: the child with namespaces, the helper before a fork without them, or for
 * the metadata guard; once per process. -1 when the list is full: fail closed, a secret left out
 * would be readable. */
int view_args_hide_closed(struct reporter *r);

#endif
