/* rune mount's N-API functions (src/mount/native.ts types them): the status of libfuse, mounting
 * with an event callback (a thread-safe function: the FUSE thread posts, Node's thread calls it),
 * the tree, the answers to posted requests, and the unmount. */
#include "fuse_napi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuse_fs.h"
#include "fuse_lib.h"

#define CHECK(call)                                                        \
  do {                                                                     \
    if ((call) != napi_ok) {                                               \
      napi_throw_error(env, NULL, "rune_native fuse: N-API call failed"); \
      return NULL;                                                         \
    }                                                                      \
  } while (0)

struct handle {
  struct rune_fuse_mount *mount;
  napi_threadsafe_function tsfn;
  int stopped;
};

static napi_status set_string(napi_env env, napi_value obj, const char *key, const char *value) {
  napi_value v;
  napi_status s = napi_create_string_utf8(env, value, NAPI_AUTO_LENGTH, &v);
  return s == napi_ok ? napi_set_named_property(env, obj, key, v) : s;
}

static napi_status set_number(napi_env env, napi_value obj, const char *key, double value) {
  napi_value v;
  napi_status s = napi_create_double(env, value, &v);
  return s == napi_ok ? napi_set_named_property(env, obj, key, v) : s;
}

/* fuseStatus() → {library, version} or {error}: whether libfuse 3 loads, without mounting. */
static napi_value fuse_status(napi_env env, napi_callback_info info) {
  (void)info;
  char error[512] = "";
  const struct rfuse_api *api = rune_fuse_api(error, sizeof error);
  napi_value obj;
  CHECK(napi_create_object(env, &obj));
  if (!api) {
    CHECK(set_string(env, obj, "error", error));
  } else {
    CHECK(set_string(env, obj, "library", rune_fuse_library_path()));
    CHECK(set_string(env, obj, "version", api->pkgversion()));
  }
  return obj;
}

static const char *OP_NAMES[] = {"", "open", "read", "write", "release", "interrupt", "ended"};

static napi_value event_object(napi_env env, const struct rune_fuse_event *ev) {
  napi_value obj;
  if (napi_create_object(env, &obj) != napi_ok) return NULL;
  napi_status s = set_string(env, obj, "op", OP_NAMES[ev->op]);
  if (s == napi_ok) s = set_number(env, obj, "id", (double)ev->id);
  if (s == napi_ok) s = set_number(env, obj, "ino", (double)ev->ino);
  if (s == napi_ok) s = set_number(env, obj, "fh", (double)ev->fh);
  if (s == napi_ok) s = set_number(env, obj, "pid", ev->pid);
  if (s == napi_ok) s = set_number(env, obj, "sid", ev->sid);
  if (s == napi_ok) s = set_number(env, obj, "uid", ev->uid);
  if (s == napi_ok) s = set_number(env, obj, "flags", ev->flags);
  if (s == napi_ok) s = set_number(env, obj, "offset", (double)ev->offset);
  if (s == napi_ok) s = set_number(env, obj, "size", (double)ev->size);
  if (s == napi_ok && ev->op == RUNE_FUSE_WRITE) {
    napi_value data;
    void *copy;
    s = napi_create_buffer_copy(env, ev->size, ev->data, &copy, &data);
    if (s == napi_ok) s = napi_set_named_property(env, obj, "data", data);
  }
  return s == napi_ok ? obj : NULL;
}

/* On Node's thread: one event for the JavaScript callback. env is NULL when the function is torn
 * down with events still queued: they are only freed. */
static void call_js(napi_env env, napi_value callback, void *context, void *data) {
  (void)context;
  struct rune_fuse_event *ev = data;
  if (env && callback) {
    napi_value obj = event_object(env, ev);
    napi_value undefined, result;
    if (obj && napi_get_undefined(env, &undefined) == napi_ok &&
        napi_call_function(env, undefined, callback, 1, &obj, &result) != napi_ok) {
      /* The callback catches its own errors; one that escapes is left for Node to report. */
    }
  }
  free(ev->data);
  free(ev);
}

static void post(void *ctx, struct rune_fuse_event *ev) {
  struct handle *h = ctx;
  if (napi_call_threadsafe_function(h->tsfn, ev, napi_tsfn_nonblocking) != napi_ok) {
    free(ev->data);
    free(ev);
  }
}

