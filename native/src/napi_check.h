/* The one way the N-API entry points of the addon give up: an N-API call that fails throws a JS
 * error and returns NULL (expects `env` in scope). Also the two small answers the bindings of
 * addon_fd.c and fdwatch.c share: a number (a result or -errno), and a TypeError naming the call. */
#ifndef RUNE_NAPI_CHECK_H
#define RUNE_NAPI_CHECK_H

#include <node_api.h>

#define CHECK(call)                                                   \
  do {                                                                \
    if ((call) != napi_ok) {                                          \
      napi_throw_error(env, NULL, "rune_native: N-API call failed"); \
      return NULL;                                                    \
    }                                                                 \
  } while (0)

/* `value` as a JS number: a call's result, or -errno. */
static inline napi_value int_result(napi_env env, int value) {
  napi_value result;
  CHECK(napi_create_int32(env, value, &result));
  return result;
}

/* Wrong arguments: a TypeError whose message is the call's signature. */
static inline napi_value usage(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

#endif
