/* rune's N-API addon: the kernel probe, and Landlock for one thread of rune's own process (the
 * walk worker of search_files/find_files). The sandbox layers of tool processes live in helper.c. */
#include <node_api.h>
#include <stdlib.h>

#include "probe.h"
#include "thread_landlock.h"

#define CHECK(call)                                                   \
  do {                                                                \
    if ((call) != napi_ok) {                                          \
      napi_throw_error(env, NULL, "rune_native: N-API call failed"); \
      return NULL;                                                    \
    }                                                                 \
  } while (0)

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
  CHECK(set_int(env, obj, "landlockAbi", p.landlock_abi));
  CHECK(set_int(env, obj, "seccompFilter", p.seccomp_filter));
  CHECK(set_int(env, obj, "seccompUserNotif", p.seccomp_user_notif));
  CHECK(set_int(env, obj, "currentSeccomp", p.current_seccomp));
  CHECK(set_int(env, obj, "noNewPrivs", p.no_new_privs));
  CHECK(set_int(env, obj, "userns", p.userns));
  CHECK(set_int(env, obj, "netns", p.netns));
  CHECK(set_int(env, obj, "mountns", p.mountns));
  CHECK(set_int(env, obj, "pidns", p.pidns));
  CHECK(set_int(env, obj, "unshareNoop", p.unshare_noop));
  return obj;
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

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  CHECK(napi_create_function(env, "probe", NAPI_AUTO_LENGTH, probe, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "probe", fn));
  CHECK(napi_create_function(env, "restrictThread", NAPI_AUTO_LENGTH, restrict_thread, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "restrictThread", fn));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
