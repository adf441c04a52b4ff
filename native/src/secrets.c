/* The class of host secrets in a system folder (view.h: view_print_closed), listed for rune's
 * executor, which hides them in every view (src/sandbox/secrets.ts). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "view.h"

static void print_json_string(const char *text) {
  putchar('"');
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c == '"' || *c == '\\') printf("\\%c", *c);
    else if (*c < 0x20) printf("\\u%04x", *c);
    else putchar(*c);
  }
  putchar('"');
}

static int n_printed;

/* Entries of a system folder that others may not read (a folder others cannot enter counts whole):
 * shadow, gshadow and their backups, sudoers, host keys, TLS private keys, database passwords. A
 * list of names would miss the next backup or variant, so rune hides the class; it asks the helper
 * once per process because a scan of /etc in C costs a fraction of one in Node. */
static void print_closed_in(int dir, const char *path, int depth) {
  int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || e->d_type == DT_LNK) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISLNK(st.st_mode)) continue;
    char child[PATH_MAX];
    if (snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= (int)sizeof child) continue;
    int closed = S_ISDIR(st.st_mode) ? (st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH) : !(st.st_mode & S_IROTH);
    if (closed) {
      if (n_printed++) putchar(',');
      print_json_string(child);
    } else if (S_ISDIR(st.st_mode) && depth < 8) {
      int sub = openat(dirfd(d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) {
        print_closed_in(sub, child, depth + 1);
        close(sub);
      }
    }
  }
  closedir(d);
}

void view_print_closed(const char *folder) {
  char real[PATH_MAX];
  n_printed = 0;
  putchar('[');
  int dir = realpath(folder, real) ? open(real, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
  if (dir >= 0) {
    print_closed_in(dir, real, 0);
    close(dir);
  }
  printf("]\n");
  fflush(stdout);
}
