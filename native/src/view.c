/* The sandbox's view: what a sandboxed command sees of the file system is built from its grants,
 * the way bubblewrap and nsjail build it. A fresh tmpfs becomes the root (pivot_root); it holds the
 * system folders (read-only binds), a private /proc, a read-only /sys, a minimal /dev with its own
 * devpts and shm, a private /tmp, and every grant at its real path (read-only grants as read-only,
 * nosuid, nodev mounts, so the kernel refuses writes and metadata changes that Landlock does not
 * mediate). Nothing else exists: a host UNIX socket, /run, /home or a block device cannot be named.
 *
 * Every path is handled without following symlinks: the grants arrive as real paths (rune resolved
 * them once), each is opened component by component with O_NOFOLLOW, and a path that became a
 * symlink since is refused rather than followed. Hiding works on the view itself, so a credential
 * store reached through any symlinked grant is hidden at its real place.
 *
 * Landlock then filters the same grants again (view_landlock_rules), and where the kernel refused a
 * namespace, seccomp refuses what the namespace would have removed (view_filter_rules). */
#define _GNU_SOURCE
#include "view.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "bpf.h"

struct view_spec view;

#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#define ATTR_RDONLY 0x1ULL
#define ATTR_NOSUID 0x2ULL
#define ATTR_NODEV 0x4ULL
#define ATTR_NOEXEC 0x8ULL

