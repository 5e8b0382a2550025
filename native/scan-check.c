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
 * checkRows(root, dirs, data, offsets, racyMs, threads, ring) -> { dirty: number[], suspects: number[], ring: boolean }
 *   root     the workspace's absolute path (string)
 *   dirs     each row's folder, workspace-relative ('' for the root) (string[])
 *   data     the rows: either every row one after another (Uint8Array; row i is
 *            data[offsets[i] .. offsets[i+1]]), or one Uint8Array a row (Uint8Array[], as the
 *            snapshot index holds them: nothing is copied)
 *   offsets  Int32Array of dirs.length + 1 with one buffer; ignored (null) with one a row
 *   racyMs   entries modified at or after this time (ms since the epoch) are looked at again
 *   threads  how many threads check rows (this one included), 1 to 16
 *   ring     (optional, Linux) from 2 threads, state the entries through io_uring (see below)
 * `dirty` holds the rows whose folder must be listed again; `suspects` [row, entry] pairs,
 * flattened, to look at again (never in a dirty row: its listing says what to look at); `ring`
 * whether io_uring did the stats. A row that cannot be parsed is dirty (listed again). Throws on a
 * bad argument or when memory runs out; the caller then checks in JavaScript.
 *
 * Through io_uring (Linux 5.15 and later, where the kernel allows it): each folder is opened as
 * above and its own stat and its children's are queued as statx requests on one ring, `threads`
 * of the kernel's workers at most, 256 requests in flight; this thread only queues, waits for a
 * batch of answers and compares. A million stats then cost a few thousand system calls instead
 * of a million: where a system call is dear (a virtual machine's page-table isolation, where one
 * costs as much as the stat it asks for) the check takes less CPU, which is what bounds it on a
 * busy machine; on an idle one the threads below finish sooner, every CPU calling fstatat, where
 * this thread and the kernel's workers keep about one and a half CPUs of two busy (the caller
 * chooses: scan/native.ts's ringWhen; bench/RESULTS.md). Where no ring can be had (an older
 * kernel, a seccomp filter, kernel.io_uring_disabled) the threads do it.
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
#include <sys/mman.h>
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

/* One row to check: its bytes (NULL, 0: a row whose bounds were wrong, listed again), its folder, and the ring's state for it. */
typedef struct {
  const uint8_t *data;
  size_t len;
  char *dir;
  size_t dir_len;
  /* The ring's requests for it not answered yet, and its folder's descriptor. */
  int32_t left;
  int fd;
} row_t;

/* Rows are kept in blocks that never move, so that rows may be added while others are checked (see checkBegin). */
#define ROWS_PER_BLOCK 4096
#define ROW_BLOCKS_MAX 16384

typedef struct {
  const char *root;
  size_t root_len;
  /* Row i is blocks[i / ROWS_PER_BLOCK][i % ROWS_PER_BLOCK]; `n` rows are there (it grows while rows are fed). */
  row_t **blocks;
  atomic_size_t n;
  double racy_ms;
  atomic_size_t next;
} job_t;

static row_t *row_at(const job_t *job, size_t i) { return &job->blocks[i / ROWS_PER_BLOCK][i % ROWS_PER_BLOCK]; }

/* Room for row `i` (the next one), its block allocated when it is the first of it; NULL when memory runs out. */
static row_t *row_room(job_t *job, size_t i) {
  size_t b = i / ROWS_PER_BLOCK;
  if (b >= ROW_BLOCKS_MAX) return NULL;
  if (!job->blocks[b] && !(job->blocks[b] = calloc(ROWS_PER_BLOCK, sizeof(row_t)))) return NULL;
  row_t *r = &job->blocks[b][i % ROWS_PER_BLOCK];
  r->fd = -1;
  return r;
}

/* Frees the rows' folders and blocks (not their bytes: the caller's). */
static void free_rows(job_t *job) {
  if (!job->blocks) return;
  for (size_t b = 0; b < ROW_BLOCKS_MAX && job->blocks[b]; b++) {
    for (size_t k = 0; k < ROWS_PER_BLOCK; k++) free(job->blocks[b][k].dir);
    free(job->blocks[b]);
  }
  free(job->blocks);
  job->blocks = NULL;
}

/* Rows fed while others are checked (checkBegin): the threads that check them wait here for more. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t more;
  /* No more rows will come. */
  int closed;
} feed_t;

/*
 * How many rows `job` has now (more than `have` are looked for); with `feed` and `wait`, waits
 * until there are more than `have` or none will come. Without a feed, every row is there.
 */
static size_t rows_now(job_t *job, feed_t *feed, size_t have, int wait) {
  size_t n = atomic_load(&job->n);
  if (!feed || n > have || !wait) return n;
  pthread_mutex_lock(&feed->mu);
  while ((n = atomic_load(&job->n)) <= have && !feed->closed) pthread_cond_wait(&feed->more, &feed->mu);
  pthread_mutex_unlock(&feed->mu);
  return n;
}

