/* rune-sandbox's containment of a call without a PID namespace (see reaper.c). */
#ifndef RUNE_REAPER_H
#define RUNE_REAPER_H

#include <sys/types.h>

/* Makes this process the child subreaper of everything it starts (PR_SET_CHILD_SUBREAPER): an
 * orphan of the call re-parents to it instead of to init, so the call's processes stay its
 * descendants whatever they do. 0 on success. */
int reaper_become(void);

/* Kills every descendant of this process and reaps them, until none is left (or `max_ms` passed,
 * for a process the kernel cannot end). Only async-signal-safe calls: usable in a signal handler.
 * Returns how many processes were killed. */
int reaper_end_call(long max_ms);

#endif
