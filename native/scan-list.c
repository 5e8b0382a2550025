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
 * listRows(root, dirs, threads, table, names) -> Buffer
 *   root     the workspace's absolute path (string)
 *   dirs     folders, workspace-relative ('' for the root) (string[])
 *   threads  how many threads list (this one included), 1 to 16
 *   table    git's index (a gitIndexTable's `table`), or null: no file is matched
 *   names    a nameTable(): the names met so far in this walk, each with an id (0, 1, ...)
 * The buffer (little-endian): u32 how many names this call met first | u32 where they start | one
 * record a folder, in the order of `dirs` | those names, in the order of their ids (u16 length |
 * bytes each). A record:
 *   u32 record bytes (this field included) | u8 status (0: gone or not a folder, 1: a folder that
 *   cannot be listed, 2: listed, 3: not looked at, its path too long: the caller lists it itself)
 *   | u8 flags (1: a child is named `.gitignore`) | u16 0 | the folder's stat (below; taken before
 *   its listing, so a child added meanwhile moves it again) | u32 the row's bytes (0 unless
 *   listed) | the row | 0 to 3 bytes 0 (to a multiple of 4) | the id of each entry's name (u32).
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

/* by_name, compared in place (names are short: a loop costs less than a call to memcmp). */
static bool kid_after(const kid_t *x, const kid_t *y) {
  size_t n = x->len < y->len ? x->len : y->len;
  for (size_t i = 0; i < n; i++) {
    if (x->name[i] != y->name[i]) return x->name[i] > y->name[i];
  }
  return x->len > y->len;
}

