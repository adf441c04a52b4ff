/* rune's net guard. The sandboxed command lives in an empty network namespace; the only sockets
 * that reach further are TCP sockets the guard creates in the host namespace, connects to an
 * allowed (address, port) and installs in the command's fd table (SECCOMP_IOCTL_NOTIF_ADDFD).
 *
 * Rules (docs/adr/0005-sandbox-network.md):
 * - Every call that can point a socket somewhere is supervised: connect(), shutdown() (on a
 *   connecting TCP socket it disconnects), and sendto/sendmsg/sendmmsg with MSG_FASTOPEN (a TCP
 *   connect that bypasses the socket_connect LSM hook, so Landlock never sees it). The flags are in
 *   registers: BPF picks those calls race-free.
 * - A supervised call is never CONTINUEd. The kernel would read the sockaddr and the fd number
 *   again, and another thread can rewrite the one and dup2() an installed host socket onto the
 *   other. Instead the guard acts on the exact file it inspected (pidfd_getfd) with the address it
 *   copied once: on the command's own sockets it calls shutdown() itself; their connects run in the
 *   connector, a process inside the sandbox (same view, Landlock domain and deny list), so paths,
 *   abstract names and Landlock's TCP rule mean what they mean for the command.
 * - A host socket the command holds is never made unconnected: a disconnect (AF_UNSPEC, or
 *   shutdown() while connecting) swaps in a fresh socket of the sandbox's namespace instead. An
 *   unconnected host socket could listen() on the host, and listen() is mediated by nothing.
 * - connect() behaves as the kernel's: 0 for a blocking socket once connected, EINPROGRESS for a
 *   non-blocking one (SO_ERROR, poll and getpeername on the real socket), EALREADY/EISCONN later.
 */
#define _GNU_SOURCE
#include "netguard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef SIOCGSKNS
#define SIOCGSKNS 0x894C
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

#define MAX_PENDING 256
#define HOST_SLOTS 1024
#define TFO_MAX 65536 /* Fast Open data sent on the command's behalf, at most (a short send) */
#define SWEEP_MS 1000

enum { OP_CONNECT = 1, OP_SOCKET = 2, OP_UNIX_CONNECT = 3 };

struct request {
  uint64_t id;
  int32_t op;
  int32_t domain, type, protocol;
  uint32_t addrlen;
  uint32_t has_cwd;
  unsigned char addr[sizeof(struct sockaddr_storage)];
};

struct response {
  uint64_t id;
  int32_t result; /* 0 or -errno */
};

/* ---------------------------------------------------------------- the allow list */

int netguard_parse_allow(const char *text, struct ng_allow *out) {
  char host[64];
  const char *port = NULL;
  memset(out, 0, sizeof *out);
  if (text[0] == '[') {
    const char *end = strchr(text, ']');
    if (!end || (size_t)(end - text - 1) >= sizeof host) return -1;
    memcpy(host, text + 1, (size_t)(end - text - 1));
    host[end - text - 1] = 0;
    if (end[1] == ':') port = end + 2;
    else if (end[1] != 0) return -1;
  } else {
    const char *colon = strchr(text, ':');
    size_t len = strlen(text);
    if (colon && !strchr(colon + 1, ':')) { /* one colon: IPv4:port */
      len = (size_t)(colon - text);
      port = colon + 1;
    }
    if (len >= sizeof host) return -1;
    memcpy(host, text, len);
    host[len] = 0;
  }
  if (inet_pton(AF_INET, host, out->bytes) == 1) out->family = AF_INET;
  else if (inet_pton(AF_INET6, host, out->bytes) == 1) out->family = AF_INET6;
  else return -1;
  if (port) {
    char *end = NULL;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 1 || p > 65535) return -1;
    out->port = (unsigned short)p;
  }
  return 0;
}

static const struct ng_allow *allow_list;
static int allow_count;

/* Whether an AF_INET/AF_INET6 sockaddr names an allowed (address, port). An IPv4-mapped IPv6
 * address counts as its IPv4 address. */
static int destination_allowed(const struct sockaddr_storage *ss, socklen_t len) {
  int family = ss->ss_family;
  const unsigned char *bytes;
  unsigned short port;
  if (family == AF_INET && len >= sizeof(struct sockaddr_in)) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
    bytes = (const unsigned char *)&in->sin_addr;
    port = ntohs(in->sin_port);
  } else if (family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
    bytes = (const unsigned char *)&in6->sin6_addr;
    port = ntohs(in6->sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      family = AF_INET;
      bytes += 12;
    }
  } else {
    return 0;
  }
  if (port == 0) return 0;
  /* An unspecified destination (0.0.0.0/8, ::) is "this host" to Linux: every local listener. No
   * allowed name stands for that, even one that resolves to it (DNS sinkholes answer 0.0.0.0). */
  static const unsigned char zero[16];
  if (family == AF_INET ? bytes[0] == 0 : memcmp(bytes, zero, 16) == 0) return 0;
  for (int i = 0; i < allow_count; i++) {
    const struct ng_allow *a = &allow_list[i];
    if (a->family != family || (a->port != 0 && a->port != port)) continue;
    if (memcmp(a->bytes, bytes, family == AF_INET ? 4 : 16) == 0) return 1;
  }
  return 0;
}

/* ---------------------------------------------------------------- the BPF rules */

#define STMT(code, k) ((struct sock_filter)BPF_STMT((code), (k)))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP((code), (k), (jt), (jf)))
#define LOAD_ARG(i) STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 8 * (i))

int netguard_filter(struct sock_filter *f, int connect_only) {
  int n = 0;
  if (connect_only) {
    f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_connect, 0, 1);
    f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
    return n;
  }
  /* 0 */ f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_connect, 8, 0);
  /* 1 */ f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_shutdown, 7, 0);
  /* 2 */ f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmsg, 0, 2);
  /* 3 */ f[n++] = LOAD_ARG(2);
  /* 4 */ f[n++] = STMT(BPF_JMP | BPF_JA, 3);
  /* 5 */ f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendto, 1, 0);
  /* 6 */ f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmmsg, 0, 3);
  /* 7 */ f[n++] = LOAD_ARG(3);
  /* 8 */ f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, MSG_FASTOPEN, 0, 1);
  /* 9 */ f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
  return n;
}

