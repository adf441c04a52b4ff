/* File descriptors between the helper's processes (fds.h). */
#define _GNU_SOURCE
#include "fds.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

int send_fds(int sock, const int *fds, int n) {
  char byte = (char)n;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(3 * sizeof(int))];
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = CMSG_SPACE((size_t)n * sizeof(int))};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
  memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
  return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

int recv_fds(int sock, int *fds) {
  char byte;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(3 * sizeof(int))];
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  fds[0] = fds[1] = fds[2] = -1;
  if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1) return 0;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS) return 0;
  int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
  if (n > 3) n = 3;
  memcpy(fds, CMSG_DATA(c), (size_t)n * sizeof(int));
  return n;
}

void close_all_but(int keep_a, int keep_b, int from) {
  int keep[2] = {keep_a < keep_b ? keep_a : keep_b, keep_a < keep_b ? keep_b : keep_a};
  int next = from;
  for (int k = 0; k < 2; k++) {
    if (keep[k] < next) continue;
    if (keep[k] > next && syscall(__NR_close_range, next, keep[k] - 1, 0) != 0)
      for (int fd = next; fd < keep[k]; fd++) close(fd);
    next = keep[k] + 1;
  }
  if (syscall(__NR_close_range, next, ~0U, 0) != 0)
    for (int fd = next; fd < 65536; fd++) close(fd);
}

int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  int saved = errno;
  close(fd);
  errno = saved;
  return n == (ssize_t)strlen(text) ? 0 : -1;
}
