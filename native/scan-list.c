/*
 * takeback's first-scan listing, in C: each folder's own stat, its children's lstats and git's
 * word on them, for many folders at once, shared out between threads, handed back as the rows
 * the snapshot keeps (server/core/scan/packed.ts says their layout). A full walk (the first
 * snapshot, or one after the ignore rules moved) lists every folder and states every child;
 * through Node that is a Dirent object a child, a path string built and resolved again for every
 * lstat, and an object a path to encode again. Here a folder is opened once (O_NOFOLLOW: a folder
 * swapped for a link is not followed), its children are stated relative to it (fstatat,
 * AT_SYMLINK_NOFOLLOW), a regular file is matched against git's index by name (native/git-index.c)
 * and written with its blob's id as bytes, so that the walk (scan.ts) keeps most rows as they
 * come: it asks the ignore rules and the secrets by name about each child, and drops those left
 * out. server/core/scan/listing.ts reads the result; without this module the walk lists in
 * JavaScript, with the same outcome (test/native-list.test.ts compares the two).
 *
 * listRows(root, dirs, threads, table) -> Buffer
 *   root     the workspace's absolute path (string)
 *   dirs     folders, workspace-relative ('' for the root) (string[])
 *   threads  how many threads list (this one included), 1 to 16
 *   table    git's index (a gitIndexTable's `table`), or null: no file is matched
 * The buffer holds one record a folder, in the order of `dirs` (little-endian):
 *   u32 record bytes (this field included) | u8 status (0: gone or not a folder, 1: a folder that
 *   cannot be listed, 2: listed, 3: not looked at, its path too long: the caller lists it itself)
 *   | u8 flags (1: a child is named `.gitignore`) | u16 0 | the folder's stat (below; taken before
 *   its listing, so a child added meanwhile moves it again) | u32 the row's bytes (0 unless
 *   listed) | the row | the names of its entries, in its order, joined by '/' (a name never holds
 *   one), for the caller to decode all at once.
 * The row: its header (version 1, the folder's stat as its stamp, its counts) and one entry a
 *   child that could be stated, in byte order of the names (as Node's readdir gives them), each as
 *   the row keeps it: type (0 file, 1 link, 2 folder), flags (2 or 4: a git object id of 20 or 32
 *   bytes follows the name), gap 0, a mark (below), the mode's permission bits, size (0 for a
 *   folder), mtimeMs, ctimeMs, inode, the name's length and bytes (as the file system has them).
 *   The mark is 0 for a child the row can keep as it is: a folder, or a regular file git's index
 *   vouches for, named in valid UTF-8 without U+FFFD. Any other child is marked 0x80 | its file
 *   type (st_mode >> 12): the caller looks at it itself (a link's target, a file to read, a name
 *   Node cannot spell), or drops it; a marked entry never stays in a row.
 * A stat is five f64: mode, size, ino, mtimeMs, ctimeMs (as Node computes them: sec * 1e3 +
 * nsec / 1e6); mode is -1 and the rest 0 where there is none (a folder gone, or too long a path).
 * Throws on a bad argument or when memory runs out; the caller then lists in JavaScript.
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#include "git-index.h"
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
/* A record's head: length, status, flags, the folder's stat, its row's length. */
#define RECORD_HEAD (8 + STAT_BYTES + 4)
/* A row's header and an entry's fixed part (packed.ts: HEADER_BYTES, ENTRY_FIXED + 2). */
#define ROW_HEAD 56
#define ENTRY_HEAD 42
#define TYPE_FILE 0
#define TYPE_LINK 1
#define TYPE_DIR 2
#define F_GIT20 2
#define F_GIT32 4

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

/* A child's name while its folder is listed (NUL-terminated; `len` bytes before the NUL). */
typedef struct {
  const uint8_t *name;
  size_t len;
  bool listed; /* stated, and written as an entry */
} kid_t;

static int cmp_names(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  int c = memcmp(a, b, na < nb ? na : nb);
  return c ? c : na < nb ? -1 : na > nb;
}

/* Children in byte order of their names, as Node's readdir gives them (libuv sorts with strcmp). */
static int by_name(const void *a, const void *b) {
  const kid_t *x = a, *y = b;
  return cmp_names(x->name, x->len, y->name, y->len);
}

/*
 * True when `s[0..n)` is valid UTF-8 (as Node decodes it: no overlong form, no surrogate, nothing
 * past U+10FFFF) and holds no U+FFFD: the name Node gives it spells it, and no name Node cannot
 * spell decodes to it.
 */
