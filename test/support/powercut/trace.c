// A preloaded library (LD_PRELOAD) that records what a process does to files under one folder,
// for the power-cut test: every write with its bytes, every truncation, creation, rename, unlink,
// mkdir, rmdir, link, chmod, and every fsync/fdatasync/sync/syncfs, in order, into the log file
// $POWERCUT_LOG. test/support/powercut.ts replays the log to build what a disk would hold after
// a power cut at any point: only what was made durable before that point.
//
// Record: u32 length of the rest, u8 op, then fields; a string is u32 length + bytes, a number
// is i64. One write(2) a record on a file opened O_APPEND, under a lock, so threads interleave
// whole records. Paths are absolute, as the kernel names them (/proc/self/fd/N resolved): a
// call on a path outside $POWERCUT_ROOT is not recorded.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum {
  OP_WRITE = 'W',    // path, offset, bytes
  OP_TRUNC = 'T',    // path, length
  OP_CREATE = 'C',   // path, mode (open with O_CREAT made the file, or found it)
  OP_RENAME = 'R',   // from, to
  OP_UNLINK = 'U',   // path
  OP_MKDIR = 'M',    // path, mode
  OP_RMDIR = 'D',    // path
  OP_SYMLINK = 'L',  // target, path
  OP_LINK = 'H',     // from, to
  OP_CHMOD = 'X',    // path, mode
  OP_FSYNC = 'S',    // path (a file or a folder)
  OP_SYNCALL = 'Y',  // (sync, syncfs: everything)
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
static char root[4096];
static size_t root_len = 0;
static __thread int busy = 0;

static void init(void) {
  static int done = 0;
  if (done) return;
  done = 1;
  const char *log = getenv("POWERCUT_LOG");
  const char *r = getenv("POWERCUT_ROOT");
  if (!log || !r) return;
  log_fd = (int)syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  snprintf(root, sizeof root, "%s", r);
  root_len = strlen(root);
}

#define REAL(name, ret, ...)                                  \
  static ret (*real_##name)(__VA_ARGS__) = NULL;              \
  if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name);

/** The path of open descriptor `fd` (a file or a folder), or "" when it has none. */
static void fd_path(int fd, char *out, size_t n) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t k = syscall(SYS_readlinkat, AT_FDCWD, link, out, n - 1);
  if (k < 0) k = 0;
  out[k] = 0;
  if (strstr(out, " (deleted)")) out[0] = 0;
}

/** `p` relative to folder descriptor `dirfd` (AT_FDCWD: the current folder), absolute, with /proc/self/fd/N resolved. */
static void abs_path(int dirfd, const char *p, char *out, size_t n) {
  char base[4096];
  if (strncmp(p, "/proc/self/fd/", 14) == 0) {
    int fd = atoi(p + 14);
    const char *rest = strchr(p + 14, '/');
    fd_path(fd, base, sizeof base);
    snprintf(out, n, "%s%s", base, rest ? rest : "");
    return;
  }
  if (p[0] == '/') {
    snprintf(out, n, "%s", p);
    return;
  }
  if (dirfd == AT_FDCWD) {
    if (!getcwd(base, sizeof base)) base[0] = 0;
  } else {
    fd_path(dirfd, base, sizeof base);
  }
  snprintf(out, n, "%s/%s", base, p);
}

static int inside(const char *p) {
  init();
  return root_len > 0 && strncmp(p, root, root_len) == 0 && (p[root_len] == '/' || p[root_len] == 0);
}

struct rec {
  char *buf;
  size_t len, cap;
};

static void put(struct rec *r, const void *d, size_t n) {
  if (r->len + n > r->cap) {
    r->cap = (r->len + n) * 2 + 64;
    r->buf = realloc(r->buf, r->cap);
  }
  memcpy(r->buf + r->len, d, n);
  r->len += n;
}

static void put_str(struct rec *r, const char *s, size_t n) {
  uint32_t k = (uint32_t)n;
  put(r, &k, 4);
  put(r, s, n);
}

