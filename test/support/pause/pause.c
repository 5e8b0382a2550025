// A preloaded library (LD_PRELOAD) that stops its process (SIGSTOP) right after a chosen rename,
// so that a test can act at an exact point of a real takeback process and then let it go on
// (SIGCONT): the person saving a file between an undo's plan and its first write, a kill -9 at
// a known step. The rename whose new name contains $PAUSE_RENAME (a plain substring) stops the
// process the $PAUSE_NTH-th time (default 1); later ones do not.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
