/* rune mount's FUSE thread (see fuse_fs.h): libfuse's low-level session, read with a loop of our
 * own so a pipe can stop it, and the operations. Folders and fixed files are answered from the tree
 * under `lock`; a dynamic file's open/read/write become pending requests answered from JavaScript.
 * A file handle of a fixed file is a pointer to its content (even); JavaScript's are 2n+1. */
#define _GNU_SOURCE
#include "fuse_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fuse_lib.h"

/* How long the kernel may keep a name or its attributes: the tree changes when MCP tools do. */
#define TIMEOUT_SECS 1.0

struct blob {
  int refs; /* under the mount's lock */
  size_t len;
  char data[];
};

struct node {
  uint64_t ino, parent;
  char *name;
  int dir;
  mode_t mode;
  struct blob *content; /* NULL: a dynamic file */
};

struct pending {
  uint64_t id;
  rfuse_req_t req;
  struct pending *next;
};

struct rune_fuse_mount {
  const struct rfuse_api *api;
  struct fuse_session *se;
  pthread_t thread;
  int wake[2];
  int keep; /* a second descriptor of the device, see rune_fuse_start */
  rune_fuse_post_fn post;
  void *post_ctx;
  pthread_mutex_t lock;
  struct node *nodes;
  size_t count;
  struct pending *pending;
  uint64_t next_id;
  uid_t uid;
  gid_t gid;
  struct timespec started;
  int stopping;
};

/* Set by the first rune_fuse_start; needed to read a request's userdata (its mount). */
static const struct rfuse_api *fuse;

static struct rune_fuse_mount *mount_of(rfuse_req_t req) {
  return (struct rune_fuse_mount *)fuse->req_userdata(req);
}

static const struct rfuse_api *api_of(rfuse_req_t req) {
  return mount_of(req)->api;
}

static void unref(struct blob *blob) {
  if (blob && --blob->refs == 0) free(blob);
}

static struct node *find(struct rune_fuse_mount *m, uint64_t ino) {
  for (size_t i = 0; i < m->count; i++)
    if (m->nodes[i].ino == ino) return &m->nodes[i];
  return NULL;
}

static struct node *child(struct rune_fuse_mount *m, uint64_t parent, const char *name) {
  for (size_t i = 0; i < m->count; i++)
    if (m->nodes[i].parent == parent && m->nodes[i].ino != parent && strcmp(m->nodes[i].name, name) == 0)
      return &m->nodes[i];
  return NULL;
}

static void fill_stat(const struct rune_fuse_mount *m, const struct node *n, struct stat *st) {
  memset(st, 0, sizeof *st);
  st->st_ino = n->ino;
  st->st_mode = (n->dir ? S_IFDIR : S_IFREG) | n->mode;
  st->st_nlink = n->dir ? 2 : 1;
  st->st_uid = m->uid;
  st->st_gid = m->gid;
  st->st_size = n->content ? (off_t)n->content->len : 0;
  st->st_blksize = 4096;
  st->st_atim = st->st_mtim = st->st_ctim = m->started;
}

/* A caller that is a thread of this process would wait for JavaScript, which may be the caller. */
static int from_this_process(pid_t pid) {
  return pid > 0 && syscall(SYS_tgkill, getpid(), pid, 0) == 0;
}

/* Adds a pending request and posts its event, both under the lock (see fs_read). */
static uint64_t add_pending_locked(struct rune_fuse_mount *m, rfuse_req_t req) {
  struct pending *p = malloc(sizeof *p);
  if (!p) return 0;
  p->id = ++m->next_id;
  p->req = req;
  p->next = m->pending;
  m->pending = p;
  return p->id;
}

static rfuse_req_t take_pending(struct rune_fuse_mount *m, uint64_t id) {
  pthread_mutex_lock(&m->lock);
  rfuse_req_t req = NULL;
  for (struct pending **at = &m->pending; *at; at = &(*at)->next) {
    if ((*at)->id != id) continue;
    struct pending *p = *at;
    *at = p->next;
    req = p->req;
    free(p);
    break;
  }
  pthread_mutex_unlock(&m->lock);
  return req;
}