static void put_num(struct rec *r, int64_t v) { put(r, &v, 8); }

/** Appends one record: op, then up to two paths, up to two numbers, and bytes (when `data`). */
static void emit(char op, const char *a, const char *b, int64_t x, int64_t y, const void *data, size_t dlen, int has_data) {
  init();
  if (log_fd < 0) return;
  struct rec r = {0};
  uint32_t zero = 0;
  put(&r, &zero, 4);
  put(&r, &op, 1);
  put_str(&r, a ? a : "", a ? strlen(a) : 0);
  put_str(&r, b ? b : "", b ? strlen(b) : 0);
  put_num(&r, x);
  put_num(&r, y);
  put_str(&r, has_data ? data : "", has_data ? dlen : 0);
  uint32_t rest = (uint32_t)(r.len - 4);
  memcpy(r.buf, &rest, 4);
  pthread_mutex_lock(&lock);
  syscall(SYS_write, log_fd, r.buf, r.len);
  pthread_mutex_unlock(&lock);
  free(r.buf);
}

static void after_open(int fd, int flags, mode_t mode) {
  if (fd < 0 || busy) return;
  char p[4096];
  fd_path(fd, p, sizeof p);
  if (!inside(p)) return;
  if (flags & O_CREAT) emit(OP_CREATE, p, NULL, mode, 0, NULL, 0, 0);
  if (flags & O_TRUNC) emit(OP_TRUNC, p, NULL, 0, 0, NULL, 0, 0);
}

static void after_write(int fd, const void *buf, ssize_t ret, off_t at) {
  if (ret <= 0 || busy) return;
  char p[4096];
  fd_path(fd, p, sizeof p);
  if (!inside(p)) return;
  emit(OP_WRITE, p, NULL, at, 0, buf, (size_t)ret, 1);
}

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...) {
  REAL(open, int, const char *, int, ...);
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  int fd = real_open(path, flags, m);
  after_open(fd, flags, m);
  return fd;
}

int open64(const char *path, int flags, ...) {
  REAL(open64, int, const char *, int, ...);
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  int fd = real_open64(path, flags, m);
  after_open(fd, flags, m);
  return fd;
}

int openat(int dirfd, const char *path, int flags, ...) {
  REAL(openat, int, int, const char *, int, ...);
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  int fd = real_openat(dirfd, path, flags, m);
  after_open(fd, flags, m);
  return fd;
}

int openat64(int dirfd, const char *path, int flags, ...) {
  REAL(openat64, int, int, const char *, int, ...);
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  int fd = real_openat64(dirfd, path, flags, m);
  after_open(fd, flags, m);
  return fd;
}

int creat(const char *path, mode_t m) { return open(path, O_CREAT | O_WRONLY | O_TRUNC, m); }
int creat64(const char *path, mode_t m) { return open64(path, O_CREAT | O_WRONLY | O_TRUNC, m); }

/** Where the next write(2) on `fd` lands (its O_APPEND end, or its offset). */
static off_t write_offset(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0 && (fl & O_APPEND)) {
    struct stat st;
    if (fstat(fd, &st) == 0) return st.st_size;
  }
  return lseek(fd, 0, SEEK_CUR);
}

ssize_t write(int fd, const void *buf, size_t n) {
  REAL(write, ssize_t, int, const void *, size_t);
  off_t at = busy ? 0 : write_offset(fd);
  ssize_t r = real_write(fd, buf, n);
  after_write(fd, buf, r, at);
  return r;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
  REAL(pwrite, ssize_t, int, const void *, size_t, off_t);
  ssize_t r = real_pwrite(fd, buf, n, off);
  after_write(fd, buf, r, off);
  return r;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
  REAL(pwrite64, ssize_t, int, const void *, size_t, off_t);
  ssize_t r = real_pwrite64(fd, buf, n, off);
  after_write(fd, buf, r, off);
  return r;
}

