/* rune-sandbox: applies every sandbox layer in one step and execve's the command. A static,
 * single-threaded C program, because a Node start costs as much as dozens of these calls
 * (bench/sandbox.mjs) and unshare(CLONE_NEWUSER) fails inside Node's threads. rune embeds it as a
 * SEA asset and runs it for every tool process.
 *
 *   rune-sandbox [options] -- PROGRAM ARGS...     (the options: helper_contract.h, parsed in args.c)
 *
 * The parent stays in the host namespaces: it waits for the sandboxed child, and with --allow-addr
 * it is also the net guard (seccomp user notification + SECCOMP_IOCTL_NOTIF_ADDFD, see
 * docs/adr). The child is created with clone(NEWUSER|NEWNET|NEWNS|NEWPID), so it is PID 1 of its
 * namespace: when it exits, the kernel kills everything it left behind. Without namespaces (a
 * container runtime's seccomp profile) the parent is the call's child subreaper and does that
 * itself (reaper.c), and seccomp keeps every process in the call's process group.
 *
 * One file per layer, like codex's linux-sandbox: args.c the command line, namespaces.c and view*.c
 * the view, cgroups.c, rlimits.c, landlock.c, seccomp.c, child.c their order in the child, parent.c
 * the helper's own process, report.c the report (--report FD, lines "layer<TAB>state<TAB>detail"). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "args.h"
#include "cgroups.h"
#include "child.h"
#include "fds.h"
#include "namespaces.h"
#include "netguard.h"
#include "parent.h"
#include "probe.h"
#include "report.h"
#include "view-args.h"
#include "view.h"

static struct ng_allow allow[MAX_ADDRS]; /* the net guard's (address, port) pairs */

/* The kernel probe as one JSON object, every field of probe.h's record. */
static void print_probe(void) {
  struct rune_probe p;
  rune_probe_kernel(&p);
  const char *sep = "{";
#define X(c_name, js_name, meaning)              \
  printf("%s\"%s\":%d", sep, js_name, p.c_name); \
  sep = ",";
  RUNE_PROBE_FIELDS(X)
#undef X
  printf("}\n");
}

/* --closed DIR and --probe: answers on stdout, no command. */
static int run_actions(void) {
  for (int k = 0; k < flag_count(FLAG_CLOSED); k++) view_print_closed(flag_values(FLAG_CLOSED)[k]);
  if (flag_count(FLAG_PROBE)) print_probe();
  return 0;
}

static int parse_allowed(void) {
  const char **given = flag_values(FLAG_ALLOW_ADDR);
  for (int k = 0; k < flag_count(FLAG_ALLOW_ADDR); k++)
    if (netguard_parse_allow(given[k], &allow[k]) != 0) usage("bad --allow-addr");
  return flag_count(FLAG_ALLOW_ADDR);
}

/* The channels between the helper and its child, made before the fork. */
struct channels {
  int cgroup[2]; /* the parent's word that the child is in the call's cgroups */
  int guard[2];  /* the net guard's listener and connector channel */
  int meta[2];   /* the metadata guard's listener, when the view cannot be built */
  int status[2]; /* the command's raw wait status, from the namespace's init */
};

static void open_channels(struct reporter *r, struct channels *c, int use_guard, int namespaces) {
  /* The call's cgroups are joined by this process for the child while the child builds its view
   * (cgroups.c). A socket, not a pipe: the word is sent with MSG_NOSIGNAL, so a child that died
   * while building its view cannot end this process with SIGPIPE. */
  if (flag_count(FLAG_CGROUP) > 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->cgroup) != 0)
    die(r, "socketpair");
  if (use_guard && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->guard) != 0) die(r, "socketpair");
  if (!flag_count(FLAG_NO_SECCOMP) && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->meta) != 0)
    c->meta[0] = c->meta[1] = -1;
  if (namespaces && pipe2(c->status, O_CLOEXEC) != 0) die(r, "pipe");
}

