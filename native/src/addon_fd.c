/* N-API bindings of fdops.c (descriptor-relative file operations, src/core/fd/sys.ts). Each returns
 * its result, or -errno as a number: the TypeScript side turns that into an error with a code. */
#include <node_api.h>
#include <stdlib.h>
#include <string.h>

#include "addon_fd.h"
#include "fdops.h"
#include "napi_check.h"

#define NAME_MAX_BYTES 4096

/* Up to `max` arguments; each of `spec` is 'i' (int32) or 's' (a path string into names[k]). */
static int args_of(napi_env env, napi_callback_info info, const char *spec, int32_t *ints,
                   char names[][NAME_MAX_BYTES]) {
  size_t argc = 6;
  napi_value argv[6];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return -1;
  size_t n = strlen(spec);
  if (argc < n) return -1;
  int ni = 0, ns = 0;
  for (size_t i = 0; i < n; i++) {
    if (spec[i] == 'i') {
      if (napi_get_value_int32(env, argv[i], &ints[ni++]) != napi_ok) return -1;
    } else {
      size_t len = 0;
      if (napi_get_value_string_utf8(env, argv[i], names[ns], NAME_MAX_BYTES, &len) != napi_ok ||
          len >= NAME_MAX_BYTES - 1)
        return -1;
      ns++;
    }
  }
  return 0;
}

/* fdResolve(dirfd, path, flags, mode) → fd | -errno */
static napi_value fd_resolve(napi_env env, napi_callback_info info) {
  int32_t i[3];
  char s[1][NAME_MAX_BYTES];
  if (args_of(env, info, "isii", i, s) != 0) return usage(env, "fdResolve(dirfd, path, flags, mode)");
  return int_result(env, rune_fd_resolve(i[0], s[0], i[1], (mode_t)i[2]));
}

/* fdOpenat2(forceWalk) → 1 when openat2 is used */
static napi_value fd_openat2(napi_env env, napi_callback_info info) {
  int32_t i[1];
  if (args_of(env, info, "i", i, NULL) != 0) return usage(env, "fdOpenat2(forceWalk)");
  return int_result(env, rune_fd_openat2(i[0]));
}

/* fdMkdirat(dirfd, name, mode) → 0 | -errno */
static napi_value fd_mkdirat(napi_env env, napi_callback_info info) {
  int32_t i[2];
  char s[1][NAME_MAX_BYTES];
  if (args_of(env, info, "isi", i, s) != 0) return usage(env, "fdMkdirat(dirfd, name, mode)");
  return int_result(env, rune_fd_mkdirat(i[0], s[0], (mode_t)i[1]));
}

/* fdUnlinkat(dirfd, name, removeDir) → 0 | -errno */
static napi_value fd_unlinkat(napi_env env, napi_callback_info info) {
  int32_t i[2];
  char s[1][NAME_MAX_BYTES];
  if (args_of(env, info, "isi", i, s) != 0) return usage(env, "fdUnlinkat(dirfd, name, removeDir)");
  return int_result(env, rune_fd_unlinkat(i[0], s[0], i[1]));
}

/* fdReadlinkat(dirfd, name) → string | -errno */
static napi_value fd_readlinkat(napi_env env, napi_callback_info info) {
  int32_t i[1];
  char s[1][NAME_MAX_BYTES];
  if (args_of(env, info, "is", i, s) != 0) return usage(env, "fdReadlinkat(dirfd, name)");
  char target[NAME_MAX_BYTES];
  int n = rune_fd_readlinkat(i[0], s[0], target, sizeof target);
  if (n < 0) return int_result(env, n);
  napi_value result;
  CHECK(napi_create_string_utf8(env, target, (size_t)n, &result));
  return result;
}

/* fdRenameat(olddir, oldname, newdir, newname, flags) → 0 | -errno */
static napi_value fd_renameat(napi_env env, napi_callback_info info) {
  int32_t i[3];
  char s[2][NAME_MAX_BYTES];
  if (args_of(env, info, "isisi", i, s) != 0)
    return usage(env, "fdRenameat(olddir, oldname, newdir, newname, flags)");
  return int_result(env, rune_fd_renameat(i[0], s[0], i[1], s[1], (unsigned)i[2]));
}