struct mount_attr_v0 {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

#define MAX_HIDDEN 1024
#define MAX_OWN_DEVS 8

/* Everything hidden in the view (explicit hides and unreadable system files), for Landlock. */
static char *hidden[MAX_HIDDEN];
static int n_hidden;
/* Devices of the tmpfs mounts made here: only inside them may mount points be created. */
static dev_t own_dev[MAX_OWN_DEVS];
static int n_own_dev;

static int is_own_tmpfs(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return 0;
  for (int i = 0; i < n_own_dev; i++)
    if (own_dev[i] == st.st_dev) return 1;
  return 0;
}

static void remember_own(int fd) {
  struct stat st;
  if (n_own_dev < MAX_OWN_DEVS && fstat(fd, &st) == 0) own_dev[n_own_dev++] = st.st_dev;
}

static int is_inside(const char *path, const char *dir) {
  size_t n = strlen(dir);
  if (n == 1 && dir[0] == '/') return path[0] == '/';
  return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

enum { WALK_OPEN, WALK_DIR, WALK_FILE };

/* Opens absolute `path` below `root` component by component, never following a symlink (a symlink
 * anywhere, the last component included, gives ELOOP). WALK_DIR/WALK_FILE create what is missing,
 * but only on tmpfs mounts made here: a mount point is never created inside a bound host folder.
 * Returns an O_PATH fd. */
static int walk(int root, const char *path, int mode) {
  char buf[PATH_MAX];
  if (path[0] != '/') {
    errno = EINVAL;
    return -1;
  }
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int cur = fcntl(root, F_DUPFD_CLOEXEC, 0);
  if (cur < 0) return -1;
  char *p = buf;
  for (;;) {
    while (*p == '/') p++;
    if (!*p) return cur;
    char *end = strchr(p, '/');
    if (end) *end = 0;
    int last = !end || !end[1 + strspn(end + 1, "/")];
    int err = 0;
    int fd = -1;
    if (strcmp(p, ".") == 0 || strcmp(p, "..") == 0) {
      err = EINVAL; /* real paths have neither */
    } else {
      fd = openat(cur, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT && mode != WALK_OPEN && is_own_tmpfs(cur)) {
        if (!last || mode == WALK_DIR) {
          if (mkdirat(cur, p, 0755) == 0 || errno == EEXIST) fd = openat(cur, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        } else {
          int f = openat(cur, p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
          if (f >= 0) close(f);
          if (f >= 0 || errno == EEXIST) fd = openat(cur, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        }
      }
      if (fd < 0) err = errno;
    }
    close(cur);
    struct stat st;
    if (!err && fstat(fd, &st) != 0) err = errno;
    else if (!err && S_ISLNK(st.st_mode)) err = ELOOP;
    else if (!err && !last && !S_ISDIR(st.st_mode)) err = ENOTDIR;
    if (err) {
      if (fd >= 0) close(fd);
      errno = err;
      return -1;
    }
    if (last) return fd;
    cur = fd;
    p = end + 1;
  }
}

static void fd_path(char *buf, size_t size, int fd) { snprintf(buf, size, "/proc/self/fd/%d", fd); }

/* Binds the object open at `src` onto the one open at `dst` (both O_PATH fds), recursively. */
static int bind_fds(int src, int dst) {
  char s[32], d[32];
  fd_path(s, sizeof s, src);
  fd_path(d, sizeof d, dst);
  return mount(s, d, NULL, MS_BIND | MS_REC, NULL);
}

static int mount_fs_on(const char *type, int dst, unsigned long flags, const char *data) {
  char d[32];
  fd_path(d, sizeof d, dst);
  return mount(type, d, type, flags, data);
}

/* Adds mount flags to the mount at `fd` (and below it when `recursive`). Kernels before
 * mount_setattr (5.12) remount the top mount only, keeping the flags a user namespace may not drop. */
static int add_flags(int fd, uint64_t set, int recursive) {
  struct mount_attr_v0 attr = {.attr_set = set};
  if (syscall(__NR_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof attr) == 0)
    return 0;
  if (errno != ENOSYS) return -1;
  char p[32];
  fd_path(p, sizeof p, fd);
  struct statvfs sv;
  unsigned long flags = MS_REMOUNT | MS_BIND;
  if (fstatvfs(fd, &sv) == 0) {
    if (sv.f_flag & ST_RDONLY) flags |= MS_RDONLY;
    if (sv.f_flag & ST_NOSUID) flags |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV) flags |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME) flags |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  }
  if (set & ATTR_RDONLY) flags |= MS_RDONLY;
  if (set & ATTR_NOSUID) flags |= MS_NOSUID;
  if (set & ATTR_NODEV) flags |= MS_NODEV;
  if (set & ATTR_NOEXEC) flags |= MS_NOEXEC;
  return mount(NULL, p, NULL, flags, NULL);
}

/* After a mount on `path`, an fd of the mount's root (the fd used as target still names the
 * folder underneath). */
static int reopen(int root, const char *path) { return walk(root, path, WALK_OPEN); }

/* Binds `src` (an O_PATH fd on the host) at `path` in the view and adds `flags` to every mount of
 * the bind. Returns 0, or -1 with errno. */
static int place(int root, int src, const char *path, uint64_t flags) {
  struct stat st;
  if (fstat(src, &st) != 0) return -1;
  int dst = walk(root, path, S_ISDIR(st.st_mode) ? WALK_DIR : WALK_FILE);
  if (dst < 0) return -1;
  int rc = bind_fds(src, dst);
  int saved = errno;
  close(dst);
  if (rc != 0) {
    errno = saved;
    return -1;
  }
  int top = reopen(root, path);
  if (top < 0) return -1;
  rc = flags ? add_flags(top, flags, 1) : 0;
  saved = errno;
  close(top);
  errno = saved;
  return rc;
}

/* ---------------------------------------------------------------- hiding */

static int empty_file = -1, empty_dir = -1; /* O_PATH fds of the empty objects hidden paths show */

static void remember_hidden(const char *path) {
  for (int i = 0; i < n_hidden; i++)
    if (strcmp(hidden[i], path) == 0) return;
  if (n_hidden < MAX_HIDDEN) hidden[n_hidden++] = strdup(path);
}

/* Hides `path` in the view: an empty read-only folder or file is bound over it. Absent is hidden
 * already; a symlink points at a place that is hidden (or absent) on its own. */
static void hide_path(int root, const char *path) {
  int fd = walk(root, path, WALK_OPEN);
  if (fd < 0) {
    /* Absent, behind a symlink, or in a folder nobody here may enter: nothing to hide. */
    if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR || errno == EACCES) return;
    report("setup", "failed", "hiding %s: %s", path, strerror(errno));
    _exit(125);
  }
  struct stat st;
  int is_dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
  int rc = bind_fds(is_dir ? empty_dir : empty_file, fd);
  close(fd);
  if (rc != 0) {
    report("setup", "failed", "hiding %s: %s", path, strerror(errno));
    _exit(125);
  }
  int top = reopen(root, path);
  if (top < 0 || add_flags(top, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC, 1) != 0) {
    report("setup", "failed", "hiding %s read-only: %s", path, strerror(errno));
    _exit(125);
  }
  close(top);
  remember_hidden(path);
}

/* ---------------------------------------------------------------- building the view */

struct source {
  const char *given; /* as passed */
  char real[PATH_MAX];
  int fd;
  int writable;
};

#define MAX_SOURCES 512
static struct source sources[MAX_SOURCES];
static int n_sources;

/* Opens a grant on the host without following symlinks (it was resolved by rune already: a symlink
 * now means it changed since, and following it could expose what the hide list was computed
 * without). The view places it at the path the kernel reports for the opened object. */
static int host_root = -1;

/* Symlinks at the top of a granted host root (/bin -> usr/bin on merged-/usr systems), made again in
 * the view with the same text. */
#define MAX_ROOT_LINKS 32
static struct {
  char name[NAME_MAX + 1];
  char target[PATH_MAX];
} root_links[MAX_ROOT_LINKS];
static int n_root_links;

static void open_grant(const char *path, int writable) {
  int fd = walk(host_root, path, WALK_OPEN);
  if (fd < 0) {
    if (errno == ELOOP) skip("namespaces", "%s changed into a symlink after it was resolved: not granted", path, 0);
    else if (errno != ENOENT && errno != EACCES) skip("namespaces", "opening grant %s", path, errno);
    return;
  }
  char link[32], real[PATH_MAX];
  fd_path(link, sizeof link, fd);
  ssize_t n = readlink(link, real, sizeof real - 1);
  if (n <= 0 || real[0] != '/' || (size_t)n >= sizeof real - 1) {
    close(fd);
    return;
  }
  real[n] = 0;
  if (strcmp(real, "/") == 0) {
    /* The whole host granted: each of its folders, around the ones the view makes itself. */
    close(fd);
    DIR *d = opendir("/");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
      static const char *const own[] = {".", "..", "proc", "sys", "dev", "tmp"};
      int skip_it = 0;
      for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) skip_it |= strcmp(e->d_name, own[i]) == 0;
      char child[PATH_MAX];
      if (skip_it || snprintf(child, sizeof child, "/%s", e->d_name) >= (int)sizeof child) continue;
      if (e->d_type == DT_LNK) {
        if (n_root_links >= MAX_ROOT_LINKS) continue;
        ssize_t n = readlink(child, root_links[n_root_links].target, PATH_MAX - 1);
        if (n <= 0) continue;
        root_links[n_root_links].target[n] = 0;
        snprintf(root_links[n_root_links].name, sizeof root_links[0].name, "%s", e->d_name);
        n_root_links++;
      } else {
        open_grant(strdup(child), writable);
      }
    }
    if (d) closedir(d);
    return;
  }
  /* The view provides these itself; a grant of the host's /proc, /sys or /dev would undo it. */
  if (is_inside(real, "/proc") || is_inside(real, "/sys") || strcmp(real, "/dev") == 0 ||
      strcmp(real, "/dev/pts") == 0) {
    report("namespaces", "skipped", "grant %s: the view has its own", real);
    close(fd);
    return;
  }
  for (int i = 0; i < n_sources; i++) {
    if (strcmp(sources[i].real, real) == 0) {
      sources[i].writable |= writable;
      close(fd);
      return;
    }
  }
  if (n_sources >= MAX_SOURCES) {
    close(fd);
    return;
  }
  struct source *s = &sources[n_sources++];
  s->given = path;
  snprintf(s->real, sizeof s->real, "%s", real);
  s->fd = fd;
  s->writable = writable;
}