static struct rune_fuse_event *event(enum rune_fuse_op op, uint64_t ino) {
  struct rune_fuse_event *ev = calloc(1, sizeof *ev);
  if (ev) {
    ev->op = op;
    ev->ino = ino;
  }
  return ev;
}

/* Posts `ev` as the request `req` (id filled in); on failure answers it with `err`. */
static void post_request(rfuse_req_t req, struct rune_fuse_event *ev) {
  struct rune_fuse_mount *m = mount_of(req);
  if (!ev) {
    m->api->reply_err(req, ENOMEM);
    return;
  }
  pthread_mutex_lock(&m->lock);
  ev->id = add_pending_locked(m, req);
  if (!ev->id) {
    pthread_mutex_unlock(&m->lock);
    free(ev->data);
    free(ev);
    m->api->reply_err(req, ENOMEM);
    return;
  }
  m->post(m->post_ctx, ev);
  pthread_mutex_unlock(&m->lock);
}

static void fs_lookup(rfuse_req_t req, rfuse_ino_t parent, const char *name) {
  struct rune_fuse_mount *m = mount_of(req);
  struct rfuse_entry_param e;
  memset(&e, 0, sizeof e);
  pthread_mutex_lock(&m->lock);
  struct node *n = child(m, parent, name);
  if (n) {
    e.ino = n->ino;
    fill_stat(m, n, &e.attr);
    e.attr_timeout = e.entry_timeout = TIMEOUT_SECS;
  }
  pthread_mutex_unlock(&m->lock);
  if (n)
    m->api->reply_entry(req, &e);
  else
    m->api->reply_err(req, ENOENT);
}

static void fs_forget(rfuse_req_t req, rfuse_ino_t ino, uint64_t nlookup) {
  (void)ino;
  (void)nlookup;
  api_of(req)->reply_none(req);
}

static void fs_getattr(rfuse_req_t req, rfuse_ino_t ino, struct rfuse_file_info *fi) {
  (void)fi;
  struct rune_fuse_mount *m = mount_of(req);
  struct stat st;
  pthread_mutex_lock(&m->lock);
  struct node *n = find(m, ino);
  if (n) fill_stat(m, n, &st);
  pthread_mutex_unlock(&m->lock);
  if (n)
    m->api->reply_attr(req, &st, TIMEOUT_SECS);
  else
    m->api->reply_err(req, ENOENT);
}

/* `echo … > endpoint` truncates before it writes: accepted on dynamic files, and changes nothing. */
static void fs_setattr(rfuse_req_t req, rfuse_ino_t ino, struct stat *attr, int to_set, struct rfuse_file_info *fi) {
  (void)attr;
  (void)to_set;
  (void)fi;
  struct rune_fuse_mount *m = mount_of(req);
  struct stat st;
  pthread_mutex_lock(&m->lock);
  struct node *n = find(m, ino);
  int dynamic = n && !n->dir && !n->content;
  if (dynamic) fill_stat(m, n, &st);
  pthread_mutex_unlock(&m->lock);
  if (dynamic)
    m->api->reply_attr(req, &st, TIMEOUT_SECS);
  else
    m->api->reply_err(req, n ? EACCES : ENOENT);
}

/* Creating a file is what `echo … > tools/no_such_tool` asks for: there is no such tool. */
static void fs_mknod(rfuse_req_t req, rfuse_ino_t parent, const char *name, mode_t mode, dev_t rdev) {
  (void)parent;
  (void)name;
  (void)mode;
  (void)rdev;
  api_of(req)->reply_err(req, ENOENT);
}

static void fs_mkdir(rfuse_req_t req, rfuse_ino_t parent, const char *name, mode_t mode) {
  (void)parent;
  (void)name;
  (void)mode;
  api_of(req)->reply_err(req, EACCES);
}

