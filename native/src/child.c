/* The sandboxed child (child.h). */
#define _GNU_SOURCE
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "cgroups.h"
#include "fds.h"
#include "landlock.h"
#include "namespaces.h"
#include "netguard.h"
#include "rlimits.h"
#include "seccomp.h"

/* ---------------------------------------------------------------- capabilities, signals */

/* Running as root maps uid 0 into the namespace; root keeps its capabilities across execve unless
 * securebits say otherwise. Drop everything so the command never holds a capability. */
static void drop_capabilities(void) {
  for (int cap = 0; cap <= 63; cap++) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                               SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                               SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
        0, 0, 0);
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  syscall(__NR_capset, &hdr, data);
}

static void reset_process_state(void) {
  /* Node marks 0-2 close-on-exec and non-blocking, and ignores SIGPIPE/SIGXFSZ: undo all of it. */
  for (int fd = 0; fd <= 2; fd++) {
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0) fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
    int st = fcntl(fd, F_GETFL);
    if (st >= 0 && (st & O_NONBLOCK)) fcntl(fd, F_SETFL, st & ~O_NONBLOCK);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &sa, NULL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

/* ---------------------------------------------------------------- the namespace's init */

static pid_t init_cmd;
static int status_fd = -1; /* write end: the command's raw wait status, for the outer helper */

static void init_forward(int sig) {
  if (init_cmd > 0) kill(init_cmd, sig);
}

static void init_exit(int st) {
  if (status_fd >= 0) {
    ssize_t n = write(status_fd, &st, sizeof st);
    (void)n;
  }
  /* Returning kills everything still running in the namespace. */
  _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

static void init_child_exited(int sig) {
  (void)sig; /* only interrupts ppoll */
}

/* `channel`: the net guard's connector requests (netguard.c), served between reaps; -1 for none. */
static void __attribute__((noreturn)) init_loop(pid_t cmd, int channel) {
  init_cmd = cmd;
  /* Hold nothing of the host's: only the status pipe and the connector's channel stay open. */
  close_all_but(status_fd, channel, 0);
  static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) signal(forwarded[i], init_forward);
  sigset_t during_poll;
  if (channel >= 0) {
    /* SIGCHLD stays blocked except inside ppoll, so a child's exit always interrupts the wait. */
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &during_poll);
    sigdelset(&during_poll, SIGCHLD);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = init_child_exited;
    sigaction(SIGCHLD, &sa, NULL);
  }
  for (;;) {
    int st = 0;
    pid_t w = waitpid(-1, &st, channel >= 0 ? WNOHANG : 0);
    if (w == cmd) init_exit(st);
    if (w > 0) continue; /* a reaped orphan, or a connect the connector waited for */
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) _exit(125);
    struct pollfd p = {.fd = channel, .events = POLLIN};
    if (ppoll(&p, 1, NULL, &during_poll) > 0 && netguard_connector_serve(channel) != 0) {
      close(channel); /* the guard is gone: no more connects (the command's end with its listener) */
      channel = -1;
      sigprocmask(SIG_SETMASK, &during_poll, NULL);
    }
  }
}

/* ---------------------------------------------------------------- what holds without namespaces */

/* No network namespace (a container runtime's seccomp profile refuses them): the network is still
 * closed, by seccomp refusing every inet socket and, for TCP, by Landlock independently. Reported
 * as what holds, after both were applied, so a run never reads "network skipped" while nothing can
 * reach it, nor "applied" while something can. */
static void report_network_without_namespace(struct reporter *r, int seccomp_applied, int landlock_tcp_denied,
                                             int n_allow) {
  if (!seccomp_applied) {
    skip(r, LAYER_NETWORK, "no network namespace and no seccomp filter: the host's network is reachable%s", "", 0);
    return;
  }
  report(r, LAYER_NETWORK, STATE_APPLIED, "no network namespace: seccomp refuses inet and inet6 sockets%s%s",
         landlock_tcp_denied ? "; Landlock denies TCP bind and connect (a second layer for TCP; UDP has seccomp only)"
                             : " (the only layer: Landlock has no TCP rule on this kernel)",
         n_allow > 0 ? "; allowed domains unreachable: the net guard needs a network namespace" : "");
}

