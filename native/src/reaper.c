/* The end of a call without a PID namespace (a container runtime's seccomp profile refuses one).
 * The helper is the call's child subreaper, so every process the command starts stays its
 * descendant: an orphan re-parents to the helper, never to init. When the command ends, the helper
 * kills them all, top down, and reaps them until it has no child left: the same end a PID namespace
 * gives (its init's exit kills everything inside). seccomp keeps them in the call's process group
 * too (view-rules.c, LOST_PID), which is what rune kills on a timeout.
 *
 * The races, and why none lets a process survive or the wrong one be killed:
 * - A process forks while the walk runs: each process is killed before its children are listed,
 *   and a process with SIGKILL pending cannot fork (copy_process checks for a fatal signal under
 *   the lock that links the child), so the list read afterwards is final.
 * - A process re-parents to the helper while the walk runs (its parent died before its list was
 *   read): the helper has a child again, so another round walks again. Rounds end only when
 *   waitpid says ECHILD, which is exact: without a child there is no descendant.
 * - A pid reused meanwhile: each pid is signalled through a pidfd opened first, and only when /proc
 *   then names as its parent the process whose list held it (or the helper, after re-parenting).
 *   A new process under a reused pid has neither as parent: the listed parent has SIGKILL pending
 *   and cannot fork, and the helper forks nothing while it walks.
 * Only async-signal-safe calls (no stdio, no malloc): the helper also runs this from the handler
 * of its parent-death signal. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf.h"
#include "reaper.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif

#define MAX_PROCS 8192 /* per round; more are killed and queued by later rounds */

struct dirent64_ {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

static pid_t queue[MAX_PROCS];
static pid_t self;

static char *put_str(char *p, const char *s) {
  while (*s) *p++ = *s++;
  return p;
}

static char *put_num(char *p, long v) {
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) > 0);
  while (n > 0) *p++ = digits[--n];
  return p;
}

/* "/proc/PID<tail>" into `path`. */
static void proc_path(char *path, pid_t pid, const char *tail) {
  char *p = put_num(put_str(path, "/proc/"), pid);
  *put_str(p, tail) = 0;
}

/* The parent of `pid` (from /proc/PID/stat), or -1. */
static pid_t parent_of(pid_t pid) {
  char path[48], buf[512];
  proc_path(path, pid, "/stat");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  /* "pid (comm) S ppid …": comm may hold anything, ')' included, so the last one counts. */
  char *end = strrchr(buf, ')');
  if (!end || end[1] != ' ' || !end[2] || end[3] != ' ') return -1;
  long ppid = 0;
  for (const char *q = end + 4; *q >= '0' && *q <= '9'; q++) ppid = ppid * 10 + (*q - '0');
  return (pid_t)ppid;
}

/* SIGKILL to `pid`, listed as a child of `parent`. Nonzero when it was one of ours. */
static int kill_child(pid_t pid, pid_t parent) {
  int fd = (int)syscall(__NR_pidfd_open, pid, 0);
  if (fd < 0 && errno == ESRCH) return 0;
  pid_t now = parent_of(pid);
  int ours = now > 0 && (now == parent || now == self);
  if (ours) {
    /* Without pidfds (before Linux 5.3) a plain kill, after the same check. */
    if (fd < 0 || syscall(__NR_pidfd_send_signal, fd, SIGKILL, NULL, 0) != 0) kill(pid, SIGKILL);
  }
  if (fd >= 0) close(fd);
  return ours;
}

/* Kills `child` of `parent` and queues it, so its own children are listed after its death warrant. */
static void take(pid_t child, pid_t parent, int *tail, int *killed) {
  if (!kill_child(child, parent)) return;
  (*killed)++;
  if (*tail < MAX_PROCS) queue[(*tail)++] = child;
}

/* Kills and queues every child of every thread of `pid` (its /proc/PID/task/TID/children). */
static void kill_children_of(pid_t pid, int *tail, int *killed) {
  char path[48];
  proc_path(path, pid, "/task");
  int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return; /* gone: its children re-parent to us and the next round finds them */
  char dents[2048];
  long got;
  while ((got = syscall(SYS_getdents64, dir, dents, sizeof dents)) > 0) {
    for (long off = 0; off < got;) {
      const struct dirent64_ *d = (const struct dirent64_ *)(dents + off);
      off += d->d_reclen;
      if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
      char file[64];
      *put_str(put_str(file, d->d_name), "/children") = 0;
      int fd = openat(dir, file, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char buf[1024];
      long child = -1; /* a number may span two reads */
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++) {
          if (buf[i] >= '0' && buf[i] <= '9') {
            child = (child < 0 ? 0 : child * 10) + (buf[i] - '0');
          } else if (child >= 0) {
            take((pid_t)child, pid, tail, killed);
            child = -1;
          }
        }
      }
      if (child >= 0) take((pid_t)child, pid, tail, killed);
      close(fd);
    }
  }
  close(dir);
}

