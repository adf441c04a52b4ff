/* The Landlock layer (landlock.h); its rules are the view's (view-rules.c). */
#define _GNU_SOURCE
#include "landlock.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock_uapi.h"
#include "view.h"

int landlock_apply(struct reporter *r, int view_built) {
  int abi = (int)syscall(LL_CREATE_RULESET, NULL, 0, LL_CREATE_RULESET_VERSION);
  if (abi <= 0) {
    skip(r, LAYER_LANDLOCK, "Landlock is not available%s", "", errno);
    return 0;
  }
  /* No TCP port is allowed (ABI 4+): permitted connections arrive already connected from the net guard. */
  struct ll_ruleset_attr attr;
  size_t size = ll_ruleset_for(abi, &attr);
  int ruleset = (int)syscall(LL_CREATE_RULESET, &attr, size, 0);
  if (ruleset < 0) {
    skip(r, LAYER_LANDLOCK, "landlock_create_ruleset%s", "", errno);
    return 0;
  }
  int n_ro = 0, n_rw = 0, n_split = 0;
  if (view_landlock_rules(ruleset, attr.handled_access_fs, view_built, &n_ro, &n_rw, &n_split) != 0) {
    skip(r, LAYER_LANDLOCK, "adding the rules%s", "", errno);
    close(ruleset);
    return 0;
  }
  if (syscall(LL_RESTRICT_SELF, ruleset, 0) != 0) {
    skip(r, LAYER_LANDLOCK, "landlock_restrict_self%s", "", errno);
    close(ruleset);
    return 0;
  }
  close(ruleset);
  report(r, LAYER_LANDLOCK, STATE_APPLIED, "ABI %d, %d read-only + %d writable path(s)%s%s%s", abi, n_ro, n_rw,
         n_split ? " (read-only folders split around hidden paths)" : "", abi >= 4 ? ", TCP bind/connect denied" : "",
         abi >= 6 ? ", abstract-socket and signal scoping" : "");
  return abi >= 4;
}