/* What ends the call's processes without a PID namespace, said once seccomp is (or is not) in force. */
static void report_containment_without_namespace(struct reporter *r, int seccomp_applied, int subreaper) {
  const char *reaper = subreaper ? "the helper is the call's child subreaper (orphans re-parent to it, never to init) and "
                                   "kills every process left when the command ends"
                                 : "no child subreaper (PR_SET_CHILD_SUBREAPER failed): orphans re-parent to init";
  if (seccomp_applied)
    report(r, LAYER_NAMESPACES, STATE_SKIPPED,
           "no PID namespace: %s; setsid and setpgid refused (seccomp), so every process stays "
           "in the call's process group, which rune kills on a timeout or cancel, and none may signal the helper or "
           "rune, change their limits or kill(-1): nothing outlives the call",
           reaper);
  else
    report(r, LAYER_NAMESPACES, STATE_SKIPPED,
           "no PID namespace and no seccomp: %s; a process can leave the call's process group "
           "(setsid), so one that did outlives a kill on timeout or cancel",
           reaper);
}

/* ---------------------------------------------------------------- the layers, in order */

/* seccomp, with the net guard decided first: for allowed domains (TCP through the guard), and
 * whenever the view holds granted folders, whose pathname UNIX sockets may have listeners outside
 * the sandbox (a read-only mount does not stop connect(2), nor does Landlock before ABI 9). Without
 * the view seccomp refuses every new UNIX socket instead (view_filter_rules). Returns whether the
 * filter applied; `*guard_sock` is -1 once the guard is not used. */
static int apply_seccomp(struct reporter *r, const struct child_setup *s, unsigned lost, int built, int tcp_guard,
                         int *guard_sock) {
  int seccomp = !flag_count(FLAG_NO_SECCOMP);
  if (*guard_sock >= 0 && (!seccomp || (!tcp_guard && !built))) {
    close(*guard_sock); /* its EOF tells the parent: no net guard */
    *guard_sock = -1;
  }
  if (!seccomp) {
    report(r, LAYER_SECCOMP, STATE_SKIPPED, "switched off for this call");
    if (built)
      report(r, LAYER_NETWORK, STATE_APPLIED,
             "pathname UNIX sockets in granted folders stay reachable: no net guard without seccomp");
    return 0;
  }
  int meta = (lost & LOST_VIEW) && *guard_sock < 0 && s->meta_sock >= 0;
  struct seccomp_result sc = seccomp_apply(r, lost, s->rune_pid, meta);
  if (sc.listener >= 0) {
    if (send_fds(s->meta_sock, &sc.listener, 1) != 0) die(r, "handing the listener to the metadata guard");
    close(sc.listener);
  }
  if (lost) report(r, LAYER_SECCOMP, STATE_APPLIED, "standing in for the missing view/namespaces (see namespaces)");
  return sc.applied;
}

/* This process is PID 1 of the namespace: it stays as a minimal init (reaps orphans, forwards
 * signals, and is the net guard's connector), so the command gets ordinary signal semantics instead
 * of PID 1's. Not dumpable, so the command can neither open /proc/1/fd (its status pipe) nor even
 * see /proc/1 (hidepid); it cannot kill it either (PID 1 of its namespace). Returns in the command. */
