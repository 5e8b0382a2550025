/*
 * takeback's first-scan listing, in C: each folder's own stat, its names and every child's lstat,
 * for many folders at once, shared out between threads. A full walk (the first snapshot, or one
 * after the ignore rules moved) spends most of its time listing folders and stating their
 * children; through Node that is a Dirent object a child and a path string built and resolved
 * again for every lstat. Here a folder is opened once (O_NOFOLLOW: a folder swapped for a link is
 * not followed) and its children are stated relative to it (fstatat, AT_SYMLINK_NOFOLLOW).
 * server/core/scan/listing.ts reads the result; without this module the walk lists in JavaScript,
 * with the same outcome (test/native-list.test.ts compares the two).
 *
 * listDirs(root, dirs, threads) -> Buffer
 *   root     the workspace's absolute path (string)
 *   dirs     folders, workspace-relative ('' for the root) (string[])
 *   threads  how many threads list (this one included), 1 to 16
 * The buffer holds one record a folder, in the order of `dirs` (little-endian):
 *   u32 record bytes (this field included) | u8 status (0: gone or not a folder, 1: a folder that
 *   cannot be listed, 2: listed, 3: not looked at, its path too long: the caller lists it itself)
 *   | 3 bytes 0 | the folder's stat (below; taken before its listing,
 *   so a child added meanwhile moves it again) | u32 children, then each child, in byte order of
 *   the names (as Node's readdir gives them):
 *   stat | u16 name length | name (bytes as the file system has them)
 * A stat is five f64: mode, size, ino, mtimeMs, ctimeMs (as Node computes them: sec * 1e3 +
 * nsec / 1e6); mode is -1 when the child could not be stated (gone since the listing).
 * Throws on a bad argument or when memory runs out; the caller then lists in JavaScript.
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "napi-util.h"

#ifdef __APPLE__
#define LMTIM(st) ((st).st_mtimespec)
#define LCTIM(st) ((st).st_ctimespec)
#else
#define LMTIM(st) ((st).st_mtim)
#define LCTIM(st) ((st).st_ctim)
#endif

#define LIST_PATH_MAX 8192
#define STAT_BYTES 40

typedef struct {
  uint8_t *p;
  size_t n, cap;
} bytes_t;

static int reserve(bytes_t *b, size_t more) {
  if (b->n + more <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->n + more) cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_f64(uint8_t *p, double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(u >> (8 * i));
}

/* A child's record in a folder's buffer while it is listed: where it starts, for the sort. */
typedef struct {
  const uint8_t *base;
  size_t at;
} child_t;

/* Children in byte order of their names, as Node's readdir gives them (libuv sorts with strcmp). */
static int by_name(const void *a, const void *b) {
  const child_t *x = a, *y = b;
  const uint8_t *p = x->base + x->at, *q = y->base + y->at;
  size_t nx = (size_t)p[STAT_BYTES] | (size_t)p[STAT_BYTES + 1] << 8, ny = (size_t)q[STAT_BYTES] | (size_t)q[STAT_BYTES + 1] << 8;
  int c = memcmp(p + STAT_BYTES + 2, q + STAT_BYTES + 2, nx < ny ? nx : ny);
  return c ? c : nx < ny ? -1 : nx > ny;
}

static double ms_of(struct timespec t) { return (double)t.tv_sec * 1000 + (double)t.tv_nsec / 1e6; }

static void put_stat(uint8_t *p, const struct stat *st) {
  if (!st) {
    put_f64(p, -1);
    memset(p + 8, 0, STAT_BYTES - 8);
    return;
  }
  put_f64(p, (double)st->st_mode);
  put_f64(p + 8, (double)st->st_size);
  put_f64(p + 16, (double)st->st_ino);
  put_f64(p + 24, ms_of(LMTIM(*st)));
  put_f64(p + 32, ms_of(LCTIM(*st)));
}

