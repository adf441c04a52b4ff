/* rune's N-API addon: the kernel probe; for the walk worker of search_files/find_files, Landlock for
 * its own thread and fd-relative openat/listing; the descriptor file operations of src/core/fd/
 * (addon_fd.c). The sandbox layers of tool processes live in helper.c. */
#include <node_api.h>
#include <stdlib.h>

#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "addon_fd.h"
#include "fdwalk.h"
#include "fdwatch.h"
#include "fuse_napi.h"
#include "napi_check.h"
#include "probe.h"
#include "thread_landlock.h"

static napi_status set_int(napi_env env, napi_value obj, const char *key, int value) {
  napi_value v;
  napi_status s = napi_create_int32(env, value, &v);
  if (s != napi_ok) return s;
  return napi_set_named_property(env, obj, key, v);
}

static napi_value probe(napi_env env, napi_callback_info info) {
  (void)info;
  struct rune_probe p;
  rune_probe_kernel(&p);
  napi_value obj;
  CHECK(napi_create_object(env, &obj));
  /* Every field of the record, as probe.h declares it. */
#define X(c_name, js_name, meaning) CHECK(set_int(env, obj, js_name, p.c_name));
  RUNE_PROBE_FIELDS(X)
#undef X
  return obj;
}

/* Makes rune's own process not dumpable before its first tool process starts: its environment (the
 * API key) and memory (/proc/PID/environ, /proc/PID/mem) then need CAP_SYS_PTRACE, which no tool
 * has, even where no PID namespace hides rune and no Landlock domain keeps a tool out. Its command
 * line is overwritten at start (src/main.ts). Returns whether it holds. */
static napi_value undumpable(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value ok;
  CHECK(napi_get_boolean(env, prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0,
                         &ok));
  return ok;
}

/* Reads a JS array of strings into a NULL-free C array; *out is freed by free_strings. */
static napi_status read_strings(napi_env env, napi_value array, char ***out, uint32_t *count) {
  *out = NULL;
  *count = 0;
  uint32_t n = 0;
  napi_status s = napi_get_array_length(env, array, &n);
  if (s != napi_ok) return s;
  char **strings = calloc(n ? n : 1, sizeof(char *));
  if (!strings) return napi_generic_failure;
  *out = strings;
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    size_t len = 0;
    if ((s = napi_get_element(env, array, i, &item)) != napi_ok) return s;
    if ((s = napi_get_value_string_utf8(env, item, NULL, 0, &len)) != napi_ok) return s;
    strings[i] = malloc(len + 1);
    *count = i + 1;
    if (!strings[i]) return napi_generic_failure;
    if ((s = napi_get_value_string_utf8(env, item, strings[i], len + 1, &len)) != napi_ok) return s;
  }
  return napi_ok;
}

static void free_strings(char **strings, uint32_t count) {
  if (!strings) return;
  for (uint32_t i = 0; i < count; i++) free(strings[i]);
  free(strings);
}

/* restrictThread(read: string[], list: string[]) → {abi, rules, skipped, error, step} */
static napi_value restrict_thread(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 2) {
    napi_throw_type_error(env, NULL, "restrictThread(read, list): two arrays of paths");
    return NULL;
  }
  char **read = NULL, **list = NULL;
  uint32_t n_read = 0, n_list = 0;
  napi_status s1 = read_strings(env, argv[0], &read, &n_read);
  napi_status s2 = s1 == napi_ok ? read_strings(env, argv[1], &list, &n_list) : s1;
  struct rune_thread_landlock r = {0};
  if (s1 == napi_ok && s2 == napi_ok) rune_thread_landlock((const char *const *)read, n_read, (const char *const *)list, n_list, &r);
  free_strings(read, n_read);
  free_strings(list, n_list);
  if (s1 != napi_ok || s2 != napi_ok) {
    napi_throw_type_error(env, NULL, "restrictThread: the paths must be strings");
    return NULL;
  }
  napi_value obj, step;
  CHECK(napi_create_object(env, &obj));
  CHECK(set_int(env, obj, "abi", r.abi));
  CHECK(set_int(env, obj, "rules", r.rules));
  CHECK(set_int(env, obj, "skipped", r.skipped));
  CHECK(set_int(env, obj, "error", r.error));
  CHECK(napi_create_string_utf8(env, r.step ? r.step : "", NAPI_AUTO_LENGTH, &step));
  CHECK(napi_set_named_property(env, obj, "step", step));
  return obj;
}

static int get_int(napi_env env, napi_value value, int32_t *out) {
  return napi_get_value_int32(env, value, out) == napi_ok ? 0 : -1;
}

/* openat(dirfd: number, name: string, flags: number) → fd, or -errno */
static napi_value js_openat(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t dirfd = -1, flags = 0;
  char name[4096];
  size_t len = 0;
  if (argc < 3 || get_int(env, argv[0], &dirfd) != 0 || get_int(env, argv[2], &flags) != 0 ||
      napi_get_value_string_utf8(env, argv[1], name, sizeof name, &len) != napi_ok || len >= sizeof name - 1) {
    napi_throw_type_error(env, NULL, "openat(dirfd, name, flags)");
    return NULL;
  }
  napi_value result;
  CHECK(napi_create_int32(env, rune_openat(dirfd, name, flags), &result));
  return result;
}

/* closeFd(fd: number) → 0, or -errno. For descriptors openat() gave: Node's own close warns in a
 * worker thread about descriptors it did not open (and captures a stack trace each time). */
