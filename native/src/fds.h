/* File descriptors between the helper's processes: handing them over a unix socket, closing all
 * but a few, writing a small control file. */
#ifndef RUNE_FDS_H
#define RUNE_FDS_H

/* Hands fds to the other end of a unix socket; the byte says how many. 0 on success. */
int send_fds(int sock, const int *fds, int n);
/* Receives up to three fds into fds[] (the rest -1); returns how many arrived. */
int recv_fds(int sock, int *fds);
/* Closes every fd from `from` up, except `keep_a` and `keep_b`. */
void close_all_but(int keep_a, int keep_b, int from);
/* Writes `text` to the existing file `path` (a /proc or cgroup control file). 0 on success. */
int write_file(const char *path, const char *text);

#endif