static bool clean_utf8(const uint8_t *s, size_t n) {
  for (size_t i = 0; i < n;) {
    uint8_t c = s[i];
    if (c < 0x80) {
      i++;
    } else if (c >= 0xc2 && c <= 0xdf) {
      if (i + 1 >= n || (s[i + 1] & 0xc0) != 0x80) return false;
      i += 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      if (i + 2 >= n || (s[i + 1] & 0xc0) != 0x80 || (s[i + 2] & 0xc0) != 0x80) return false;
      if ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0)) return false;
      if (c == 0xef && s[i + 1] == 0xbf && s[i + 2] == 0xbd) return false;
      i += 3;
    } else if (c >= 0xf0 && c <= 0xf4) {
      if (i + 3 >= n || (s[i + 1] & 0xc0) != 0x80 || (s[i + 2] & 0xc0) != 0x80 || (s[i + 3] & 0xc0) != 0x80) return false;
      if ((c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] >= 0x90)) return false;
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

typedef struct {
  const char *root;
  size_t root_len;
  char **dirs;
  size_t *dir_lens;
  size_t n;
  const git_table_t *table;
  bytes_t *out; /* one record a folder */
  atomic_size_t next;
  atomic_int failed;
} list_job_t;

/* What one thread reuses from folder to folder: a path, the names read and their order, the folder's entries as read. */
typedef struct {
  char *path;
  bytes_t names;
  kid_t *kids;
  size_t kids_cap;
  size_t *offs;
#ifdef __linux__
  uint8_t *dents; /* DENTS_BYTES */
  size_t dents_at, dents_len;
#else
  DIR *dir;
#endif
  bool read_failed;
} lane_t;

#ifdef __linux__
#define DENTS_BYTES 32768

/* A folder entry as getdents64 writes it. */
struct dent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

/*
 * The next name of folder `fd` (its entries read straight through getdents64: no stream to set
 * up and take down a folder, as opendir's), or NULL at its end, `lane->read_failed` set when the
 * read failed. The first call for a folder must find `lane->dents_len` 0.
 */
static const char *next_name(lane_t *lane, int fd) {
  if (lane->dents_at >= lane->dents_len) {
    long n = syscall(SYS_getdents64, fd, lane->dents, DENTS_BYTES);
    lane->read_failed = n < 0;
    lane->dents_at = 0;
    lane->dents_len = n > 0 ? (size_t)n : 0;
    if (n <= 0) return NULL;
  }
  const struct dent64 *d = (const struct dent64 *)(lane->dents + lane->dents_at);
  lane->dents_at += d->d_reclen;
  return d->d_name;
}
#else
/* The next name of folder `fd` through readdir (the stream is opened on first call and closed at the end), as the Linux one above. */
static const char *next_name(lane_t *lane, int fd) {
  if (!lane->dir) {
    int dup_fd = dup(fd);
    lane->dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!lane->dir) {
      if (dup_fd >= 0) close(dup_fd);
      lane->read_failed = true;
      return NULL;
    }
  }
  errno = 0;
  struct dirent *de = readdir(lane->dir);
  if (de) return de->d_name;
  lane->read_failed = errno != 0;
  closedir(lane->dir);
  lane->dir = NULL;
  return NULL;
}
#endif

/* Writes a record that holds no row: status `status`, the folder's stat `st` (NULL: none). */
static void no_row(bytes_t *b, int status, const struct stat *st, int flags) {
  b->n = RECORD_HEAD;
  b->p[4] = (uint8_t)status;
  b->p[5] = (uint8_t)flags;
  put_stat(b->p + 8, st);
  put_u32(b->p + 8 + STAT_BYTES, 0);
  put_u32(b->p, (uint32_t)b->n);
}

/* Lists folder `i` into its record. Returns -1 when memory runs out. */
static int list_one(list_job_t *job, size_t i, lane_t *lane) {
  bytes_t *b = &job->out[i];
  if (reserve(b, RECORD_HEAD + ROW_HEAD)) return -1;
  memset(b->p, 0, RECORD_HEAD + ROW_HEAD);
  const uint8_t *dir = (const uint8_t *)job->dirs[i];
  size_t dl = job->dir_lens[i];
  size_t abs_len = job->root_len + (dl ? 1 + dl : 0);
  char *path = lane->path;
  struct stat st;
  if (abs_len + 1 >= LIST_PATH_MAX) {
    no_row(b, 3, NULL, 0); /* too long to name here: the caller lists it itself */
    return 0;
  }
  memcpy(path, job->root, job->root_len);
  if (dl) {
    path[job->root_len] = '/';
    memcpy(path + job->root_len + 1, dir, dl);
  }
  path[abs_len] = 0;
  /*
   * Opened (O_NOFOLLOW: a link is not followed) and stated through its descriptor before it is
   * read: one lookup of its path. One that cannot be opened is looked at by its lstat: gone, not
   * a folder, or a folder that cannot be listed.
   */
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) no_row(b, 0, NULL, 0);
    else no_row(b, 1, &st, 0);
    return 0;
  }
  /* The names, then their order. */
  size_t count = 0;
  int flags = 0;
  lane->names.n = 0;
  lane->read_failed = false;