static void fs_unlink(rfuse_req_t req, rfuse_ino_t parent, const char *name) {
  (void)parent;
  (void)name;
  api_of(req)->reply_err(req, EACCES);
}

static void fs_rename(rfuse_req_t req, rfuse_ino_t parent, const char *name, rfuse_ino_t newparent,
                      const char *newname, unsigned int flags) {
  (void)parent;
  (void)name;
  (void)newparent;
  (void)newname;
  (void)flags;
  api_of(req)->reply_err(req, EACCES);
}

static void fs_open(rfuse_req_t req, rfuse_ino_t ino, struct rfuse_file_info *fi) {
  struct rune_fuse_mount *m = mount_of(req);
  pthread_mutex_lock(&m->lock);
  struct node *n = find(m, ino);
  int err = !n ? ENOENT : n->dir ? EISDIR : 0;
  struct blob *content = n && !n->dir ? n->content : NULL;
  if (!err && content) {
    if ((fi->flags & O_ACCMODE) != O_RDONLY)
      err = EACCES;
    else
      content->refs++;
  }
  pthread_mutex_unlock(&m->lock);
  if (err) {
    m->api->reply_err(req, err);
    return;
  }
  if (content) {
    fi->fh = (uint64_t)(uintptr_t)content;
    fi->direct_io = 1;
    m->api->reply_open(req, fi);
    return;
  }
  const struct rfuse_ctx *ctx = m->api->req_ctx(req);
  if (from_this_process(ctx->pid)) {
    m->api->reply_err(req, EDEADLK);
    return;
  }
  struct rune_fuse_event *ev = event(RUNE_FUSE_OPEN, ino);
  if (ev) {
    ev->pid = ctx->pid;
    ev->sid = getsid(ctx->pid);
    ev->uid = ctx->uid;
    ev->flags = fi->flags;
  }
  post_request(req, ev);
}

static void on_interrupt(rfuse_req_t req, void *data) {
  struct rune_fuse_mount *m = mount_of(req);
  struct rune_fuse_event *ev = event(RUNE_FUSE_INTERRUPT, 0);
  if (!ev) return;
  ev->id = (uint64_t)(uintptr_t)data;
  m->post(m->post_ctx, ev);
}

static void fs_read(rfuse_req_t req, rfuse_ino_t ino, size_t size, off_t off, struct rfuse_file_info *fi) {
  struct rune_fuse_mount *m = mount_of(req);
  if (!(fi->fh & 1)) {
    const struct blob *content = (const struct blob *)(uintptr_t)fi->fh;
    size_t from = (size_t)off < content->len ? (size_t)off : content->len;
    size_t len = content->len - from < size ? content->len - from : size;
    m->api->reply_buf(req, content->data + from, len);
    return;
  }
  struct rune_fuse_event *ev = event(RUNE_FUSE_READ, ino);
  if (!ev) {
    m->api->reply_err(req, ENOMEM);
    return;
  }
  ev->fh = fi->fh >> 1;
  ev->offset = (uint64_t)off;
  ev->size = size;
  ev->pid = m->api->req_ctx(req)->pid;
  /* The read is posted and its interrupt callback set under the lock: JavaScript's answer (which
   * frees the request) takes the lock first, so it cannot come between the two. */
  pthread_mutex_lock(&m->lock);
  ev->id = add_pending_locked(m, req);
  if (!ev->id) {
    pthread_mutex_unlock(&m->lock);
    free(ev);
    m->api->reply_err(req, ENOMEM);
    return;
  }
  uint64_t id = ev->id;
  m->post(m->post_ctx, ev);
  m->api->req_interrupt_func(req, on_interrupt, (void *)(uintptr_t)id);
  pthread_mutex_unlock(&m->lock);
}

static void fs_write(rfuse_req_t req, rfuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct rfuse_file_info *fi) {
  if (!(fi->fh & 1)) {
    api_of(req)->reply_err(req, EACCES);
    return;
  }
  struct rune_fuse_event *ev = event(RUNE_FUSE_WRITE, ino);
  if (ev) {
    ev->data = malloc(size ? size : 1);
    if (!ev->data) {
      free(ev);
      ev = NULL;
    } else {
      memcpy(ev->data, buf, size);
      ev->size = size;
      ev->fh = fi->fh >> 1;
      ev->offset = (uint64_t)off;
    }
  }
  post_request(req, ev);
}

