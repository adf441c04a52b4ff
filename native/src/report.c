/* The reporter (report.h): one line per step, written with one write(2) so lines never interleave. */
#define _GNU_SOURCE
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const SUBJECTS[] = {
#define X(id, name, layer) name,
    RUNE_REPORT_SUBJECTS(X)
#undef X
};

static const char *const STATES[] = {
#define X(id, word) word,
    RUNE_REPORT_STATES(X)
#undef X
};

static void vreport(struct reporter *r, enum report_subject subject, enum report_state state, const char *fmt,
                    va_list ap) {
  if (r->fd < 0) return;
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "%s\t%s\t", SUBJECTS[subject], STATES[state]);
  n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  if (n >= (int)sizeof buf - 1) n = (int)sizeof buf - 2;
  buf[n++] = '\n';
  ssize_t w = write(r->fd, buf, (size_t)n);
  (void)w;
}

void report(struct reporter *r, enum report_subject subject, enum report_state state, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(r, subject, state, fmt, ap);
  va_end(ap);
}

void skip(struct reporter *r, enum report_subject layer, const char *fmt, const char *arg, int err) {
  char why[512];
  snprintf(why, sizeof why, fmt, arg);
  report(r, layer, r->strict ? STATE_FAILED : STATE_SKIPPED, "%s%s%s", why, err ? ": " : "", err ? strerror(err) : "");
  if (r->strict) r->failed = 1;
}

void die(struct reporter *r, const char *what) {
  int err = errno;
  report(r, LAYER_SETUP, STATE_FAILED, "%s: %s", what, strerror(err));
  fprintf(stderr, "rune-sandbox: %s: %s\n", what, strerror(err));
  _exit(125);
}

void fail(struct reporter *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(r, LAYER_SETUP, STATE_FAILED, fmt, ap);
  va_end(ap);
  _exit(125);
}
