/* The sandboxed child: applies the layers in order (namespaces and the view, cgroups, rlimits,
 * capabilities, Landlock, seccomp), stays as the namespace's init, and execs the command. */
#ifndef RUNE_CHILD_H
#define RUNE_CHILD_H

#include <sys/types.h>

#include "report.h"

struct child_setup {
  unsigned long ns; /* the namespaces the clone made; 0: none */
  int guard_sock;   /* to the net guard: its listener and the connector's channel; -1: none */
  int meta_sock;    /* to the metadata guard; -1: none */
  int status_fd;    /* the init writes the command's raw wait status here; -1: none */
  int cgroup_fd;    /* the parent's word that this process is in the call's cgroups; -1: none */
  uid_t uid;
  gid_t gid;
  pid_t rune_pid;   /* kept out of the command's reach without a PID namespace */
  int subreaper;    /* the parent is the call's child subreaper (no PID namespace) */
  int n_allow;      /* addresses the net guard lets TCP reach */
  char **argv;      /* the command */
};

void run_child(struct reporter *r, const struct child_setup *setup) __attribute__((noreturn));

#endif
