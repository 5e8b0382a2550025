/*
 * takeback's warm-scan check, in C: for every row of the packed snapshot index, is the folder's
 * listing still what it was, and does each child still have its stat? The same rules as
 * `checkRows` in server/core/scan/stat-check.ts, which stays the reference (and runs wherever
 * this module is not built): test/native-check.test.ts runs both on the same trees and compares.
 *
 * Why: a warm scan of 100,000 files is 100,000 lstat calls. From C one costs about 1.8 µs here;
 * through Node's fs binding about 4.5 µs (a JavaScript string made and encoded per path, the
 * binding's request, the stat array filled), which made a new process's scan slower than
 * `git status` (bench/RESULTS.md, fourth round). Here each folder is opened once and its
 * children stated by the name bytes of its row (fstatat: one name resolved a child, not the whole
 * path), and the rows are shared out between threads, as git's preload-index does.
 *
 * checkRows(root, dirs, data, offsets, racyMs, threads) -> { dirty: number[], suspects: number[] }
 *   root     the workspace's absolute path (string)
 *   dirs     each row's folder, workspace-relative ('' for the root) (string[])
 *   data     every row, one after another (Uint8Array; row i is data[offsets[i] .. offsets[i+1]])
 *   offsets  Int32Array of dirs.length + 1
 *   racyMs   entries modified at or after this time (ms since the epoch) are looked at again
 *   threads  how many threads check rows (this one included), 1 to 16
 * `dirty` holds the rows whose folder must be listed again; `suspects` [row, entry] pairs,
 * flattened, to look at again. A row that cannot be parsed is dirty (listed again). Throws on a
 * bad argument or when memory runs out; the caller then checks in JavaScript.
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "napi-util.h"

#ifdef __APPLE__
#define MTIM(st) ((st).st_mtimespec)
#define CTIM(st) ((st).st_ctimespec)
#else
#define MTIM(st) ((st).st_mtim)
#define CTIM(st) ((st).st_ctim)
#endif

#define HEADER_BYTES 56
#define ENTRY_FIXED 42
#define PATH_MAX_BYTES 8192

typedef struct {
  int32_t *v;
  size_t n, cap;
} vec;

static int push(vec *a, int32_t x) {
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 64;
    int32_t *p = realloc(a->v, cap * sizeof *p);
    if (!p) return -1;
    a->v = p;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return 0;
}

typedef struct {
  const char *root;
  size_t root_len;
  char **dirs;
  size_t *dir_lens;
  const uint8_t *data;
  size_t data_len;
  const int32_t *offsets;
  size_t n;
  double racy_ms;
  atomic_size_t next;
} job_t;

typedef struct {
  job_t *job;
  vec dirty, suspects;
  int failed;
} lane_t;

/* Little-endian reads at any alignment (the row format is little-endian). */
static double f64(const uint8_t *p) {
  uint64_t u = 0;
  for (int i = 7; i >= 0; i--) u = (u << 8) | p[i];
  double d;
  memcpy(&d, &u, 8);
  return d;
}
static uint32_t u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Node's `*Ms` value of a time: sec * 1e3 + nsec / 1e6, in the same double arithmetic. */
static double ms(struct timespec t) { return (double)t.tv_sec * 1000 + (double)t.tv_nsec / 1e6; }
static int near(double a, double b) { return a == b || fabs(a - b) < 0.001; }

/*
 * The folder at `path`, opened to stat its children by name (fstatat): the kernel then resolves
 * one name a child instead of every component of its absolute path again, as git's fscache does
 * on Windows. O_PATH needs no read permission on the folder (a folder one may search but not list
 * is checked as lstat would check it); without O_PATH (macOS), a folder that cannot be opened is
 * checked by full paths. Never follows a link: a link where the folder was fails here, and its
 * lstat (the caller's fallback) says it is no folder. -1 when it cannot be opened.
 */
static int open_folder(const char *path) {
#ifdef O_PATH
  return open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
#else
  return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
#endif
}

static int check_entries(lane_t *lane, size_t i, char *path, const uint8_t *row, size_t len, size_t abs_len, int dfd);

