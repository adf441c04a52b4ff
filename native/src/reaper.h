/* rune-sandbox's containment of a call without a PID namespace (see reaper.c). */
#ifndef RUNE_REAPER_H
#define RUNE_REAPER_H

#include <linux/filter.h>
#include <sys/types.h>

/* Makes this process the child subreaper of everything it starts (PR_SET_CHILD_SUBREAPER): an
 * orphan of the call re-parents to it instead of to init, so the call's processes stay its
 * descendants whatever they do. 0 on success. */
int reaper_become(void);

/* Kills every descendant of this process and reaps them, until none is left (or `max_ms` passed,
 * for a process the kernel cannot end). Only async-signal-safe calls: usable in a signal handler.
 * Returns how many processes were killed. */
int reaper_end_call(long max_ms);

/* Appends seccomp rules (the accumulator holds the syscall number, and does again after) that keep
 * the call's processes from reaching its keepers, the helper and rune, where no namespace hides
 * them and Landlock's signal scoping may be missing: no signal to either (kill, tkill, tgkill,
 * rt_sigqueueinfo, rt_tgsigqueueinfo, a pidfd of theirs), no kill(-1) (every process the user
 * owns, both keepers included), no change of their rlimits, no pidfd_send_signal at all (a
 * /proc/PID folder fd is a pidfd too). Without these, a tool could kill the helper, then rune, and
 * leave the call's process group with nobody to kill it. Returns the new length. */
int reaper_filter(struct sock_filter *f, int n, pid_t helper, pid_t rune);

#endif
