/*
 * takeback's durability syncs, in C: many files' fdatasync and folders' fsync issued at once from
 * threads, and a filesystem's syncfs without a `sync -f` process. A change set's blobs and their
 * folders are each synced before the commit that names them (server/core/durable.ts); one by one,
 * each sync waits for its own journal commit of the filesystem, where syncs in flight together
 * are committed together (ext4's jbd2 joins the waiting syncs to one commit), so the batch costs
 * about one sync. The rules are durable.ts's: a file is opened O_RDONLY | O_NOFOLLOW | O_NONBLOCK
 * (a link is not synced through, a FIFO never blocks), a folder O_RDONLY | O_DIRECTORY |
 * O_NOFOLLOW; a path that cannot be opened or synced is reported, not retried.
 *
 * syncPaths(files, folders, threads) -> Uint8Array
 *   files    absolute paths whose bytes are made durable (fdatasync) (string[])
 *   folders  absolute paths of folders whose entries are made durable (fsync) (string[])
 *   threads  how many threads sync at once (this one included), 1 to 32
 *   Returns one byte per path, files then folders: 1 synced, 0 not (gone, not openable, failed).
 * syncFs(path) -> boolean
 *   syncfs(2) of the filesystem holding `path` (opened O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
 *   false when it cannot be opened or synced (the caller syncs one by one).
 * Both throw on a bad argument or when memory runs out; the caller then syncs in JavaScript.
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "napi-util.h"

typedef struct {
  char **paths;
  size_t n_files, n;
  uint8_t *ok;
  atomic_size_t next;
} job_t;

/** Syncs one path of the job: a file's bytes for i < n_files, else a folder's entries. */
static void sync_one(job_t *job, size_t i) {
  int folder = i >= job->n_files;
  int flags = folder ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC : O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = open(job->paths[i], flags);
  if (fd < 0) return;
#ifdef __linux__
  int r = folder ? fsync(fd) : fdatasync(fd);
#else
  int r = fsync(fd);
#endif
  job->ok[i] = r == 0;
  close(fd);
}

static void *lane(void *arg) {
  job_t *job = arg;
  for (;;) {
    size_t i = atomic_fetch_add(&job->next, 1);
    if (i >= job->n) break;
    sync_one(job, i);
  }
  return NULL;
}

/** Appends the strings of array `arr` to `out` from index `at`; the number taken, or -1 on a bad argument. */
static long take_strings(napi_env env, napi_value arr, char **out, size_t at, size_t n) {
  for (size_t k = 0; k < n; k++) {
    napi_value v;
    if (napi_get_element(env, arr, (uint32_t)k, &v) != napi_ok || !(out[at + k] = tb_utf8(env, v, NULL))) return -1;
  }
  return (long)n;
}

static napi_value sync_paths(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3) return tb_fail(env, "syncPaths: three arguments");
  bool fa = false, da = false;
  uint32_t nf = 0, nd = 0;
  napi_is_array(env, argv[0], &fa);
  napi_is_array(env, argv[1], &da);
  if (!fa || !da || napi_get_array_length(env, argv[0], &nf) != napi_ok || napi_get_array_length(env, argv[1], &nd) != napi_ok) return tb_fail(env, "syncPaths: files and folders must be arrays");
  double threads = 1;
  if (napi_get_value_double(env, argv[2], &threads) != napi_ok) return tb_fail(env, "syncPaths: threads must be a number");
  job_t job = { .n_files = nf, .n = (size_t)nf + nd };
  job.paths = calloc(job.n ? job.n : 1, sizeof(char *));
  napi_value result = NULL;
  void *data = NULL;
  const char *error = NULL;
  if (!job.paths) error = "syncPaths: out of memory";
  else if (napi_create_arraybuffer(env, job.n, &data, &result) != napi_ok) error = "syncPaths: out of memory";
  if (!error) {
    job.ok = data;
    memset(job.ok, 0, job.n);
    if (take_strings(env, argv[0], job.paths, 0, nf) < 0 || take_strings(env, argv[1], job.paths, nf, nd) < 0) error = "syncPaths: paths must be strings";
  }
  if (!error) {
    int n_lanes = threads >= 32 ? 32 : threads < 1 || threads != threads ? 1 : (int)threads;
    if ((size_t)n_lanes > job.n) n_lanes = job.n ? (int)job.n : 1;
    pthread_t tids[32];
    int started[32] = { 0 };
    atomic_init(&job.next, 0);
    for (int k = 1; k < n_lanes; k++) started[k] = pthread_create(&tids[k], NULL, lane, &job) == 0;
    lane(&job);
    for (int k = 1; k < n_lanes; k++)
      if (started[k]) pthread_join(tids[k], NULL);
  }
  if (job.paths)
    for (size_t i = 0; i < job.n; i++) free(job.paths[i]);
  free(job.paths);
  if (error) return tb_fail(env, error);
  napi_value view;
  if (napi_create_typedarray(env, napi_uint8_array, job.n, result, 0, &view) != napi_ok) return tb_fail(env, "syncPaths: out of memory");
  return view;
}

static napi_value sync_fs(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return tb_fail(env, "syncFs: one argument");
  char *path = tb_utf8(env, argv[0], NULL);
  if (!path) return tb_fail(env, "syncFs: path must be a string");
  bool ok = false;
#ifdef __linux__
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    ok = syncfs(fd) == 0;
    close(fd);
  }
#endif
  free(path);
  napi_value r;
  if (napi_get_boolean(env, ok, &r) != napi_ok) return NULL;
  return r;
}

/** Adds syncPaths and syncFs to `exports` (called by the module's init in scan-check.c); 0 on success. */
int sync_paths_init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "syncPaths", NAPI_AUTO_LENGTH, sync_paths, NULL, &fn) != napi_ok || napi_set_named_property(env, exports, "syncPaths", fn) != napi_ok) return -1;
  if (napi_create_function(env, "syncFs", NAPI_AUTO_LENGTH, sync_fs, NULL, &fn) != napi_ok || napi_set_named_property(env, exports, "syncFs", fn) != napi_ok) return -1;
  return 0;
}