/* In the child, right after the fork: only its ends of the channels stay open. */
static void __attribute__((noreturn)) start_child(struct reporter *r, struct channels *c, struct child_setup *s,
                                                  int use_guard) {
  int in_namespaces = s->ns != 0;
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (c->cgroup[1] >= 0) close(c->cgroup[1]);
  s->cgroup_fd = c->cgroup[0];
  if (c->status[0] >= 0) close(c->status[0]);
  s->status_fd = in_namespaces ? c->status[1] : -1;
  if (!in_namespaces && c->status[1] >= 0) close(c->status[1]);
  if (c->guard[0] >= 0) close(c->guard[0]);
  if (!in_namespaces && c->guard[1] >= 0) close(c->guard[1]); /* no net guard without namespaces */
  if (c->meta[0] >= 0) close(c->meta[0]);
  s->guard_sock = use_guard && in_namespaces ? c->guard[1] : -1;
  s->meta_sock = c->meta[1];
  if (in_namespaces && !flag_count(FLAG_SHARE_NET)) {
    if (use_guard && s->n_allow > 0)
      report(r, LAYER_NETWORK, STATE_APPLIED,
             "empty network namespace; TCP to %d allowed address[:port] pair(s) through the net guard", s->n_allow);
    else
      report(r, LAYER_NETWORK, STATE_APPLIED, "empty network namespace (loopback only)");
  }
  run_child(r, s);
}

int main(int argc, char **argv) {
  /* rune started this call (in its own process group): if rune dies, so does the call, net guard
   * and namespace with it (its init has PDEATHSIG on this process). Nothing outlives rune. */
  pid_t starter = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != starter) _exit(125);
  int command = args_parse(argc, argv);
  if (command == 0) return run_actions();
  struct reporter rep = {.fd = (int)flag_number(FLAG_REPORT, -1), .strict = flag_count(FLAG_STRICT)};
  struct child_setup setup = {.uid = geteuid(), .gid = getegid(), .rune_pid = starter, .argv = argv + command};
  setup.n_allow = parse_allowed();
  if (rep.fd >= 0 && fcntl(rep.fd, F_SETFD, FD_CLOEXEC) != 0) rep.fd = -1;
  /* Nothing inherited beyond stdio and the report pipe reaches the namespace's init or the command. */
  close_all_but(rep.fd, -1, 3);
  view_args_apply(setup.n_allow);

  int namespaces = !flag_count(FLAG_NO_NAMESPACES), net_isolate = !flag_count(FLAG_SHARE_NET);
  /* The child decides whether the net guard is used (run_child): for allowed domains, and for the
   * pathname UNIX sockets of the view's grants. */
  int use_guard = namespaces && !flag_count(FLAG_NO_SECCOMP);
  /* Without namespaces child.c says it, once the layers are in force. */
  if (setup.n_allow > 0 && !(use_guard && net_isolate) && namespaces)
    skip(&rep, LAYER_NETWORK, "the net guard needs namespaces and seccomp%s", "", 0);
  struct channels c = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
  open_channels(&rep, &c, use_guard, namespaces);

  pid_t pid = -1;
  if (namespaces) pid = namespaces_clone(&rep, net_isolate, &setup.ns);
  else report(&rep, LAYER_NAMESPACES, STATE_SKIPPED, "not used for this call (--no-namespaces)");
  int in_namespaces = setup.ns != 0;
  if (!in_namespaces) {
    if (view_args_hide_closed(&rep) != 0) return 125;
    setup.subreaper = parent_contain(&rep, starter);
    pid = fork(); /* the network is reported once seccomp and Landlock are in force (child.c) */
    if (pid < 0) die(&rep, "fork");
  }
  if (pid == 0) start_child(&rep, &c, &setup, use_guard);

  parent_watch(pid, !in_namespaces);
  if (c.cgroup[0] >= 0) close(c.cgroup[0]);
  cgroups_join(&rep, pid, c.cgroup[1]);
  parent_forward_signals();
  if (rep.fd >= 0) close(rep.fd);
  rep.fd = -1; /* its number may come back with a guard's fd */
  if (use_guard) close(c.guard[1]);
  if (c.meta[1] >= 0) close(c.meta[1]);
  if (parent_serve_guards(&rep, use_guard ? c.guard[0] : -1, c.meta[0], allow, setup.n_allow) != 0) return 125;
  if (c.status[1] >= 0) close(c.status[1]);
  return parent_finish(!in_namespaces, in_namespaces ? c.status[0] : -1);
}