static int depth_of(const char *p) {
  int d = 0;
  for (; *p; p++) d += *p == '/';
  return d;
}

static int by_depth(const void *a, const void *b) {
  const struct source *x = a, *y = b;
  int dx = depth_of(x->real), dy = depth_of(y->real);
  return dx != dy ? dx - dy : strcmp(x->real, y->real);
}

static const char *const DEVICES[] = {"null", "zero", "full", "random", "urandom", "tty"};
#define N_DEVICES (sizeof DEVICES / sizeof DEVICES[0])

/* Folders the kernel's own /proc exposes for writing or reading host-wide state: read-only or
 * emptied, as container runtimes do. */
static const char *const PROC_READ_ONLY[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"};
static const char *const PROC_MASKED[] = {"/proc/kcore",   "/proc/keys",    "/proc/key-users", "/proc/timer_list",
                                          "/proc/sched_debug", "/proc/kmsg", "/proc/acpi",     "/proc/scsi",
                                          "/proc/latency_stats"};

static struct {
  int proc_private, sys_fresh, devpts_new, n_sys_bound;
  int n_ro, n_rw, n_protected, n_pinned, n_links;
} facts;

static int write_text(int root, const char *name, const char *text) {
  int fd = openat(root, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0) return -1;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  close(fd);
  return n == (ssize_t)len ? 0 : -1;
}

/* Binds a generated file over `target` in the view (when that is a plain file there). */
static int bind_generated(int root, const char *name, const char *target) {
  int dst = walk(root, target, WALK_OPEN);
  if (dst < 0) return -1;
  int src = openat(root, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  int rc = src >= 0 ? bind_fds(src, dst) : -1;
  if (src >= 0) close(src);
  close(dst);
  if (rc != 0) return -1;
  int top = reopen(root, target);
  if (top < 0) return -1;
  rc = add_flags(top, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0);
  close(top);
  return rc;
}

static void build_proc(int root) {
  int dst = walk(root, "/proc", WALK_DIR);
  if (dst < 0) die("/proc in the view");
  /* hidepid: the namespace's init is not dumpable, so it is not even listed. "ptraceable" (5.8)
   * checks every reader, root's group included; "invisible" and 2 exempt gid 0. */
  static const char *const options[] = {"hidepid=ptraceable", "hidepid=invisible", "hidepid=2", NULL};
  int ok = 0;
  for (int i = 0; i < 4 && !ok; i++)
    ok = mount_fs_on("proc", dst, MS_NOSUID | MS_NODEV | MS_NOEXEC, options[i]) == 0;
  if (ok) {
    facts.proc_private = 1;
  } else {
    /* A container runtime's masked /proc makes a new one "too revealing": bind the one we have. */
    int err = errno;
    int host = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (host < 0 || bind_fds(host, dst) != 0) die("binding /proc");
    close(host);
    report("namespaces", "skipped", "private /proc: %s (the host's /proc is bound instead: other processes are "
           "listed; Landlock still refuses their memory, fds and environment)", strerror(err));
  }
  close(dst);
  for (size_t i = 0; i < sizeof PROC_READ_ONLY / sizeof PROC_READ_ONLY[0]; i++) {
    int fd = walk(root, PROC_READ_ONLY[i], WALK_OPEN);
    if (fd < 0) continue;
    int rc = bind_fds(fd, fd);
    close(fd);
    int top = rc == 0 ? reopen(root, PROC_READ_ONLY[i]) : -1;
    if (top < 0 || add_flags(top, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC, 1) != 0)
      skip("namespaces", "read-only %s", PROC_READ_ONLY[i], errno);
    if (top >= 0) close(top);
  }
  for (size_t i = 0; i < sizeof PROC_MASKED / sizeof PROC_MASKED[0]; i++) hide_path(root, PROC_MASKED[i]);
}

static void build_sys(int root) {
  int dst = walk(root, "/sys", WALK_DIR);
  if (dst < 0) die("/sys in the view");
  /* A new sysfs shows this network namespace's devices and no cgroup or debug mounts. */
  if (mount_fs_on("sysfs", dst, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0) {
    facts.sys_fresh = 1;
  } else {
    int host = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
    int top = -1;
    if (host < 0 || bind_fds(host, dst) != 0 || (top = reopen(root, "/sys")) < 0 ||
        add_flags(top, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC, 1) != 0)
      die("binding /sys read-only");
    close(top);
    close(host);
  }
  close(dst);
}

static void build_dev(int root, const int *device_fds) {
  int dev = walk(root, "/dev", WALK_DIR);
  if (dev < 0 || mount_fs_on("tmpfs", dev, MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64") != 0)
    die("/dev in the view");
  close(dev);
  dev = reopen(root, "/dev");
  if (dev < 0) die("/dev in the view");
  remember_own(dev);
  for (size_t i = 0; i < N_DEVICES; i++) {
    if (device_fds[i] < 0) continue;
    char path[32];
    snprintf(path, sizeof path, "/dev/%s", DEVICES[i]);
    if (place(root, device_fds[i], path, ATTR_NOSUID | ATTR_NOEXEC) != 0) skip("namespaces", "binding %s", path, errno);
  }
  if (mkdirat(dev, "pts", 0755) == 0 || errno == EEXIST) {
    int pts = walk(root, "/dev/pts", WALK_OPEN);
    /* A new instance: the host's terminals are not in it, and max= bounds how many ptys a call can
     * take from the system-wide limit. gid= is left out: the tty group is not mapped here. */
    int ok = pts >= 0 && (mount_fs_on("devpts", pts, MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620,max=64") == 0 ||
                          mount_fs_on("devpts", pts, MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") == 0);
    if (ok) facts.devpts_new = 1;
    else skip("namespaces", "a new devpts instance%s", "", errno);
    if (pts >= 0) close(pts);
    if (ok && symlinkat("pts/ptmx", dev, "ptmx") != 0) skip("namespaces", "/dev/ptmx%s", "", errno);
  }
  if (mkdirat(dev, "shm", 01777) == 0 || errno == EEXIST) {
    int shm = walk(root, "/dev/shm", WALK_OPEN);
    if (shm < 0 || mount_fs_on("tmpfs", shm, MS_NOSUID | MS_NODEV, "mode=1777,size=64m") != 0)
      skip("namespaces", "private /dev/shm%s", "", errno);
    if (shm >= 0) {
      close(shm);
      shm = reopen(root, "/dev/shm");
      if (shm >= 0) {
        remember_own(shm);
        close(shm);
      }
    }
  }
  static const char *const links[][2] = {
      {"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"}};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) symlinkat(links[i][0], dev, links[i][1]);
  close(dev);
}

static void build_tmp(int root) {
  int tmp = walk(root, "/tmp", WALK_DIR);
  char data[64];
  snprintf(data, sizeof data, "mode=1777,size=%ldm", view.tmp_mb > 0 ? view.tmp_mb : 512);
  if (tmp < 0 || mount_fs_on("tmpfs", tmp, MS_NOSUID | MS_NODEV, data) != 0) die("private /tmp");
  close(tmp);
  tmp = reopen(root, "/tmp");
  if (tmp < 0) die("private /tmp");
  remember_own(tmp);
  close(tmp);
}

/* The folder the new root is first mounted on: any directory of the host that is not needed as a
 * source afterwards (every source is opened before it is covered). */
static const char *base_dir(void) {
  static const char *const candidates[] = {"/tmp", "/mnt", "/media", "/srv", "/opt", "/root", "/home"};
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
    struct stat st;
    if (lstat(candidates[i], &st) == 0 && S_ISDIR(st.st_mode)) return candidates[i];
  }
  return NULL;
}

int view_build(struct view_result *out) {
  memset(out, 0, sizeof *out);
  memset(&facts, 0, sizeof facts);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
    snprintf(out->why, sizeof out->why, "making mounts private: %s", strerror(errno));
    return -1;
  }
  /* Every source is opened on the host's tree first. */
  int sys_fd[64];
  char sys_link[64][PATH_MAX];
  for (int i = 0; i < view.n_sys && i < 64; i++) {
    sys_fd[i] = -1;
    sys_link[i][0] = 0;
    struct stat st;
    if (lstat(view.sys[i], &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      ssize_t n = readlink(view.sys[i], sys_link[i], PATH_MAX - 1);
      sys_link[i][n > 0 ? n : 0] = 0;
    } else {
      sys_fd[i] = open(view.sys[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
  }
  int device_fds[N_DEVICES];
  for (size_t i = 0; i < N_DEVICES; i++) {
    char path[32];
    snprintf(path, sizeof path, "/dev/%s", DEVICES[i]);
    device_fds[i] = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  }
  n_sources = 0;
  n_root_links = 0;
  host_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (host_root < 0) die("opening /");
  for (int i = 0; i < view.n_rw; i++) open_grant(view.rw[i], 1);
  for (int i = 0; i < view.n_ro; i++) open_grant(view.ro[i], 0);
  qsort(sources, (size_t)n_sources, sizeof sources[0], by_depth);
  close(host_root);

  const char *base = base_dir();
  if (!base || mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=4096") != 0) {
    snprintf(out->why, sizeof out->why, "a tmpfs for the new root: %s", base ? strerror(errno) : "no folder to mount it on");
    return -1;
  }
  int root = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) die("opening the new root");
  n_own_dev = 0;
  remember_own(root);
  if (write_text(root, ".rune-empty", "") != 0 || mkdirat(root, ".rune-empty.d", 0555) != 0) die("empty objects");
  empty_file = openat(root, ".rune-empty", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  empty_dir = openat(root, ".rune-empty.d", O_PATH | O_NOFOLLOW | O_CLOEXEC);

  /* System folders: read-only binds; /bin -> usr/bin stays the same symlink. */
  for (int i = 0; i < view.n_sys && i < 64; i++) {
    if (sys_link[i][0]) {
      char parent[PATH_MAX];
      snprintf(parent, sizeof parent, "%s", view.sys[i]);
      char *slash = strrchr(parent, '/');
      *slash = 0;
      int dir = walk(root, parent[0] ? parent : "/", WALK_DIR);
      if (dir >= 0) {
        symlinkat(sys_link[i], dir, slash + 1);
        close(dir);
      }
    } else if (sys_fd[i] >= 0) {
      if (place(root, sys_fd[i], view.sys[i], ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV) == 0) facts.n_sys_bound++;
      else skip("namespaces", "binding %s", view.sys[i], errno);
      close(sys_fd[i]);
    }
  }
  for (int i = 0; i < n_root_links; i++) symlinkat(root_links[i].target, root, root_links[i].name);
  build_proc(root);
  build_sys(root);
  build_dev(root, device_fds);
  build_tmp(root);
  for (size_t i = 0; i < N_DEVICES; i++)
    if (device_fds[i] >= 0) close(device_fds[i]);

  /* Grants, parents before children, so a read-only grant inside a writable one lands on top. */
  for (int i = 0; i < n_sources; i++) {
    struct source *s = &sources[i];
    uint64_t flags = ATTR_NOSUID | (is_inside(s->real, "/dev") ? 0 : ATTR_NODEV) | (s->writable ? 0 : ATTR_RDONLY);
    if (place(root, s->fd, s->real, flags) != 0) skip("namespaces", "binding grant %s", s->real, errno);
    else if (s->writable) facts.n_rw++;
    else facts.n_ro++;
    close(s->fd);
  }
  /* Protected paths: read-only inside writable grants. A failure would leave them writable. */
  for (int i = 0; i < view.n_protect; i++) {
    int fd = walk(root, view.protect[i], WALK_OPEN);
    if (fd < 0) continue;
    int rc = bind_fds(fd, fd);
    close(fd);
    int top = rc == 0 ? reopen(root, view.protect[i]) : -1;
    if (top < 0 || add_flags(top, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 1) != 0) {
      report("setup", "failed", "read-only bind of %s: %s", view.protect[i], strerror(errno));
      _exit(125);
    }
    close(top);
    facts.n_protected++;
  }
  for (int i = 0; i < view.n_pin; i++) {
    int fd = walk(root, view.pin[i], WALK_OPEN);
    if (fd < 0) continue;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      if (bind_fds(fd, fd) == 0) facts.n_pinned++;
      else skip("namespaces", "pinning %s", view.pin[i], errno);
    }
    close(fd);
  }
  for (int i = 0; i < view.n_hide; i++) hide_path(root, view.hide[i]);
  if (view.hosts_text) {
    out->dns_bound = write_text(root, ".rune-hosts", view.hosts_text) == 0 &&
                     bind_generated(root, ".rune-hosts", "/etc/hosts") == 0;
    /* A resolv.conf that is a symlink (systemd-resolved) points outside the view: no resolver is
     * named then, which is what the generated one says too. */
    if (out->dns_bound && write_text(root, ".rune-resolv", view.resolv_text) == 0 &&
        bind_generated(root, ".rune-resolv", "/etc/resolv.conf") != 0 && errno != ELOOP && errno != ENOENT)
      out->dns_bound = 0;
  }
  /* The command's TMPDIR, when it names a folder under /tmp, exists (empty) in the private /tmp. */
  if (view.tmpdir && is_inside(view.tmpdir, "/tmp")) {
    int fd = walk(root, view.tmpdir, WALK_DIR);
    if (fd >= 0) close(fd);
  }
  /* A grant named through a symlink is reachable by that name too. */
  for (int i = 0; i < view.n_link; i++) {
    int fd = walk(root, view.link_path[i], WALK_OPEN);
    if (fd >= 0 || errno != ENOENT) {
      if (fd >= 0) close(fd);
      continue;
    }
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", view.link_path[i]);
    char *slash = strrchr(parent, '/');
    if (!slash) continue;
    *slash = 0;
    int dir = walk(root, parent[0] ? parent : "/", WALK_DIR);
    if (dir >= 0 && is_own_tmpfs(dir) && symlinkat(view.link_target[i], dir, slash + 1) == 0) facts.n_links++;
    if (dir >= 0) close(dir);
  }

  /* Into the new root; the host's tree is detached and gone from this namespace. */
  if (fchdir(root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0) {
    int err = errno;
    umount2(base, MNT_DETACH);
    snprintf(out->why, sizeof out->why, "pivot_root: %s", strerror(err));
    return -1;
  }
  if (umount2(".", MNT_DETACH) != 0) die("detaching the host's root");
  if (chdir("/") != 0) die("chdir /");
  close(root);
  close(empty_file);
  close(empty_dir);
  unlinkat(AT_FDCWD, "/.rune-empty", 0);
  unlinkat(AT_FDCWD, "/.rune-empty.d", AT_REMOVEDIR);
  unlinkat(AT_FDCWD, "/.rune-hosts", 0);
  unlinkat(AT_FDCWD, "/.rune-resolv", 0);
  /* The root and /dev take no new entries. */
  int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || add_flags(fd, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0) != 0) die("read-only root");
  close(fd);
  fd = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || add_flags(fd, ATTR_RDONLY, 0) != 0) die("read-only /dev");
  close(fd);
  out->built = 1;
  return 0;
}

/* The view's own line of the report. */
void view_report(const char *namespaces, const struct view_result *r) {
  if (!r->built) return;
  report("namespaces", "applied",
         "%s namespaces; view built from the grants (tmpfs root + pivot_root): %d system folder(s) read-only, "
         "%s /proc, %s /sys, minimal /dev (%s), private /tmp; %d read-only + %d writable grant(s), %d protected, "
         "%d pinned, %d hidden; nothing else exists",
         namespaces, facts.n_sys_bound, facts.proc_private ? "private" : "host", facts.sys_fresh ? "new read-only" : "read-only",
         facts.devpts_new ? "own devpts and shm" : "no devpts", facts.n_ro, facts.n_rw, facts.n_protected, facts.n_pinned,
         n_hidden);
}

/* ---------------------------------------------------------------- the class of host secrets */

static void print_json_string(const char *text) {
  putchar('"');
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c == '"' || *c == '\\') printf("\\%c", *c);
    else if (*c < 0x20) printf("\\u%04x", *c);
    else putchar(*c);
  }
  putchar('"');
}

static int n_printed;

/* Entries of a system folder that others may not read (a folder others cannot enter counts whole):
 * shadow, gshadow and their backups, sudoers, host keys, TLS private keys, database passwords. A
 * list of names would miss the next backup or variant, so rune hides the class; it asks the helper
 * once per process because a scan of /etc in C costs a fraction of one in Node. */
static void print_closed_in(int dir, const char *path, int depth) {
  int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || e->d_type == DT_LNK) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISLNK(st.st_mode)) continue;
    char child[PATH_MAX];
    if (snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= (int)sizeof child) continue;
    int closed = S_ISDIR(st.st_mode) ? (st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH) : !(st.st_mode & S_IROTH);
    if (closed) {
      if (n_printed++) putchar(',');
      print_json_string(child);
    } else if (S_ISDIR(st.st_mode) && depth < 8) {
      int sub = openat(dirfd(d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) {
        print_closed_in(sub, child, depth + 1);
        close(sub);
      }
    }
  }
  closedir(d);
}

void view_print_closed(const char *folder) {
  char real[PATH_MAX];
  n_printed = 0;
  putchar('[');
  int dir = realpath(folder, real) ? open(real, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
  if (dir >= 0) {
    print_closed_in(dir, real, 0);
    close(dir);
  }
  printf("]\n");
  fflush(stdout);
}

/* ---------------------------------------------------------------- Landlock over the same grants */

#define LL_ADD_RULE 445
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_READ (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)
#define MAX_SPLIT_RULES 4096

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

static int ll_ruleset;
static uint64_t ll_handled;
static int n_split_rules;
/* Whether a split folder may still be listed. Landlock's READ_DIR reaches every folder below, the
 * hidden ones included: with the view they are empty mounts, without it their names would show. */
static int ll_list_split;

/* One rule on the object open at `fd`; files get only the rights that apply to files. */
static int ll_rule_fd(int fd, uint64_t rights) {
  struct stat st;
  if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= LL_FILE_RIGHTS;
  struct ll_path_beneath_attr attr = {.allowed_access = rights & ll_handled, .parent_fd = fd};
  if (!attr.allowed_access) return 0;
  return syscall(LL_ADD_RULE, ll_ruleset, LL_RULE_PATH_BENEATH, &attr, 0) == 0 ? 1 : -1;
}

static int ll_rule(const char *path, uint64_t rights) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ELOOP ? 0 : -1;
  int rc = ll_rule_fd(fd, rights);
  int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

static int is_hidden(const char *path) {
  for (int i = 0; i < n_hidden; i++)
    if (strcmp(hidden[i], path) == 0) return 1;
  return 0;
}

static int hides_inside(const char *dir) {
  for (int i = 0; i < n_hidden; i++)
    if (is_inside(hidden[i], dir) && strcmp(hidden[i], dir) != 0) return 1;
  return 0;
}

/* Landlock grants a right to everything below a folder, so a read-only folder holding hidden paths
 * is granted as its parts instead: each entry that is not hidden gets the rights, folders on the way
 * to a hidden path are split again, and the folder itself may be listed only when the view hides
 * what is below (ll_list_split). Symlinks get no rule (a rule on one would grant its target). */
static int ll_rule_minus(int dirfd, const char *name, const char *path, uint64_t rights) {
  if (is_hidden(path)) return 0;
  int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {
    close(fd);
    return 0;
  }
  if (!S_ISDIR(st.st_mode) || !hides_inside(path) || n_split_rules >= MAX_SPLIT_RULES) {
    int rc = ll_rule_fd(fd, rights);
    close(fd);
    return rc;
  }
  int rc = ll_list_split ? ll_rule_fd(fd, LL_FS_READ_DIR) : 0;
  n_split_rules++;
  int list = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = list >= 0 ? fdopendir(list) : NULL;
  if (!d) {
    if (list >= 0) close(list);
    close(fd);
    return rc;
  }
  struct dirent *e;
  while (rc >= 0 && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char child[PATH_MAX];
    if (snprintf(child, sizeof child, "%s/%s", strcmp(path, "/") == 0 ? "" : path, e->d_name) >= (int)sizeof child) continue;
    n_split_rules++;
    if (ll_rule_minus(fd, e->d_name, child, rights) < 0) rc = -1;
  }
  closedir(d);
  close(fd);
  return rc;
}

static int ll_read_only(const char *path) {
  if (!hides_inside(path)) return ll_rule(path, LL_READ);
  return ll_rule_minus(AT_FDCWD, path, path, LL_READ);
}

int view_landlock_rules(int ruleset, uint64_t handled, int built, int *n_ro, int *n_rw, int *n_split) {
  ll_ruleset = ruleset;
  ll_handled = handled;
  n_split_rules = 0;
  ll_list_split = built;
  /* Without the view, the hide list is what Landlock alone must keep out of read-only folders. */
  if (!built) {
    for (int i = 0; i < view.n_hide; i++) {
      char real[PATH_MAX];
      if (realpath(view.hide[i], real)) remember_hidden(real);
      remember_hidden(view.hide[i]);
    }
  }
  uint64_t rw = handled;
  int ro_count = 0, rw_count = 0, rc;
#define COUNT(expr, counter)  \
  do {                        \
    if ((rc = (expr)) < 0) return -1; \
    counter += rc;            \
  } while (0)
  for (int i = 0; i < view.n_sys; i++) COUNT(ll_read_only(view.sys[i]), ro_count);
  for (int i = 0; i < view.n_ro; i++) COUNT(ll_read_only(view.ro[i]), ro_count);
  COUNT(ll_rule("/proc", LL_READ & ~LL_FS_EXECUTE), ro_count);
  COUNT(ll_rule("/sys", LL_READ & ~LL_FS_EXECUTE), ro_count);
  if (built) {
    /* Everything in the view was granted: its folders may all be listed. */
    COUNT(ll_rule("/", LL_FS_READ_DIR), ro_count);
    /* The view's /dev holds only harmless nodes, its own ptys and a private shm. */
    COUNT(ll_rule("/dev", LL_READ & ~LL_FS_EXECUTE), ro_count);
    static const char *const dev_rw[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/shm", "/tmp"};
    for (size_t i = 0; i < sizeof dev_rw / sizeof dev_rw[0]; i++) COUNT(ll_rule(dev_rw[i], rw), rw_count);
  } else {
    /* The host's /dev: list it, use the harmless nodes; its disks, ptys and shm stay out. */
    COUNT(ll_rule("/dev", LL_FS_READ_DIR), ro_count);
    static const char *const dev_read[] = {"/dev/random", "/dev/urandom"};
    static const char *const dev_write[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"};
    for (size_t i = 0; i < 2; i++) COUNT(ll_rule(dev_read[i], LL_READ & ~LL_FS_EXECUTE), ro_count);
    for (size_t i = 0; i < 4; i++) COUNT(ll_rule(dev_write[i], rw), rw_count);
  }
  for (int i = 0; i < view.n_rw; i++) COUNT(ll_rule(view.rw[i], rw), rw_count);
#undef COUNT
  *n_ro = ro_count;
  *n_rw = rw_count;
  *n_split = n_split_rules;
  return 0;
}

/* ---------------------------------------------------------------- seccomp rules of the view */

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
/* _IOW('T', 0x2B..0x2D, struct termios2): the header's macros need a struct glibc does not declare. */
#define TERMIOS2_SET 0x402C542BU
#define TERMIOS2_SETW 0x402C542CU
#define TERMIOS2_SETF 0x402C542DU
#ifndef TIOCVHANGUP
#define TIOCVHANGUP 0x5437
#endif
#define SETID_BITS (S_ISUID | S_ISGID)
#define O_TMPFILE_BIT 020000000

/* `nr` with argument `arg` having any of `bits` → errno. */
static int deny_arg_bits(struct sock_filter *f, int n, int nr, int arg, unsigned bits, int err) {
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 4);
  f[n++] = LOAD_ARG(arg);
  f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, bits, 0, 1);
  f[n++] = ERRNO(err);
  f[n++] = LOAD_NR;
  return n;
}

/* open-like calls: a setuid/setgid mode only counts when the flags create a file. */
static int deny_create_mode(struct sock_filter *f, int n, int nr, int flags_arg, int mode_arg) {
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 6);
  f[n++] = LOAD_ARG(flags_arg);
  f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT | O_TMPFILE_BIT, 0, 3);
  f[n++] = LOAD_ARG(mode_arg);
  f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, SETID_BITS, 0, 1);
  f[n++] = ERRNO(EPERM);
  f[n++] = LOAD_NR;
  return n;
}

static int deny_calls(struct sock_filter *f, int n, const int *nrs, size_t count, int err) {
  for (size_t i = 0; i < count; i++) {
    f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i], 0, 1);
    f[n++] = ERRNO(err);
  }
  return n;
}