/* One round on a kernel with children lists (CONFIG_PROC_CHILDREN): breadth first from us. */
static int walk_round(void) {
  int head = 0, tail = 0, killed = 0;
  queue[tail++] = self;
  while (head < tail) kill_children_of(queue[head++], &tail, &killed);
  return killed;
}

/* One round without children lists: a snapshot of every process's parent, then the same walk over
 * it. A child forked after the snapshot re-parents to us once its parent dies: the next round. */
static int scan_round(void) {
  static pid_t pids[MAX_PROCS], parents[MAX_PROCS];
  int n = 0;
  int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  char dents[4096];
  long got;
  while (n < MAX_PROCS && (got = syscall(SYS_getdents64, dir, dents, sizeof dents)) > 0) {
    for (long off = 0; off < got && n < MAX_PROCS;) {
      const struct dirent64_ *d = (const struct dirent64_ *)(dents + off);
      off += d->d_reclen;
      long pid = 0;
      const char *c = d->d_name;
      for (; *c >= '0' && *c <= '9'; c++) pid = pid * 10 + (*c - '0');
      if (*c || pid <= 0 || pid == self) continue;
      pids[n] = (pid_t)pid;
      parents[n++] = parent_of((pid_t)pid);
    }
  }
  close(dir);
  int head = 0, tail = 0, killed = 0;
  queue[tail++] = self;
  while (head < tail) {
    pid_t parent = queue[head++];
    for (int i = 0; i < n; i++)
      if (parents[i] == parent) take(pids[i], parent, &tail, &killed);
  }
  return killed;
}

int reaper_become(void) {
  return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

static long elapsed_ms(const struct timespec *since) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

int reaper_end_call(long max_ms) {
  self = getpid();
  char path[64];
  proc_path(path, self, "/task/");
  *put_str(put_num(path + strlen(path), self), "/children") = 0;
  int lists = access(path, R_OK) == 0;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  int total = 0;
  for (;;) {
    total += lists ? walk_round() : scan_round();
    int status, reaped = 0;
    pid_t w;
    while ((w = waitpid(-1, &status, WNOHANG | __WALL)) > 0) reaped++;
    if (w < 0 && errno != EINTR) return total; /* ECHILD: nothing of the call is left */
    if (elapsed_ms(&start) > max_ms) return total;
    /* Killed ones take a moment to exit; one that re-parented meanwhile is found by the next round. */
    if (!reaped) {
      struct timespec pause = {0, 200 * 1000};
      nanosleep(&pause, NULL);
    }
  }
}

/* One block: `nr` with its first argument equal to one of `values` fails with EPERM. The accumulator
 * holds the syscall number before and after. */
static int deny_first_arg(struct sock_filter *f, int n, int nr, const uint32_t *values, int count) {
  int len = 4 + count; /* JEQ nr, LD arg, count × JEQ, LD nr, JA, ERRNO → count + 5; the JEQ nr jumps over the rest */
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, (unsigned char)len);
  f[n++] = LOAD_ARG(0);
  for (int i = 0; i < count; i++) /* to the ERRNO: past the remaining JEQs, LD nr and JA */
    f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, values[i], (unsigned char)(count - i + 1), 0);
  f[n++] = LOAD_NR;
  f[n++] = JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
  f[n++] = ERRNO(EPERM);
  return n;
}

int reaper_filter(struct sock_filter *f, int n, pid_t helper, pid_t rune) {
  const uint32_t keepers[] = {(uint32_t)helper, (uint32_t)rune};
  const uint32_t with_all[] = {(uint32_t)helper, (uint32_t)rune, (uint32_t)-1};
  n = deny_first_arg(f, n, __NR_kill, with_all, 3);
  static const int by_pid[] = {__NR_tkill, __NR_tgkill, __NR_rt_sigqueueinfo, __NR_rt_tgsigqueueinfo, __NR_pidfd_open,
                               __NR_prlimit64};
  for (size_t i = 0; i < sizeof by_pid / sizeof by_pid[0]; i++) n = deny_first_arg(f, n, by_pid[i], keepers, 2);
  /* A /proc/PID folder opened as a directory is a pidfd to it too: no pidfd signals at all. */
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_send_signal, 0, 1);
  f[n++] = ERRNO(EPERM);
  return n;
}