typedef struct {
  job_t *job;
  /* With checkBegin, the rows as they are fed (NULL: every row is there). */
  feed_t *feed;
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

/* One entry of a row, as parsed. */
typedef struct {
  int type;
  uint32_t mode;
  double size, mt, ct, ino;
  const uint8_t *name;
  uint16_t name_len;
} entry_t;

/*
 * Parses the entry at offset `*o` of `row` (`len` bytes) into `*e` and moves `*o` past it (its
 * hashes and link text skipped). 0, or -1 when the row ends before the entry does.
 */
static int next_entry(const uint8_t *row, size_t len, size_t *o, entry_t *e) {
  if (*o + ENTRY_FIXED > len) return -1;
  const uint8_t *p = row + *o;
  e->type = p[0];
  int flags = p[1];
  e->mode = u32(p + 4);
  e->size = f64(p + 8);
  e->mt = f64(p + 16);
  e->ct = f64(p + 24);
  e->ino = f64(p + 32);
  e->name_len = u16(p + 40);
  e->name = p + ENTRY_FIXED;
  size_t at = *o + ENTRY_FIXED + (size_t)e->name_len;
  if (flags & 1) at += 32;
  if (flags & 2) at += 20;
  if (flags & 4) at += 32;
  if (flags & 8) {
    if (at + 4 > len) return -1;
    size_t target_len = u32(row + at);
    if (target_len > len - at - 4) return -1;
    at += 4 + target_len;
  }
  if (at > len) return -1;
  *o = at;
  return 0;
}

/*
 * Whether entry `e` moved, given its stat now (`fmt_mode`: st_mode; times in ms): its type or
 * mode; for a file or link, its size, times or inode, or it is racy (modified at or after
 * `racy_ms`). A folder's own row says whether its listing moved.
 */
static int entry_moved(const entry_t *e, unsigned fmt_mode, double size, double mt, double ct, double ino, double racy_ms) {
  unsigned fmt = fmt_mode & S_IFMT;
  int t = fmt == S_IFDIR ? 2 : fmt == S_IFLNK ? 1 : 0;
  if (t != e->type || (uint32_t)(fmt_mode & 07777) != e->mode) return 1;
  if (t == 2) return 0;
  return size != e->size || !near(mt, e->mt) || !near(ct, e->ct) || ino != e->ino || !(e->mt < racy_ms);
}

/* Whether a folder whose stat is this (times in ms) still has the listing of a row of stamp `row`. */
static int folder_holds(const uint8_t *row, unsigned fmt_mode, double mt, double ct, double ino) {
  return (fmt_mode & S_IFMT) == S_IFDIR && near(mt, f64(row + 8)) && near(ct, f64(row + 16)) && ino == f64(row + 24);
}

/* A name no file can have (a NUL in it), or one too long to state: looked at again, never stated. */
static int unstatable(const entry_t *e, size_t abs_len) {
  return abs_len + 1 + e->name_len + 1 >= PATH_MAX_BYTES || memchr(e->name, 0, e->name_len) != NULL;
}

static int check_entries(lane_t *lane, size_t i, char *path, const uint8_t *row, size_t len, size_t abs_len, int dfd);

/* Writes row `i`'s folder's absolute path (root, or root/dir) into `path`; its length, or 0 when it is too long. */
static size_t folder_path(const job_t *job, size_t i, char *path) {
  const row_t *r = row_at(job, i);
  size_t dl = r->dir_len;
  size_t abs_len = job->root_len + (dl ? 1 + dl : 0);
  if (abs_len + 2 >= PATH_MAX_BYTES) return 0;
  memcpy(path, job->root, job->root_len);
  if (dl) {
    path[job->root_len] = '/';
    memcpy(path + job->root_len + 1, r->dir, dl);
  }
  path[abs_len] = 0;
  return abs_len;
}

/* Checks row `i` into `lane`. Returns -1 when memory runs out. */
static int check_row(lane_t *lane, size_t i, char *path) {
  job_t *job = lane->job;
  const uint8_t *row = row_at(job, i)->data;
  size_t len = row_at(job, i)->len;
  if (!row || len < HEADER_BYTES) return push(&lane->dirty, (int32_t)i);
  size_t abs_len = folder_path(job, i, path);
  if (!abs_len) return push(&lane->dirty, (int32_t)i);
  struct stat st;
  /* The folder's own stat from the descriptor its children are stated through: the same folder. */
  int dfd = open_folder(path);
  int got = dfd >= 0 ? fstat(dfd, &st) : lstat(path, &st);
  if (got != 0 || !(f64(row + 8) < job->racy_ms) || !folder_holds(row, st.st_mode, ms(MTIM(st)), ms(CTIM(st)), (double)st.st_ino)) {
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
    entry_t e;
    if (next_entry(row, len, &o, &e) != 0) return push(&lane->dirty, (int32_t)i);
    if (unstatable(&e, abs_len)) {
      if (push(&lane->suspects, (int32_t)i) || push(&lane->suspects, (int32_t)j)) return -1;
      continue;
    }
    memcpy(path + abs_len + 1, e.name, e.name_len);
    path[abs_len + 1 + e.name_len] = 0;
    int suspect;
    if ((dfd >= 0 ? fstatat(dfd, path + abs_len + 1, &st, AT_SYMLINK_NOFOLLOW) : lstat(path, &st)) != 0) suspect = 1;
    else suspect = entry_moved(&e, st.st_mode, (double)st.st_size, ms(MTIM(st)), ms(CTIM(st)), (double)st.st_ino, job->racy_ms);
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
    /* Row i, once it is there: fed rows come in order, so it comes unless the feed closes first. */
    size_t i = atomic_fetch_add(&lane->job->next, 1);
    if (i >= rows_now(lane->job, lane->feed, i, 1)) break;
    if (check_row(lane, i, path) != 0) {
      lane->failed = 1;
      break;
    }
  }
  free(path);
  return NULL;
}

/* Checks every row of `job` on `n_lanes` threads (this one included), each taking the next row. */
static void run_lanes(lane_t *lanes, int n_lanes) {
  pthread_t tids[16];
  int started[16] = {0};
  for (int k = 1; k < n_lanes; k++) started[k] = pthread_create(&tids[k], NULL, run_lane, &lanes[k]) == 0;
  run_lane(&lanes[0]); /* this thread takes rows too, and any a thread that did not start would have */
  for (int k = 1; k < n_lanes; k++) {
    if (started[k]) pthread_join(tids[k], NULL);
  }
}

#if defined(__linux__) && defined(__has_include)
#if __has_include(<linux/io_uring.h>)
#define TB_RING 1
#endif
#endif

#ifdef TB_RING
#include <errno.h>
#include <linux/io_uring.h>
#include <sys/syscall.h>

/* The system calls' numbers, the same on every architecture (the ring came after they were unified). */
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register 427
#endif
/* IORING_REGISTER_IOWQ_MAX_WORKERS (Linux 5.15), an enum member in the header: no #ifdef finds it. */
#define TB_REGISTER_IOWQ_MAX_WORKERS 19
/* Linux 6.1's setup flags, for headers older than them. */
#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)
#endif

/* Requests in flight at most; answers waited for at once (a system call each batch). */
#define RING_SLOTS 256
#define RING_BATCH 64
/* A slot's `entry` for a folder's own stat, and for the closing of its descriptor. */
#define SLOT_FOLDER (-1)
#define SLOT_CLOSE (-2)

/* One request in flight: what it asks about, where the answer goes, and the name it states. */
typedef struct {
  int32_t row, entry;
  entry_t e;
  struct statx stx;
  char name[256];
} slot_t;

/* One ring: its descriptor and the queues the kernel shares with this process. */
typedef struct {
  int fd;
  unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
  struct io_uring_sqe *sqes;
  struct io_uring_cqe *cqes;
  void *sq_map, *cq_map;
  size_t sq_len, cq_len, sqes_len;
} ring_t;

static void ring_close(ring_t *r) {
  if (r->sqes) munmap(r->sqes, r->sqes_len);
  if (r->cq_map && r->cq_map != r->sq_map) munmap(r->cq_map, r->cq_len);
  if (r->sq_map) munmap(r->sq_map, r->sq_len);
  close(r->fd);
}

/*
 * A ring of RING_SLOTS requests whose kernel workers are `workers` at most (without that bound
 * the kernel may start a worker for every request waiting). Its answers are handed over only
 * while this thread waits for them (DEFER_TASKRUN, Linux 6.1; without it, as each comes: this
 * thread is interrupted more often). -1 when there is none to be had: io_uring missing or turned
 * off, or a kernel before 5.15 (no bound on its workers).
 */
static int ring_open(ring_t *r, unsigned workers) {
  memset(r, 0, sizeof *r);
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  r->fd = (int)syscall(__NR_io_uring_setup, RING_SLOTS, &p);
  if (r->fd < 0 && errno == EINVAL) {
    memset(&p, 0, sizeof p);
    r->fd = (int)syscall(__NR_io_uring_setup, RING_SLOTS, &p);
  }
  if (r->fd < 0) return -1;
  unsigned bound[2] = {workers, workers};
  if (syscall(__NR_io_uring_register, r->fd, TB_REGISTER_IOWQ_MAX_WORKERS, bound, 2) < 0) {
    close(r->fd);
    return -1;
  }
  r->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  if (p.features & IORING_FEAT_SINGLE_MMAP) {
    if (r->cq_len > r->sq_len) r->sq_len = r->cq_len;
    r->cq_len = r->sq_len;
  }
  r->sq_map = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
  if (r->sq_map == MAP_FAILED) {
    r->sq_map = NULL;
    ring_close(r);
    return -1;
  }
  if (p.features & IORING_FEAT_SINGLE_MMAP) {
    r->cq_map = r->sq_map;
  } else {
    r->cq_map = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
    if (r->cq_map == MAP_FAILED) {
      r->cq_map = NULL;
      ring_close(r);
      return -1;
    }
  }
  r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
  r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
  if (r->sqes == MAP_FAILED) {
    r->sqes = NULL;
    ring_close(r);
    return -1;
  }
  char *sq = r->sq_map, *cq = r->cq_map;
  r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
  r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
  r->cq_head = (unsigned *)(cq + p.cq_off.head);
  r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
  r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
  r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
  r->sq_array = (unsigned *)(sq + p.sq_off.array);
  return 0;
}

static double stx_ms(struct statx_timestamp t) { return (double)t.tv_sec * 1000 + (double)t.tv_nsec / 1e6; }

/* The ring's check: its state beside the job's. */
typedef struct {
  ring_t ring;
  slot_t *slots;
  int32_t *free_slots;
  int n_free;
  /* Requests written to the queue and not yet handed to the kernel; handed and not yet answered. */
  unsigned queued, inflight;
} ring_check_t;

/* A request for slot `s` (one of the free ones, taken), queued; the caller fills it. */
static struct io_uring_sqe *ring_take(ring_check_t *c, int32_t *s) {
  *s = c->free_slots[--c->n_free];
  /* The queue's next position names request `s`, whose entry is free: its last request was answered. */
  c->ring.sq_array[(*c->ring.sq_tail + c->queued++) & *c->ring.sq_mask] = (unsigned)*s;
  struct io_uring_sqe *q = &c->ring.sqes[*s];
  memset(q, 0, sizeof *q);
  q->user_data = (uint64_t)*s;
  return q;
}

/* Whether every one of row `row`'s entries (`len` bytes) parses: the ring queues none of a row cut short. */
static int row_parses(const uint8_t *row, size_t len) {
  uint32_t count = u32(row + 32);
  size_t o = HEADER_BYTES;
  entry_t e;
  for (uint32_t j = 0; j < count; j++) {
    if (next_entry(row, len, &o, &e) != 0) return 0;
  }
  return 1;
}

/* Closes row `i`'s folder descriptor, all its requests answered: through the ring when a slot is free, else at once. */
static void ring_close_folder(ring_check_t *c, row_t *r, int32_t i) {
  int fd = r->fd;
  r->fd = -1;
  if (fd < 0) return;
  if (c->n_free == 0) {
    close(fd);
    return;
  }
  int32_t s;
  struct io_uring_sqe *q = ring_take(c, &s);
  q->opcode = IORING_OP_CLOSE;
  q->fd = fd;
  c->slots[s].row = i;
  c->slots[s].entry = SLOT_CLOSE;
}

/* Takes every answer there is, each compared with its entry or its folder's stamp (into `lane`). */
static void ring_reap(ring_check_t *c, lane_t *lane) {
  ring_t *r = &c->ring;
  job_t *job = lane->job;
  unsigned head = *r->cq_head;
  unsigned tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
  for (; head != tail; head++) {
    struct io_uring_cqe *cqe = &r->cqes[head & *r->cq_mask];
    int32_t s = (int32_t)cqe->user_data;
    int res = cqe->res;
    slot_t *sl = &c->slots[s];
    c->free_slots[c->n_free++] = s;
    c->inflight--;
    if (sl->entry == SLOT_CLOSE) continue;
    int32_t i = sl->row;
    const struct statx *x = &sl->stx;
    if (sl->entry == SLOT_FOLDER) {
      if (res < 0 || !folder_holds(row_at(job, i)->data, x->stx_mode, stx_ms(x->stx_mtime), stx_ms(x->stx_ctime), (double)x->stx_ino)) {
        if (push(&lane->dirty, i)) lane->failed = 1;
      }
    } else if (res < 0 || entry_moved(&sl->e, x->stx_mode, (double)x->stx_size, stx_ms(x->stx_mtime), stx_ms(x->stx_ctime), (double)x->stx_ino, job->racy_ms)) {
      if (push(&lane->suspects, i) || push(&lane->suspects, sl->entry)) lane->failed = 1;
    }
    row_t *row = row_at(job, i);
    if (--row->left == 0) ring_close_folder(c, row, i);
  }
  __atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
}

/*
 * Hands the queued requests to the kernel and waits until `wait` answers are there (at most as
 * many as are in flight). 0, or -1 when the ring fails (requests may then still be in flight).
 */
static int ring_enter(ring_check_t *c, unsigned wait) {
  ring_t *r = &c->ring;
  __atomic_store_n(r->sq_tail, *r->sq_tail + c->queued, __ATOMIC_RELEASE);
  unsigned handing = c->queued;
  c->queued = 0;
  for (;;) {
    unsigned in_flight = c->inflight + handing;
    unsigned w = wait < in_flight ? wait : in_flight;
    long got = syscall(__NR_io_uring_enter, r->fd, handing, w, w ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    c->inflight += (unsigned)got;
    handing -= (unsigned)got;
    if (handing == 0) return 0;
  }
}

/*
 * Checks every row of `lane`'s job through ring `c` (see the top of this file): each folder
 * opened here, its own stat and its children's queued; a folder that cannot be opened is checked
 * here at once by full paths, as check_row does. With `feed`, rows keep coming until it is closed
 * (checkBegin): this thread checks those there and waits for more. 0, or -1 when the ring failed:
 * its memory must then be left as it is (the kernel may still write answers into it).
 */
static int ring_run(ring_check_t *c, lane_t *lane, char *path, feed_t *feed) {
  static const char empty[] = "";
  job_t *job = lane->job;
  size_t i = 0, o = 0, abs_len = 0, n = rows_now(job, feed, 0, 0);
  uint32_t j = 0, count = 0;
  int in_row = 0;
  for (;;) {
    while (c->n_free > 0 && i < n) {
      row_t *r = row_at(job, i);
      const uint8_t *row = r->data;
      size_t len = r->len;
      if (!in_row) {
        if (!row || len < HEADER_BYTES || !(f64(row + 8) < job->racy_ms) || !(abs_len = folder_path(job, i, path)) || !row_parses(row, len)) {
          if (push(&lane->dirty, (int32_t)i)) lane->failed = 1;
          i++;
          continue;
        }
        int dfd = open_folder(path);
        if (dfd < 0) {
          if (check_row(lane, i, path) != 0) lane->failed = 1;
          i++;
          continue;
        }
        r->fd = dfd;
        r->left = 2; /* its guard while its requests are queued, and its folder's stat */
        in_row = 1;
        j = 0;
        count = u32(row + 32);
        o = HEADER_BYTES;
        int32_t s;
        struct io_uring_sqe *q = ring_take(c, &s);
        c->slots[s].row = (int32_t)i;
        c->slots[s].entry = SLOT_FOLDER;
        q->opcode = IORING_OP_STATX;
        q->fd = dfd;
        q->addr = (uint64_t)(uintptr_t)empty;
        q->len = STATX_BASIC_STATS;
        q->statx_flags = AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW;
        q->off = (uint64_t)(uintptr_t)&c->slots[s].stx;
        continue;
      }
      if (j < count) {
        entry_t e;
        next_entry(row, len, &o, &e); /* it parses: row_parses said so */
        if (e.name_len >= sizeof c->slots[0].name || unstatable(&e, abs_len)) {
          /* A name too long for any file, or one with a NUL: no stat would find it. */
          if (push(&lane->suspects, (int32_t)i) || push(&lane->suspects, (int32_t)j)) lane->failed = 1;
          j++;
          continue;
        }
        int32_t s;
        struct io_uring_sqe *q = ring_take(c, &s);
        slot_t *sl = &c->slots[s];
        sl->row = (int32_t)i;
        sl->entry = (int32_t)j;
        sl->e = e;
        memcpy(sl->name, e.name, e.name_len);
        sl->name[e.name_len] = 0;
        q->opcode = IORING_OP_STATX;
        q->fd = r->fd;
        q->addr = (uint64_t)(uintptr_t)sl->name;
        q->len = STATX_BASIC_STATS;
        q->statx_flags = AT_SYMLINK_NOFOLLOW;
        q->off = (uint64_t)(uintptr_t)&sl->stx;
        r->left++;
        j++;
        continue;
      }
      in_row = 0;
      if (--r->left == 0) ring_close_folder(c, r, (int32_t)i);
      i++;
    }
    if (c->inflight + c->queued > 0) {
      if (ring_enter(c, RING_BATCH) != 0) return -1;
      ring_reap(c, lane);
      n = rows_now(job, feed, i, 0);
      continue;
    }
    if (i < n) continue;
    /* Nothing in flight and every row there checked: wait for more, unless none will come. */
    n = rows_now(job, feed, i, 1);
    if (n == i) return 0;
  }
}

/*
 * Checks every row of `lane`'s job through a ring whose kernel workers are `workers` at most (with
 * `feed`, the rows fed until it is closed). 1 when done; 0 when no ring could be had (nothing
 * done: the caller uses threads); -1 when the ring failed part-way (the caller then fails: the
 * rows' verdicts are not all known).
 */
static int check_by_ring(lane_t *lane, unsigned workers, feed_t *feed) {
  ring_check_t c;
  memset(&c, 0, sizeof c);
  if (ring_open(&c.ring, workers) != 0) return 0;
  c.slots = malloc(RING_SLOTS * sizeof *c.slots);
  c.free_slots = malloc(RING_SLOTS * sizeof *c.free_slots);
  char *path = malloc(PATH_MAX_BYTES);
  int r = 0;
  if (c.slots && c.free_slots && path) {
    for (int k = 0; k < RING_SLOTS; k++) c.free_slots[c.n_free++] = RING_SLOTS - 1 - k;
    r = ring_run(&c, lane, path, feed) == 0 ? 1 : -1;
  }
  if (r == -1) {
    /* Requests may still be in flight: their slots stay allocated, their folders open. */
    close(c.ring.fd);
  } else {
    free(c.slots);
    ring_close(&c.ring);
  }
  free(c.free_slots);
  free(path);
  return r;
}
#endif

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

/* Drops the suspects of dirty rows (their folder is listed again, which looks at every child). -1 when memory runs out. */
static int drop_dirty_suspects(lane_t *lanes, int n_lanes, size_t n) {
  size_t dirty = 0;
  for (int k = 0; k < n_lanes; k++) dirty += lanes[k].dirty.n;
  if (dirty == 0) return 0;
  uint8_t *is_dirty = calloc(n ? n : 1, 1);
  if (!is_dirty) return -1;
  for (int k = 0; k < n_lanes; k++) {
    for (size_t x = 0; x < lanes[k].dirty.n; x++) is_dirty[lanes[k].dirty.v[x]] = 1;
  }
  for (int k = 0; k < n_lanes; k++) {
    vec *v = &lanes[k].suspects;
    size_t kept = 0;
    for (size_t x = 0; x + 1 < v->n; x += 2) {
      if (is_dirty[v->v[x]]) continue;
      v->v[kept++] = v->v[x];
      v->v[kept++] = v->v[x + 1];
    }
    v->n = kept;
  }
  free(is_dirty);
  return 0;
}

/*
 * Adds rows to `job`: folders `dirs` (strings) and their rows `data` — one buffer of every row
 * with `offsets`, or one buffer a row — after the `job->n` rows there (published when all are
 * in). A row whose offsets are out of bounds gets no bytes (listed again). The rows' bytes stay
 * the caller's: they must live until the check is done. NULL, or what was wrong.
 */
static const char *add_rows(napi_env env, napi_value dirs, napi_value data, napi_value offsets, job_t *job) {
  bool is_array = false;
  uint32_t n = 0;
  napi_is_array(env, dirs, &is_array);
  if (!is_array || napi_get_array_length(env, dirs, &n) != napi_ok) return "checkRows: dirs must be an array";
  size_t base = atomic_load(&job->n);
  if (!job->blocks && !(job->blocks = calloc(ROW_BLOCKS_MAX, sizeof(row_t *)))) return "checkRows: out of memory";
  for (uint32_t i = 0; i < n; i++) {
    napi_value d;
    row_t *r = row_room(job, base + i);
    if (!r) return "checkRows: out of memory";
    if (napi_get_element(env, dirs, i, &d) != napi_ok || !(r->dir = tb_utf8(env, d, &r->dir_len))) return "checkRows: dirs must hold strings";
  }
  napi_is_array(env, data, &is_array);
  napi_typedarray_type ta;
  size_t ta_len;
  void *ta_data;
  if (is_array) {
    uint32_t len = 0;
    if (napi_get_array_length(env, data, &len) != napi_ok || len != n) return "checkRows: data must hold a row for each folder";
    for (uint32_t i = 0; i < len; i++) {
      napi_value row;
      if (napi_get_element(env, data, i, &row) != napi_ok || napi_get_typedarray_info(env, row, &ta, &ta_len, &ta_data, NULL, NULL) != napi_ok || ta != napi_uint8_array) return "checkRows: each row must be a Uint8Array";
      row_t *r = row_at(job, base + i);
      r->data = ta_data;
      r->len = ta_len;
    }
  } else {
    if (napi_get_typedarray_info(env, data, &ta, &ta_len, &ta_data, NULL, NULL) != napi_ok || ta != napi_uint8_array) return "checkRows: data must be a Uint8Array or an array of them";
    const uint8_t *bytes = ta_data;
    size_t bytes_len = ta_len;
    if (napi_get_typedarray_info(env, offsets, &ta, &ta_len, &ta_data, NULL, NULL) != napi_ok || ta != napi_int32_array || ta_len != (size_t)n + 1) return "checkRows: offsets must be an Int32Array of dirs.length + 1";
    const int32_t *off = ta_data;
    for (size_t i = 0; i < n; i++) {
      if (off[i] < 0 || off[i + 1] < off[i] || (size_t)off[i + 1] > bytes_len) continue;
      row_t *r = row_at(job, base + i);
      r->data = bytes + off[i];
      r->len = (size_t)(off[i + 1] - off[i]);
    }
  }
  atomic_store(&job->n, base + n);
  return NULL;
}

/* The verdicts of `lanes` as { dirty, suspects, ring }, the suspects of dirty rows dropped; NULL when memory or the runtime failed. */
static napi_value verdicts(napi_env env, lane_t *lanes, int n_lanes, size_t n, bool by_ring) {
  napi_value result, dirty, suspects, ring;
  if (drop_dirty_suspects(lanes, n_lanes, n) != 0) return NULL;
  if (!(dirty = to_array(env, lanes, n_lanes, 0)) || !(suspects = to_array(env, lanes, n_lanes, 1))) return NULL;
  if (napi_create_object(env, &result) != napi_ok || napi_set_named_property(env, result, "dirty", dirty) != napi_ok || napi_set_named_property(env, result, "suspects", suspects) != napi_ok ||
      napi_get_boolean(env, by_ring, &ring) != napi_ok || napi_set_named_property(env, result, "ring", ring) != napi_ok) {
    return NULL;
  }
  return result;
}

static int lanes_of(double threads) { return threads >= 16 ? 16 : threads < 1 || threads != threads ? 1 : (int)threads; }

static napi_value check_rows(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 6) return tb_fail(env, "checkRows: six arguments");
  job_t job;
  memset(&job, 0, sizeof job);
  lane_t lanes[16];
  memset(lanes, 0, sizeof lanes);
  int n_lanes = 0;
  bool by_ring = false, ring_wanted = false;
  napi_value result = NULL;
  char *root = tb_utf8(env, argv[0], &job.root_len);
  if (!root) return tb_fail(env, "checkRows: root must be a string");
  job.root = root;
  const char *error = add_rows(env, argv[1], argv[2], argv[3], &job);
  double threads = 1;
  if (!error && (napi_get_value_double(env, argv[4], &job.racy_ms) != napi_ok || napi_get_value_double(env, argv[5], &threads) != napi_ok)) error = "checkRows: racyMs and threads must be numbers";
  if (!error && argc >= 7) napi_get_value_bool(env, argv[6], &ring_wanted);
  if (!error) {
    n_lanes = lanes_of(threads);
    atomic_init(&job.next, 0);
    for (int k = 0; k < n_lanes; k++) lanes[k].job = &job;
#ifdef TB_RING
    if (ring_wanted && n_lanes > 1) {
      int r = check_by_ring(&lanes[0], (unsigned)n_lanes, NULL);
      if (r < 0) error = "checkRows: the ring failed";
      by_ring = r > 0;
      if (by_ring) n_lanes = 1;
    }
#endif
    if (!error && !by_ring) run_lanes(lanes, n_lanes);
    for (int k = 0; k < n_lanes; k++) {
      if (lanes[k].failed) error = "checkRows: out of memory";
    }
    if (!error && !(result = verdicts(env, lanes, n_lanes, atomic_load(&job.n), by_ring))) error = "checkRows: could not make the result";
  }
  for (int k = 0; k < 16; k++) {
    free(lanes[k].dirty.v);
    free(lanes[k].suspects.v);
  }
  free_rows(&job);
  free(root);
  if (error) return tb_fail(env, error);
  return result;
}

/*
 * checkBegin(root, racyMs, threads, ring) -> handle
 * checkFeed(handle, dirs, rows)              rows: one Uint8Array a folder of `dirs`
 * checkEnd(handle) -> { dirty, suspects, ring }
 * checkRows begun before its rows are all there: a thread of its own checks the rows as they are
 * fed (through the ring, or on threads that each take the next row fed and wait for one that is not
 * there yet), while the caller reads the next ones (the snapshot index loading its rows from
 * SQLite). Row numbers count the rows in the order fed.
 * The handle keeps every array of rows fed alive until checkEnd. checkEnd throws when the ring
 * failed part-way or memory ran out (the caller then checks as usual); a handle never ended is
 * ended when it is collected.
 */
typedef struct {
  job_t job;
  feed_t feed;
  lane_t lanes[16];
  int n_lanes;
  bool want_ring, by_ring;
  /* The ring failed part-way: the verdicts are not all known. */
  int failed;
  pthread_t tid;
  int started, stopped;
  char *root;
  /* The arrays of rows fed, kept alive until the end. */
  napi_ref *refs;
  size_t n_refs, cap_refs;
} early_t;

static void *early_main(void *arg) {
  early_t *e = arg;
#ifdef TB_RING
  if (e->want_ring && e->n_lanes > 1) {
    int r = check_by_ring(&e->lanes[0], (unsigned)e->n_lanes, &e->feed);
    if (r < 0) e->failed = 1;
    if (r > 0) e->by_ring = true;
    if (r != 0) return NULL;
  }
#endif
  /* No ring: the threads take the rows as they are fed, each waiting for the next when it is not there yet. */
  for (int k = 0; k < e->n_lanes; k++) e->lanes[k].feed = &e->feed;
  run_lanes(e->lanes, e->n_lanes);
  return NULL;
}

/* Says no more rows will come and waits for the checking thread (once). */
static void early_stop(early_t *e) {
  if (e->stopped) return;
  e->stopped = 1;
  pthread_mutex_lock(&e->feed.mu);
  e->feed.closed = 1;
  pthread_cond_broadcast(&e->feed.more);
  pthread_mutex_unlock(&e->feed.mu);
  if (e->started) pthread_join(e->tid, NULL);
}

/* Stops the check and lets go of what it holds but the handle itself. */
static void early_release(napi_env env, early_t *e) {
  early_stop(e);
  for (size_t k = 0; k < e->n_refs; k++) napi_delete_reference(env, e->refs[k]);
  free(e->refs);
  e->refs = NULL;
  e->n_refs = e->cap_refs = 0;
  for (int k = 0; k < 16; k++) {
    free(e->lanes[k].dirty.v);
    free(e->lanes[k].suspects.v);
    e->lanes[k].dirty.v = e->lanes[k].suspects.v = NULL;
    e->lanes[k].dirty.n = e->lanes[k].suspects.n = 0;
  }
  free_rows(&e->job);
}

static void early_finalize(napi_env env, void *data, void *hint) {
  early_t *e = data;
  early_release(env, e);
  pthread_mutex_destroy(&e->feed.mu);
  pthread_cond_destroy(&e->feed.more);
  free(e->root);
  free(e);
}

static early_t *early_of(napi_env env, napi_value v) {
  void *p = NULL;
  if (napi_get_value_external(env, v, &p) != napi_ok) return NULL;
  return p;
}

static napi_value check_begin(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  double threads = 1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4) return tb_fail(env, "checkBegin: four arguments");
  early_t *e = calloc(1, sizeof *e);
  if (!e) return tb_fail(env, "checkBegin: out of memory");
  pthread_mutex_init(&e->feed.mu, NULL);
  pthread_cond_init(&e->feed.more, NULL);
  napi_value handle;
  const char *error = NULL;
  if (!(e->root = tb_utf8(env, argv[0], &e->job.root_len))) error = "checkBegin: root must be a string";
  else if (napi_get_value_double(env, argv[1], &e->job.racy_ms) != napi_ok || napi_get_value_double(env, argv[2], &threads) != napi_ok) error = "checkBegin: racyMs and threads must be numbers";
  else if (napi_get_value_bool(env, argv[3], &e->want_ring) != napi_ok) error = "checkBegin: ring must be a boolean";
  else if (!(e->job.blocks = calloc(ROW_BLOCKS_MAX, sizeof(row_t *)))) error = "checkBegin: out of memory";
  if (error) {
    early_finalize(env, e, NULL);
    return tb_fail(env, error);
  }
  e->job.root = e->root;
  e->n_lanes = lanes_of(threads);
  atomic_init(&e->job.n, 0);
  atomic_init(&e->job.next, 0);
  for (int k = 0; k < e->n_lanes; k++) e->lanes[k].job = &e->job;
  if (napi_create_external(env, e, early_finalize, NULL, &handle) != napi_ok) {
    early_finalize(env, e, NULL);
    return tb_fail(env, "checkBegin: could not make the handle");
  }
  e->started = pthread_create(&e->tid, NULL, early_main, e) == 0;
  if (!e->started) e->failed = 1;
  return handle;
}

