/* libfuse 3, loaded at run time: the binary carries no link to it, so a machine without it still
 * runs every other part of rune, and `rune mount` says what is missing. */
#ifndef RUNE_FUSE_LIB_H
#define RUNE_FUSE_LIB_H

#include "fuse_abi.h"

struct rfuse_api {
#define RFUSE_MEMBER(ret, name, symbol, params) ret(*name) params;
  RFUSE_FUNCTIONS(RFUSE_MEMBER)
#undef RFUSE_MEMBER
};

/* The library's functions, or NULL with the reason in `error` (dlopen's message, a missing symbol). */
const struct rfuse_api *rune_fuse_api(char *error, size_t error_size);

/* Where the library was found (dlinfo's path), "" before a successful load. */
const char *rune_fuse_library_path(void);

/* The last lines libfuse logged (its mount errors say why), cleared by rune_fuse_log_clear. */
void rune_fuse_log_text(char *out, size_t size);
void rune_fuse_log_clear(void);

#endif
