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
 * Landlock then filters the same grants again, and where the kernel refused a namespace, seccomp
 * refuses what the namespace would have removed (both in view-rules.c). The primitives that open,
 * bind and flag without following symlinks are in view-fs.c. */
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
#include "view-fs.h"

struct view_spec view;
static struct reporter *rep; /* view_build's, for every step of the build */

#define MAX_HIDDEN 1024

/* Everything hidden in the view (explicit hides and unreadable system files), for Landlock. */
static char *hidden[MAX_HIDDEN];
static int n_hidden;

int view_is_inside(const char *path, const char *dir) {
  size_t n = strlen(dir);
  if (n == 1 && dir[0] == '/') return path[0] == '/';
  return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

/* ---------------------------------------------------------------- hiding */

static int empty_file = -1, empty_dir = -1; /* O_PATH fds of the empty objects hidden paths show */

void view_remember_hidden(const char *path) {
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
    fail(rep, "hiding %s: %s", path, strerror(errno));
  }
  struct stat st;
  int is_dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
  int rc = bind_fds(is_dir ? empty_dir : empty_file, fd);
  close(fd);
  if (rc != 0) fail(rep, "hiding %s: %s", path, strerror(errno));
  int top = reopen(root, path);
  if (top < 0 || add_flags(top, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC, 1) != 0)
    fail(rep, "hiding %s read-only: %s", path, strerror(errno));
  close(top);
  view_remember_hidden(path);
}

int view_is_hidden(const char *path) {
  for (int i = 0; i < n_hidden; i++)
    if (strcmp(hidden[i], path) == 0) return 1;
  return 0;
}

