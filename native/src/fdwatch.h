/* inotify watches on folders held by descriptor, and symlinkat/mkfifoat below one (fdwatch.c). */
#ifndef RUNE_FDWATCH_H
#define RUNE_FDWATCH_H

#include <node_api.h>

/* Adds watchInit, watchAdd, watchRemove, watchRead, fdSymlinkat, fdMkfifoat to exports. */
napi_status rune_watch_register(napi_env env, napi_value exports);

#endif
