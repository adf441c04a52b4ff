/* File-descriptor-relative primitives for the walk of search_files/find_files (src/tools/walk/):
 * openat(2) and a listing of an open folder, so the walk never resolves a path through
 * /proc/self/fd and never follows a symlink on the way (the name is one component, O_NOFOLLOW). */
#define _GNU_SOURCE
#include "fdwalk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rune_openat(int dirfd, const char *name, int flags) {
  /* A name is one path component below the folder: a slash, `.` or `..` would lead elsewhere than
   * the caller checked. */
  if (name[0] == '\0' || strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
    return -EINVAL;
  int fd = openat(dirfd, name, flags | O_CLOEXEC | O_NOFOLLOW);
  return fd < 0 ? -errno : fd;
}

int rune_close(int fd) { return close(fd) == 0 ? 0 : -errno; }

int rune_list_fd(int dirfd, rune_list_entry_fn each, void *ctx) {
  /* fdopendir takes the descriptor over: list a duplicate so the caller's stays open. */
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  DIR *dir = fdopendir(fd);
  if (!dir) {
    int saved = errno;
    close(fd);
    return -saved;
  }
  int count = 0;
  for (;;) {
    errno = 0;
    struct dirent *entry = readdir(dir);
    if (!entry) break;
    const char *n = entry->d_name;
    if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'))) continue;
    if (each(ctx, n, entry->d_type) != 0) {
      closedir(dir);
      return -ENOMEM;
    }
    count++;
  }
  int saved = errno;
  closedir(dir);
  return saved ? -saved : count;
}