static napi_value check_feed(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3) return tb_fail(env, "checkFeed: three arguments");
  early_t *e = early_of(env, argv[0]);
  if (!e || e->stopped) return tb_fail(env, "checkFeed: not a check under way");
  bool is_array = false;
  napi_is_array(env, argv[2], &is_array);
  if (!is_array) return tb_fail(env, "checkFeed: rows must be an array");
  if (e->n_refs == e->cap_refs) {
    size_t cap = e->cap_refs ? e->cap_refs * 2 : 64;
    napi_ref *p = realloc(e->refs, cap * sizeof *p);
    if (!p) return tb_fail(env, "checkFeed: out of memory");
    e->refs = p;
    e->cap_refs = cap;
  }
  if (napi_create_reference(env, argv[2], 1, &e->refs[e->n_refs]) != napi_ok) return tb_fail(env, "checkFeed: could not keep the rows");
  e->n_refs++;
  /* The rows are in (job.n published) before the checking thread is told. */
  const char *error = add_rows(env, argv[1], argv[2], NULL, &e->job);
  if (error) return tb_fail(env, error);
  pthread_mutex_lock(&e->feed.mu);
  pthread_cond_broadcast(&e->feed.more);
  pthread_mutex_unlock(&e->feed.mu);
  return NULL;
}