static napi_value js_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t fd = -1;
  if (argc < 1 || get_int(env, argv[0], &fd) != 0) {
    napi_throw_type_error(env, NULL, "closeFd(fd)");
    return NULL;
  }
  napi_value result;
  CHECK(napi_create_int32(env, rune_close(fd), &result));
  return result;
}

struct listing {
  char *names; /* NUL-separated */
  size_t used, size;
  unsigned char *types;
  size_t count, cap;
};

static int collect(void *ctx, const char *name, unsigned char type) {
  struct listing *l = ctx;
  size_t len = strlen(name) + 1;
  if (l->used + len > l->size) {
    size_t size = l->size ? l->size * 2 : 4096;
    while (size < l->used + len) size *= 2;
    char *names = realloc(l->names, size);
    if (!names) return -1;
    l->names = names;
    l->size = size;
  }
  if (l->count == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    unsigned char *types = realloc(l->types, cap);
    if (!types) return -1;
    l->types = types;
    l->cap = cap;
  }
  memcpy(l->names + l->used, name, len);
  l->used += len;
  l->types[l->count++] = type;
  return 0;
}

struct listed {
  const char *name;
  unsigned char type;
};

/* Git's order (what `git ls-files` prints): names compared as bytes, a folder's as if it ended
 * with '/'. */
static int git_order(const void *pa, const void *pb) {
  const struct listed *a = pa, *b = pb;
  size_t la = strlen(a->name), lb = strlen(b->name), n = la < lb ? la : lb;
  int c = memcmp(a->name, b->name, n);
  if (c != 0) return c;
  /* One name starts the other: what follows it is '/' for a folder, the end for anything else. */
  unsigned x = la > n ? (unsigned char)a->name[n] : (a->type == DT_DIR ? '/' : 0);
  unsigned y = lb > n ? (unsigned char)b->name[n] : (b->type == DT_DIR ? '/' : 0);
  return x < y ? -1 : x > y ? 1 : 0;
}

/* The listing in git's order, each entry's type known (a file system without d_type is asked by
 * fstatat, no link followed); NULL when out of memory. */
static struct listed *sorted_listing(int dirfd, const struct listing *l) {
  struct listed *out = malloc((l->count ? l->count : 1) * sizeof *out);
  if (!out) return NULL;
  const char *at = l->names;
  for (size_t i = 0; i < l->count; i++) {
    out[i].name = at;
    out[i].type = l->types[i];
    struct stat st;
    if (out[i].type == DT_UNKNOWN && fstatat(dirfd, at, &st, AT_SYMLINK_NOFOLLOW) == 0)
      out[i].type = (unsigned char)IFTODT(st.st_mode);
    at += strlen(at) + 1;
  }
  qsort(out, l->count, sizeof *out, git_order);
  return out;
}

/* listFd(dirfd: number) → [names: string[], types: number[] (d_type)] in git's order, or -errno */
static napi_value js_list_fd(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t dirfd = -1;
  if (argc < 1 || get_int(env, argv[0], &dirfd) != 0) {
    napi_throw_type_error(env, NULL, "listFd(dirfd)");
    return NULL;
  }
  struct listing l = {0};
  int rc = rune_list_fd(dirfd, collect, &l);
  napi_value result;
  if (rc < 0) {
    free(l.names);
    free(l.types);
    CHECK(napi_create_int32(env, rc, &result));
    return result;
  }
  struct listed *sorted = sorted_listing(dirfd, &l);
  napi_value names, types;
  napi_status s = sorted ? napi_create_array_with_length(env, l.count, &names) : napi_generic_failure;
  if (s == napi_ok) s = napi_create_array_with_length(env, l.count, &types);
  for (size_t i = 0; s == napi_ok && i < l.count; i++) {
    napi_value name, type;
    s = napi_create_string_utf8(env, sorted[i].name, strlen(sorted[i].name), &name);
    if (s == napi_ok) s = napi_set_element(env, names, (uint32_t)i, name);
    if (s == napi_ok) s = napi_create_uint32(env, sorted[i].type, &type);
    if (s == napi_ok) s = napi_set_element(env, types, (uint32_t)i, type);
  }
  free(sorted);
  free(l.names);
  free(l.types);
  CHECK(s);
  CHECK(napi_create_array_with_length(env, 2, &result));
  CHECK(napi_set_element(env, result, 0, names));
  CHECK(napi_set_element(env, result, 1, types));
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  CHECK(napi_create_function(env, "probe", NAPI_AUTO_LENGTH, probe, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "probe", fn));
  CHECK(napi_create_function(env, "undumpable", NAPI_AUTO_LENGTH, undumpable, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "undumpable", fn));
  CHECK(napi_create_function(env, "restrictThread", NAPI_AUTO_LENGTH, restrict_thread, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "restrictThread", fn));
  CHECK(napi_create_function(env, "openat", NAPI_AUTO_LENGTH, js_openat, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "openat", fn));
  CHECK(napi_create_function(env, "listFd", NAPI_AUTO_LENGTH, js_list_fd, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "listFd", fn));
  CHECK(napi_create_function(env, "closeFd", NAPI_AUTO_LENGTH, js_close, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "closeFd", fn));
  CHECK(rune_fd_register(env, exports));    /* src/core/fd: addon_fd.c */
  CHECK(rune_watch_register(env, exports)); /* checkpoints: fdwatch.c */
  CHECK(rune_fuse_register(env, exports));  /* rune mount: fuse_napi.c */
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