/* Checks row `i` into `lane`. Returns -1 when memory runs out. */
static int check_row(lane_t *lane, size_t i, char *path) {
  job_t *job = lane->job;
  size_t base = (size_t)job->offsets[i], end = (size_t)job->offsets[i + 1];
  if (job->offsets[i] < 0 || end > job->data_len || base > end || end - base < HEADER_BYTES) return push(&lane->dirty, (int32_t)i);
  const uint8_t *row = job->data + base;
  size_t len = end - base;
  /* The folder's absolute path: root, or root/dir. */
  size_t dl = job->dir_lens[i];
  size_t abs_len = job->root_len + (dl ? 1 + dl : 0);
  if (abs_len + 2 >= PATH_MAX_BYTES) return push(&lane->dirty, (int32_t)i);
  memcpy(path, job->root, job->root_len);
  if (dl) {
    path[job->root_len] = '/';
    memcpy(path + job->root_len + 1, job->dirs[i], dl);
  }
  path[abs_len] = 0;
  double smt = f64(row + 8), sct = f64(row + 16), sino = f64(row + 24);
  struct stat st;
  /* The folder's own stat from the descriptor its children are stated through: the same folder. */
  int dfd = open_folder(path);
  int got = dfd >= 0 ? fstat(dfd, &st) : lstat(path, &st);
  if (got != 0 || (st.st_mode & S_IFMT) != S_IFDIR || !(smt < job->racy_ms) || !near(ms(MTIM(st)), smt) || !near(ms(CTIM(st)), sct) || (double)st.st_ino != sino) {
    if (dfd >= 0) close(dfd);
    return push(&lane->dirty, (int32_t)i);
  }
  int r = check_entries(lane, i, path, row, len, abs_len, dfd);
  if (dfd >= 0) close(dfd);
  return r;
}

/*
 * Checks the entries of row `i` (`row`, `len` bytes; its folder's absolute path in `path`, of
 * `abs_len` bytes), each stated by name through `dfd`, or by full path when it is -1.
 */
static int check_entries(lane_t *lane, size_t i, char *path, const uint8_t *row, size_t len, size_t abs_len, int dfd) {
  job_t *job = lane->job;
  struct stat st;
  uint32_t count = u32(row + 32);
  size_t o = HEADER_BYTES;
  path[abs_len] = '/';
  for (uint32_t j = 0; j < count; j++) {
    if (o + ENTRY_FIXED > len) return push(&lane->dirty, (int32_t)i);
    const uint8_t *e = row + o;
    int type = e[0], flags = e[1];
    uint32_t mode = u32(e + 4);
    double size = f64(e + 8), mt = f64(e + 16), ct = f64(e + 24), ino = f64(e + 32);
    uint16_t name_len = u16(e + 40);
    const uint8_t *name = e + ENTRY_FIXED;
    o += ENTRY_FIXED + (size_t)name_len;
    if (flags & 1) o += 32;
    if (flags & 2) o += 20;
    if (flags & 4) o += 32;
    if (flags & 8) {
      if (o + 4 > len) return push(&lane->dirty, (int32_t)i);
      size_t target_len = u32(row + o);
      if (target_len > len - o - 4) return push(&lane->dirty, (int32_t)i);
      o += 4 + target_len;
    }
    if (o > len) return push(&lane->dirty, (int32_t)i);
    if (abs_len + 1 + name_len + 1 >= PATH_MAX_BYTES || memchr(name, 0, name_len)) {
      if (push(&lane->suspects, (int32_t)i) || push(&lane->suspects, (int32_t)j)) return -1;
      continue;
    }
    memcpy(path + abs_len + 1, name, name_len);
    path[abs_len + 1 + name_len] = 0;
    int suspect;
    if ((dfd >= 0 ? fstatat(dfd, path + abs_len + 1, &st, AT_SYMLINK_NOFOLLOW) : lstat(path, &st)) != 0) {
      suspect = 1;
    } else {
      unsigned fmt = st.st_mode & S_IFMT;
      int t = fmt == S_IFDIR ? 2 : fmt == S_IFLNK ? 1 : 0;
      if (t != type || (uint32_t)(st.st_mode & 07777) != mode) suspect = 1;
      else if (t == 2) suspect = 0; /* a folder: its own row says whether its listing moved */
      else suspect = (double)st.st_size != size || !near(ms(MTIM(st)), mt) || !near(ms(CTIM(st)), ct) || (double)st.st_ino != ino || !(mt < job->racy_ms);
    }
    if (suspect && (push(&lane->suspects, (int32_t)i) || push(&lane->suspects, (int32_t)j))) return -1;
  }
  return 0;
}

static void *run_lane(void *arg) {
  lane_t *lane = arg;
  char *path = malloc(PATH_MAX_BYTES);
  if (!path) {
    lane->failed = 1;
    return NULL;
  }
  for (;;) {
    size_t i = atomic_fetch_add(&lane->job->next, 1);
    if (i >= lane->job->n) break;
    if (check_row(lane, i, path) != 0) {
      lane->failed = 1;
      break;
    }
  }
  free(path);
  return NULL;
}

static napi_value to_array(napi_env env, lane_t *lanes, int n_lanes, int which) {
  size_t total = 0;
  for (int k = 0; k < n_lanes; k++) total += which ? lanes[k].suspects.n : lanes[k].dirty.n;
  napi_value arr;
  if (napi_create_array_with_length(env, total, &arr) != napi_ok) return NULL;
  uint32_t at = 0;
  for (int k = 0; k < n_lanes; k++) {
    vec *v = which ? &lanes[k].suspects : &lanes[k].dirty;
    for (size_t x = 0; x < v->n; x++) {
      napi_value num;
      if (napi_create_int32(env, v->v[x], &num) != napi_ok || napi_set_element(env, arr, at++, num) != napi_ok) return NULL;
    }
  }
  return arr;
}

