/* Change notification and the two creations src/core/fd/ lacked, for checkpoints
 * (src/agent/checkpoints/): inotify watches on folders held by descriptor (added through
 * /proc/self/fd/N, so the folder watched is the one opened, never a path that may have been swapped),
 * the events read without blocking, and symlinkat/mkfifoat relative to a folder descriptor.
 * Each call returns its result, or -errno as a number. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdwatch.h"
#include "napi_check.h"

#define TEXT_MAX 4096

static int get_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) return -1;
  return 0;
}

static int get_text(napi_env env, napi_value value, char *buf) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, buf, TEXT_MAX, &len) != napi_ok || len >= TEXT_MAX - 1) return -1;
  return 0;
}

/* One path component: the *at calls below act on an entry of the folder they are given. */
static int component(const char *name) {
  return name[0] != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* watchInit() → inotify fd | -errno (non-blocking, close-on-exec) */
static napi_value watch_init(napi_env env, napi_callback_info info) {
  (void)info;
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  return int_result(env, fd < 0 ? -errno : fd);
}

/* watchAdd(inotifyFd, dirFd, mask) → watch descriptor | -errno. The folder open as dirFd is watched
 * (its /proc/self/fd magic link leads to exactly that folder); IN_ONLYDIR is added. */
static napi_value watch_add(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  int32_t ifd, dirfd;
  uint32_t mask;
  if (get_args(env, info, 3, argv) != 0 || napi_get_value_int32(env, argv[0], &ifd) != napi_ok ||
      napi_get_value_int32(env, argv[1], &dirfd) != napi_ok || napi_get_value_uint32(env, argv[2], &mask) != napi_ok)
    return usage(env, "watchAdd(inotifyFd, dirFd, mask)");
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", dirfd);
  int wd = inotify_add_watch(ifd, path, mask | IN_ONLYDIR);
  return int_result(env, wd < 0 ? -errno : wd);
}

/* watchRemove(inotifyFd, wd) → 0 | -errno */
static napi_value watch_remove(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int32_t ifd, wd;
  if (get_args(env, info, 2, argv) != 0 || napi_get_value_int32(env, argv[0], &ifd) != napi_ok ||
      napi_get_value_int32(env, argv[1], &wd) != napi_ok)
    return usage(env, "watchRemove(inotifyFd, wd)");
  return int_result(env, inotify_rm_watch(ifd, wd) < 0 ? -errno : 0);
}

/* watchRead(inotifyFd) → [wds: number[], masks: number[], names: string[]] of every queued event
 * (empty arrays when none), or -errno. Never blocks (the descriptor is non-blocking). */
static napi_value watch_read(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int32_t ifd;
  if (get_args(env, info, 1, argv) != 0 || napi_get_value_int32(env, argv[0], &ifd) != napi_ok)
    return usage(env, "watchRead(inotifyFd)");
  napi_value wds, masks, names, result, item;
  CHECK(napi_create_array(env, &wds));
  CHECK(napi_create_array(env, &masks));
  CHECK(napi_create_array(env, &names));
  uint32_t count = 0;
  char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
  for (;;) {
    ssize_t n = read(ifd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      return int_result(env, -errno);
    }
    if (n == 0) break;
    for (char *at = buf; at < buf + n;) {
      const struct inotify_event *event = (const struct inotify_event *)at;
      CHECK(napi_create_int32(env, event->wd, &item));
      CHECK(napi_set_element(env, wds, count, item));
      CHECK(napi_create_uint32(env, event->mask, &item));
      CHECK(napi_set_element(env, masks, count, item));
      CHECK(napi_create_string_utf8(env, event->len ? event->name : "", NAPI_AUTO_LENGTH, &item));
      CHECK(napi_set_element(env, names, count, item));
      count++;
      at += sizeof(struct inotify_event) + event->len;
    }
  }
  CHECK(napi_create_array_with_length(env, 3, &result));
  CHECK(napi_set_element(env, result, 0, wds));
  CHECK(napi_set_element(env, result, 1, masks));
  CHECK(napi_set_element(env, result, 2, names));
  return result;
}

/* fdSymlinkat(target, dirFd, name) → 0 | -errno: a link `name` in the folder, pointing at `target`. */
static napi_value fd_symlinkat(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  char target[TEXT_MAX], name[TEXT_MAX];
  int32_t dirfd;
  if (get_args(env, info, 3, argv) != 0 || get_text(env, argv[0], target) != 0 ||
      napi_get_value_int32(env, argv[1], &dirfd) != napi_ok || get_text(env, argv[2], name) != 0)
    return usage(env, "fdSymlinkat(target, dirFd, name)");
  if (!component(name)) return int_result(env, -EINVAL);
  return int_result(env, symlinkat(target, dirfd, name) < 0 ? -errno : 0);
}

/* fdMkfifoat(dirFd, name, mode) → 0 | -errno */
static napi_value fd_mkfifoat(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  char name[TEXT_MAX];
  int32_t dirfd, mode;
  if (get_args(env, info, 3, argv) != 0 || napi_get_value_int32(env, argv[0], &dirfd) != napi_ok ||
      get_text(env, argv[1], name) != 0 || napi_get_value_int32(env, argv[2], &mode) != napi_ok)
    return usage(env, "fdMkfifoat(dirFd, name, mode)");
  if (!component(name)) return int_result(env, -EINVAL);
  return int_result(env, mkfifoat(dirfd, name, (mode_t)mode & 07777) < 0 ? -errno : 0);
}

napi_status rune_watch_register(napi_env env, napi_value exports) {
  static const struct {
    const char *name;
    napi_callback fn;
  } table[] = {
      {"watchInit", watch_init}, {"watchAdd", watch_add},         {"watchRemove", watch_remove},
      {"watchRead", watch_read}, {"fdSymlinkat", fd_symlinkat}, {"fdMkfifoat", fd_mkfifoat},
  };
  for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
    napi_value fn;
    napi_status s = napi_create_function(env, table[k].name, NAPI_AUTO_LENGTH, table[k].fn, NULL, &fn);
    if (s == napi_ok) s = napi_set_named_property(env, exports, table[k].name, fn);
    if (s != napi_ok) return s;
  }
  return napi_ok;
}
