/* How the sandbox's parts say what they did: lines "layer<TAB>applied|skipped|failed<TAB>detail" on
 * the report fd, in the words of helper_contract.h. The fd is close-on-exec, so its EOF tells rune
 * the command was exec'd. Each part gets the reporter passed in: none of them depends on the
 * program that runs it. */
#ifndef RUNE_REPORT_H
#define RUNE_REPORT_H

#include "helper_contract.h"

struct reporter {
  int fd;     /* -1: nothing is written */
  int strict; /* a layer that cannot be applied fails the call */
  int failed; /* set when a layer the caller required could not be applied */
};

void report(struct reporter *r, enum report_subject subject, enum report_state state, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A layer that could not be applied: reported; in strict mode the command is not started. `fmt`
 * takes `arg` (a path, or "" when the message has none); a nonzero `err` adds its strerror. */
void skip(struct reporter *r, enum report_subject layer, const char *fmt, const char *arg, int err);

/* A set-up step without which nothing runs: reported and said on stderr, then exit 125. */
void die(struct reporter *r, const char *what) __attribute__((noreturn));

/* A set-up failure with its own message: reported as "setup failed", then exit 125. */
void fail(struct reporter *r, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

#endif