typedef struct {
  const char *root;
  size_t root_len;
  char **dirs;
  size_t *dir_lens;
  size_t n;
  bytes_t *out; /* one record a folder */
  atomic_size_t next;
  atomic_int failed;
} list_job_t;

/* Lists folder `i` into its record. Returns -1 when memory runs out. */
static int list_one(list_job_t *job, size_t i, char *path) {
  bytes_t *b = &job->out[i];
  if (reserve(b, 8 + STAT_BYTES + 4)) return -1;
  memset(b->p, 0, 8 + STAT_BYTES + 4);
  b->n = 8 + STAT_BYTES + 4;
  size_t dl = job->dir_lens[i];
  size_t abs_len = job->root_len + (dl ? 1 + dl : 0);
  struct stat st;
  if (abs_len + 1 >= LIST_PATH_MAX) {
    b->p[4] = 3; /* too long to name here: the caller lists it itself */
    put_stat(b->p + 8, NULL);
    put_u32(b->p, (uint32_t)b->n);
    return 0;
  }
  memcpy(path, job->root, job->root_len);
  if (dl) {
    path[job->root_len] = '/';
    memcpy(path + job->root_len + 1, job->dirs[i], dl);
  }
  path[abs_len] = 0;
  if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
    b->p[4] = 0;
    put_stat(b->p + 8, NULL);
    put_u32(b->p, (uint32_t)b->n);
    return 0;
  }
  put_stat(b->p + 8, &st);
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    b->p[4] = 1;
    put_u32(b->p, (uint32_t)b->n);
    return 0;
  }
  uint32_t count = 0;
  size_t *starts = NULL, starts_cap = 0;
  struct dirent *de;
  errno = 0;
  while ((de = readdir(d)) != NULL) {
    const char *name = de->d_name;
    if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
    size_t nl = strlen(name);
    if (nl > 0xffff) continue;
    if (reserve(b, STAT_BYTES + 2 + nl)) {
      closedir(d);
      free(starts);
      return -1;
    }
    if (count == starts_cap) {
      size_t cap = starts_cap ? starts_cap * 2 : 64;
      size_t *p = realloc(starts, cap * sizeof *p);
      if (!p) {
        closedir(d);
        free(starts);
        return -1;
      }
      starts = p;
      starts_cap = cap;
    }
    starts[count] = b->n;
    struct stat cst;
    int ok = fstatat(fd, name, &cst, AT_SYMLINK_NOFOLLOW) == 0;
    put_stat(b->p + b->n, ok ? &cst : NULL);
    b->p[b->n + STAT_BYTES] = (uint8_t)(nl & 0xff);
    b->p[b->n + STAT_BYTES + 1] = (uint8_t)(nl >> 8);
    memcpy(b->p + b->n + STAT_BYTES + 2, name, nl);
    b->n += STAT_BYTES + 2 + nl;
    count++;
  }
  int read_failed = errno != 0;
  closedir(d);
  if (!read_failed && count > 1) {
    /* Sorted into a second buffer, then copied back over the children. */
    size_t head = 8 + STAT_BYTES + 4, body = b->n - head;
    child_t *kids = malloc(count * sizeof *kids);
    uint8_t *sorted = malloc(body);
    if (!kids || !sorted) {
      free(kids);
      free(sorted);
      free(starts);
      return -1;
    }
    for (uint32_t k = 0; k < count; k++) kids[k] = (child_t){b->p, starts[k]};
    qsort(kids, count, sizeof *kids, by_name);
    size_t at = 0;
    for (uint32_t k = 0; k < count; k++) {
      const uint8_t *c = b->p + kids[k].at;
      size_t len = STAT_BYTES + 2 + ((size_t)c[STAT_BYTES] | (size_t)c[STAT_BYTES + 1] << 8);
      memcpy(sorted + at, c, len);
      at += len;
    }
    memcpy(b->p + head, sorted, body);
    free(kids);
    free(sorted);
  }
  free(starts);
  if (read_failed) {
    /* A listing cut short is no listing: the folder is one that cannot be listed. */
    b->n = 8 + STAT_BYTES + 4;
    b->p[4] = 1;
    put_u32(b->p + 8 + STAT_BYTES, 0);
    put_u32(b->p, (uint32_t)b->n);
    return 0;
  }
  b->p[4] = 2;
  put_u32(b->p + 8 + STAT_BYTES, count);
  put_u32(b->p, (uint32_t)b->n);
  return 0;
}