/** Records the `r` bytes a vectored write put at `at`, buffer by buffer. */
static void after_writev(int fd, const struct iovec *iov, int cnt, ssize_t r, off_t at) {
  for (int i = 0; i < cnt && r > 0; i++) {
    ssize_t k = (ssize_t)iov[i].iov_len < r ? (ssize_t)iov[i].iov_len : r;
    after_write(fd, iov[i].iov_base, k, at);
    at += k;
    r -= k;
  }
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
  REAL(writev, ssize_t, int, const struct iovec *, int);
  off_t at = busy ? 0 : write_offset(fd);
  ssize_t r = real_writev(fd, iov, cnt);
  after_writev(fd, iov, cnt, r, at);
  return r;
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
  REAL(pwritev, ssize_t, int, const struct iovec *, int, off_t);
  ssize_t r = real_pwritev(fd, iov, cnt, off);
  after_writev(fd, iov, cnt, r, off);
  return r;
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off) {
  REAL(pwritev64, ssize_t, int, const struct iovec *, int, off_t);
  ssize_t r = real_pwritev64(fd, iov, cnt, off);
  after_writev(fd, iov, cnt, r, off);
  return r;
}

static void on_fd(char op, int fd, int64_t x) {
  if (busy) return;
  char p[4096];
  fd_path(fd, p, sizeof p);
  if (inside(p)) emit(op, p, NULL, x, 0, NULL, 0, 0);
}

int ftruncate(int fd, off_t len) {
  REAL(ftruncate, int, int, off_t);
  int r = real_ftruncate(fd, len);
  if (r == 0) on_fd(OP_TRUNC, fd, len);
  return r;
}

int ftruncate64(int fd, off_t len) {
  REAL(ftruncate64, int, int, off_t);
  int r = real_ftruncate64(fd, len);
  if (r == 0) on_fd(OP_TRUNC, fd, len);
  return r;
}

int fsync(int fd) {
  REAL(fsync, int, int);
  int r = real_fsync(fd);
  if (r == 0) on_fd(OP_FSYNC, fd, 0);
  return r;
}

int fdatasync(int fd) {
  REAL(fdatasync, int, int);
  int r = real_fdatasync(fd);
  if (r == 0) on_fd(OP_FSYNC, fd, 0);
  return r;
}

void sync(void) {
  REAL(sync, void, void);
  real_sync();
  if (!busy) emit(OP_SYNCALL, NULL, NULL, 0, 0, NULL, 0, 0);
}

int syncfs(int fd) {
  REAL(syncfs, int, int);
  int r = real_syncfs(fd);
  if (r == 0 && !busy) emit(OP_SYNCALL, NULL, NULL, 0, 0, NULL, 0, 0);
  return r;
}

int fchmod(int fd, mode_t m) {
  REAL(fchmod, int, int, mode_t);
  int r = real_fchmod(fd, m);
  if (r == 0) on_fd(OP_CHMOD, fd, m);
  return r;
}

/** Records a call on one path (`dirfd`-relative) that succeeded. */
static void on_path(char op, int dirfd, const char *p, int64_t x) {
  if (busy) return;
  char a[4096];
  abs_path(dirfd, p, a, sizeof a);
  if (inside(a)) emit(op, a, NULL, x, 0, NULL, 0, 0);
}

/** Records a call on two paths that succeeded (both recorded when either is inside). */
static void on_paths(char op, int d1, const char *p1, int d2, const char *p2) {
  if (busy) return;
  char a[4096], b[4096];
  abs_path(d1, p1, a, sizeof a);
  abs_path(d2, p2, b, sizeof b);
  if (inside(a) || inside(b)) emit(op, a, b, 0, 0, NULL, 0, 0);
}

/*
 * A path call resolves its folder before the call: a rename's old name and an unlink's name are
 * gone afterwards, and /proc/self/fd/N still names the same folder then.
 */