static void fs_flush(rfuse_req_t req, rfuse_ino_t ino, struct rfuse_file_info *fi) {
  (void)ino;
  (void)fi;
  api_of(req)->reply_err(req, 0);
}

static void fs_release(rfuse_req_t req, rfuse_ino_t ino, struct rfuse_file_info *fi) {
  struct rune_fuse_mount *m = mount_of(req);
  if (fi->fh & 1) {
    struct rune_fuse_event *ev = event(RUNE_FUSE_RELEASE, ino);
    if (ev) {
      ev->fh = fi->fh >> 1;
      m->post(m->post_ctx, ev);
    }
  } else {
    pthread_mutex_lock(&m->lock);
    unref((struct blob *)(uintptr_t)fi->fh);
    pthread_mutex_unlock(&m->lock);
  }
  m->api->reply_err(req, 0);
}

static void fs_readdir(rfuse_req_t req, rfuse_ino_t ino, size_t size, off_t off, struct rfuse_file_info *fi) {
  (void)fi;
  struct rune_fuse_mount *m = mount_of(req);
  char *buf = malloc(size ? size : 1);
  if (!buf) {
    m->api->reply_err(req, ENOMEM);
    return;
  }
  size_t used = 0;
  pthread_mutex_lock(&m->lock);
  struct node *dir = find(m, ino);
  int err = !dir ? ENOENT : !dir->dir ? ENOTDIR : 0;
  /* Entry k (counting "." and ".." first) is followed by offset k + 1. */
  off_t k = 0;
  for (size_t i = 0; !err && i < m->count + 2; i++) {
    const char *name;
    struct stat st;
    memset(&st, 0, sizeof st);
    if (i < 2) {
      name = i == 0 ? "." : "..";
      st.st_ino = i == 0 ? dir->ino : dir->parent;
      st.st_mode = S_IFDIR;
    } else {
      struct node *n = &m->nodes[i - 2];
      if (n->parent != dir->ino || n->ino == dir->ino) continue;
      name = n->name;
      st.st_ino = n->ino;
      st.st_mode = n->dir ? S_IFDIR : S_IFREG;
    }
    if (k++ < off) continue;
    size_t need = m->api->add_direntry(req, buf + used, size - used, name, &st, k);
    if (need > size - used) break;
    used += need;
  }
  pthread_mutex_unlock(&m->lock);
  if (err)
    m->api->reply_err(req, err);
  else
    m->api->reply_buf(req, buf, used);
  free(buf);
}

static const struct rfuse_lowlevel_ops ops = {
    .lookup = fs_lookup,
    .forget = fs_forget,
    .getattr = fs_getattr,
    .setattr = fs_setattr,
    .mknod = fs_mknod,
    .mkdir = fs_mkdir,
    .unlink = fs_unlink,
    .rmdir = fs_unlink,
    .rename = fs_rename,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .flush = fs_flush,
    .release = fs_release,
    .readdir = fs_readdir,
};

static int is_stopping(struct rune_fuse_mount *m) {
  pthread_mutex_lock(&m->lock);
  int stopping = m->stopping;
  pthread_mutex_unlock(&m->lock);
  return stopping;
}

static void *serve(void *arg) {
  struct rune_fuse_mount *m = arg;
  union {
    struct rfuse_buf buf;
    char room[RFUSE_BUF_ROOM];
  } b;
  memset(&b, 0, sizeof b);
  struct pollfd fds[2] = {{.fd = m->api->session_fd(m->se), .events = POLLIN}, {.fd = m->wake[0], .events = POLLIN}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) break;
    int res = m->api->session_receive_buf(m->se, &b.buf);
    if (res == -EINTR || res == -EAGAIN) continue;
    if (res <= 0) break; /* 0: unmounted (ENODEV), or the connection was aborted */
    m->api->session_process_buf(m->se, &b.buf);
  }
  free(b.buf.mem);
  if (!is_stopping(m)) {
    struct rune_fuse_event *ev = event(RUNE_FUSE_ENDED, 0);
    if (ev) m->post(m->post_ctx, ev);
  }
  return NULL;
}

