/*
 * One folder of @parcel/watcher's crawl made to fail, loaded into a process with LD_PRELOAD by
 * test/watch-descriptors.test.ts (test/support/fail-crawl.ts): the crawl a subscription makes
 * opens each folder with openat(parent, name, O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | ...), and
 * the TAKEBACK_TEST_FAIL_CRAWL_OPEN-th such call of the process (1 the first) fails with ENOENT,
 * as when the folder is removed between its parent's listing and its opening. The failure is
 * told by a line (the pid) appended to TAKEBACK_TEST_FAIL_CRAWL_MARK. Without the first variable,
 * or for any other call, the calls go straight through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Read once as the process starts: a capture daemon sets its environment anew for each event. */
static int nth;
static char mark[4096];

__attribute__((constructor)) static void init(void) {
  const char *n = getenv("TAKEBACK_TEST_FAIL_CRAWL_OPEN");
  const char *m = getenv("TAKEBACK_TEST_FAIL_CRAWL_MARK");
  nth = n ? atoi(n) : 0;
  if (m) snprintf(mark, sizeof mark, "%s", m);
}

static int fails(int flags) {
  int want = O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;
  if (nth <= 0 || (flags & want) != want) return 0;
  static int seen;
  if (__atomic_add_fetch(&seen, 1, __ATOMIC_SEQ_CST) != nth) return 0;
  if (mark[0]) {
    FILE *f = fopen(mark, "a");
    if (f) {
      fprintf(f, "%d\n", (int)getpid());
      fclose(f);
    }
  }
  return 1;
}

/* The open `name` does, unless this one is to fail (ENOENT): the next library's otherwise. */
static int call(const char *name, int dirfd, const char *path, int flags, mode_t mode) {
  if (fails(flags)) {
    errno = ENOENT;
    return -1;
  }
  int (*next)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, name);
  return next(dirfd, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = (mode_t)va_arg(ap, int);
    va_end(ap);
  }
  return call("openat", dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = (mode_t)va_arg(ap, int);
    va_end(ap);
  }
  return call("openat64", dirfd, path, flags, mode);
}