int chmod(const char *p, mode_t m) {
  REAL(chmod, int, const char *, mode_t);
  int r = real_chmod(p, m);
  if (r == 0) on_path(OP_CHMOD, AT_FDCWD, p, m);
  return r;
}

int fchmodat(int d, const char *p, mode_t m, int fl) {
  REAL(fchmodat, int, int, const char *, mode_t, int);
  int r = real_fchmodat(d, p, m, fl);
  if (r == 0) on_path(OP_CHMOD, d, p, m);
  return r;
}

int rename(const char *a, const char *b) {
  REAL(rename, int, const char *, const char *);
  int r = real_rename(a, b);
  if (r == 0) on_paths(OP_RENAME, AT_FDCWD, a, AT_FDCWD, b);
  return r;
}

int renameat(int d1, const char *a, int d2, const char *b) {
  REAL(renameat, int, int, const char *, int, const char *);
  int r = real_renameat(d1, a, d2, b);
  if (r == 0) on_paths(OP_RENAME, d1, a, d2, b);
  return r;
}

int renameat2(int d1, const char *a, int d2, const char *b, unsigned int fl) {
  REAL(renameat2, int, int, const char *, int, const char *, unsigned int);
  int r = real_renameat2(d1, a, d2, b, fl);
  if (r == 0) on_paths(OP_RENAME, d1, a, d2, b);
  return r;
}

int unlink(const char *p) {
  REAL(unlink, int, const char *);
  int r = real_unlink(p);
  if (r == 0) on_path(OP_UNLINK, AT_FDCWD, p, 0);
  return r;
}

int unlinkat(int d, const char *p, int fl) {
  REAL(unlinkat, int, int, const char *, int);
  int r = real_unlinkat(d, p, fl);
  if (r == 0) on_path((fl & AT_REMOVEDIR) ? OP_RMDIR : OP_UNLINK, d, p, 0);
  return r;
}

int rmdir(const char *p) {
  REAL(rmdir, int, const char *);
  int r = real_rmdir(p);
  if (r == 0) on_path(OP_RMDIR, AT_FDCWD, p, 0);
  return r;
}

int mkdir(const char *p, mode_t m) {
  REAL(mkdir, int, const char *, mode_t);
  int r = real_mkdir(p, m);
  if (r == 0) on_path(OP_MKDIR, AT_FDCWD, p, m);
  return r;
}

int mkdirat(int d, const char *p, mode_t m) {
  REAL(mkdirat, int, int, const char *, mode_t);
  int r = real_mkdirat(d, p, m);
  if (r == 0) on_path(OP_MKDIR, d, p, m);
  return r;
}

int symlink(const char *t, const char *p) {
  REAL(symlink, int, const char *, const char *);
  int r = real_symlink(t, p);
  if (r == 0 && !busy) {
    char a[4096];
    abs_path(AT_FDCWD, p, a, sizeof a);
    if (inside(a)) emit(OP_SYMLINK, t, a, 0, 0, NULL, 0, 0);
  }
  return r;
}

int symlinkat(const char *t, int d, const char *p) {
  REAL(symlinkat, int, const char *, int, const char *);
  int r = real_symlinkat(t, d, p);
  if (r == 0 && !busy) {
    char a[4096];
    abs_path(d, p, a, sizeof a);
    if (inside(a)) emit(OP_SYMLINK, t, a, 0, 0, NULL, 0, 0);
  }
  return r;
}

int link(const char *a, const char *b) {
  REAL(link, int, const char *, const char *);
  int r = real_link(a, b);
  if (r == 0) on_paths(OP_LINK, AT_FDCWD, a, AT_FDCWD, b);
  return r;
}

int linkat(int d1, const char *a, int d2, const char *b, int fl) {
  REAL(linkat, int, int, const char *, int, const char *, int);
  int r = real_linkat(d1, a, d2, b, fl);
  if (r == 0) on_paths(OP_LINK, d1, a, d2, b);
  return r;
}
