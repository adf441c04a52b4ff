/* rune's net guard: the only way a sandboxed command reaches an allowed (address, port) outside
 * its empty network namespace. See netguard.c and docs/adr/0005-sandbox-network.md. */
#ifndef RUNE_NETGUARD_H
#define RUNE_NETGUARD_H

#include <linux/filter.h>
#include <sys/types.h>

/* One allowed destination: an address and a TCP port (0: any port). */
struct ng_allow {
  int family; /* AF_INET or AF_INET6 */
  unsigned char bytes[16];
  unsigned short port;
};

/* Parses "IP", "IP:PORT", "IPV6" or "[IPV6]:PORT"; 0 on success, -1 when malformed. */
int netguard_parse_allow(const char *text, struct ng_allow *out);

/* Appends the supervision rules to a seccomp filter whose accumulator holds the syscall number:
 * connect, shutdown, and sendto/sendmsg/sendmmsg with MSG_FASTOPEN go to the guard; everything
 * else falls through to the instruction after them. Returns the number of instructions. */
int netguard_filter(struct sock_filter *f);
#define NETGUARD_FILTER_LEN 10

/* The connector: runs inside the sandbox (same namespaces, Landlock domain and seccomp deny list,
 * without the supervision) and performs the connects that must happen there on the guard's behalf.
 * Never returns. */
void netguard_connector(int channel) __attribute__((noreturn));

/* The guard's loop, in the helper's parent (host namespaces). `sandbox_pid` is the sandbox's first
 * process, whose network namespace tells the command's own sockets from the guard's. Returns when
 * every supervised process is gone. */
void netguard_run(int listener, int connector, pid_t sandbox_pid, const struct ng_allow *allow, int n_allow);

#endif
