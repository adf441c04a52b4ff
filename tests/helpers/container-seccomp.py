#!/usr/bin/python3
"""Runs a command under a seccomp filter shaped like the default profile that Docker, containerd
and Podman give an unprivileged container (no CAP_SYS_ADMIN), built here with libseccomp.

    /usr/bin/python3 tests/helpers/container-seccomp.py -- COMMAND ARGS...
    /usr/bin/python3 tests/helpers/container-seccomp.py --export-bpf FILE

The second form writes the filter as a BPF program instead, for `bwrap --seccomp FD`, which loads
it right before the command as a runtime does (after the root file system and the user are set).

What the runtimes' profile does, and so does this filter: every system call not on the allow list
fails with EPERM; clone() with any namespace flag fails with EPERM; clone3() fails with ENOSYS
(so libc falls back to clone, whose flags a filter can read); unshare, setns, mount and the new
mount API, pivot_root, bpf, perf_event_open, keyctl & co, ptrace-adjacent calls on old kernels
and module loading are refused; socket(AF_VSOCK) is refused. seccomp(2) itself and Landlock stay
allowed, as in the runtimes' current profiles, so rune can stack its own filter on top.

Needs Debian's python3-seccomp (run it with /usr/bin/python3: another python3 may come first on
PATH without the module). Exit 125 when the filter cannot be loaded, like a runtime refusing to
start the container.
"""
import errno
import os
import sys

try:
    import seccomp
except ImportError as error:  # pragma: no cover - the test skips with this message
    sys.stderr.write(f"container-seccomp: python3-seccomp is missing ({error})\n")
    sys.exit(125)

# The calls an unprivileged container may make (the runtimes' unconditional allow list, x86_64).
ALLOWED = """
accept accept4 access adjtimex alarm bind brk capget capset chdir chmod chown clock_adjtime
clock_getres clock_gettime clock_nanosleep close close_range connect copy_file_range creat dup
dup2 dup3 epoll_create epoll_create1 epoll_ctl epoll_ctl_old epoll_pwait epoll_pwait2 epoll_wait
epoll_wait_old eventfd eventfd2 execve execveat exit exit_group faccessat faccessat2 fadvise64
fallocate fanotify_mark fchdir fchmod fchmodat fchmodat2 fchown fchownat fcntl fdatasync fgetxattr
flistxattr flock fork fremovexattr fsetxattr fstat fstatfs fsync ftruncate futex futex_waitv
futimesat getcpu getcwd getdents getdents64 getegid geteuid getgid getgroups getitimer
getpeername getpgid getpgrp getpid getppid getpriority getrandom getresgid getresuid getrlimit
get_robust_list getrusage getsid getsockname getsockopt get_thread_area gettid gettimeofday getuid
getxattr inotify_add_watch inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl io_destroy
io_getevents io_pgetevents ioprio_get ioprio_set io_setup io_submit io_uring_enter
io_uring_register io_uring_setup kill landlock_add_rule landlock_create_ruleset
landlock_restrict_self lchown lgetxattr link linkat listen listxattr llistxattr lremovexattr lseek
lsetxattr lstat madvise membarrier memfd_create memfd_secret mincore mkdir mkdirat mknod mknodat
mlock mlock2 mlockall mmap mprotect mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedsend
mq_unlink mremap msgctl msgget msgrcv msgsnd msync munlock munlockall munmap name_to_handle_at
nanosleep newfstatat open openat openat2 pause pidfd_open pidfd_send_signal pipe pipe2 pkey_alloc
pkey_free pkey_mprotect poll ppoll prctl pread64 preadv preadv2 prlimit64 process_mrelease
pselect6 pwrite64 pwritev pwritev2 read readahead readlink readlinkat readv recvfrom recvmmsg
recvmsg remap_file_pages removexattr rename renameat renameat2 restart_syscall rmdir rseq
rt_sigaction rt_sigpending rt_sigprocmask rt_sigqueueinfo rt_sigreturn rt_sigsuspend
rt_sigtimedwait rt_tgsigqueueinfo sched_getaffinity sched_getattr sched_getparam
sched_get_priority_max sched_get_priority_min sched_getscheduler sched_rr_get_interval
sched_setaffinity sched_setattr sched_setparam sched_setscheduler sched_yield seccomp select
semctl semget semop semtimedop sendfile sendmmsg sendmsg sendto setfsgid setfsuid setgid
setgroups setitimer setpgid setpriority setregid setresgid setresuid setreuid setrlimit
set_robust_list setsid setsockopt set_thread_area set_tid_address setuid setxattr shmat shmctl
shmdt shmget shutdown sigaltstack signalfd signalfd4 socketpair splice stat statfs statx symlink
symlinkat sync sync_file_range syncfs sysinfo tee tgkill time timer_create timer_delete
timer_getoverrun timer_gettime timer_settime timerfd_create timerfd_gettime timerfd_settime times
tkill truncate umask uname unlink unlinkat utime utimensat utimes vfork vmsplice wait4 waitid
write writev arch_prctl modify_ldt ptrace process_vm_readv process_vm_writev cachestat
map_shadow_stack
""".split()

# clone() flags a container without CAP_SYS_ADMIN may not pass: every CLONE_NEW* namespace.
NAMESPACE_FLAGS = 0x7E020000
AF_VSOCK = 40
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)


def build() -> "seccomp.SyscallFilter":
    f = seccomp.SyscallFilter(defaction=seccomp.ERRNO(errno.EPERM))
    for name in ALLOWED:
        try:
            f.add_rule(seccomp.ALLOW, name)
        except (RuntimeError, ValueError):
            pass  # a call this libseccomp does not know yet: refused, as by an older runtime
    f.add_rule(seccomp.ALLOW, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, NAMESPACE_FLAGS, 0))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    f.add_rule(seccomp.ALLOW, "socket", seccomp.Arg(0, seccomp.NE, AF_VSOCK))
    for value in PERSONALITIES:
        f.add_rule(seccomp.ALLOW, "personality", seccomp.Arg(0, seccomp.EQ, value))
    return f


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--export-bpf":
        with open(argv[1], "wb") as out:
            build().export_bpf(out)
        return 0
    if "--" in argv:
        argv = argv[argv.index("--") + 1 :]
    if not argv:
        sys.stderr.write("usage: container-seccomp.py -- COMMAND ARGS...\n")
        return 2
    try:
        build().load()
    except OSError as error:
        sys.stderr.write(f"container-seccomp: loading the filter failed: {error}\n")
        return 125
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        sys.stderr.write(f"container-seccomp: {argv[0]}: {error.strerror}\n")
        return 127 if error.errno == errno.ENOENT else 126


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