#ifdef __linux__
  lane->dents_at = lane->dents_len = 0;
#endif
  for (;;) {
    const char *name = next_name(lane, fd);
    if (!name) break;
    if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
    size_t nl = strlen(name);
    if (nl > 0xffff) continue;
    if (nl == 10 && memcmp(name, ".gitignore", 10) == 0) flags |= 1;
    if (count == lane->kids_cap) {
      size_t cap = lane->kids_cap ? lane->kids_cap * 2 : 64;
      kid_t *k = realloc(lane->kids, cap * sizeof *k);
      size_t *o = realloc(lane->offs, cap * sizeof *o);
      if (k) lane->kids = k;
      if (o) lane->offs = o;
      if (!k || !o) {
        close(fd);
        return -1;
      }
      lane->kids_cap = cap;
    }
    if (reserve(&lane->names, nl + 1)) {
      close(fd);
      return -1;
    }
    lane->offs[count] = lane->names.n;
    lane->kids[count].len = nl;
    memcpy(lane->names.p + lane->names.n, name, nl + 1); /* with its NUL, for fstatat */
    lane->names.n += nl + 1;
    count++;
  }
  if (lane->read_failed) {
    /* A listing cut short is no listing: the folder is one that cannot be listed. */
    close(fd);
    no_row(b, 1, &st, 0);
    return 0;
  }
  for (size_t k = 0; k < count; k++) lane->kids[k].name = lane->names.p + lane->offs[k];
  if (count > 1) qsort(lane->kids, count, sizeof *lane->kids, by_name);
  /* Each child stated, matched against git's index (both in name order) and written as an entry. */
  const git_table_t *table = job->table;
  size_t gn = 0, gi = 0;
  const git_entry_t *ge = table ? git_table_folder(table, dir, dl, &gn) : NULL;
  int hash_len = table ? git_table_hash_len(table) : 0;
  uint32_t entries = 0, files = 0, copied = 0;
  b->n = RECORD_HEAD + ROW_HEAD;
  for (size_t k = 0; k < count; k++) {
    kid_t *kid = &lane->kids[k];
    struct stat cst;
    kid->listed = fstatat(fd, (const char *)kid->name, &cst, AT_SYMLINK_NOFOLLOW) == 0;
    if (!kid->listed) continue; /* gone since the listing */
    int type = S_ISDIR(cst.st_mode) ? TYPE_DIR : S_ISLNK(cst.st_mode) ? TYPE_LINK : TYPE_FILE;
    const uint8_t *oid = NULL;
    double mtime = ms_of(LMTIM(cst)), ctime = ms_of(LCTIM(cst));
    if (S_ISREG(cst.st_mode) && ge) {
      int c = -1;
      while (gi < gn && (c = cmp_names(git_table_name(table, &ge[gi]), ge[gi].name_len, kid->name, kid->len)) < 0) gi++;
      if (gi < gn && c == 0) oid = git_table_match(table, &ge[gi], (double)cst.st_size, (double)cst.st_ino, mtime, ctime);
    }
    bool plain = (type == TYPE_DIR || oid) && clean_utf8(kid->name, kid->len);
    size_t oid_len = oid ? (size_t)hash_len : 0;
    if (reserve(b, ENTRY_HEAD + kid->len + oid_len)) {
      close(fd);
      return -1;
    }
    uint8_t *p = b->p + b->n;
    p[0] = (uint8_t)type;
    p[1] = oid ? (hash_len == 20 ? F_GIT20 : F_GIT32) : 0;
    p[2] = 0;
    p[3] = plain ? 0 : (uint8_t)(0x80 | ((cst.st_mode >> 12) & 0xf));
    put_u32(p + 4, (uint32_t)(cst.st_mode & 07777));
    put_f64(p + 8, type == TYPE_DIR ? 0 : (double)cst.st_size);
    put_f64(p + 16, mtime);
    put_f64(p + 24, ctime);
    put_f64(p + 32, (double)cst.st_ino);
    p[40] = (uint8_t)(kid->len & 0xff);
    p[41] = (uint8_t)(kid->len >> 8);
    memcpy(p + ENTRY_HEAD, kid->name, kid->len);
    if (oid) memcpy(p + ENTRY_HEAD + kid->len, oid, oid_len);
    b->n += ENTRY_HEAD + kid->len + oid_len;
    entries++;
    if (type != TYPE_DIR) {
      files++;
      if (!oid) copied++;
    }
  }
  close(fd);
  /* After the row, the names of its entries again, each after a '/' but the first: decoded at once. */
  size_t row_end = b->n;
  for (size_t k = 0; k < count; k++) {
    const kid_t *kid = &lane->kids[k];
    if (!kid->listed) continue;
    if (reserve(b, kid->len + 1)) return -1;
    if (b->n > row_end) b->p[b->n++] = '/';
    memcpy(b->p + b->n, kid->name, kid->len);
    b->n += kid->len;
  }
  b->p[4] = 2;
  b->p[5] = (uint8_t)flags;
  put_stat(b->p + 8, &st);
  put_u32(b->p + 8 + STAT_BYTES, (uint32_t)(row_end - RECORD_HEAD));
  uint8_t *row = b->p + RECORD_HEAD;
  row[0] = 1;
  put_f64(row + 8, ms_of(LMTIM(st)));
  put_f64(row + 16, ms_of(LCTIM(st)));
  put_f64(row + 24, (double)st.st_ino);
  put_u32(row + 32, entries);
  put_u32(row + 36, files);
  put_u32(row + 40, copied);
  put_u32(row + 44, 0);
  put_f64(row + 48, 0);
  put_u32(b->p, (uint32_t)b->n);
  return 0;
}

