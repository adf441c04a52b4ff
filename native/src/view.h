/* The sandbox's view of the file system (view.c): a new root built from the grants, the Landlock
 * rules over the same grants, and the seccomp rules that stand in for what a missing view or
 * namespace would have removed. */
#ifndef RUNE_VIEW_H
#define RUNE_VIEW_H

#include <linux/filter.h>
#include <stdint.h>

#include "report.h"

struct view_spec {
  const char **sys; /* system folders: read-only binds; a symlink on the host stays a symlink */
  int n_sys;
  const char **ro; /* read-only grants (real paths) */
  int n_ro;
  const char **rw; /* writable grants (real paths) */
  int n_rw;
  const char **protect; /* read-only inside writable grants */
  int n_protect;
  const char **pin; /* bound onto themselves so they cannot be renamed or removed */
  int n_pin;
  const char **hide; /* replaced by an empty read-only file or folder */
  int n_hide;
  const char **link_path; /* a symlink at link_path[i] pointing to link_target[i] (a grant's real path) */
  const char **link_target;
  int n_link;
  long tmp_mb;              /* size of the private /tmp */
  const char *tmpdir;       /* the command's TMPDIR under /tmp: made in the private /tmp */
  const char *hosts_text;   /* generated /etc/hosts and /etc/resolv.conf, or NULL */
  const char *resolv_text;
};

/* What the view could not provide, so that seccomp refuses it instead (see view_filter_rules). */
enum {
  LOST_VIEW = 1 << 0, /* no new root: the host's file system, UNIX sockets, ttys are reachable */
  LOST_IPC = 1 << 1,  /* no IPC namespace: System V IPC and POSIX message queues are the host's */
  LOST_NET = 1 << 2,  /* no network namespace: the host's network is reachable */
  LOST_PID = 1 << 3,  /* no PID namespace: nothing ends what the command leaves when it exits */
};

struct view_result {
  int built;          /* the new root is in place */
  int dns_bound;      /* the generated /etc/hosts is in place */
  char why[256];      /* why there is no view */
};

extern struct view_spec view;

/* Builds the view in the current (new, private) mount namespace and pivots into it, saying what it
 * could not do through `r`. Returns 0 when built; -1 when the kernel refused the basics, with the
 * reason in `out->why` (the process stays in the host's tree and the LOST_VIEW rules apply). A hide
 * or protect that fails ends the call. */
int view_build(struct reporter *r, struct view_result *out);

/* Reports the view on the "namespaces" layer (`namespaces` names the ones created). */
void view_report(struct reporter *r, const char *namespaces, const struct view_result *result);

/* Adds the Landlock rules of the view (system folders, grants, /proc, /sys, /dev, /tmp), each
 * read-only folder split around the hidden paths inside it. Returns -1 when a rule failed. */
int view_landlock_rules(int ruleset, uint64_t handled, int built, int *n_ro, int *n_rw, int *n_split);

/* Appends the view's seccomp rules to a filter whose accumulator holds the syscall number, and
 * leaves it holding the number again. Returns the new length. */
int view_filter_rules(struct sock_filter *f, int n, unsigned lost);

/* Calls `found` with the real path of every entry of `folder` others may not read (a folder others
 * cannot enter counts whole); stops at, and returns, the first nonzero answer. */
int view_each_closed(const char *folder, int (*found)(const char *path, void *ctx), void *ctx);

/* Prints, as one JSON array on stdout, the real paths of the entries of `folder` others may not
 * read (a folder others cannot enter counts whole). */
void view_print_closed(const char *folder);

/* One line naming the seccomp rules that stand in for what `lost` names, and what stays reachable. */
const char *view_lost_summary(unsigned lost);

/* The hidden paths of the view (view.c), shared with the Landlock rules (view-rules.c). */
void view_remember_hidden(const char *path);
int view_is_hidden(const char *path);
/* Whether a hidden path lies strictly below `dir`. */
int view_hides_inside(const char *dir);
int view_is_inside(const char *path, const char *dir);

#endif