static int deny_ioctls(struct sock_filter *f, int n, const unsigned *codes, size_t m) {
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, (unsigned char)(m + 3));
  f[n++] = LOAD_ARG(1);
  for (size_t j = 0; j < m; j++) f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, codes[j], (unsigned char)(m - j), 0);
  f[n++] = JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
  f[n++] = ERRNO(EPERM);
  f[n++] = LOAD_NR;
  return n;
}

static int deny_socket_families(struct sock_filter *f, int n, const unsigned *families, size_t m, int err) {
  f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, (unsigned char)(m + 3));
  f[n++] = LOAD_ARG(0);
  for (size_t j = 0; j < m; j++) f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, families[j], (unsigned char)(m - j), 0);
  f[n++] = JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
  f[n++] = ERRNO(err);
  f[n++] = LOAD_NR;
  return n;
}

int view_filter_rules(struct sock_filter *f, int n, unsigned lost) {
  /* Always: no file leaves the sandbox setuid or setgid. A tool running as root could otherwise
   * plant a setuid-root program in a writable folder for any local user to run later. */
  n = deny_arg_bits(f, n, __NR_chmod, 1, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_fchmod, 1, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_fchmodat, 2, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_fchmodat2, 2, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_mknod, 1, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_mknodat, 2, SETID_BITS, EPERM);
  n = deny_arg_bits(f, n, __NR_creat, 1, SETID_BITS, EPERM);
  n = deny_create_mode(f, n, __NR_open, 1, 2);
  n = deny_create_mode(f, n, __NR_openat, 2, 3);
  /* openat2 keeps its mode in memory BPF cannot read; callers fall back to openat on ENOSYS. */
  static const int no_openat2[] = {__NR_openat2};
  n = deny_calls(f, n, no_openat2, 1, ENOSYS);
  static const int never[] = {__NR_fanotify_init};
  n = deny_calls(f, n, never, 1, EPERM);
  /* Line disciplines and console redirection: kernel attack surface no tool needs. */
  static const unsigned tty_always[] = {TIOCSETD, TIOCCONS};
  n = deny_ioctls(f, n, tty_always, 2);

  if (lost & LOST_VIEW) {
    /* The host's tree is visible (to Landlock's rules only): its UNIX sockets, terminals and
     * folders must be refused by what is left. socketpair() still works. */
    static const unsigned unix_family[] = {AF_UNIX};
    n = deny_socket_families(f, n, unix_family, 1, EACCES);
    static const unsigned tty_control[] = {TIOCSCTTY, TCSETS,   TCSETSW,   TCSETSF, TCSETA,   TCSETAW,
                                           TCSETAF,   TERMIOS2_SET, TERMIOS2_SETW, TERMIOS2_SETF, TIOCSWINSZ, TIOCSPGRP,
                                           TCXONC,    TCFLSH,   TIOCEXCL,  TIOCSBRK, TIOCVHANGUP, TIOCSLCKTRMIOS};
    n = deny_ioctls(f, n, tty_control, sizeof tty_control / sizeof tty_control[0]);
    static const int watch_and_xattr[] = {__NR_inotify_add_watch};
    n = deny_calls(f, n, watch_and_xattr, 1, EACCES);
    static const int xattr_writes[] = {__NR_setxattr,    __NR_lsetxattr,    __NR_fsetxattr,   __NR_removexattr,
                                       __NR_lremovexattr, __NR_fremovexattr, __NR_setxattrat, __NR_removexattrat};
    n = deny_calls(f, n, xattr_writes, sizeof xattr_writes / sizeof xattr_writes[0], EPERM);
  }
  if (lost & LOST_IPC) {
    static const int ipc[] = {__NR_shmget, __NR_shmat,   __NR_shmctl,        __NR_shmdt,           __NR_semget,
                              __NR_semop,  __NR_semctl,  __NR_semtimedop,    __NR_msgget,          __NR_msgsnd,
                              __NR_msgrcv, __NR_msgctl,  __NR_mq_open,       __NR_mq_unlink,       __NR_mq_timedsend,
                              __NR_mq_timedreceive, __NR_mq_notify, __NR_mq_getsetattr};
    n = deny_calls(f, n, ipc, sizeof ipc / sizeof ipc[0], EPERM);
  }
  if (lost & LOST_NET) {
    /* No namespace to make the network empty: no inet socket at all (the net guard needs one). */
    static const unsigned inet[] = {AF_INET, AF_INET6};
    n = deny_socket_families(f, n, inet, 2, EACCES);
  }
  return n;
}

const char *view_lost_summary(unsigned lost) {
  static char text[1024];
  size_t used = 0;
  text[0] = 0;
#define ADD(...) used += (size_t)snprintf(text + used, used < sizeof text ? sizeof text - used : 0, __VA_ARGS__)
  if (lost & LOST_VIEW)
    ADD("no view: seccomp refuses new UNIX sockets, inotify watches, xattr changes and terminal-control ioctls; "
        "Landlock keeps the host's disks, /dev/shm and the hidden files of read-only folders out (such folders "
        "cannot be listed, only their other entries used); no "
        "pseudo-terminals (the host's /dev/pts is not granted); no private /tmp (TMPDIR names a folder of the "
        "call's own, removed after it); still possible: stat of folders never granted, "
        "chmod/utimes on read-only paths, reading the host's /proc and /sys (other processes, cgroups, timers), "
        "hidden or protected paths inside writable grants, writes to read-only grants under writable ones");
  if (lost & LOST_IPC) ADD("%sno IPC namespace: System V IPC and POSIX message queues refused", used ? "; " : "");
  if (lost & LOST_NET) ADD("%sno network namespace: inet sockets refused", used ? "; " : "");
#undef ADD
  return text;
}
