/* rune's N-API addon: the kernel probe for now; the sandbox issue adds the layers themselves. */
#include <node_api.h>

#include "probe.h"

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

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  CHECK(napi_create_function(env, "probe", NAPI_AUTO_LENGTH, probe, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "probe", fn));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