static struct handle *handle_of(napi_env env, napi_value value) {
  struct handle *h = NULL;
  if (napi_get_value_external(env, value, (void **)&h) != napi_ok || !h) {
    napi_throw_type_error(env, NULL, "not a mount handle");
    return NULL;
  }
  return h;
}

static int get_string(napi_env env, napi_value value, char *out, size_t size) {
  size_t len = 0;
  return napi_get_value_string_utf8(env, value, out, size, &len) == napi_ok && len < size - 1 ? 0 : -1;
}

/* fuseMount(mountpoint, options, onEvent) → handle; throws with libfuse's reason. */
static napi_value fuse_mount(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char mountpoint[4096], options[1024];
  napi_valuetype type = napi_undefined;
  if (argc < 3 || get_string(env, argv[0], mountpoint, sizeof mountpoint) != 0 ||
      get_string(env, argv[1], options, sizeof options) != 0 || napi_typeof(env, argv[2], &type) != napi_ok ||
      type != napi_function) {
    napi_throw_type_error(env, NULL, "fuseMount(mountpoint, options, onEvent)");
    return NULL;
  }
  struct handle *h = calloc(1, sizeof *h);
  if (!h) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  napi_value name;
  CHECK(napi_create_string_utf8(env, "rune mount", NAPI_AUTO_LENGTH, &name));
  if (napi_create_threadsafe_function(env, argv[2], NULL, name, 0, 1, NULL, NULL, NULL, call_js, &h->tsfn) !=
      napi_ok) {
    free(h);
    napi_throw_error(env, NULL, "cannot create the event function");
    return NULL;
  }
  char error[1200] = "";
  h->mount = rune_fuse_start(mountpoint, options, post, h, error, sizeof error);
  if (!h->mount) {
    napi_release_threadsafe_function(h->tsfn, napi_tsfn_abort);
    free(h);
    napi_throw_error(env, "EFUSE", error);
    return NULL;
  }
  napi_value external;
  CHECK(napi_create_external(env, h, NULL, NULL, &external));
  return external;
}

static int get_u64(napi_env env, napi_value obj, const char *key, uint64_t *out) {
  napi_value v;
  double d = 0;
  if (napi_get_named_property(env, obj, key, &v) != napi_ok || napi_get_value_double(env, v, &d) != napi_ok ||
      d < 0)
    return -1;
  *out = (uint64_t)d;
  return 0;
}

/* Reads one {ino, parent, name, dir, mode, content?} into `node`; strings are malloc'd. */
static int read_node(napi_env env, napi_value obj, struct rune_fuse_node *node) {
  uint64_t mode = 0;
  napi_value v;
  bool dir = false;
  size_t len = 0;
  if (get_u64(env, obj, "ino", &node->ino) || get_u64(env, obj, "parent", &node->parent) ||
      get_u64(env, obj, "mode", &mode) || napi_get_named_property(env, obj, "dir", &v) != napi_ok ||
      napi_get_value_bool(env, v, &dir) != napi_ok || napi_get_named_property(env, obj, "name", &v) != napi_ok ||
      napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok)
    return -1;
  node->dir = dir;
  node->mode = (mode_t)mode;
  node->name = malloc(len + 1);
  if (!node->name || napi_get_value_string_utf8(env, v, node->name, len + 1, &len) != napi_ok) return -1;
  bool has = false;
  if (napi_has_named_property(env, obj, "content", &has) != napi_ok) return -1;
  if (!has) return 0;
  void *data = NULL;
  if (napi_get_named_property(env, obj, "content", &v) != napi_ok ||
      napi_get_buffer_info(env, v, &data, &node->content_len) != napi_ok)
    return -1;
  node->content = malloc(node->content_len ? node->content_len : 1);
  if (!node->content) return -1;
  memcpy((char *)node->content, data, node->content_len);
  return 0;
}

