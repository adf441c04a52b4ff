/* rune mount's functions on the addon's exports (fuseStatus, fuseMount, fuseSetTree, fuseReply,
 * fuseUnmount); addon.c calls this once from its init. */
#ifndef RUNE_FUSE_NAPI_H
#define RUNE_FUSE_NAPI_H

#include <node_api.h>

napi_status rune_fuse_register(napi_env env, napi_value exports);

#endif
