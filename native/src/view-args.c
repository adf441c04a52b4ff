/* The view's part of the helper's command line (view-args.h). */
#define _GNU_SOURCE
#include "view-args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "view.h"

static const char *hide[MAX_PATHS]; /* --hide, then the entries --hide-closed finds */
static int n_hide;
static int closed_done;

/* Adds `path` unless it is listed already: hiding a path twice stacks two binds of the empty file,
 * which then cannot be removed from the view's root. Nonzero when the list is full. */
static int add_hidden(const char *path, int copy) {
  for (int k = 0; k < n_hide; k++)
    if (strcmp(hide[k], path) == 0) return 0;
  if (n_hide >= MAX_PATHS) return -1;
  const char *kept = copy ? strdup(path) : path; /* the walk's buffer is reused */
  if (!kept) return -1;
  hide[n_hide++] = kept;
  return 0;
}

static int hide_closed(const char *path, void *ctx) {
  (void)ctx;
  return add_hidden(path, 1);
}

void view_args_apply(int guarded) {
  view.sys = flag_values(FLAG_SYS);
  view.n_sys = flag_count(FLAG_SYS);
  view.ro = flag_values(FLAG_RO);
  view.n_ro = flag_count(FLAG_RO);
  view.rw = flag_values(FLAG_RW);
  view.n_rw = flag_count(FLAG_RW);
  view.protect = flag_values(FLAG_PROTECT);
  view.n_protect = flag_count(FLAG_PROTECT);
  view.pin = flag_values(FLAG_PIN);
  view.n_pin = flag_count(FLAG_PIN);
  for (int k = 0; k < flag_count(FLAG_HIDE); k++) add_hidden(flag_values(FLAG_HIDE)[k], 0);
  view.hide = hide;
  view.n_hide = n_hide;
  /* --link PATH TARGET: the values alternate, so the view gets two lists. */
  static const char *link_path[MAX_PATHS], *link_target[MAX_PATHS];
  const char **links = flag_values(FLAG_LINK);
  for (int k = 0; k < flag_count(FLAG_LINK); k++) {
    link_path[k] = links[2 * k];
    link_target[k] = links[2 * k + 1];
  }
  view.link_path = link_path;
  view.link_target = link_target;
  view.n_link = flag_count(FLAG_LINK);
  view.tmp_mb = (long)flag_number(FLAG_TMP_MB, 0);
  view.tmpdir = flag_text(FLAG_TMPDIR);
  int n_hosts = flag_count(FLAG_HOST);
  const char **hosts = flag_values(FLAG_HOST);
  for (int k = 0; k < n_hosts; k++)
    if (strchr(hosts[k], '\n')) usage("a --host entry contains a newline");
  static char text[65536];
  if (guarded > 0 || n_hosts > 0) {
    size_t used = (size_t)snprintf(text, sizeof text, "127.0.0.1 localhost\n::1 localhost\n");
    for (int i = 0; i < n_hosts && used < sizeof text; i++)
      used += (size_t)snprintf(text + used, sizeof text - used, "%s\n", hosts[i]);
    view.hosts_text = text;
    /* No resolver is reachable from the namespace: names not in the hosts file do not resolve. */
    view.resolv_text = "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n";
  }
}

int view_args_hide_closed(struct reporter *r) {
  if (closed_done) return 0;
  const char **folders = flag_values(FLAG_HIDE_CLOSED);
  for (int k = 0; k < flag_count(FLAG_HIDE_CLOSED); k++)
    if (view_each_closed(folders[k], hide_closed, NULL) != 0) {
      fprintf(stderr, "rune-sandbox: %s holds more entries closed to others than can be hidden (%d)\n", folders[k],
              MAX_PATHS);
      report(r, LAYER_SETUP, STATE_FAILED, "%s holds more entries closed to others than can be hidden", folders[k]);
      return -1;
    }
  closed_done = 1;
  view.n_hide = n_hide;
  return 0;
}