/* ---------------------------------------------------------------- the connector (in the sandbox) */

static ssize_t send_with_fds(int sock, const void *buf, size_t len, const int *fds, int n_fds, int flags) {
  struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(2 * sizeof(int))];
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (n_fds > 0) {
    msg.msg_control = u.buf;
    msg.msg_controllen = CMSG_SPACE((size_t)n_fds * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN((size_t)n_fds * sizeof(int));
    memcpy(CMSG_DATA(c), fds, (size_t)n_fds * sizeof(int));
  }
  return sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
}

/* Receives one message; its fds (up to 2) go to fds[], the rest are -1. */
static ssize_t recv_with_fds(int sock, void *buf, size_t len, int *fds) {
  struct iovec iov = {.iov_base = buf, .iov_len = len};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(2 * sizeof(int))];
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  fds[0] = fds[1] = -1;
  ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (i < 2) fds[i] = fd;
      else close(fd);
    }
  }
  return n;
}

static void connector_connect(int channel, const struct request *rq, int sock, int cwd) {
  struct response rs = {.id = rq->id, .result = 0};
  if (cwd >= 0 && fchdir(cwd) != 0) rs.result = -errno;
  else if (connect(sock, (const struct sockaddr *)rq->addr, (socklen_t)rq->addrlen) != 0) rs.result = -errno;
  send_with_fds(channel, &rs, sizeof rs, NULL, 0, 0);
}

/* ---- pathname UNIX sockets: only listeners inside the sandbox */

/* Landlock (before ABI 9's LANDLOCK_ACCESS_FS_RESOLVE_UNIX) does not mediate connect(2) on a
 * pathname socket and a read-only mount does not stop it, so a socket in a granted folder whose
 * listener runs outside (a Docker API socket, an ssh-agent) would be reachable. The connector
 * connects a fresh socket of its own, never the command's: a connection cannot be taken back, and
 * the command may hold its file under a second fd number. Only once the peer is known to be inside
 * is the fresh socket handed to the command (installed at its fd number by the guard). "Inside" is
 * told by the kernel, not by a path: SO_PEERCRED gives the pid of the process that called listen()
 * as seen from this process's PID namespace, the sandbox's, and a process outside it reads as 0. */
static int unix_rule;

/* Options a client commonly sets before connect(); the rest stay at the fresh socket's defaults. */
static void copy_unix_options(int from, int to) {
  static const int names[] = {SO_PASSCRED, SO_PASSSEC, SO_SNDTIMEO, SO_RCVTIMEO, SO_SNDBUF, SO_RCVBUF,
                              76 /* SO_PASSPIDFD */};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    unsigned char value[32], fresh[32];
    socklen_t len = sizeof value, fresh_len = sizeof fresh;
    if (getsockopt(from, SOL_SOCKET, names[i], value, &len) != 0) continue;
    if (getsockopt(to, SOL_SOCKET, names[i], fresh, &fresh_len) == 0 && fresh_len == len &&
        memcmp(value, fresh, len) == 0)
      continue;
    if ((names[i] == SO_SNDBUF || names[i] == SO_RCVBUF) && len == sizeof(int)) {
      int half;
      memcpy(&half, value, sizeof half);
      half /= 2; /* the kernel doubles what it is given */
      memcpy(value, &half, sizeof half);
    }
    setsockopt(to, SOL_SOCKET, names[i], value, len);
  }
}

/* 0 when the connected socket's listener is a process of this PID namespace, else -EACCES. */
static int unix_peer_inside(int sock) {
  struct ucred cred;
  socklen_t len = sizeof cred;
  memset(&cred, 0, sizeof cred);
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return -EACCES;
  return cred.pid > 0 ? 0 : -EACCES;
}

/* Sends the answer to an OP_UNIX_CONNECT: the checked socket, or the error. Closes `fresh`. */
static void unix_reply(int channel, uint64_t id, int fresh, int result, int file_flags) {
  struct response rs = {.id = id, .result = result};
  if (result == 0) {
    result = unix_peer_inside(fresh);
    rs.result = result;
  }
  if (result == 0) fcntl(fresh, F_SETFL, (file_flags & O_NONBLOCK) | O_RDWR);
  send_with_fds(channel, &rs, sizeof rs, result == 0 ? &fresh : NULL, result == 0 ? 1 : 0, 0);
  if (fresh >= 0) close(fresh);
}

static void connector_unix_connect(int channel, const struct request *rq, int caller, int cwd) {
  int type = 0, listening = 0, flags = fcntl(caller, F_GETFL);
  socklen_t len = sizeof type;
  getsockopt(caller, SOL_SOCKET, SO_TYPE, &type, &len);
  len = sizeof listening;
  getsockopt(caller, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len);
  struct sockaddr_storage peer;
  socklen_t peer_len = sizeof peer;
  int err = 0;
  if (unix_rule != NETGUARD_UNIX_SAME_PIDNS) err = EACCES; /* no PID namespace to tell inside from outside */
  else if (type != SOCK_STREAM && type != SOCK_SEQPACKET) err = EACCES; /* datagram sockets cannot exist here */
  else if (listening) err = EINVAL;
  else if (getpeername(caller, (struct sockaddr *)&peer, &peer_len) == 0) err = EISCONN;
  int fresh = err ? -1 : socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (!err && fresh < 0) err = errno;
  if (!err) copy_unix_options(caller, fresh);
  if (!err && cwd >= 0 && fchdir(cwd) != 0) err = errno;
  if (!err && connect(fresh, (const struct sockaddr *)rq->addr, (socklen_t)rq->addrlen) != 0) err = errno;
  if (err == EAGAIN && flags >= 0 && !(flags & O_NONBLOCK)) {
    /* A full backlog and a blocking caller: wait in a child, as the caller's connect() would. */
    pid_t pid = fork();
    if (pid == 0) {
      fcntl(fresh, F_SETFL, O_RDWR);
      int rc = connect(fresh, (const struct sockaddr *)rq->addr, (socklen_t)rq->addrlen) == 0 ? 0 : -errno;
      unix_reply(channel, rq->id, fresh, rc, flags);
      _exit(0);
    }
    if (pid > 0) {
      close(fresh);
      return;
    }
  }
  unix_reply(channel, rq->id, fresh, err ? -err : 0, flags);
}