/* fuseSetTree(handle, nodes) */
static napi_value fuse_set_tree(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  struct handle *h = argc == 2 ? handle_of(env, argv[0]) : NULL;
  if (!h || h->stopped) return NULL; /* after the unmount there is no tree to replace */
  uint32_t count = 0;
  if (napi_get_array_length(env, argv[1], &count) != napi_ok) {
    napi_throw_type_error(env, NULL, "fuseSetTree(handle, nodes): nodes is an array");
    return NULL;
  }
  struct rune_fuse_node *nodes = calloc(count ? count : 1, sizeof *nodes);
  int failed = !nodes;
  for (uint32_t i = 0; !failed && i < count; i++) {
    napi_value item;
    failed = napi_get_element(env, argv[1], i, &item) != napi_ok || read_node(env, item, &nodes[i]) != 0;
  }
  int rc = failed ? -EINVAL : rune_fuse_set_tree(h->mount, nodes, count);
  for (uint32_t i = 0; nodes && i < count; i++) {
    free(nodes[i].name);
    free((char *)nodes[i].content);
  }
  free(nodes);
  if (rc != 0) {
    napi_throw_error(env, NULL, rc == -EINVAL ? "fuseSetTree: a node is not {ino, parent, name, dir, mode, content?}"
                                              : "fuseSetTree: out of memory");
    return NULL;
  }
  return NULL;
}

/* fuseReply(handle, id, kind, value) → whether `id` was pending. kind: 0 open (value: handle
 * number), 1 data (value: Buffer), 2 written (value: byte count), 3 error (value: errno). */
static napi_value fuse_reply(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  struct handle *h = argc == 4 ? handle_of(env, argv[0]) : NULL;
  if (!h) return NULL;
  napi_value result;
  if (h->stopped) { /* a call that ends after the unmount: its request was failed already */
    CHECK(napi_get_boolean(env, false, &result));
    return result;
  }
  double id = 0, number = 0;
  int32_t kind = -1;
  CHECK(napi_get_value_double(env, argv[1], &id));
  CHECK(napi_get_value_int32(env, argv[2], &kind));
  int rc;
  if (kind == 1) {
    void *data = NULL;
    size_t len = 0;
    CHECK(napi_get_buffer_info(env, argv[3], &data, &len));
    rc = rune_fuse_reply_data(h->mount, (uint64_t)id, data, len);
  } else {
    CHECK(napi_get_value_double(env, argv[3], &number));
    rc = kind == 0   ? rune_fuse_reply_open(h->mount, (uint64_t)id, (uint64_t)number)
         : kind == 2 ? rune_fuse_reply_write(h->mount, (uint64_t)id, (size_t)number)
         : kind == 3 ? rune_fuse_reply_error(h->mount, (uint64_t)id, (int)number)
                     : -EINVAL;
  }
  if (rc == -EINVAL) {
    napi_throw_type_error(env, NULL, "fuseReply: kind is 0 (open), 1 (data), 2 (written) or 3 (error)");
    return NULL;
  }
  CHECK(napi_get_boolean(env, rc == 0, &result));
  return result;
}

/* fuseUnmount(handle, errno): pending requests fail with errno; safe to call twice. */
static napi_value fuse_unmount(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  struct handle *h = NULL;
  int32_t err = EIO;
  if (argc < 1 || napi_get_value_external(env, argv[0], (void **)&h) != napi_ok || !h) {
    napi_throw_type_error(env, NULL, "fuseUnmount(handle, errno)");
    return NULL;
  }
  if (argc > 1) CHECK(napi_get_value_int32(env, argv[1], &err));
  if (!h->stopped) {
    h->stopped = 1;
    rune_fuse_stop(h->mount, err);
    h->mount = NULL;
    napi_release_threadsafe_function(h->tsfn, napi_tsfn_release);
  }
  return NULL;
}

napi_status rune_fuse_register(napi_env env, napi_value exports) {
  static const struct {
    const char *name;
    napi_callback fn;
  } functions[] = {
      {"fuseStatus", fuse_status}, {"fuseMount", fuse_mount},     {"fuseSetTree", fuse_set_tree},
      {"fuseReply", fuse_reply},   {"fuseUnmount", fuse_unmount},
  };
  for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
    napi_value fn;
    napi_status s = napi_create_function(env, functions[i].name, NAPI_AUTO_LENGTH, functions[i].fn, NULL, &fn);
    if (s == napi_ok) s = napi_set_named_property(env, exports, functions[i].name, fn);
    if (s != napi_ok) return s;
  }
  return napi_ok;
}