/* The descriptors open now, so the ones the mount adds can be found afterwards. */
static size_t open_fds(int *fds, size_t cap) {
  size_t n = 0;
  DIR *d = opendir("/proc/self/fd");
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d)) != NULL && n < cap;)
    if (e->d_name[0] != '.') fds[n++] = atoi(e->d_name);
  closedir(d);
  return n;
}

/* fusermount3 (auto_unmount) keeps a socket to this process open to notice its end: a child that
 * inherited it would keep the mount alive after rune is gone. Every descriptor the mount opened
 * is closed on exec. Returns the highest of them. */
static int cloexec_new_fds(const int *before, size_t count) {
  int after[1024], highest = -1;
  size_t n = open_fds(after, 1024);
  for (size_t i = 0; i < n; i++) {
    int known = 0;
    for (size_t j = 0; j < count && !known; j++) known = before[j] == after[i];
    if (known) continue;
    int flags = fcntl(after[i], F_GETFD);
    if (flags >= 0) fcntl(after[i], F_SETFD, flags | FD_CLOEXEC);
    if (after[i] > highest) highest = after[i];
  }
  return highest;
}

static void free_nodes(struct node *nodes, size_t count) {
  for (size_t i = 0; i < count; i++) {
    free(nodes[i].name);
    unref(nodes[i].content);
  }
  free(nodes);
}