void netguard_connector_rule(int rule) {
  unix_rule = rule;
}

int netguard_connector_serve(int channel) {
  struct request rq;
  int fds[2];
  ssize_t n = recv_with_fds(channel, &rq, sizeof rq, fds);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
  if (n != (ssize_t)sizeof rq) { /* the guard is gone */
    for (int i = 0; i < 2; i++)
      if (fds[i] >= 0) close(fds[i]);
    return -1;
  }
  if (rq.op == OP_SOCKET) {
    struct response rs = {.id = rq.id, .result = 0};
    int s = socket(rq.domain, rq.type | SOCK_CLOEXEC, rq.protocol);
    if (s < 0) rs.result = -errno;
    send_with_fds(channel, &rs, sizeof rs, s >= 0 ? &s : NULL, s >= 0 ? 1 : 0, 0);
    if (s >= 0) close(s);
  } else if (rq.op == OP_UNIX_CONNECT && fds[0] >= 0 && rq.addrlen <= sizeof rq.addr) {
    connector_unix_connect(channel, &rq, fds[0], fds[1]);
  } else if (rq.op == OP_CONNECT && fds[0] >= 0 && rq.addrlen <= sizeof rq.addr) {
    int flags = fcntl(fds[0], F_GETFL);
    int blocking = flags >= 0 && !(flags & O_NONBLOCK);
    /* A blocking connect first tries without waiting (the file is the caller's: its flag comes
     * back at once); nearly every one completes right away. One that would wait (a full unix
     * backlog: EAGAIN; a TCP handshake in progress: EINPROGRESS) goes on in a child, so it holds
     * up no other connect; calling connect() again there waits as the caller's would. */
    if (blocking) fcntl(fds[0], F_SETFL, flags | O_NONBLOCK);
    int rc = -1, err = 0;
    if (fds[1] >= 0 && fchdir(fds[1]) != 0) err = errno;
    else rc = connect(fds[0], (const struct sockaddr *)rq.addr, (socklen_t)rq.addrlen);
    if (rc != 0 && !err) err = errno;
    if (blocking) fcntl(fds[0], F_SETFL, flags);
    pid_t pid = -1;
    if (blocking && rc != 0 && (err == EAGAIN || err == EINPROGRESS)) pid = fork();
    if (pid == 0) {
      connector_connect(channel, &rq, fds[0], fds[1]);
      _exit(0);
    }
    if (pid < 0) { /* done, or no child to wait in: the connector itself never waits */
      struct response rs = {.id = rq.id, .result = rc == 0 ? 0 : -err};
      send_with_fds(channel, &rs, sizeof rs, NULL, 0, 0);
    }
  } else {
    struct response rs = {.id = rq.id, .result = -EINVAL};
    send_with_fds(channel, &rs, sizeof rs, NULL, 0, 0);
  }
  for (int i = 0; i < 2; i++)
    if (fds[i] >= 0) close(fds[i]);
  return 0;
}

/* ---------------------------------------------------------------- the guard (host side) */

enum kind { FREE, HOST_CONNECT, HOST_WAIT, CONNECTOR };

/* One supervised call the guard has not answered yet (or, on the stack, the one being handled). */
struct job {
  enum kind kind;
  uint64_t id; /* seccomp notification */
  pid_t tid;
  int nr;
  int target_fd, cloexec, nonblock;
  int sock; /* HOST_CONNECT: the new host socket; HOST_WAIT: the command's host socket */
  struct sockaddr_storage addr;
  socklen_t addrlen;
  long long deadline; /* CLOCK_MONOTONIC ms; 0: none */
  int tfo;            /* Fast Open: send `data` once connected and answer its length */
  unsigned char *data;
  size_t data_len;
  int send_flags;
  uint64_t request; /* CONNECTOR: our request id */
  int op;           /* CONNECTOR: OP_CONNECT or OP_SOCKET */
  int final;        /* OP_SOCKET: the answer once the fresh socket is installed (0 or an errno) */
  int file_nonblock; /* O_NONBLOCK of the command's file (j->nonblock may add MSG_DONTWAIT) */
};

/* What the guard knows of a host socket it installed: whether the command's side of the kernel
 * still says "connecting" (the guard never calls connect() on it again, see host_step). */
enum { H_CONNECTING = 1, H_CONNECTED = 2 };
struct host_record {
  unsigned long ino;
  int state;
};

static struct {
  int listener, connector;
  dev_t netns_dev;
  ino_t netns_ino;
  struct seccomp_notif_sizes sizes;
  struct job jobs[MAX_PENDING];
  int top; /* jobs[top..] have never been used: loops stop there, so a call that never waits touches none */
  struct host_record hosts[HOST_SLOTS];
  uint64_t next_request;
} g;

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void answer(uint64_t id, long long val, int err) {
  struct seccomp_notif_resp *resp = calloc(1, g.sizes.seccomp_notif_resp);
  if (!resp) return;
  resp->id = id;
  resp->val = err ? 0 : val;
  resp->error = err ? -err : 0;
  ioctl(g.listener, SECCOMP_IOCTL_NOTIF_SEND, resp); /* ENOENT: the caller is gone or interrupted */
  free(resp);
}

/* Installs `src` at the command's fd number `target` (replacing what is there, as dup2 would). */
static int install(uint64_t id, int src, int target, int cloexec) {
  struct seccomp_notif_addfd addfd = {
      .id = id,
      .flags = SECCOMP_ADDFD_FLAG_SETFD,
      .srcfd = (unsigned)src,
      .newfd = (unsigned)target,
      .newfd_flags = cloexec ? O_CLOEXEC : 0,
  };
  return ioctl(g.listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) < 0 ? -errno : 0;
}