int view_hides_inside(const char *dir) {
  for (int i = 0; i < n_hidden; i++)
    if (view_is_inside(hidden[i], dir) && strcmp(hidden[i], dir) != 0) return 1;
  return 0;
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
    if (errno == ELOOP) skip(rep, LAYER_NAMESPACES, "%s changed into a symlink after it was resolved: not granted", path, 0);
    else if (errno != ENOENT && errno != EACCES) skip(rep, LAYER_NAMESPACES, "opening grant %s", path, errno);
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
  if (view_is_inside(real, "/proc") || view_is_inside(real, "/sys") || strcmp(real, "/dev") == 0 ||
      strcmp(real, "/dev/pts") == 0) {
    report(rep, LAYER_NAMESPACES, STATE_SKIPPED, "grant %s: the view has its own", real);
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
  if (dst < 0) die(rep, "/proc in the view");
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
    if (host < 0 || bind_fds(host, dst) != 0) die(rep, "binding /proc");
    close(host);
    report(rep, LAYER_NAMESPACES, STATE_SKIPPED, "private /proc: %s (the host's /proc is bound instead: other processes are "
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
      skip(rep, LAYER_NAMESPACES, "read-only %s", PROC_READ_ONLY[i], errno);
    if (top >= 0) close(top);
  }
  for (size_t i = 0; i < sizeof PROC_MASKED / sizeof PROC_MASKED[0]; i++) hide_path(root, PROC_MASKED[i]);
}

static void build_sys(int root) {
  int dst = walk(root, "/sys", WALK_DIR);
  if (dst < 0) die(rep, "/sys in the view");
  /* A new sysfs shows this network namespace's devices and no cgroup or debug mounts. */
  if (mount_fs_on("sysfs", dst, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0) {
    facts.sys_fresh = 1;
  } else {
    int host = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
    int top = -1;
    if (host < 0 || bind_fds(host, dst) != 0 || (top = reopen(root, "/sys")) < 0 ||
        add_flags(top, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC, 1) != 0)
      die(rep, "binding /sys read-only");
    close(top);
    close(host);
  }
  close(dst);
}

static void build_dev(int root, const int *device_fds) {
  int dev = walk(root, "/dev", WALK_DIR);
  if (dev < 0 || mount_fs_on("tmpfs", dev, MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64") != 0)
    die(rep, "/dev in the view");
  close(dev);
  dev = reopen(root, "/dev");
  if (dev < 0) die(rep, "/dev in the view");
  remember_own(dev);
  for (size_t i = 0; i < N_DEVICES; i++) {
    if (device_fds[i] < 0) continue;
    char path[32];
    snprintf(path, sizeof path, "/dev/%s", DEVICES[i]);
    /* Read-only binds: the nodes are the host's own inodes, and a command that is root in the
     * namespace owns them, so chmod, utimes and xattrs would change the host's /dev/null. A
     * read-only mount refuses every metadata change while reads and writes of a device still work
     * (the kernel checks MNT_READONLY for regular files, folders and symlinks only). */
    if (place(root, device_fds[i], path, ATTR_RDONLY | ATTR_NOSUID | ATTR_NOEXEC) != 0)
      skip(rep, LAYER_NAMESPACES, "binding %s", path, errno);
  }
  if (mkdirat(dev, "pts", 0755) == 0 || errno == EEXIST) {
    int pts = walk(root, "/dev/pts", WALK_OPEN);
    /* A new instance: the host's terminals are not in it, and max= bounds how many ptys a call can
     * take from the system-wide limit. gid= is left out: the tty group is not mapped here. */
    int ok = pts >= 0 && (mount_fs_on("devpts", pts, MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620,max=64") == 0 ||
                          mount_fs_on("devpts", pts, MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") == 0);
    if (ok) facts.devpts_new = 1;
    else skip(rep, LAYER_NAMESPACES, "a new devpts instance%s", "", errno);
    if (pts >= 0) close(pts);
    if (ok && symlinkat("pts/ptmx", dev, "ptmx") != 0) skip(rep, LAYER_NAMESPACES, "/dev/ptmx%s", "", errno);
  }
  if (mkdirat(dev, "shm", 01777) == 0 || errno == EEXIST) {
    int shm = walk(root, "/dev/shm", WALK_OPEN);
    if (shm < 0 || mount_fs_on("tmpfs", shm, MS_NOSUID | MS_NODEV, "mode=1777,size=64m") != 0)
      skip(rep, LAYER_NAMESPACES, "private /dev/shm%s", "", errno);
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
  if (tmp < 0 || mount_fs_on("tmpfs", tmp, MS_NOSUID | MS_NODEV, data) != 0) die(rep, "private /tmp");
  close(tmp);
  tmp = reopen(root, "/tmp");
  if (tmp < 0) die(rep, "private /tmp");
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

/* What is opened on the host's tree before the new root covers it: the system folders (or the
 * symlinks they are) and the device nodes the view's /dev binds. */
struct host_sources {
  int sys_fd[64];
  char sys_link[64][PATH_MAX];
  int device_fds[N_DEVICES];
};

static void open_host_sources(struct host_sources *h) {
  for (int i = 0; i < view.n_sys && i < 64; i++) {
    h->sys_fd[i] = -1;
    h->sys_link[i][0] = 0;
    struct stat st;
    if (lstat(view.sys[i], &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      ssize_t n = readlink(view.sys[i], h->sys_link[i], PATH_MAX - 1);
      h->sys_link[i][n > 0 ? n : 0] = 0;
    } else {
      h->sys_fd[i] = open(view.sys[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
  }
  for (size_t i = 0; i < N_DEVICES; i++) {
    char path[32];
    snprintf(path, sizeof path, "/dev/%s", DEVICES[i]);
    h->device_fds[i] = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  }
  n_sources = 0;
  n_root_links = 0;
  host_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (host_root < 0) die(rep, "opening /");
  for (int i = 0; i < view.n_rw; i++) open_grant(view.rw[i], 1);
  for (int i = 0; i < view.n_ro; i++) open_grant(view.ro[i], 0);
  qsort(sources, (size_t)n_sources, sizeof sources[0], by_depth);
  close(host_root);
}

/* System folders: read-only binds; /bin -> usr/bin stays the same symlink. Then the view's own
 * /proc, /sys, /dev and /tmp. */
static void place_system(int root, struct host_sources *h) {
  for (int i = 0; i < view.n_sys && i < 64; i++) {
    if (h->sys_link[i][0]) {
      char parent[PATH_MAX];
      snprintf(parent, sizeof parent, "%s", view.sys[i]);
      char *slash = strrchr(parent, '/');
      *slash = 0;
      int dir = walk(root, parent[0] ? parent : "/", WALK_DIR);
      if (dir >= 0) {
        symlinkat(h->sys_link[i], dir, slash + 1);
        close(dir);
      }
    } else if (h->sys_fd[i] >= 0) {
      if (place(root, h->sys_fd[i], view.sys[i], ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV) == 0) facts.n_sys_bound++;
      else skip(rep, LAYER_NAMESPACES, "binding %s", view.sys[i], errno);
      close(h->sys_fd[i]);
    }
  }
  for (int i = 0; i < n_root_links; i++) symlinkat(root_links[i].target, root, root_links[i].name);
  build_proc(root);
  build_sys(root);
  build_dev(root, h->device_fds);
  build_tmp(root);
  for (size_t i = 0; i < N_DEVICES; i++)
    if (h->device_fds[i] >= 0) close(h->device_fds[i]);
}

/* Grants, parents before children, so a read-only grant inside a writable one lands on top; then
 * what is read-only, pinned or hidden inside them. */
static void place_grants(int root) {
  for (int i = 0; i < n_sources; i++) {
    struct source *s = &sources[i];
    uint64_t flags = ATTR_NOSUID | (view_is_inside(s->real, "/dev") ? 0 : ATTR_NODEV) | (s->writable ? 0 : ATTR_RDONLY);
    if (place(root, s->fd, s->real, flags) != 0) skip(rep, LAYER_NAMESPACES, "binding grant %s", s->real, errno);
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
    if (top < 0 || add_flags(top, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 1) != 0)
      fail(rep, "read-only bind of %s: %s", view.protect[i], strerror(errno));
    close(top);
    facts.n_protected++;
  }
  for (int i = 0; i < view.n_pin; i++) {
    int fd = walk(root, view.pin[i], WALK_OPEN);
    if (fd < 0) continue;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      if (bind_fds(fd, fd) == 0) facts.n_pinned++;
      else skip(rep, LAYER_NAMESPACES, "pinning %s", view.pin[i], errno);
    }
    close(fd);
  }
  for (int i = 0; i < view.n_hide; i++) hide_path(root, view.hide[i]);
}

/* The generated /etc/hosts and resolv.conf, the command's TMPDIR, and the names of grants reached
 * through a symlink. */
static void place_generated(int root, struct view_result *out) {
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
  if (view.tmpdir && view_is_inside(view.tmpdir, "/tmp")) {
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
}

/* Into the new root; the host's tree is detached and gone from this namespace. */
static int enter_root(int root, const char *base, struct view_result *out) {
  if (fchdir(root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0) {
    int err = errno;
    umount2(base, MNT_DETACH);
    snprintf(out->why, sizeof out->why, "pivot_root: %s", strerror(err));
    return -1;
  }
  if (umount2(".", MNT_DETACH) != 0) die(rep, "detaching the host's root");
  if (chdir("/") != 0) die(rep, "chdir /");
  close(root);
  close(empty_file);
  close(empty_dir);
  unlinkat(AT_FDCWD, "/.rune-empty", 0);
  unlinkat(AT_FDCWD, "/.rune-empty.d", AT_REMOVEDIR);
  unlinkat(AT_FDCWD, "/.rune-hosts", 0);
  unlinkat(AT_FDCWD, "/.rune-resolv", 0);
  /* The root and /dev take no new entries. */
  int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || add_flags(fd, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0) != 0) die(rep, "read-only root");
  close(fd);
  fd = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || add_flags(fd, ATTR_RDONLY, 0) != 0) die(rep, "read-only /dev");
  close(fd);
  return 0;
}

int view_build(struct reporter *r, struct view_result *out) {
  rep = r;
  memset(out, 0, sizeof *out);
  memset(&facts, 0, sizeof facts);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
    snprintf(out->why, sizeof out->why, "making mounts private: %s", strerror(errno));
    return -1;
  }
  /* Every source is opened on the host's tree first. */
  static struct host_sources host;
  open_host_sources(&host);
  const char *base = base_dir();
  if (!base || mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=4096") != 0) {
    snprintf(out->why, sizeof out->why, "a tmpfs for the new root: %s", base ? strerror(errno) : "no folder to mount it on");
    return -1;
  }
  int root = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) die(rep, "opening the new root");
  forget_own();
  remember_own(root);
  if (write_text(root, ".rune-empty", "") != 0 || mkdirat(root, ".rune-empty.d", 0555) != 0) die(rep, "empty objects");
  empty_file = openat(root, ".rune-empty", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  empty_dir = openat(root, ".rune-empty.d", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  place_system(root, &host);
  place_grants(root);
  place_generated(root, out);
  if (enter_root(root, base, out) != 0) return -1;
  out->built = 1;
  return 0;
}

/* The view's own line of the report. */
void view_report(struct reporter *r, const char *namespaces, const struct view_result *result) {
  if (!result->built) return;
  report(r, LAYER_NAMESPACES, STATE_APPLIED,
         "%s namespaces; view built from the grants (tmpfs root + pivot_root): %d system folder(s) read-only, "
         "%s /proc, %s /sys, minimal /dev (%s), private /tmp; %d read-only + %d writable grant(s), %d protected, "
         "%d pinned, %d hidden; nothing else exists",
         namespaces, facts.n_sys_bound, facts.proc_private ? "private" : "host", facts.sys_fresh ? "new read-only" : "read-only",
         facts.devpts_new ? "own devpts and shm" : "no devpts", facts.n_ro, facts.n_rw, facts.n_protected, facts.n_pinned,
         n_hidden);
}