static napi_value check_end(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return tb_fail(env, "checkEnd: one argument");
  early_t *e = early_of(env, argv[0]);
  if (!e || e->stopped) return tb_fail(env, "checkEnd: not a check under way");
  early_stop(e);
  const char *error = e->failed ? "checkEnd: the check failed" : NULL;
  int n_lanes = e->by_ring ? 1 : e->n_lanes;
  for (int k = 0; !error && k < n_lanes; k++) {
    if (e->lanes[k].failed) error = "checkEnd: out of memory";
  }
  napi_value result = NULL;
  if (!error && !(result = verdicts(env, e->lanes, n_lanes, atomic_load(&e->job.n), e->by_ring))) error = "checkEnd: could not make the result";
  early_release(env, e);
  if (error) return tb_fail(env, error);
  return result;
}

/*
 * rowArena(bytes) -> ArrayBuffer
 * Memory for the snapshot index's rows as a process loads them (snapshot-index.ts copies each row
 * into one of these and keeps a view of it): one mapping of `bytes` rounded up to 2 MiB, asked of
 * the kernel in huge pages where it gives them (Linux's transparent huge pages, `madvise` mode).
 * A million-file index is 70-odd MB of rows: in 4 KiB pages that is 18,000 page faults as they
 * are first written, which a virtual machine's page-table isolation makes dear (each is a trip to
 * the host); in 2 MiB pages, 40. Unmapped when the ArrayBuffer is collected. Throws when there is
 * no memory or the runtime refuses outside memory (the caller then allocates as usual).
 */