struct rune_fuse_mount *rune_fuse_start(const char *mountpoint, const char *options, rune_fuse_post_fn post,
                                        void *post_ctx, char *error, size_t error_size) {
  const struct rfuse_api *api = rune_fuse_api(error, error_size);
  if (!api) return NULL;
  fuse = api;
  struct rune_fuse_mount *m = calloc(1, sizeof *m);
  if (!m || pipe2(m->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    snprintf(error, error_size, "out of resources: %s", strerror(errno));
    free(m);
    return NULL;
  }
  pthread_mutex_init(&m->lock, NULL);
  m->api = api;
  m->post = post;
  m->post_ctx = post_ctx;
  m->uid = geteuid();
  m->gid = getegid();
  clock_gettime(CLOCK_REALTIME, &m->started);
  char *argv[] = {"rune", "-o", (char *)options, NULL};
  struct rfuse_args args = {3, argv, 0};
  rune_fuse_log_clear();
  m->se = api->session_new(&args, &ops, sizeof ops, m);
  api->opt_free_args(&args);
  int before[1024];
  size_t known = m->se ? open_fds(before, 1024) : 0;
  if (!m->se || api->session_mount(m->se, mountpoint) != 0) {
    char log[1024];
    rune_fuse_log_text(log, sizeof log);
    size_t len = strlen(log);
    while (len > 0 && (log[len - 1] == '\n' || log[len - 1] == ' ')) log[--len] = '\0';
    snprintf(error, error_size, "%s", log[0] ? log : "libfuse gave no reason");
    if (m->se) api->session_destroy(m->se);
    close(m->wake[0]);
    close(m->wake[1]);
    pthread_mutex_destroy(&m->lock);
    free(m);
    return NULL;
  }
  int highest = cloexec_new_fds(before, known);
  int fd = api->session_fd(m->se);
  /* When rune dies, the kernel releases its files in reverse order of their numbers (task work
   * runs last-in first-out). fusermount3 unmounts only if the device is gone by the time it sees
   * the socket close (it checks for ENOTCONN), so the device's last reference is given the highest
   * number: it is released first. */
  m->keep = fcntl(fd, F_DUPFD_CLOEXEC, (highest > fd ? highest : fd) + 1);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  int err = pthread_create(&m->thread, NULL, serve, m);
  if (err != 0) {
    snprintf(error, error_size, "cannot start the FUSE thread: %s", strerror(err));
    if (m->keep >= 0) close(m->keep);
    api->session_unmount(m->se);
    api->session_destroy(m->se);
    free(m);
    return NULL;
  }
  return m;
}

int rune_fuse_set_tree(struct rune_fuse_mount *m, const struct rune_fuse_node *nodes, size_t count) {
  struct node *copy = calloc(count ? count : 1, sizeof *copy);
  if (!copy) return -ENOMEM;
  for (size_t i = 0; i < count; i++) {
    copy[i].ino = nodes[i].ino;
    copy[i].parent = nodes[i].parent;
    copy[i].dir = nodes[i].dir;
    copy[i].mode = nodes[i].mode & 07777;
    copy[i].name = strdup(nodes[i].name);
    if (nodes[i].content) {
      copy[i].content = malloc(sizeof(struct blob) + nodes[i].content_len + 1);
      if (copy[i].content) {
        copy[i].content->refs = 1;
        copy[i].content->len = nodes[i].content_len;
        memcpy(copy[i].content->data, nodes[i].content, nodes[i].content_len);
      }
    }
    if (!copy[i].name || (nodes[i].content && !copy[i].content)) {
      free_nodes(copy, i + 1);
      return -ENOMEM;
    }
  }
  pthread_mutex_lock(&m->lock);
  struct node *old = m->nodes;
  size_t old_count = m->count;
  m->nodes = copy;
  m->count = count;
  free_nodes(old, old_count);
  pthread_mutex_unlock(&m->lock);
  return 0;
}

int rune_fuse_reply_open(struct rune_fuse_mount *m, uint64_t id, uint64_t fh) {
  rfuse_req_t req = take_pending(m, id);
  if (!req) return -ENOENT;
  struct rfuse_file_info fi;
  memset(&fi, 0, sizeof fi);
  fi.fh = fh * 2 + 1;
  /* Each read goes to rune: no page cache, and a size of 0 does not stop a reader. */
  fi.direct_io = 1;
  m->api->reply_open(req, &fi);
  return 0;
}

int rune_fuse_reply_data(struct rune_fuse_mount *m, uint64_t id, const char *data, size_t size) {
  rfuse_req_t req = take_pending(m, id);
  if (!req) return -ENOENT;
  m->api->reply_buf(req, data, size);
  return 0;
}

int rune_fuse_reply_write(struct rune_fuse_mount *m, uint64_t id, size_t count) {
  rfuse_req_t req = take_pending(m, id);
  if (!req) return -ENOENT;
  m->api->reply_write(req, count);
  return 0;
}

int rune_fuse_reply_error(struct rune_fuse_mount *m, uint64_t id, int err) {
  rfuse_req_t req = take_pending(m, id);
  if (!req) return -ENOENT;
  m->api->reply_err(req, err);
  return 0;
}

void rune_fuse_stop(struct rune_fuse_mount *m, int err) {
  pthread_mutex_lock(&m->lock);
  m->stopping = 1;
  pthread_mutex_unlock(&m->lock);
  ssize_t ignored = write(m->wake[1], "x", 1);
  (void)ignored;
  pthread_join(m->thread, NULL);
  pthread_mutex_lock(&m->lock);
  struct pending *p = m->pending;
  m->pending = NULL;
  pthread_mutex_unlock(&m->lock);
  while (p) {
    struct pending *next = p->next;
    m->api->reply_err(p->req, err);
    free(p);
    p = next;
  }
  /* Closes the device first (the connection is aborted, nothing waits on rune any more), then a
   * lazy unmount unless the kernel has ended the mount already. */
  if (m->keep >= 0) close(m->keep);
  m->api->session_unmount(m->se);
  m->api->session_destroy(m->se);
  close(m->wake[0]);
  close(m->wake[1]);
  free_nodes(m->nodes, m->count);
  pthread_mutex_destroy(&m->lock);
  free(m);
}
