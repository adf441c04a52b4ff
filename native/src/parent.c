/* The helper's own process once the child exists (parent.h). */
#define _GNU_SOURCE
#include "parent.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "fds.h"
#include "metaguard.h"
#include "reaper.h"
#include "view-args.h"
#include "view.h"

static pid_t child_pid;
static volatile sig_atomic_t child_reaped; /* reap_orphans took the child's status already */
static int child_status;

/* Without a PID namespace the call's orphans re-parent to this process (child subreaper): reaped as
 * they end, so they do not pile up as zombies (each holds a pid, counted by RLIMIT_NPROC). */
static void reap_orphans(int sig) {
  (void)sig;
  int saved = errno;
  int st;
  pid_t w;
  while ((w = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
    if (w == child_pid) {
      child_status = st;
      child_reaped = 1;
    }
  errno = saved;
}

/* rune died (this process's parent-death signal without a PID namespace): end the call's tree
 * before going, as a PID namespace's end would. */
static void rune_gone(int sig) {
  (void)sig;
  reaper_end_call(2000);
  if (getpgrp() == getpid()) kill(0, SIGKILL); /* rune started this process in a group of its own */
  _exit(125);
}

/* Not dumpable: the command runs as the same user with the host's /proc, and must not read or write
 * this unconfined process's memory (/proc/PID/mem). rune's death arrives as a signal handled here
 * instead of SIGKILL. */
int parent_contain(struct reporter *r, pid_t starter) {
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) die(r, "PR_SET_DUMPABLE");
  int subreaper = reaper_become() == 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = rune_gone;
  sigfillset(&sa.sa_mask);
  sigaction(SIGRTMIN + 4, &sa, NULL);
  prctl(PR_SET_PDEATHSIG, SIGRTMIN + 4, 0, 0, 0);
  if (getppid() != starter) rune_gone(0);
  return subreaper;
}

/* Passed on as is, so SIGTERM stays a request to exit cleanly (MCP shutdown). The namespace's init
 * forwards it to the command once it has its handlers; one that arrives earlier is dropped (PID 1
 * ignores unhandled signals), and callers escalate to SIGKILL of the group after a grace time. */
static void forward_signal(int sig) {
  if (child_pid > 0) kill(child_pid, sig);
}

void parent_watch(pid_t child, int contained) {
  child_pid = child;
  if (contained) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = reap_orphans;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigfillset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
  }
}

void parent_forward_signals(void) {
  signal(SIGTERM, forward_signal);
  signal(SIGINT, forward_signal);
  signal(SIGHUP, forward_signal);
}

int parent_serve_guards(struct reporter *r, int guard_fd, int meta_fd, const struct ng_allow *allow, int n_allow) {
  if (guard_fd >= 0) {
    int fds[3];
    recv_fds(guard_fd, fds);
    close(guard_fd);
    if (fds[0] >= 0) netguard_run(fds[0], fds[1], fds[2], allow, n_allow);
    for (int k = 0; k < 3; k++)
      if (fds[k] >= 0) close(fds[k]);
  }
  if (meta_fd < 0) return 0;
  int fds[3];
  recv_fds(meta_fd, fds);
  close(meta_fd);
  if (fds[0] >= 0) {
    /* The view could not be built: the child found the closed entries, this process needs them too. */
    if (view_args_hide_closed(r) != 0) {
      kill(child_pid, SIGKILL);
      return -1;
    }
    /* Hidden and protected paths keep their mode and owner even inside a writable grant. */
    static const char *keep[MAX_PROTECT + MAX_PATHS];
    int n_keep = 0;
    for (int k = 0; k < view.n_hide; k++) keep[n_keep++] = view.hide[k];
    for (int k = 0; k < view.n_protect; k++) keep[n_keep++] = view.protect[k];
    metaguard_run(fds[0], child_pid, view.rw, view.n_rw, keep, n_keep);
    close(fds[0]);
  }
  for (int k = 1; k < 3; k++)
    if (fds[k] >= 0) close(fds[k]);
  return 0;
}

/* The child's wait status. Without a PID namespace, once it is known, every process the call left
 * is killed and reaped (reaper.c) before this process reports the end. */
static int wait_child(int contained, int *status) {
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old);
  int ok = 1;
  if (child_reaped) *status = child_status;
  else {
    while (waitpid(child_pid, status, __WALL) < 0)
      if (errno != EINTR) {
        ok = 0;
        break;
      }
  }
  if (contained) reaper_end_call(5000);
  sigprocmask(SIG_SETMASK, &old, NULL);
  return ok;
}

int parent_finish(int contained, int status_fd) {
  int status = 0;
  if (!wait_child(contained, &status)) return 125;
  /* The init's own exit code cannot say "killed by a signal": the command's raw status can. It is
   * taken only when it is exactly one status that agrees with the init's exit code, so whatever
   * might still write into the pipe cannot make this process stop itself or lie about the end. */
  if (status_fd >= 0 && WIFEXITED(status)) {
    int raw[2];
    if (read(status_fd, raw, sizeof raw) == (ssize_t)sizeof raw[0]) {
      int code = WIFEXITED(raw[0]) ? WEXITSTATUS(raw[0]) : WIFSIGNALED(raw[0]) ? (128 + WTERMSIG(raw[0])) & 0xff : -1;
      if (code == WEXITSTATUS(status)) status = raw[0];
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    /* Die the same way, so the caller sees the command's signal; a signal whose default is to stop
     * or to be ignored is turned into its exit code instead. */
    int sig = WTERMSIG(status);
    if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig == SIGCONT || sig == SIGCHLD ||
        sig == SIGURG || sig == SIGWINCH || sig <= 0 || sig >= NSIG)
      return 128 + sig;
    signal(sig, SIG_DFL);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    kill(getpid(), sig);
    return 128 + sig;
  }
  return 125;
}
