/* The one way the N-API entry points of the addon give up: an N-API call that fails throws a JS
 * error and returns NULL (expects `env` in scope). */
#ifndef RUNE_NAPI_CHECK_H
#define RUNE_NAPI_CHECK_H

#define CHECK(call)                                                   \
  do {                                                                \
    if ((call) != napi_ok) {                                          \
      napi_throw_error(env, NULL, "rune_native: N-API call failed"); \
      return NULL;                                                    \
    }                                                                 \
  } while (0)

#endif
