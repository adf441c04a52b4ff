/* rune's metadata guard: chmod and chown for a sandbox without a view (see metaguard.c). */
#ifndef RUNE_METAGUARD_H
#define RUNE_METAGUARD_H

#include <linux/filter.h>
#include <sys/types.h>

/* Appends rules sending chmod/fchmod/fchmodat/fchmodat2 and chown/fchown/lchown/fchownat to the
 * guard, to a filter whose accumulator holds the syscall number (left holding it). Returns the
 * new length. */
int metaguard_filter(struct sock_filter *f, int n);

/* The guard's loop, in the helper's parent. `rw` are the writable grants (real paths): only what
 * lies inside one of them, and is not hidden or protected, may change its mode or owner. Returns
 * when `child` (the call's first process) has exited, or every supervised process is gone. */
void metaguard_run(int listener, pid_t child, const char *const *rw, int n_rw, const char *const *keep, int n_keep);

#endif
