/* File-descriptor-relative primitives for the walk of search_files/find_files. */
#ifndef RUNE_FDWALK_H
#define RUNE_FDWALK_H

/* openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC); `name` must be one component, not . or ..;
 * fd or -errno. */
int rune_openat(int dirfd, const char *name, int flags);

/* close(fd): 0 or -errno. */
int rune_close(int fd);

/* Called for each entry but . and ..; d_type as readdir gives it. Non-zero stops with -ENOMEM. */
typedef int (*rune_list_entry_fn)(void *ctx, const char *name, unsigned char type);

/* Lists the open folder `dirfd` (which stays open). Number of entries, or -errno. */
int rune_list_fd(int dirfd, rune_list_entry_fn each, void *ctx);

#endif