static struct host_record *host_slot(unsigned long ino) {
  return &g.hosts[ino % HOST_SLOTS];
}

static void remember_host(int sock, int state) {
  struct stat st;
  if (fstat(sock, &st) != 0) return;
  struct host_record *r = host_slot(st.st_ino);
  r->ino = st.st_ino;
  r->state = state;
}

/* A host socket the guard has no record of counts as connected: the answer that never moves it. */
static int host_state(unsigned long ino) {
  struct host_record *r = host_slot(ino);
  return r->ino == ino ? r->state : H_CONNECTED;
}

static void job_release(struct job *j) {
  if (j->sock >= 0) close(j->sock);
  free(j->data);
  memset(j, 0, sizeof *j);
  j->sock = -1;
  j->kind = FREE;
}

static struct job *job_store(const struct job *j, enum kind kind) {
  for (int i = 0; i < MAX_PENDING; i++) {
    if (g.jobs[i].kind != FREE) continue;
    g.jobs[i] = *j;
    g.jobs[i].kind = kind;
    if (i >= g.top) g.top = i + 1;
    return &g.jobs[i];
  }
  return NULL;
}

/* ---- reading the command's side */

struct sockview {
  int fd; /* our duplicate of the command's file */
  int domain, type, protocol;
  int host; /* not a socket of the sandbox's own namespace */
  int nonblock, cloexec;
  unsigned long ino;
  int tcp_state; /* TCP_INFO state, or -1 */
};

static pid_t tgid_of(pid_t tid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/status", tid);
  int f = open(path, O_RDONLY | O_CLOEXEC);
  if (f < 0) return -1;
  ssize_t n = read(f, buf, sizeof buf - 1);
  close(f);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *p = strstr(buf, "\nTgid:");
  return p ? (pid_t)strtol(p + 6, NULL, 10) : -1;
}

static int fd_cloexec(pid_t tid, int fd) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", tid, fd);
  int f = open(path, O_RDONLY | O_CLOEXEC);
  if (f < 0) return 0;
  ssize_t n = read(f, buf, sizeof buf - 1);
  close(f);
  if (n <= 0) return 0;
  buf[n] = 0;
  char *p = strstr(buf, "flags:");
  return p && (strtol(p + 6, NULL, 8) & O_CLOEXEC);
}

static int is_tcp(const struct sockview *v) {
  return (v->domain == AF_INET || v->domain == AF_INET6) && v->type == SOCK_STREAM &&
         (v->protocol == IPPROTO_TCP || v->protocol == IPPROTO_MPTCP);
}

static int tcp_state(int fd) {
  struct tcp_info info;
  socklen_t len = sizeof info;
  memset(&info, 0, sizeof info);
  return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 ? info.tcpi_state : -1;
}

/* Duplicates the command's fd and describes it. 0, or -errno as the call would fail. */
static int view_socket(pid_t tid, long long fd_arg, struct sockview *v) {
  memset(v, 0, sizeof *v);
  v->fd = -1;
  v->tcp_state = -1;
  if (fd_arg < 0 || fd_arg > INT32_MAX) return -EBADF;
  int fd = (int)fd_arg;
  /* A pidfd of the calling thread itself (PIDFD_THREAD, Linux 6.9); before that, of its process
   * (found through /proc). Threads share the fd table: either gives the caller's files. */
  int pidfd = (int)syscall(__NR_pidfd_open, tid, PIDFD_THREAD);
  if (pidfd < 0) {
    pid_t tgid = tgid_of(tid);
    if (tgid <= 0) return -ESRCH;
    pidfd = (int)syscall(__NR_pidfd_open, tgid, 0);
  }
  if (pidfd < 0) return -ESRCH;
  int dup = (int)syscall(__NR_pidfd_getfd, pidfd, fd, 0);
  int err = errno;
  close(pidfd);
  if (dup < 0) return err == EBADF ? -EBADF : -err;
  v->fd = dup;
  socklen_t l = sizeof(int);
  if (getsockopt(dup, SOL_SOCKET, SO_DOMAIN, &v->domain, &l) != 0) return -ENOTSOCK;
  l = sizeof(int);
  getsockopt(dup, SOL_SOCKET, SO_TYPE, &v->type, &l);
  l = sizeof(int);
  getsockopt(dup, SOL_SOCKET, SO_PROTOCOL, &v->protocol, &l);
  int fl = fcntl(dup, F_GETFL);
  v->nonblock = fl >= 0 && (fl & O_NONBLOCK);
  v->cloexec = fd_cloexec(tid, fd);
  struct stat st;
  if (fstat(dup, &st) == 0) v->ino = st.st_ino;
  /* SIOCGSKNS needs CAP_NET_ADMIN over the socket's namespace: the guard has it for the sandbox's
   * (its user namespace is the guard's child), not for the host's unless it runs as root. Anything
   * not positively the sandbox's own is treated as a host socket. */
  v->host = allow_count > 0; /* without allowed domains the guard never made a host socket */
  int ns = v->host ? ioctl(dup, SIOCGSKNS) : -1;
  if (ns >= 0) {
    if (fstat(ns, &st) == 0 && st.st_dev == g.netns_dev && st.st_ino == g.netns_ino) v->host = 0;
    close(ns);
  }
  if (is_tcp(v)) v->tcp_state = tcp_state(dup);
  return 0;
}

