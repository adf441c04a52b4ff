/* Landlock for one thread of rune's own process (the walk worker of search_files/find_files). */
#ifndef RUNE_THREAD_LANDLOCK_H
#define RUNE_THREAD_LANDLOCK_H

struct rune_thread_landlock {
  int abi;         /* ABI version applied; 0 when nothing was applied */
  int rules;       /* rules added */
  int skipped;     /* paths that were gone or not a file/folder (no rule, so no access) */
  int error;       /* errno of the failed step, 0 on success */
  const char *step; /* the failed step: "abi", "ruleset", "rule", "no_new_privs", "restrict" */
};

/*
 * Confines the calling thread (only it: no LANDLOCK_RESTRICT_SELF_TSYNC) to reading the `read`
 * trees and listing the `list` folders; every other file system access, TCP bind/connect and
 * (ABI 6) signals and abstract sockets outside the domain are refused. Sets no_new_privs on the
 * thread first, which landlock_restrict_self requires. Returns 0, or -1 with out->error/step set.
 */
int rune_thread_landlock(const char *const *read, unsigned n_read, const char *const *list, unsigned n_list,
                         struct rune_thread_landlock *out);

#endif
