/* Loads libfuse3.so.3 with dlopen and resolves each function at the symbol version whose ABI
 * fuse_abi.h declares (FUSE_3.0), so a newer library's changed defaults never reach rune. libfuse's
 * log is captured instead of going to stderr: a failed mount's reason becomes the error's text. */
#define _GNU_SOURCE
#include "fuse_lib.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct rfuse_api api;
static int loaded;
static char library_path[512];
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static char log_text[2048];
static size_t log_used;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void capture_log(int level, const char *fmt, va_list ap) {
  (void)level;
  char line[512];
  int n = vsnprintf(line, sizeof line, fmt, ap);
  if (n <= 0) return;
  size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
  pthread_mutex_lock(&log_lock);
  if (log_used + len >= sizeof log_text) log_used = 0; /* keep the newest lines */
  memcpy(log_text + log_used, line, len);
  log_used += len;
  log_text[log_used] = '\0';
  pthread_mutex_unlock(&log_lock);
}

void rune_fuse_log_text(char *out, size_t size) {
  pthread_mutex_lock(&log_lock);
  snprintf(out, size, "%s", log_used ? log_text : "");
  pthread_mutex_unlock(&log_lock);
}

void rune_fuse_log_clear(void) {
  pthread_mutex_lock(&log_lock);
  log_used = 0;
  log_text[0] = '\0';
  pthread_mutex_unlock(&log_lock);
}

static void *symbol(void *handle, const char *name) {
  void *fn = dlvsym(handle, name, "FUSE_3.0");
  return fn ? fn : dlsym(handle, name);
}

const struct rfuse_api *rune_fuse_api(char *error, size_t error_size) {
  pthread_mutex_lock(&load_lock);
  if (loaded) {
    pthread_mutex_unlock(&load_lock);
    return &api;
  }
  void *handle = dlopen("libfuse3.so.3", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    snprintf(error, error_size, "%s", dlerror());
    pthread_mutex_unlock(&load_lock);
    return NULL;
  }
  struct rfuse_api found;
#define RFUSE_RESOLVE(ret, name, sym, params)                                             \
  found.name = (ret(*) params)symbol(handle, sym);                                        \
  if (!found.name) {                                                                      \
    snprintf(error, error_size, "libfuse3.so.3 has no %s: not a libfuse 3 library", sym); \
    dlclose(handle);                                                                      \
    pthread_mutex_unlock(&load_lock);                                                     \
    return NULL;                                                                          \
  }
  RFUSE_FUNCTIONS(RFUSE_RESOLVE)
#undef RFUSE_RESOLVE
  /* fuse_set_log_func came with 3.7; an older library logs to stderr instead. */
  void (*set_log)(rfuse_log_func_t) = (void (*)(rfuse_log_func_t))dlvsym(handle, "fuse_set_log_func", "FUSE_3.7");
  if (set_log) set_log(capture_log);
  struct link_map *map = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
    snprintf(library_path, sizeof library_path, "%s", map->l_name);
  api = found;
  loaded = 1;
  pthread_mutex_unlock(&load_lock);
  return &api;
}

const char *rune_fuse_library_path(void) {
  return library_path;
}
