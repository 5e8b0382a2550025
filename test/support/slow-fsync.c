/*
 * A pause before fsync and fdatasync of one file, loaded into an editor with LD_PRELOAD by the
 * editor tests (test/support/helix.ts slowFsync): a save whose data is on the disk at once but
 * whose sync takes a while, as under a loaded machine's disk, so that a test's waits are held to
 * the editor's own end of the save and not to the bytes appearing. TAKEBACK_TEST_SLOW_FSYNC_SUFFIX:
 * the end of the file's path (e.g. "/code.ini"); TAKEBACK_TEST_SLOW_FSYNC_MS: the pause (ms).
 * Without both, or for any other file, the calls go straight through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void pause_for(int fd) {
  const char *suffix = getenv("TAKEBACK_TEST_SLOW_FSYNC_SUFFIX");
  const char *ms = getenv("TAKEBACK_TEST_SLOW_FSYNC_MS");
  if (!suffix || !ms) return;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return;
  path[n] = 0;
  size_t len = strlen(suffix);
  if ((size_t)n < len || strcmp(path + n - len, suffix) != 0) return;
  long v = atol(ms);
  struct timespec t = { v / 1000, (v % 1000) * 1000000L };
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

int fsync(int fd) {
  pause_for(fd);
  int (*next)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  return next(fd);
}

int fdatasync(int fd) {
  pause_for(fd);
  int (*next)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  return next(fd);
}
