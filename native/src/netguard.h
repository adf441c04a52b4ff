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
 * connect, shutdown, and sendto/sendmsg/sendmmsg with MSG_FASTOPEN go to the guard (only connect
 * with `connect_only`: no allowed domains, so no host socket can exist to be re-pointed); everything
 * else falls through to the instruction after them. Returns the number of instructions. */
int netguard_filter(struct sock_filter *f, int connect_only);

/* What the connector requires of a pathname UNIX socket's listener before the command gets the
 * connection: a process of the sandbox's PID namespace, or (no PID namespace of its own to tell
 * inside from outside) nothing is connected at all. */
enum { NETGUARD_UNIX_SAME_PIDNS = 1, NETGUARD_UNIX_REFUSE = 2 };

/* The connector: the sandbox's init (same namespaces, Landlock domain and seccomp deny list,
 * without the supervision, which only its child, the command, installs) performs the connects that
 * must happen inside on the guard's behalf. It serves one request per call when `channel` is
 * readable, never waiting itself (a connect that must wait goes on in a child it reaps); -1 once the
 * guard is gone. `netguard_connector_rule` sets the rule for pathname UNIX sockets first. */
void netguard_connector_rule(int unix_rule);
int netguard_connector_serve(int channel);

/* The guard's loop, in the helper's parent (host namespaces). `netns` is an fd of the sandbox's
 * network namespace (sent by the command: the sandbox's init is not dumpable, so an unprivileged
 * guard may not open its /proc/PID/ns/net), which tells the command's own sockets from the guard's.
 * Returns when every supervised process is gone. */
void netguard_run(int listener, int connector, int netns, const struct ng_allow *allow, int n_allow);

#endif