static void *list_lane(void *arg) {
  list_job_t *job = arg;
  lane_t lane;
  memset(&lane, 0, sizeof lane);
  lane.path = malloc(LIST_PATH_MAX);
#ifdef __linux__
  lane.dents = malloc(DENTS_BYTES);
  if (!lane.dents) {
    free(lane.path);
    lane.path = NULL;
  }
#endif
  if (!lane.path) {
    atomic_store(&job->failed, 1);
    return NULL;
  }
  for (;;) {
    if (atomic_load(&job->failed)) break;
    size_t i = atomic_fetch_add(&job->next, 1);
    if (i >= job->n) break;
    if (list_one(job, i, &lane) != 0) {
      atomic_store(&job->failed, 1);
      break;
    }
  }
  free(lane.path);
#ifdef __linux__
  free(lane.dents);
#else
  if (lane.dir) closedir(lane.dir);
#endif
  free(lane.names.p);
  free(lane.kids);
  free(lane.offs);
  return NULL;
}

napi_value list_rows(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4) return tb_fail(env, "listRows: four arguments");
  list_job_t job;
  memset(&job, 0, sizeof job);
  napi_valuetype table_type;
  if (napi_typeof(env, argv[3], &table_type) != napi_ok) return tb_fail(env, "listRows: table must be a gitIndexTable's or null");
  if (table_type != napi_null && !(job.table = git_table_of(env, argv[3]))) return tb_fail(env, "listRows: table must be a gitIndexTable's or null");
  char *root = tb_utf8(env, argv[0], &job.root_len);
  if (!root) return tb_fail(env, "listRows: root must be a string");
  job.root = root;
  uint32_t n_dirs = 0;
  bool is_array = false;
  napi_is_array(env, argv[1], &is_array);
  if (!is_array || napi_get_array_length(env, argv[1], &n_dirs) != napi_ok) {
    free(root);
    return tb_fail(env, "listRows: dirs must be an array");
  }
  job.n = n_dirs;
  job.dirs = calloc(n_dirs ? n_dirs : 1, sizeof(char *));
  job.dir_lens = calloc(n_dirs ? n_dirs : 1, sizeof(size_t));
  job.out = calloc(n_dirs ? n_dirs : 1, sizeof(bytes_t));
  const char *error = NULL;
  if (!job.dirs || !job.dir_lens || !job.out) error = "listRows: out of memory";
  for (uint32_t i = 0; !error && i < n_dirs; i++) {
    napi_value d;
    if (napi_get_element(env, argv[1], i, &d) != napi_ok || !(job.dirs[i] = tb_utf8(env, d, &job.dir_lens[i]))) error = "listRows: dirs must hold strings";
  }
  double threads = 1;
  if (!error && napi_get_value_double(env, argv[2], &threads) != napi_ok) error = "listRows: threads must be a number";
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
    if (atomic_load(&job.failed)) error = "listRows: out of memory";
  }
  if (!error) {
    size_t total = 0;
    for (uint32_t i = 0; i < n_dirs; i++) total += job.out[i].n;
    void *data = NULL;
    if (napi_create_buffer(env, total, &data, &result) != napi_ok) {
      error = "listRows: could not make the result";
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