/* Sorts `v[0..n)` by by_name: by insertion where a folder holds few children (most do), else qsort. */
static void sort_kids(kid_t *v, size_t n) {
  if (n > 32) {
    qsort(v, n, sizeof *v, by_name);
    return;
  }
  for (size_t i = 1; i < n; i++) {
    kid_t k = v[i];
    size_t j = i;
    for (; j > 0 && kid_after(&v[j - 1], &k); j--) v[j] = v[j - 1];
    v[j] = k;
  }
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
  int root_fd; /* the root, opened once (-1: folders are named by their whole paths) */
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
  /* Named from the root's descriptor where it is open (its path not looked up again a folder). */
  int at = job->root_fd;
  if (at >= 0) {
    if (dl) memcpy(path, dir, dl);
    else path[0] = '.';
    path[dl ? dl : 1] = 0;
  } else {
    at = AT_FDCWD;
    memcpy(path, job->root, job->root_len);
    if (dl) {
      path[job->root_len] = '/';
      memcpy(path + job->root_len + 1, dir, dl);
    }
    path[abs_len] = 0;
  }
  /*
   * Opened (O_NOFOLLOW: a link is not followed; O_NONBLOCK: a fifo put in its place is not waited
   * on) and stated through its descriptor before it is read: one lookup of its path. One that
   * cannot be opened is looked at by its lstat: gone, not a folder, or a folder that cannot be
   * listed.
   */
  int fd = openat(at, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    if (fstatat(at, path, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) no_row(b, 0, NULL, 0);
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
  sort_kids(lane->kids, count);
  /* Room for every entry at its largest (a 32-byte id), so that the record grows once. */
  if (reserve(b, RECORD_HEAD + ROW_HEAD + count * (ENTRY_HEAD + 32) + lane->names.n)) {
    close(fd);
    return -1;
  }
  /* Each child stated, matched against git's index (both in name order) and written as an entry. */
  const git_table_t *table = job->table;
  size_t gn = 0, gi = 0;
  const git_entry_t *ge = table ? git_table_folder(table, dir, dl, &gn) : NULL;
  int hash_len = table ? git_table_hash_len(table) : 0;
  uint32_t entries = 0, files = 0, copied = 0;
  b->n = RECORD_HEAD + ROW_HEAD;
  for (size_t k = 0; k < count; k++) {
    const kid_t *kid = &lane->kids[k];
    struct stat cst;
    if (fstatat(fd, (const char *)kid->name, &cst, AT_SYMLINK_NOFOLLOW) != 0) continue; /* gone since the listing */
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
  size_t row_end = b->n;
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

/*
 * The names a walk's listings have met, each with an id (0, 1, ... in the order first met): the
 * walk asks the ignore rules, the excluded names and the secrets by name about a name once, not
 * once a folder it is in.
 */
typedef struct {
  uint8_t *arena; /* each name: u16 length | bytes */
  size_t len, cap;
  uint32_t *at; /* where each id's name is in the arena */
  size_t n, at_cap;
  uint32_t *slots; /* open addressing: id + 1, 0 empty */
  size_t n_slots;
} name_table_t;

static uint64_t hash_name(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static int names_grow(name_table_t *t) {
  size_t n = t->n_slots ? t->n_slots * 2 : 4096;
  uint32_t *s = calloc(n, sizeof *s);
  if (!s) return -1;
  for (size_t id = 0; id < t->n; id++) {
    const uint8_t *p = t->arena + t->at[id];
    size_t k = hash_name(p + 2, (size_t)p[0] | (size_t)p[1] << 8) & (n - 1);
    while (s[k]) k = (k + 1) & (n - 1);
    s[k] = (uint32_t)id + 1;
  }
  free(t->slots);
  t->slots = s;
  t->n_slots = n;
  return 0;
}

/* The id of name `p[0..n)`, added (and `*added` set) when new; -1 when memory runs out. */
static int64_t name_id(name_table_t *t, const uint8_t *p, size_t n, bool *added) {
  *added = false;
  if ((t->n + 1) * 2 > t->n_slots && names_grow(t)) return -1;
  size_t k = hash_name(p, n) & (t->n_slots - 1);
  for (; t->slots[k]; k = (k + 1) & (t->n_slots - 1)) {
    const uint8_t *q = t->arena + t->at[t->slots[k] - 1];
    if (((size_t)q[0] | (size_t)q[1] << 8) == n && memcmp(q + 2, p, n) == 0) return t->slots[k] - 1;
  }
  if (t->n >= UINT32_MAX - 1) return -1;
  if (t->len + n + 2 > t->cap) {
    size_t cap = t->cap ? t->cap : 65536;
    while (cap < t->len + n + 2) cap *= 2;
    if (cap > UINT32_MAX) return -1;
    uint8_t *a = realloc(t->arena, cap);
    if (!a) return -1;
    t->arena = a;
    t->cap = cap;
  }
  if (t->n == t->at_cap) {
    size_t cap = t->at_cap ? t->at_cap * 2 : 4096;
    uint32_t *a = realloc(t->at, cap * sizeof *a);
    if (!a) return -1;
    t->at = a;
    t->at_cap = cap;
  }
  t->at[t->n] = (uint32_t)t->len;
  t->arena[t->len] = (uint8_t)(n & 0xff);
  t->arena[t->len + 1] = (uint8_t)(n >> 8);
  memcpy(t->arena + t->len + 2, p, n);
  t->len += n + 2;
  t->slots[k] = (uint32_t)t->n + 1;
  *added = true;
  return (int64_t)t->n++;
}

static void names_free(napi_env env, void *data, void *hint) {
  name_table_t *t = data;
  free(t->arena);
  free(t->at);
  free(t->slots);
  free(t);
}

/* A tag that tells this module's name tables from any other external. */
static const napi_type_tag NAMES_TAG = {0x74616b656261636bull, 0x6e616d6573746162ull};

napi_value name_table(napi_env env, napi_callback_info info) {
  name_table_t *t = calloc(1, sizeof *t);
  napi_value ext;
  if (!t) return tb_fail(env, "nameTable: out of memory");
  if (napi_create_external(env, t, names_free, NULL, &ext) != napi_ok) {
    free(t);
    return tb_fail(env, "nameTable: could not make it");
  }
  if (napi_type_tag_object(env, ext, &NAMES_TAG) != napi_ok) return tb_fail(env, "nameTable: could not make it");
  return ext;
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

/* The number of entries of record `b`'s row (0 when it holds none). */
static uint32_t record_entries(const bytes_t *b) {
  if (b->p[4] != 2) return 0;
  const uint8_t *c = b->p + RECORD_HEAD + 32;
  return (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
}

/*
 * Gives each entry of the rows of `job` the id of its name in `names`, in order, into `ids`;
 * the names new to `names` are added to `added` (u16 length | bytes each, `*n_added` of them).
 * -1 when memory runs out.
 */
static int name_rows(const list_job_t *job, name_table_t *names, uint32_t *ids, bytes_t *added, uint32_t *n_added) {
  size_t at = 0;
  for (size_t i = 0; i < job->n; i++) {
    const bytes_t *b = &job->out[i];
    if (b->p[4] != 2) continue;
    const uint8_t *row = b->p + RECORD_HEAD;
    size_t row_len = b->n - RECORD_HEAD;
    for (size_t o = ROW_HEAD; o < row_len;) {
      size_t nl = (size_t)row[o + 40] | (size_t)row[o + 41] << 8;
      uint8_t flags = row[o + 1];
      bool is_new;
      int64_t id = name_id(names, row + o + ENTRY_HEAD, nl, &is_new);
      if (id < 0) return -1;
      if (is_new) {
        if (reserve(added, nl + 2)) return -1;
        added->p[added->n] = (uint8_t)(nl & 0xff);
        added->p[added->n + 1] = (uint8_t)(nl >> 8);
        memcpy(added->p + added->n + 2, row + o + ENTRY_HEAD, nl);
        added->n += nl + 2;
        (*n_added)++;
      }
      ids[at++] = (uint32_t)id;
      o += ENTRY_HEAD + nl + (flags & F_GIT20 ? 20 : flags & F_GIT32 ? 32 : 0);
    }
  }
  return 0;
}

napi_value list_rows(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5) return tb_fail(env, "listRows: five arguments");
  list_job_t job;
  memset(&job, 0, sizeof job);
  bool tagged = false;
  name_table_t *names = NULL;
  if (napi_check_object_type_tag(env, argv[4], &NAMES_TAG, &tagged) != napi_ok || !tagged || napi_get_value_external(env, argv[4], (void **)&names) != napi_ok) {
    return tb_fail(env, "listRows: names must be a nameTable");
  }
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
    job.root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    pthread_t tids[16];
    int started[16] = {0};
    for (int k = 1; k < n_lanes; k++) started[k] = pthread_create(&tids[k], NULL, list_lane, &job) == 0;
    list_lane(&job);
    for (int k = 1; k < n_lanes; k++) {
      if (started[k]) pthread_join(tids[k], NULL);
    }
    if (job.root_fd >= 0) close(job.root_fd);
    if (atomic_load(&job.failed)) error = "listRows: out of memory";
  }
  if (!error) {
    /*
     * u32 names new to the table | u32 where they start | the records, each padded to 4 bytes and
     * followed by its row's entries' name ids (u32 each) | the new names (u16 length | bytes).
     */
    size_t total = 8, n_ids = 0;
    for (uint32_t i = 0; i < n_dirs; i++) {
      uint32_t entries = record_entries(&job.out[i]);
      n_ids += entries;
      total += ((job.out[i].n + 3) & ~(size_t)3) + 4 * (size_t)entries;
    }
    uint32_t *ids = malloc((n_ids ? n_ids : 1) * sizeof *ids);
    bytes_t added = {0};
    uint32_t n_added = 0;
    uint8_t *out = NULL;
    if (!ids || name_rows(&job, names, ids, &added, &n_added) != 0) {
      error = "listRows: out of memory";
    } else if (total > UINT32_MAX || napi_create_buffer(env, total + added.n, (void **)&out, &result) != napi_ok) {
      error = "listRows: could not make the result";
    } else {
      put_u32(out, n_added);
      put_u32(out + 4, (uint32_t)total);
      size_t at = 8, k = 0;
      for (uint32_t i = 0; i < n_dirs; i++) {
        const bytes_t *b = &job.out[i];
        uint32_t entries = record_entries(b);
        size_t padded = (b->n + 3) & ~(size_t)3;
        memcpy(out + at, b->p, b->n);
        memset(out + at + b->n, 0, padded - b->n);
        put_u32(out + at, (uint32_t)(padded + 4 * (size_t)entries));
        for (uint32_t e = 0; e < entries; e++) put_u32(out + at + padded + 4 * (size_t)e, ids[k++]);
        at += padded + 4 * (size_t)entries;
      }
      if (added.n) memcpy(out + total, added.p, added.n);
    }
    free(ids);
    free(added.p);
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