static napi_value check_rows(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 6) return tb_fail(env, "checkRows: six arguments");
  job_t job;
  memset(&job, 0, sizeof job);
  napi_value result = NULL;
  lane_t lanes[16];
  memset(lanes, 0, sizeof lanes);
  int n_lanes = 0;
  uint32_t n_dirs = 0;
  char *root = tb_utf8(env, argv[0], &job.root_len);
  if (!root) return tb_fail(env, "checkRows: root must be a string");
  job.root = root;
  bool is_array = false;
  napi_is_array(env, argv[1], &is_array);
  if (!is_array || napi_get_array_length(env, argv[1], &n_dirs) != napi_ok) {
    free(root);
    return tb_fail(env, "checkRows: dirs must be an array");
  }
  job.n = n_dirs;
  job.dirs = calloc(n_dirs ? n_dirs : 1, sizeof(char *));
  job.dir_lens = calloc(n_dirs ? n_dirs : 1, sizeof(size_t));
  const char *error = NULL;
  if (!job.dirs || !job.dir_lens) error = "checkRows: out of memory";
  for (uint32_t i = 0; !error && i < n_dirs; i++) {
    napi_value d;
    if (napi_get_element(env, argv[1], i, &d) != napi_ok || !(job.dirs[i] = tb_utf8(env, d, &job.dir_lens[i]))) error = "checkRows: dirs must hold strings";
  }
  napi_typedarray_type ta;
  size_t ta_len;
  void *ta_data;
  if (!error) {
    if (napi_get_typedarray_info(env, argv[2], &ta, &ta_len, &ta_data, NULL, NULL) != napi_ok || ta != napi_uint8_array) error = "checkRows: data must be a Uint8Array";
    job.data = ta_data;
    job.data_len = ta_len;
  }
  if (!error) {
    if (napi_get_typedarray_info(env, argv[3], &ta, &ta_len, &ta_data, NULL, NULL) != napi_ok || ta != napi_int32_array || ta_len != (size_t)n_dirs + 1) error = "checkRows: offsets must be an Int32Array of dirs.length + 1";
    job.offsets = ta_data;
  }
  double threads = 1;
  if (!error && (napi_get_value_double(env, argv[4], &job.racy_ms) != napi_ok || napi_get_value_double(env, argv[5], &threads) != napi_ok)) error = "checkRows: racyMs and threads must be numbers";
  if (!error) {
    n_lanes = threads >= 16 ? 16 : threads < 1 || threads != threads ? 1 : (int)threads;
    atomic_init(&job.next, 0);
    pthread_t tids[16];
    int started[16] = {0};
    for (int k = 0; k < n_lanes; k++) lanes[k].job = &job;
    for (int k = 1; k < n_lanes; k++) started[k] = pthread_create(&tids[k], NULL, run_lane, &lanes[k]) == 0;
    run_lane(&lanes[0]); /* this thread takes rows too, and any a thread that did not start would have */
    for (int k = 1; k < n_lanes; k++) {
      if (started[k]) pthread_join(tids[k], NULL);
    }
    for (int k = 0; k < n_lanes; k++) {
      if (lanes[k].failed) error = "checkRows: out of memory";
    }
  }
  if (!error) {
    napi_value dirty = to_array(env, lanes, n_lanes, 0), suspects = to_array(env, lanes, n_lanes, 1);
    if (!dirty || !suspects || napi_create_object(env, &result) != napi_ok || napi_set_named_property(env, result, "dirty", dirty) != napi_ok ||
        napi_set_named_property(env, result, "suspects", suspects) != napi_ok) {
      error = "checkRows: could not make the result";
    }
  }
  for (int k = 0; k < n_lanes; k++) {
    free(lanes[k].dirty.v);
    free(lanes[k].suspects.v);
  }
  if (job.dirs) {
    for (uint32_t i = 0; i < n_dirs; i++) free(job.dirs[i]);
  }
  free(job.dirs);
  free(job.dir_lens);
  free(root);
  if (error) return tb_fail(env, error);
  return result;
}

/* In scan-list.c: the first scan's listing of many folders at once, as rows, and the names it met. */
napi_value list_rows(napi_env env, napi_callback_info info);
napi_value name_table(napi_env env, napi_callback_info info);
/* In git-index.c: git's index as that listing asks it. */
int git_index_init(napi_env env, napi_value exports);
/* In sync-paths.c: the durability syncs of many paths at once, and syncfs. */
int sync_paths_init(napi_env env, napi_value exports);

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "listRows", NAPI_AUTO_LENGTH, list_rows, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "listRows", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "nameTable", NAPI_AUTO_LENGTH, name_table, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "nameTable", fn) != napi_ok) return NULL;
  if (git_index_init(env, exports) != 0) return NULL;
  if (napi_create_function(env, "checkRows", NAPI_AUTO_LENGTH, check_rows, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "checkRows", fn) != napi_ok) return NULL;
  if (sync_paths_init(env, exports) != 0) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
