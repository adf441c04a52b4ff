/* Small builders for classic BPF seccomp programs, shared by the helper's filter (helper.c) and the
 * view's rules (view.c). The accumulator holds the syscall number between rule groups. */
#ifndef RUNE_BPF_H
#define RUNE_BPF_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>

#define STMT(code, k) ((struct sock_filter)BPF_STMT((code), (k)))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP((code), (k), (jt), (jf)))
#define LOAD_NR STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
/* The low 32 bits of an argument (x86_64 is little-endian). */
#define LOAD_ARG(i) STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 8 * (i))
#define RET(v) STMT(BPF_RET | BPF_K, (v))
#define ERRNO(e) RET(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

#endif
