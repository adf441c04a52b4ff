/* The rlimits layer (rlimits.h). */
#define _GNU_SOURCE
#include "rlimits.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "args.h"

static void set_limit(struct reporter *r, int resource, long long value, const char *name, char *summary,
                      size_t size) {
  if (value < 0) return;
  struct rlimit rl = {(rlim_t)value, (rlim_t)value};
  struct rlimit cur;
  if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < rl.rlim_max)
    rl.rlim_cur = rl.rlim_max = cur.rlim_max;
  if (setrlimit(resource, &rl) != 0) {
    skip(r, LAYER_RLIMITS, "%s", name, errno);
    return;
  }
  size_t used = strlen(summary);
  snprintf(summary + used, size - used, "%s%s=%lld", used ? " " : "", name, (long long)rl.rlim_cur);
}

void rlimits_apply(struct reporter *r) {
  char limits[256] = "";
  set_limit(r, RLIMIT_FSIZE, flag_number(FLAG_FSIZE, -1), "fsize", limits, sizeof limits);
  set_limit(r, RLIMIT_NOFILE, flag_number(FLAG_NOFILE, -1), "nofile", limits, sizeof limits);
  set_limit(r, RLIMIT_NPROC, flag_number(FLAG_NPROC, -1), "nproc", limits, sizeof limits);
  set_limit(r, RLIMIT_DATA, flag_number(FLAG_DATA, -1), "data", limits, sizeof limits);
  set_limit(r, RLIMIT_CORE, 0, "core", limits, sizeof limits);
  report(r, LAYER_RLIMITS, STATE_APPLIED, "%s", limits);
}