static void *list_lane(void *arg) {
  list_job_t *job = arg;
  char *path = malloc(LIST_PATH_MAX);
  if (!path) {
    atomic_store(&job->failed, 1);
    return NULL;
  }
  for (;;) {
    if (atomic_load(&job->failed)) break;
    size_t i = atomic_fetch_add(&job->next, 1);
    if (i >= job->n) break;
    if (list_one(job, i, path) != 0) {
      atomic_store(&job->failed, 1);
      break;
    }
  }
  free(path);
  return NULL;
}

napi_value list_dirs(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3) return tb_fail(env, "listDirs: three arguments");
  list_job_t job;
  memset(&job, 0, sizeof job);
  char *root = tb_utf8(env, argv[0], &job.root_len);
  if (!root) return tb_fail(env, "listDirs: root must be a string");
  job.root = root;
  uint32_t n_dirs = 0;
  bool is_array = false;
  napi_is_array(env, argv[1], &is_array);
  if (!is_array || napi_get_array_length(env, argv[1], &n_dirs) != napi_ok) {
    free(root);
    return tb_fail(env, "listDirs: dirs must be an array");
  }
  job.n = n_dirs;
  job.dirs = calloc(n_dirs ? n_dirs : 1, sizeof(char *));
  job.dir_lens = calloc(n_dirs ? n_dirs : 1, sizeof(size_t));
  job.out = calloc(n_dirs ? n_dirs : 1, sizeof(bytes_t));
  const char *error = NULL;
  if (!job.dirs || !job.dir_lens || !job.out) error = "listDirs: out of memory";
  for (uint32_t i = 0; !error && i < n_dirs; i++) {
    napi_value d;
    if (napi_get_element(env, argv[1], i, &d) != napi_ok || !(job.dirs[i] = tb_utf8(env, d, &job.dir_lens[i]))) error = "listDirs: dirs must hold strings";
  }
  double threads = 1;
  if (!error && napi_get_value_double(env, argv[2], &threads) != napi_ok) error = "listDirs: threads must be a number";
  napi_value result = NULL;
  if (!error) {
    int n_lanes = threads >= 16 ? 16 : threads < 1 || threads != threads ? 1 : (int)threads;
    atomic_init(&job.next, 0);
    atomic_init(&job.failed, 0);
    pthread_t tids[16];
    int started[16] = {0};
    for (int k = 1; k < n_lanes; k++) started[k] = pthread_create(&tids[k], NULL, list_lane, &job) == 0;
    list_lane(&job);
    for (int k = 1; k < n_lanes; k++) {
      if (started[k]) pthread_join(tids[k], NULL);
    }
    if (atomic_load(&job.failed)) error = "listDirs: out of memory";
  }
  if (!error) {
    size_t total = 0;
    for (uint32_t i = 0; i < n_dirs; i++) total += job.out[i].n;
    void *data = NULL;
    if (napi_create_buffer(env, total, &data, &result) != napi_ok) {
      error = "listDirs: could not make the result";
    } else {
      size_t at = 0;
      for (uint32_t i = 0; i < n_dirs; i++) {
        memcpy((uint8_t *)data + at, job.out[i].p, job.out[i].n);
        at += job.out[i].n;
      }
    }
  }
  for (uint32_t i = 0; i < n_dirs; i++) {
    if (job.dirs) free(job.dirs[i]);
    if (job.out) free(job.out[i].p);
  }
  free(job.dirs);
  free(job.dir_lens);
  free(job.out);
  free(root);
  if (error) return tb_fail(env, error);
  return result;
}