static void become_init(struct reporter *r, unsigned long ns, int guard_sock, int tcp_guard, int built) {
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) die(r, "PR_SET_DUMPABLE");
  int channel[2] = {-1, -1};
  if (guard_sock >= 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, channel) != 0) die(r, "socketpair");
  if (guard_sock >= 0) netguard_connector_rule(ns & CLONE_NEWPID ? NETGUARD_UNIX_SAME_PIDNS : NETGUARD_UNIX_REFUSE);
  pid_t cmd = fork();
  if (cmd < 0) die(r, "fork");
  if (cmd > 0) init_loop(cmd, channel[0]);
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (guard_sock >= 0) {
    close(channel[0]);
    seccomp_supervise_connects(r, guard_sock, channel[1], tcp_guard ? NOTIFY_NET : NOTIFY_CONNECT, built);
  }
}

static void __attribute__((noreturn)) exec_command(struct reporter *r, char **argv) {
  reset_process_state();
  /* Every fd above 2 goes at exec, the report pipe included: its EOF means "exec'd". */
  if (syscall(__NR_close_range, 3, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */) != 0) {
    for (int fd = 3; fd < 65536; fd++)
      if (fd != r->fd) close(fd);
    if (r->fd >= 0) fcntl(r->fd, F_SETFD, FD_CLOEXEC);
  }
  execvp(argv[0], argv);
  int err = errno;
  report(r, LAYER_EXEC, STATE_FAILED, "%s: %s", argv[0], strerror(err));
  fprintf(stderr, "rune-sandbox: %s: %s\n", argv[0], strerror(err));
  _exit(err == ENOENT ? 127 : 126);
}

void run_child(struct reporter *r, const struct child_setup *s) {
  unsigned long ns = s->ns;
  int in_namespaces = ns != 0;
  status_fd = s->status_fd;
  struct view_result built = {0};
  if (in_namespaces) namespaces_enter(r, ns, s->uid, s->gid, &built);
  cgroups_wait(r, s->cgroup_fd, ns);
  /* What is missing is refused by seccomp instead (view_filter_rules) and named in the report. */
  int net_isolate = !flag_count(FLAG_SHARE_NET);
  unsigned lost = (built.built ? 0 : LOST_VIEW) | (ns & CLONE_NEWIPC ? 0 : LOST_IPC) |
                  (net_isolate && !(ns & CLONE_NEWNET) ? LOST_NET : 0) | (ns & CLONE_NEWPID ? 0 : LOST_PID);
  if (lost) report(r, LAYER_NAMESPACES, STATE_SKIPPED, "%s", view_lost_summary(lost));
  const char *cwd = flag_text(FLAG_CWD);
  if (cwd && chdir(cwd) != 0) die(r, "chdir");
  /* Outside a PID namespace the caller's process-group kill is what ends stragglers: keep the group. */
  if (in_namespaces && setsid() < 0 && errno != EPERM) die(r, "setsid");
  rlimits_apply(r);
  drop_capabilities();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die(r, "PR_SET_NO_NEW_PRIVS");
  int landlock_tcp_denied = 0;
  if (!flag_count(FLAG_NO_LANDLOCK)) landlock_tcp_denied = landlock_apply(r, built.built);
  else report(r, LAYER_LANDLOCK, STATE_SKIPPED, "switched off for this call");
  /* Its connector is this process, the init. */
  int tcp_guard = s->n_allow > 0 && (ns & CLONE_NEWNET);
  int guard_sock = s->guard_sock;
  int seccomp_applied = apply_seccomp(r, s, lost, built.built, tcp_guard, &guard_sock);
  if (lost & LOST_NET) report_network_without_namespace(r, seccomp_applied, landlock_tcp_denied, s->n_allow);
  if (lost & LOST_PID) report_containment_without_namespace(r, seccomp_applied, s->subreaper);
  if (s->meta_sock >= 0) close(s->meta_sock); /* its EOF tells the parent: no metadata guard */
  if (r->failed) {
    report(r, LAYER_SETUP, STATE_FAILED, "strict mode: a layer could not be applied");
    _exit(125);
  }
  if (in_namespaces) become_init(r, ns, guard_sock, tcp_guard, built.built);
  exec_command(r, s->argv);
}