static napi_value stat_result(napi_env env, int rc, const struct rune_fd_stat *st) {
  if (rc < 0) return int_result(env, rc);
  double values[9] = {st->mode,        st->nlink, st->uid, st->gid, (double)st->dev, (double)st->ino, (double)st->size,
                      (double)st->mtime_ns / 1e6, (double)st->ctime_ns / 1e6};
  napi_value result, item;
  CHECK(napi_create_array_with_length(env, 9, &result));
  for (uint32_t k = 0; k < 9; k++) {
    CHECK(napi_create_double(env, values[k], &item));
    CHECK(napi_set_element(env, result, k, item));
  }
  return result;
}

/* fdStatat(dirfd, name) → [mode, nlink, uid, gid, dev, ino, size, mtimeMs, ctimeMs] | -errno; "" = dirfd */
static napi_value fd_statat(napi_env env, napi_callback_info info) {
  int32_t i[1];
  char s[1][NAME_MAX_BYTES];
  if (args_of(env, info, "is", i, s) != 0) return usage(env, "fdStatat(dirfd, name)");
  struct rune_fd_stat st;
  return stat_result(env, rune_fd_statat(i[0], s[0], &st), &st);
}

/* fdStatPath(dirfd, path) → as fdStatat, for the last component of a relative path */
static napi_value fd_stat_path(napi_env env, napi_callback_info info) {
  int32_t i[1];
  char s[1][NAME_MAX_BYTES];
  if (args_of(env, info, "is", i, s) != 0) return usage(env, "fdStatPath(dirfd, path)");
  struct rune_fd_stat st;
  return stat_result(env, rune_fd_stat_path(i[0], s[0], &st), &st);
}

/* fdOpenRead(dirfd, name, stat: Float64Array(6)) → fd | -errno; stat gets
 * [mode, nlink, dev, ino, size, mtimeMs] (no array made per call: the walk opens every file). */
static napi_value fd_open_read(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  int32_t dirfd;
  char name[NAME_MAX_BYTES];
  size_t len = 0, count = 0;
  napi_typedarray_type type;
  void *data = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 ||
      napi_get_value_int32(env, argv[0], &dirfd) != napi_ok ||
      napi_get_value_string_utf8(env, argv[1], name, sizeof name, &len) != napi_ok || len >= sizeof name - 1 ||
      napi_get_typedarray_info(env, argv[2], &type, &count, &data, NULL, NULL) != napi_ok ||
      type != napi_float64_array || count < 6)
    return usage(env, "fdOpenRead(dirfd, name, stat: Float64Array(6))");
  struct rune_fd_stat st;
  int fd = rune_fd_open_read(dirfd, name, &st);
  if (fd >= 0) {
    double *out = data;
    out[0] = st.mode;
    out[1] = st.nlink;
    out[2] = (double)st.dev;
    out[3] = (double)st.ino;
    out[4] = (double)st.size;
    out[5] = (double)st.mtime_ns / 1e6;
  }
  return int_result(env, fd);
}

/* fdReadClose(fd, buffer, size, sniff) → length | -errno; closes fd in every case */
static napi_value fd_read_close(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  int32_t fd, size, sniff;
  void *data = NULL;
  size_t capacity = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
      napi_get_buffer_info(env, argv[1], &data, &capacity) != napi_ok ||
      napi_get_value_int32(env, argv[2], &size) != napi_ok || napi_get_value_int32(env, argv[3], &sniff) != napi_ok ||
      size < 0 || sniff < 0 || (size_t)size > capacity)
    return usage(env, "fdReadClose(fd, buffer, size ≤ buffer.length, sniff)");
  return int_result(env, (int)rune_fd_read_close(fd, data, (size_t)size, (size_t)sniff));
}

napi_status rune_fd_register(napi_env env, napi_value exports) {
  static const struct {
    const char *name;
    napi_callback fn;
  } table[] = {
      {"fdResolve", fd_resolve},     {"fdOpenat2", fd_openat2},   {"fdMkdirat", fd_mkdirat},
      {"fdUnlinkat", fd_unlinkat},   {"fdReadlinkat", fd_readlinkat}, {"fdRenameat", fd_renameat},
      {"fdStatat", fd_statat},       {"fdStatPath", fd_stat_path}, {"fdOpenRead", fd_open_read},
      {"fdReadClose", fd_read_close},
  };
  for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
    napi_value fn;
    napi_status s = napi_create_function(env, table[k].name, NAPI_AUTO_LENGTH, table[k].fn, NULL, &fn);
    if (s == napi_ok) s = napi_set_named_property(env, exports, table[k].name, fn);
    if (s != napi_ok) return s;
  }
  return napi_ok;
}
