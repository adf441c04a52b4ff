/* The namespaces layer (namespaces.h). */
#define _GNU_SOURCE
#include "namespaces.h"

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "args.h"
#include "fds.h"
#include "view-args.h"

pid_t namespaces_clone(struct reporter *r, int net_isolate, unsigned long *ns) {
  /* IPC, UTS and cgroup namespaces when the kernel allows them; without them the rest still helps
   * and seccomp refuses System V IPC instead. */
  unsigned long base = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | (net_isolate ? CLONE_NEWNET : 0);
  *ns = base | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  pid_t pid = (pid_t)syscall(__NR_clone, *ns | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid < 0) {
    int err = errno;
    *ns = base;
    pid = (pid_t)syscall(__NR_clone, *ns | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid > 0) skip(r, LAYER_NAMESPACES, "ipc+uts+cgroup namespaces%s", "", err);
  }
  if (pid < 0) {
    *ns = 0;
    skip(r, LAYER_NAMESPACES, "clone with new namespaces%s", "", errno);
  }
  return pid;
}

/* "user+mount+pid+net+ipc+uts+cgroup": the namespaces a clone created. */
static const char *namespace_names(unsigned long ns) {
  static char names[96];
  static const struct {
    unsigned long flag;
    const char *name;
  } all[] = {{CLONE_NEWUSER, "user"}, {CLONE_NEWNS, "mount"}, {CLONE_NEWPID, "pid"},      {CLONE_NEWNET, "net"},
             {CLONE_NEWIPC, "ipc"},   {CLONE_NEWUTS, "uts"},  {CLONE_NEWCGROUP, "cgroup"}};
  names[0] = 0;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (!(ns & all[i].flag)) continue;
    size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s%s", used ? "+" : "", all[i].name);
  }
  return names;
}

static void loopback_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) { /* a down loopback only costs localhost inside */
    }
  }
  close(s);
}

/* The view, with the generated /etc/hosts when names are allowed. */
static void build_view(struct reporter *r, struct view_result *result, const char *namespaces) {
  if (view_build(r, result) != 0) {
    skip(r, LAYER_NAMESPACES, "%s", result->why, 0);
    return;
  }
  view_report(r, namespaces, result);
  if (view.hosts_text) {
    if (result->dns_bound)
      report(r, LAYER_DNS, STATE_APPLIED, "/etc/hosts holds %d allowed name(s); no resolver reachable",
             flag_count(FLAG_HOST));
    else
      skip(r, LAYER_DNS, "binding the generated /etc/hosts%s", "", errno);
  }
}

void namespaces_enter(struct reporter *r, unsigned long ns, uid_t uid, gid_t gid, struct view_result *built) {
  if (view_args_hide_closed(r) != 0) _exit(125);
  char map[64];
  if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT) die(r, "setgroups deny");
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  if (write_file("/proc/self/uid_map", map) != 0) die(r, "uid_map");
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  if (write_file("/proc/self/gid_map", map) != 0) die(r, "gid_map");
  if (ns & CLONE_NEWNET) loopback_up();
  build_view(r, built, namespace_names(ns));
  if (ns & CLONE_NEWPID)
    report(r, LAYER_NAMESPACES, STATE_APPLIED, "PID namespace: when the command ends, every process it left is killed");
}
