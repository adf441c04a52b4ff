/* The helper's command line (args.h), parsed by the table of helper_contract.h: each flag's values
 * are kept as given; what they mean is for the layer that uses them. */
#define _GNU_SOURCE
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  int values, max, keep;
  const char *metavar;
} FLAGS[] = {
#define X(id, name, values, max, keep, metavar, doc) {name, values, max, keep, metavar},
    RUNE_HELPER_FLAGS(X)
#undef X
};

/* Room for every flag's values at its maximum: one block, each flag a slice of it. */
enum {
#define X(id, name, values, max, ...) SLOTS_##id = (values > 0 ? values : 1) * max,
  RUNE_HELPER_FLAGS(X)
#undef X
};
static const char *storage[0
#define X(id, ...) +SLOTS_##id
                           RUNE_HELPER_FLAGS(X)
#undef X
];
static const char **slot[FLAG_COUNT];
static int given[FLAG_COUNT];

void usage(const char *why) {
  fprintf(stderr, "rune-sandbox: %s\nusage: rune-sandbox", why);
  for (int f = 0; f < FLAG_COUNT; f++)
    fprintf(stderr, " [%s%s%s]", FLAGS[f].name, FLAGS[f].values ? " " : "", FLAGS[f].metavar);
  fprintf(stderr, " -- PROGRAM ARGS...\n");
  exit(2);
}

static int lookup(const char *name) {
  for (int f = 0; f < FLAG_COUNT; f++)
    if (strcmp(FLAGS[f].name, name) == 0) return f;
  return -1;
}

int args_parse(int argc, char **argv) {
  const char **next = storage;
  for (int f = 0; f < FLAG_COUNT; f++) {
    slot[f] = next;
    next += (FLAGS[f].values > 0 ? FLAGS[f].values : 1) * FLAGS[f].max;
  }
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    int f = lookup(argv[i]);
    if (f < 0) usage("unknown option");
    int values = FLAGS[f].values;
    if (i + values >= argc) usage(values > 1 ? "missing values" : "missing value");
    int at = FLAGS[f].max == 1 ? 0 : given[f]; /* a single value: the last one counts */
    if (at >= FLAGS[f].max) {
      char why[96];
      snprintf(why, sizeof why, "too many %s values", FLAGS[f].name);
      if (FLAGS[f].keep) usage(why); /* never drop one silently */
      i += values;
      continue;
    }
    for (int k = 0; k < values; k++) slot[f][at * values + k] = argv[i + 1 + k];
    given[f] = at + 1;
    i += values;
  }
  if (given[FLAG_CLOSED] || given[FLAG_PROBE]) return 0;
  if (i + 1 >= argc) usage("no command after --");
  return i + 1;
}

int flag_count(enum helper_flag flag) { return given[flag]; }

const char **flag_values(enum helper_flag flag) { return slot[flag]; }

const char *flag_text(enum helper_flag flag) { return given[flag] ? slot[flag][0] : NULL; }

long long flag_number(enum helper_flag flag, long long fallback) {
  const char *text = flag_text(flag);
  return text ? atoll(text) : fallback;
}
