// A preloaded library (LD_PRELOAD) that stops its process (SIGSTOP) right after a chosen rename,
// so that a test can act at an exact point of a real takeback process and then let it go on
// (SIGCONT): the person saving a file between an undo's plan and its first write, a kill -9 at
// a known step. The rename whose new name contains $PAUSE_RENAME (a plain substring) stops the
// process the $PAUSE_NTH-th time (default 1); later ones do not. Likewise $PAUSE_FSYNC stops it
// just before the fsync or fdatasync of a file whose path contains it (a blob's sync, before the
// commit that names the blob), counted apart.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int seen = 0;

static void maybe_pause(const char *to) {
  const char *want = getenv("PAUSE_RENAME");
  if (!want || !*want || !to || !strstr(to, want)) return;
  const char *nth = getenv("PAUSE_NTH");
  int n = nth ? atoi(nth) : 1;
  if (++seen == n) raise(SIGSTOP);
}

int rename(const char *from, const char *to) {
  static int (*real)(const char *, const char *) = NULL;
  if (!real) real = dlsym(RTLD_NEXT, "rename");
  int r = real(from, to);
  if (r == 0) maybe_pause(to);
  return r;
}

int renameat(int fd1, const char *from, int fd2, const char *to) {
  static int (*real)(int, const char *, int, const char *) = NULL;
  if (!real) real = dlsym(RTLD_NEXT, "renameat");
  int r = real(fd1, from, fd2, to);
  if (r == 0) maybe_pause(to);
  return r;
}

static int synced = 0;
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;

/* Stops the process before syncing `fd` when its path contains $PAUSE_FSYNC, the $PAUSE_NTH-th time. */
static void maybe_pause_sync(int fd) {
  const char *want = getenv("PAUSE_FSYNC");
  if (!want || !*want) return;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return;
  path[n] = 0;
  if (!strstr(path, want)) return;
  const char *nth = getenv("PAUSE_NTH");
  int wanted = nth ? atoi(nth) : 1;
  /* Syncs run on several threads at once (native/sync-paths.c): counted under a lock. */
  pthread_mutex_lock(&sync_lock);
  int now = ++synced;
  pthread_mutex_unlock(&sync_lock);
  if (now == wanted) kill(getpid(), SIGSTOP);
}

int fsync(int fd) {
  static int (*real)(int) = NULL;
  if (!real) real = dlsym(RTLD_NEXT, "fsync");
  maybe_pause_sync(fd);
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int) = NULL;
  if (!real) real = dlsym(RTLD_NEXT, "fdatasync");
  maybe_pause_sync(fd);
  return real(fd);
}
