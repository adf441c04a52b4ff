/* The rlimits layer of a sandboxed command: --fsize, --nofile, --nproc, --data, and no core files. */
#ifndef RUNE_RLIMITS_H
#define RUNE_RLIMITS_H

#include "report.h"

/* Sets each limit given (never above a hard limit already lower) and reports them in one line. */
void rlimits_apply(struct reporter *r);

#endif
