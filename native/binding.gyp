{
  "targets": [
    {
      "target_name": "rune_native",
      "sources": ["src/addon.c", "src/probe.c", "src/thread_landlock.c", "src/fdwalk.c", "src/fdops.c", "src/addon_fd.c",
                  "src/fuse_lib.c", "src/fuse_fs.c", "src/fuse_napi.c", "src/fdwatch.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Werror", "-std=gnu11"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