static int read_memory(pid_t tid, unsigned long addr, void *buf, size_t len) {
  if (len == 0) return 0;
  struct iovec local = {.iov_base = buf, .iov_len = len};
  struct iovec remote = {.iov_base = (void *)addr, .iov_len = len};
  return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* Copies a sockaddr argument once; -errno as the kernel's move_addr_to_kernel would fail. */
static int read_sockaddr(pid_t tid, unsigned long ptr, long long len, struct job *j) {
  memset(&j->addr, 0, sizeof j->addr);
  if (len < 0 || len > (long long)sizeof j->addr) return -EINVAL;
  j->addrlen = (socklen_t)len;
  return read_memory(tid, ptr, &j->addr, (size_t)len);
}

/* The data of a Fast Open send, up to TFO_MAX bytes. */
static int read_send_data(pid_t tid, const struct iovec *iov, size_t n_iov, struct job *j) {
  size_t total = 0;
  for (size_t i = 0; i < n_iov; i++) total += iov[i].iov_len < TFO_MAX ? iov[i].iov_len : TFO_MAX;
  if (total > TFO_MAX) total = TFO_MAX;
  j->data = malloc(total ? total : 1);
  if (!j->data) return -ENOMEM;
  size_t used = 0;
  for (size_t i = 0; i < n_iov && used < total; i++) {
    size_t part = iov[i].iov_len < total - used ? iov[i].iov_len : total - used;
    int rc = read_memory(tid, (unsigned long)iov[i].iov_base, j->data + used, part);
    if (rc) return rc;
    used += part;
  }
  j->data_len = used;
  return 0;
}

static int still_valid(uint64_t id) {
  return ioctl(g.listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* ---- talking to the connector */

static void ask_connector(struct job *j, int op, const struct sockview *v, int domain, int cwd) {
  struct request rq;
  memset(&rq, 0, sizeof rq);
  rq.id = ++g.next_request;
  rq.op = op;
  rq.domain = domain;
  rq.type = SOCK_STREAM;
  rq.protocol = IPPROTO_TCP;
  int fds[2] = {v ? v->fd : -1, cwd};
  int n_fds = 0;
  if (op == OP_CONNECT || op == OP_UNIX_CONNECT) {
    rq.addrlen = j->addrlen;
    memcpy(rq.addr, &j->addr, j->addrlen);
    rq.has_cwd = cwd >= 0;
    n_fds = cwd >= 0 ? 2 : 1;
  }
  if (g.connector < 0 || send_with_fds(g.connector, &rq, sizeof rq, fds, n_fds, MSG_DONTWAIT) < 0) {
    /* No connector (the command killed it): connects inside fail; a disconnect cannot be
     * emulated, so the host socket stays as it is and the caller hears EOPNOTSUPP. */
    int err = g.connector < 0 || errno == EPIPE || errno == ECONNREFUSED ? EPERM : errno;
    if (op == OP_SOCKET) answer(j->id, 0, j->final ? j->final : EOPNOTSUPP);
    else answer(j->id, 0, err);
    job_release(j);
    return;
  }
  j->request = rq.id;
  j->op = op;
  if (j->sock >= 0) {
    close(j->sock); /* the connector holds its own copy now */
    j->sock = -1;
  }
  if (!job_store(j, CONNECTOR)) {
    answer(j->id, 0, EAGAIN);
    job_release(j);
    return;
  }
  memset(j, 0, sizeof *j); /* ownership moved to the table */
  j->sock = -1;
}

/* Swaps the command's fd for a fresh, unconnected socket of the sandbox's namespace (made by the
 * connector) and then answers `final`: how a disconnect looks without ever disconnecting a host
 * socket. */
static void replace_with_fresh(struct job *j, int domain, int final) {
  j->final = final;
  ask_connector(j, OP_SOCKET, NULL, domain, -1);
}

static void on_connector_reply(void) {
  struct response rs;
  int fds[2];
  ssize_t n = recv_with_fds(g.connector, &rs, sizeof rs, fds);
  if (n != (ssize_t)sizeof rs) {
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
      close(g.connector); /* the command killed it: later requests fail with EPERM */
      g.connector = -1;
    }
    for (int i = 0; i < 2; i++)
      if (fds[i] >= 0) close(fds[i]);
    return;
  }
  struct job *j = NULL;
  for (int i = 0; i < g.top; i++)
    if (g.jobs[i].kind == CONNECTOR && g.jobs[i].request == rs.id) j = &g.jobs[i];
  if (!j) {
    for (int i = 0; i < 2; i++)
      if (fds[i] >= 0) close(fds[i]);
    return;
  }
  if (j->op == OP_CONNECT) {
    answer(j->id, 0, rs.result < 0 ? -rs.result : 0);
  } else if (j->op == OP_UNIX_CONNECT) {
    /* The checked socket takes the place of the command's (as dup2 would); its own file, under any
     * other number, stays unconnected. */
    if (rs.result < 0 || fds[0] < 0) {
      answer(j->id, 0, rs.result < 0 ? -rs.result : EACCES);
    } else {
      int rc = install(j->id, fds[0], j->target_fd, j->cloexec);
      if (rc != -ENOENT) answer(j->id, 0, -rc); /* ENOENT: the caller is gone or interrupted */
    }
  } else if (rs.result < 0 || fds[0] < 0) {
    answer(j->id, 0, j->final ? j->final : EOPNOTSUPP);
  } else {
    if (j->file_nonblock) fcntl(fds[0], F_SETFL, O_RDWR | O_NONBLOCK);
    int rc = install(j->id, fds[0], j->target_fd, j->cloexec);
    if (rc == 0) answer(j->id, 0, j->final);
    else if (rc != -ENOENT) answer(j->id, 0, -rc);
  }
  for (int i = 0; i < 2; i++)
    if (fds[i] >= 0) close(fds[i]);
  job_release(j);
}

/* ---- new connections to allowed destinations */

static void copy_options(int from, int to, int domain) {
  static const struct {
    int level, name;
    socklen_t size;
  } options[] = {
      {SOL_SOCKET, SO_KEEPALIVE, sizeof(int)},
      {SOL_SOCKET, SO_OOBINLINE, sizeof(int)},
      {SOL_SOCKET, SO_LINGER, sizeof(struct linger)},
      {SOL_SOCKET, SO_RCVTIMEO, sizeof(struct timeval)},
      {SOL_SOCKET, SO_SNDTIMEO, sizeof(struct timeval)},
      {IPPROTO_TCP, TCP_NODELAY, sizeof(int)},
      {IPPROTO_TCP, TCP_KEEPIDLE, sizeof(int)},
      {IPPROTO_TCP, TCP_KEEPINTVL, sizeof(int)},
      {IPPROTO_TCP, TCP_KEEPCNT, sizeof(int)},
      {IPPROTO_TCP, TCP_USER_TIMEOUT, sizeof(int)},
  };
  enum { N_OPTIONS = sizeof options / sizeof options[0] };
  /* What a new TCP socket of each family starts with, read once: only what the caller changed
   * needs a setsockopt on ours. */
  static struct {
    int ready;
    unsigned char value[N_OPTIONS][32];
    socklen_t len[N_OPTIONS];
  } defaults[2];
  int slot = domain == AF_INET6;
  if (!defaults[slot].ready) {
    int probe = socket(domain, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
    if (probe >= 0) {
      for (int i = 0; i < N_OPTIONS; i++) {
        defaults[slot].len[i] = options[i].size;
        if (getsockopt(probe, options[i].level, options[i].name, defaults[slot].value[i], &defaults[slot].len[i]) != 0)
          defaults[slot].len[i] = 0;
      }
      close(probe);
      defaults[slot].ready = 1;
    }
  }
  unsigned char value[32];
  for (int i = 0; i < N_OPTIONS; i++) {
    socklen_t len = options[i].size;
    if (getsockopt(from, options[i].level, options[i].name, value, &len) != 0) continue;
    if (defaults[slot].ready && defaults[slot].len[i] == len && memcmp(defaults[slot].value[i], value, len) == 0)
      continue;
    setsockopt(to, options[i].level, options[i].name, value, len);
  }
  if (domain == AF_INET6) {
    int v6only = 0;
    socklen_t len = sizeof v6only;
    if (getsockopt(from, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &len) == 0)
      setsockopt(to, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, len);
  }
}

static long long send_timeout_ms(int fd) {
  struct timeval tv = {0, 0};
  socklen_t len = sizeof tv;
  if (getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &len) != 0) return 0;
  return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void send_tfo_data(struct job *j, int sock) {
  ssize_t sent = 0;
  if (j->data_len > 0) {
    int flags = (j->send_flags & ~(MSG_FASTOPEN | MSG_DONTWAIT)) | MSG_NOSIGNAL | MSG_DONTWAIT;
    sent = send(sock, j->data, j->data_len, flags);
  }
  if (sent < 0) answer(j->id, 0, errno == EAGAIN ? EINPROGRESS : errno);
  else answer(j->id, sent, 0);
}

/* The host socket `j->sock` finished connecting (or failed) for a blocking caller, or its
 * SO_SNDTIMEO ran out (`timed_out`). */
static void finish_host_connect(struct job *j, int timed_out) {
  int err = 0;
  socklen_t len = sizeof err;
  if (!timed_out && getsockopt(j->sock, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err) {
    answer(j->id, 0, err); /* the command's own socket stays as it was: unconnected */
    job_release(j);
    return;
  }
  /* A second connect() moves the socket to the kernel's "connected". If the peer reset it in the
   * meantime, that connect() disconnects it instead: such a socket is never handed over. */
  if (!timed_out && connect(j->sock, (struct sockaddr *)&j->addr, j->addrlen) != 0 && errno != EISCONN) {
    answer(j->id, 0, errno);
    job_release(j);
    return;
  }
  fcntl(j->sock, F_SETFL, O_RDWR);
  int rc = install(j->id, j->sock, j->target_fd, j->cloexec);
  if (rc == 0) {
    remember_host(j->sock, timed_out ? H_CONNECTING : H_CONNECTED);
    if (timed_out) answer(j->id, 0, EINPROGRESS); /* as a blocking connect() whose SO_SNDTIMEO ran out */
    else if (j->tfo) send_tfo_data(j, j->sock);
    else answer(j->id, 0, 0);
  } else if (rc != -ENOENT) {
    answer(j->id, 0, -rc);
  }
  job_release(j);
}

/* connect() (or a Fast Open send) from a socket of the sandbox's namespace to an allowed
 * destination: the guard's own host socket takes its place. */
static void start_host_connect(struct job *j, const struct sockview *v) {
  int ours = socket(v->domain, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  if (ours < 0) {
    answer(j->id, 0, errno);
    job_release(j);
    return;
  }
  copy_options(v->fd, ours, v->domain);
  long long timeout = j->nonblock ? 0 : send_timeout_ms(v->fd);
  int rc = connect(ours, (struct sockaddr *)&j->addr, j->addrlen);
  int err = rc == 0 ? 0 : errno;
  if (rc != 0 && err != EINPROGRESS) {
    close(ours);
    answer(j->id, 0, err);
    job_release(j);
    return;
  }
  if (j->sock >= 0) close(j->sock);
  j->sock = ours;
  if (rc == 0 && !j->nonblock) {
    finish_host_connect(j, 0);
    return;
  }
  if (j->nonblock) {
    /* The real socket, still connecting: poll, SO_ERROR and getpeername behave as the kernel's. */
    if (!v->nonblock) fcntl(ours, F_SETFL, O_RDWR); /* MSG_DONTWAIT on a blocking file */
    int installed = install(j->id, ours, j->target_fd, j->cloexec);
    if (installed == 0) {
      remember_host(ours, rc == 0 ? H_CONNECTED : H_CONNECTING);
      if (rc == 0 && j->tfo) send_tfo_data(j, ours);
      else answer(j->id, 0, rc == 0 ? 0 : EINPROGRESS);
    } else if (installed != -ENOENT) {
      answer(j->id, 0, -installed);
    }
    job_release(j);
    return;
  }
  j->deadline = timeout > 0 ? now_ms() + timeout : 0;
  if (!job_store(j, HOST_CONNECT)) {
    answer(j->id, 0, EAGAIN);
    job_release(j);
    return;
  }
  memset(j, 0, sizeof *j);
  j->sock = -1;
}

/* ---- calls on a host socket the command already holds */

/* connect() or a Fast Open send on a host socket. The kernel's answer depends on the socket's
 * state; the guard computes it instead of letting the kernel act on the socket, because the
 * kernel's own path would disconnect a socket whose connect failed. `j->sock` is our duplicate. */
static void host_step(struct job *j) {
  /* Still connecting: the TCP state says so by itself. */
  int tcp = tcp_state(j->sock);
  if (tcp == TCP_SYN_SENT || tcp == TCP_SYN_RECV) {
    if (j->nonblock) {
      answer(j->id, 0, EALREADY);
      job_release(j);
    } else if (!job_store(j, HOST_WAIT)) {
      answer(j->id, 0, EAGAIN);
      job_release(j);
    } else {
      memset(j, 0, sizeof *j);
      j->sock = -1;
    }
    return;
  }
  /* Established or closed: whether the kernel would still call it "connecting" (answer 0, or the
   * error of a failed connect) or "connected" (EISCONN) is what the guard recorded when it handed
   * the socket over; without a record, EISCONN, the answer that never moves the socket. */
  int state = H_CONNECTED;
  struct stat st;
  if (fstat(j->sock, &st) == 0) state = host_state(st.st_ino);
  if (state == H_CONNECTED) {
    answer(j->id, 0, EISCONN);
    job_release(j);
    return;
  }
  if (tcp == TCP_CLOSE || tcp < 0) {
    /* The connection failed: the kernel answers the error and leaves an unconnected socket. */
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(j->sock, SOL_SOCKET, SO_ERROR, &err, &len);
    int domain = 0;
    len = sizeof domain;
    getsockopt(j->sock, SOL_SOCKET, SO_DOMAIN, &domain, &len);
    replace_with_fresh(j, domain, err ? err : ECONNABORTED);
    return;
  }
  remember_host(j->sock, H_CONNECTED); /* established: the kernel would say 0 and "connected" now */
  if (j->tfo) send_tfo_data(j, j->sock);
  else answer(j->id, 0, 0);
  job_release(j);
}

/* ---- the supervised calls */

static void connect_inside(struct job *j, const struct sockview *v, int family);

static void on_connect(struct seccomp_notif *req, struct job *j) {
  struct sockview v;
  int rc = view_socket(j->tid, (long long)req->data.args[0], &v);
  j->sock = v.fd;
  if (rc == 0) rc = read_sockaddr(j->tid, req->data.args[1], (long long)(int)req->data.args[2], j);
  if (!still_valid(j->id)) {
    job_release(j);
    return;
  }
  if (rc < 0) {
    answer(j->id, 0, -rc);
    job_release(j);
    return;
  }
  j->nonblock = j->file_nonblock = v.nonblock;
  j->cloexec = v.cloexec;
  int family = j->addrlen >= sizeof(sa_family_t) ? j->addr.ss_family : -1;
  if (v.domain == AF_UNIX) {
    /* Never a host TCP socket, whatever SIOCGSKNS could tell (it needs CAP_NET_ADMIN over the
     * socket's namespace). */
    connect_inside(j, &v, family);
    return;
  }
  if (v.host && family < 0) {
    answer(j->id, 0, EINVAL);
    job_release(j);
    return;
  }
  if (v.host && family == AF_UNSPEC) {
    replace_with_fresh(j, v.domain, 0);
    return;
  }
  if (v.host) {
    host_step(j);
    return;
  }
  if (family == AF_UNSPEC) { /* a disconnect inside the sandbox: nothing to guard */
    int r = connect(v.fd, (struct sockaddr *)&j->addr, j->addrlen);
    answer(j->id, 0, r == 0 ? 0 : errno);
    job_release(j);
    return;
  }
  if (is_tcp(&v) && v.tcp_state == TCP_CLOSE && family == v.domain && destination_allowed(&j->addr, j->addrlen)) {
    start_host_connect(j, &v);
    return;
  }
  /* Everything else happens where the command is: unix paths in its view, abstract names and the
   * loopback of its namespace, Landlock's TCP rule. */
  connect_inside(j, &v, family);
}

/* A connect() the connector performs in the sandbox: a pathname UNIX one on a fresh socket it
 * checks first (connector_unix_connect), anything else on the command's own file. */
static void connect_inside(struct job *j, const struct sockview *v, int family) {
  int cwd = -1, pathname = 0;
  if (family == AF_UNIX && j->addrlen > offsetof(struct sockaddr_un, sun_path)) {
    const struct sockaddr_un *un = (const struct sockaddr_un *)&j->addr;
    pathname = un->sun_path[0] != 0;
    if (un->sun_path[0] != '/' && un->sun_path[0] != 0) {
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/cwd", j->tid);
      cwd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
  }
  ask_connector(j, pathname && v->domain == AF_UNIX ? OP_UNIX_CONNECT : OP_CONNECT, v, v->domain, cwd);
  if (cwd >= 0) close(cwd);
}

static void on_shutdown(struct seccomp_notif *req, struct job *j) {
  struct sockview v;
  int rc = view_socket(j->tid, (long long)req->data.args[0], &v);
  j->sock = v.fd;
  if (!still_valid(j->id)) {
    job_release(j);
    return;
  }
  int how = (int)req->data.args[1];
  if (rc == 0 && (how < SHUT_RD || how > SHUT_RDWR)) rc = -EINVAL;
  if (rc < 0) {
    answer(j->id, 0, -rc);
    job_release(j);
    return;
  }
  j->nonblock = j->file_nonblock = v.nonblock;
  j->cloexec = v.cloexec;
  /* shutdown() of a TCP socket that is still connecting disconnects it (inet_shutdown): for a
   * host socket that would leave it unconnected, so a fresh sandbox socket takes its place. Any
   * other state cannot go back to "connecting", so the guard's own shutdown() is safe. */
  if (v.host && tcp_state(v.fd) == TCP_SYN_SENT) {
    replace_with_fresh(j, v.domain, 0);
    return;
  }
  answer(j->id, 0, shutdown(v.fd, how) == 0 ? 0 : errno);
  job_release(j);
}

static void on_fastopen(struct seccomp_notif *req, struct job *j) {
  struct sockview v;
  int rc = view_socket(j->tid, (long long)req->data.args[0], &v);
  j->sock = v.fd;
  struct iovec one;
  struct iovec iov[64];
  size_t n_iov = 0;
  if (rc == 0 && req->data.nr == __NR_sendmmsg) rc = -EOPNOTSUPP; /* Fast Open batches: not served */
  if (rc == 0 && req->data.nr == __NR_sendto) {
    j->send_flags = (int)req->data.args[3];
    one.iov_base = (void *)req->data.args[1];
    one.iov_len = (size_t)req->data.args[2];
    rc = read_sockaddr(j->tid, req->data.args[4], req->data.args[4] ? (long long)(int)req->data.args[5] : 0, j);
    if (rc == 0) {
      iov[0] = one;
      n_iov = 1;
    }
  } else if (rc == 0) {
    struct msghdr msg;
    j->send_flags = (int)req->data.args[2];
    rc = read_memory(j->tid, req->data.args[1], &msg, sizeof msg);
    if (rc == 0) rc = read_sockaddr(j->tid, (unsigned long)msg.msg_name, msg.msg_name ? msg.msg_namelen : 0, j);
    if (rc == 0) {
      n_iov = msg.msg_iovlen < 64 ? msg.msg_iovlen : 64;
      rc = read_memory(j->tid, (unsigned long)msg.msg_iov, iov, n_iov * sizeof(struct iovec));
    }
  }
  if (rc == 0) rc = read_send_data(j->tid, iov, n_iov, j);
  if (!still_valid(j->id)) {
    job_release(j);
    return;
  }
  if (rc < 0) {
    answer(j->id, 0, -rc);
    job_release(j);
    return;
  }
  j->tfo = 1;
  j->file_nonblock = v.nonblock;
  j->nonblock = v.nonblock || (j->send_flags & MSG_DONTWAIT);
  j->cloexec = v.cloexec;
  int family = j->addrlen >= sizeof(sa_family_t) ? j->addr.ss_family : -1;
  if (v.host && is_tcp(&v)) {
    if (family == AF_UNSPEC) answer(j->id, 0, EOPNOTSUPP); /* as tcp_sendmsg_fastopen answers */
    else {
      host_step(j);
      return;
    }
  } else if (!v.host && is_tcp(&v) && v.tcp_state == TCP_CLOSE && family == v.domain &&
             destination_allowed(&j->addr, j->addrlen)) {
    start_host_connect(j, &v);
    return;
  } else {
    /* Fast Open anywhere else is refused, as on a system with client Fast Open switched off. */
    answer(j->id, 0, EOPNOTSUPP);
  }
  job_release(j);
}

static void on_notification(struct seccomp_notif *req) {
  struct job j;
  memset(&j, 0, sizeof j);
  j.sock = -1;
  j.id = req->id;
  j.tid = (pid_t)req->pid;
  j.nr = req->data.nr;
  j.target_fd = (int)req->data.args[0];
  switch (req->data.nr) {
  case __NR_connect:
    on_connect(req, &j);
    break;
  case __NR_shutdown:
    on_shutdown(req, &j);
    break;
  case __NR_sendto:
  case __NR_sendmsg:
  case __NR_sendmmsg:
    on_fastopen(req, &j);
    break;
  default:
    answer(j.id, 0, ENOSYS);
  }
}

/* ---- the loop */

void netguard_run(int listener, int connector, int netns, const struct ng_allow *allow, int n_allow) {
  allow_list = allow;
  allow_count = n_allow;
  g.listener = listener;
  g.connector = connector;
  struct stat st;
  if (netns < 0 || fstat(netns, &st) != 0) return; /* no way to tell sockets apart: allow nothing */
  g.netns_dev = st.st_dev;
  g.netns_ino = st.st_ino;
  if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &g.sizes) != 0) return;
  size_t req_size = g.sizes.seccomp_notif > sizeof(struct seccomp_notif) ? g.sizes.seccomp_notif : sizeof(struct seccomp_notif);
  struct seccomp_notif *req = calloc(1, req_size);
  if (!req) return;
  signal(SIGPIPE, SIG_IGN);
  long long last_sweep = now_ms();
  for (;;) {
    struct pollfd fds[2 + MAX_PENDING];
    int owner[2 + MAX_PENDING];
    int n = 0;
    fds[n] = (struct pollfd){.fd = listener, .events = POLLIN};
    owner[n++] = -1;
    if (g.connector >= 0) {
      fds[n] = (struct pollfd){.fd = g.connector, .events = POLLIN};
      owner[n++] = -2;
    }
    long long now = now_ms(), wake = now + SWEEP_MS;
    for (int i = 0; i < g.top; i++) {
      struct job *j = &g.jobs[i];
      if (j->kind != HOST_CONNECT && j->kind != HOST_WAIT) continue;
      fds[n] = (struct pollfd){.fd = j->sock, .events = POLLOUT};
      owner[n++] = i;
      if (j->deadline && j->deadline < wake) wake = j->deadline;
    }
    int rc = poll(fds, (nfds_t)n, (int)(wake > now ? wake - now : 0));
    if (rc < 0 && errno != EINTR) break;
    if (rc < 0) continue;
    if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) break; /* no supervised process is left */
    now = now_ms();
    for (int k = 0; k < n; k++) {
      if (owner[k] < 0) continue;
      struct job *j = &g.jobs[owner[k]];
      int due = j->deadline && j->deadline <= now;
      if (!fds[k].revents && !due) continue;
      struct job work = *j;
      memset(j, 0, sizeof *j);
      j->sock = -1;
      if (work.kind == HOST_CONNECT) {
        finish_host_connect(&work, !fds[k].revents);
      } else {
        work.deadline = 0;
        host_step(&work);
      }
    }
    if (n > 1 && owner[1] == -2 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) on_connector_reply();
    if (fds[0].revents & POLLIN) {
      memset(req, 0, req_size);
      if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0) on_notification(req);
      else if (errno != EINTR && errno != ENOENT) break;
    }
    if (now - last_sweep >= SWEEP_MS) {
      /* Calls whose caller was killed or interrupted are dropped instead of waiting for TCP. */
      last_sweep = now;
      for (int i = 0; i < g.top; i++)
        if (g.jobs[i].kind != FREE && !still_valid(g.jobs[i].id)) job_release(&g.jobs[i]);
    }
  }
  for (int i = 0; i < g.top; i++)
    if (g.jobs[i].kind != FREE) job_release(&g.jobs[i]);
  free(req);
}