#define ARENA_ALIGN ((size_t)2 << 20)

static void arena_free(napi_env env, void *data, void *hint) {
  size_t len = (size_t)(uintptr_t)hint;
  int64_t ignored;
  munmap(data, len);
  napi_adjust_external_memory(env, -(int64_t)len, &ignored);
}

static napi_value row_arena(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  double want = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || napi_get_value_double(env, argv[0], &want) != napi_ok || !(want >= 1 && want <= (double)((size_t)1 << 30))) {
    return tb_fail(env, "rowArena: bytes must be a number from 1 to 2^30");
  }
  size_t len = ((size_t)want + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return tb_fail(env, "rowArena: out of memory");
#ifdef MADV_HUGEPAGE
  madvise(p, len, MADV_HUGEPAGE); /* a request: without huge pages it is ordinary memory */
#endif
  napi_value ab;
  if (napi_create_external_arraybuffer(env, p, len, arena_free, (void *)(uintptr_t)len, &ab) != napi_ok) {
    munmap(p, len);
    return tb_fail(env, "rowArena: the runtime refuses outside memory");
  }
  int64_t ignored;
  napi_adjust_external_memory(env, (int64_t)len, &ignored);
  return ab;
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
  if (napi_create_function(env, "checkBegin", NAPI_AUTO_LENGTH, check_begin, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "checkBegin", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "checkFeed", NAPI_AUTO_LENGTH, check_feed, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "checkFeed", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "checkEnd", NAPI_AUTO_LENGTH, check_end, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "checkEnd", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "rowArena", NAPI_AUTO_LENGTH, row_arena, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "rowArena", fn) != napi_ok) return NULL;
  if (sync_paths_init(env, exports) != 0) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
