/* N-API bindings of the descriptor-relative file operations (fdops.c). */
#ifndef RUNE_ADDON_FD_H
#define RUNE_ADDON_FD_H

#include <node_api.h>

/* Adds fdResolve, fdOpenat2, fdMkdirat, fdUnlinkat, fdReadlinkat, fdRenameat, fdStatat to exports. */
napi_status rune_fd_register(napi_env env, napi_value exports);

#endif
