/*
 * git's index for the first scan's listing, in C: the same entries as readGitIndex in
 * server/core/scan/git-index.ts keeps (stage 0, a regular file, not assumed unchanged, not
 * skip-worktree or intent-to-add, not racy, not of size 0, no newline in its folder or name), by
 * folder, each folder's names in byte order, so that the listing (scan-list.c) matches a folder's
 * children against its files as it lists them, and writes a match's object id as bytes into the
 * row. Without the module the walk asks readGitIndex, with the same outcome
 * (test/native-list.test.ts and test/scan-git.test.ts compare the two).
 *
 * gitIndexTable(index, hashLen, indexMtimeMs, askedNames) -> { table, trackedExcluded } | null
 *   index         the index file's bytes (Buffer), versions 2 to 4
 *   hashLen       the repository's object id length: 20 (SHA-1) or 32 (SHA-256)
 *   indexMtimeMs  the index file's mtime as Node's `mtimeMs`: an entry modified at or after it is racy
 *   askedNames    folder names (string[]): trackedExcluded holds each folder of an entry's path
 *                 that has one of them as its last segment (as trackedExcludedDirs finds)
 * `table` is an external that listRows (scan-list.c) takes (it holds `index`, whose bytes it
 * reads: they must not be written to while it lives); `trackedExcluded` a Buffer of those
 * folders' paths, each followed by a NUL byte (one path may come more than once). Null when the
 * index is torn or one this reader does not follow (a split or sparse index): the scan then does
 * without git's index, as readGitIndex returns null for it. Throws on a bad argument or when
 * memory runs out.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "git-index.h"
#include "napi-util.h"

/* A folder of the table: its path (in the table's path bytes) and where its entries are. */
typedef struct {
  uint32_t path_off, path_len;
  uint32_t first, count;
} folder_t;

struct git_table {
  /* The index file's bytes (a Buffer held by `ref`): entries' stat fields and object ids. */
  const uint8_t *index;
  size_t index_len;
  napi_ref ref;
  /* Paths and names: the index's own bytes, or (version 4, whose paths are rebuilt) `arena`. */
  bool v4;
  uint8_t *arena;
  size_t arena_len, arena_cap;
  git_entry_t *entries; /* grouped by folder, each folder's sorted by name */
  size_t n_entries;
  folder_t *folders;
  size_t n_folders, folders_cap;
  uint32_t *slots; /* open addressing over `folders`: index + 1, 0 empty */
  size_t n_slots;
  int hash_len;
};

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }

/* Where paths and names are (offsets of folder_t and git_entry_t count from here). */
static const uint8_t *names_base(const git_table_t *t) { return t->v4 ? t->arena : t->index; }

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Version 4: appends `n` bytes to the arena; returns their offset, or -1 when memory runs out. */
static int64_t arena_put(git_table_t *t, const uint8_t *p, size_t n) {
  if (t->arena_len + n > t->arena_cap) {
    size_t cap = t->arena_cap ? t->arena_cap : 65536;
    while (cap < t->arena_len + n) cap *= 2;
    if (cap > UINT32_MAX) return -1;
    uint8_t *a = realloc(t->arena, cap);
    if (!a) return -1;
    t->arena = a;
    t->arena_cap = cap;
  }
  memcpy(t->arena + t->arena_len, p, n);
  t->arena_len += n;
  return (int64_t)(t->arena_len - n);
}

/* Where bytes `p[0..n)` of the path being read are kept: their offset in the index, or in the arena (version 4). */
static int64_t keep_bytes(git_table_t *t, const uint8_t *p, size_t n) {
  if (!t->v4) return (int64_t)(p - t->index);
  return arena_put(t, p, n);
}

static int grow_slots(git_table_t *t) {
  size_t n = t->n_slots ? t->n_slots * 2 : 1024;
  uint32_t *s = calloc(n, sizeof *s);
  if (!s) return -1;
  const uint8_t *base = names_base(t);
  for (size_t i = 0; i < t->n_folders; i++) {
    const folder_t *f = &t->folders[i];
    size_t k = hash_bytes(base + f->path_off, f->path_len) & (n - 1);
    while (s[k]) k = (k + 1) & (n - 1);
    s[k] = (uint32_t)i + 1;
  }
  free(t->slots);
  t->slots = s;
  t->n_slots = n;
  return 0;
}

/* The folder whose path is `p[0..n)`, or -1 when there is none. */
static int64_t find_folder(const git_table_t *t, const uint8_t *p, size_t n) {
  if (!t->n_slots) return -1;
  const uint8_t *base = names_base(t);
  size_t k = hash_bytes(p, n) & (t->n_slots - 1);
  for (; t->slots[k]; k = (k + 1) & (t->n_slots - 1)) {
    const folder_t *f = &t->folders[t->slots[k] - 1];
    if (f->path_len == n && memcmp(base + f->path_off, p, n) == 0) return t->slots[k] - 1;
  }
  return -1;
}

/* The folder of path `p[0..n)` (bytes of the path being read), added when new; -1 when memory runs out. */
static int64_t folder_id(git_table_t *t, const uint8_t *p, size_t n) {
  int64_t id = find_folder(t, p, n);
  if (id >= 0) return id;
  if ((t->n_folders + 1) * 2 > t->n_slots && grow_slots(t)) return -1;
  if (t->n_folders == t->folders_cap) {
    size_t cap = t->folders_cap ? t->folders_cap * 2 : 256;
    folder_t *f = realloc(t->folders, cap * sizeof *f);
    if (!f) return -1;
    t->folders = f;
    t->folders_cap = cap;
  }
  int64_t at = keep_bytes(t, p, n);
  if (at < 0) return -1;
  folder_t *f = &t->folders[t->n_folders];
  f->path_off = (uint32_t)at;
  f->path_len = (uint32_t)n;
  f->first = f->count = 0;
  size_t k = hash_bytes(p, n) & (t->n_slots - 1);
  while (t->slots[k]) k = (k + 1) & (t->n_slots - 1);
  t->slots[k] = (uint32_t)t->n_folders + 1;
  return (int64_t)t->n_folders++;
}

static void table_free(git_table_t *t) {
  if (!t) return;
  free(t->arena);
  free(t->entries);
  free(t->folders);
  free(t->slots);
  free(t);
}

/* Names in byte order; of two alike, the one that came first in the index first. */
static int entry_cmp(const uint8_t *base, const git_entry_t *x, const git_entry_t *y) {
  size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
  int c = memcmp(base + x->name_off, base + y->name_off, n);
  if (c) return c;
  if (x->name_len != y->name_len) return x->name_len < y->name_len ? -1 : 1;
  return x->entry_off < y->entry_off ? -1 : x->entry_off > y->entry_off;
}

/* Sorts `v[0..n)` by entry_cmp (a merge sort through `tmp`, as many entries). */
static void sort_entries(const uint8_t *base, git_entry_t *v, git_entry_t *tmp, size_t n) {
  if (n < 2) return;
  size_t h = n / 2;
  sort_entries(base, v, tmp, h);
  sort_entries(base, v + h, tmp, n - h);
  size_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = entry_cmp(base, &v[j], &v[i]) < 0 ? v[j++] : v[i++];
  while (i < h) tmp[k++] = v[i++];
  while (j < n) tmp[k++] = v[j++];
  memcpy(v, tmp, n * sizeof *v);
}

typedef struct {
  uint8_t *p;
  size_t n, cap;
} out_t;

static int out_put(out_t *o, const uint8_t *p, size_t n) {
  if (o->n + n + 1 > o->cap) {
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->n + n + 1) cap *= 2;
    uint8_t *q = realloc(o->p, cap);
    if (!q) return -1;
    o->p = q;
    o->cap = cap;
  }
  memcpy(o->p + o->n, p, n);
  o->n += n;
  o->p[o->n++] = 0;
  return 0;
}

typedef struct {
  char **names;
  size_t *lens;
  uint32_t n;
} asked_t;

/*
 * Adds to `out` each folder of folder path `dir[0..n)` (itself included) whose last segment is
 * one of `asked`, skipping one equal to the last one added (at `*last_at`, `*last_len` bytes).
 */
static int asked_folders(const asked_t *asked, const uint8_t *dir, size_t n, out_t *out, size_t *last_at, size_t *last_len) {
  size_t from = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i < n && dir[i] != '/') continue;
    size_t seg = i - from;
    for (uint32_t k = 0; k < asked->n; k++) {
      if (asked->lens[k] != seg || memcmp(asked->names[k], dir + from, seg) != 0) continue;
      if (*last_len == i && memcmp(out->p + *last_at, dir, i) == 0) break;
      *last_at = out->n;
      *last_len = i;
      if (out_put(out, dir, i)) return -1;
      break;
    }
    from = i + 1;
  }
  return 0;
}

/* A kept entry while the index is read, and its folder. */
typedef struct {
  git_entry_t e;
  uint32_t folder;
} pending_t;

typedef enum { READ_OK, READ_UNUSABLE, READ_NOMEM } read_status;

/*
 * Reads the index (`t->index`) into `t`, and the asked folders into `tracked`. READ_UNUSABLE for
 * a torn index, extended flags in version 2, or a split or sparse one.
 */
static read_status read_index(git_table_t *t, double index_mtime, const asked_t *asked, out_t *tracked) {
  const uint8_t *buf = t->index;
  size_t len = t->index_len, hash_len = (size_t)t->hash_len;
  if (len < 12 || memcmp(buf, "DIRC", 4) != 0) return READ_UNUSABLE;
  uint32_t version = be32(buf + 4), count = be32(buf + 8);
  if (version < 2 || version > 4 || len > UINT32_MAX) return READ_UNUSABLE;
  /* Every entry takes at least 62 bytes: an index that says it holds more is torn. */
  if ((uint64_t)count * 62 > len) return READ_UNUSABLE;
  t->v4 = version == 4;
  pending_t *pend = malloc((count ? count : 1) * sizeof *pend);
  if (!pend) return READ_NOMEM;
  size_t n_pend = 0;
  uint8_t *prev = NULL; /* version 4: the last path */
  size_t prev_len = 0, prev_cap = 0;
  /* The folder of the last entry (a copy of its bytes), and its id (-1: one whose files are not kept). */
  uint8_t *last_dir = NULL;
  size_t last_dir_len = 0, last_dir_cap = 0;
  bool have_last = false;
  int64_t dir_id = -1;
  size_t asked_at = 0, asked_len = (size_t)-1;
  read_status status = READ_OK;
  size_t o = 12;
  for (uint32_t i = 0; i < count; i++) {
    size_t start = o;
    if (o + 40 + hash_len + 2 > len) goto unusable;
    o += 40 + hash_len;
    uint32_t flags = be16(buf + o), extended = 0;
    o += 2;
    if (flags & 0x4000) {
      if (version < 3 || o + 2 > len) goto unusable;
      extended = be16(buf + o);
      o += 2;
    }
    const uint8_t *path;
    size_t path_len;
    if (version == 4) {
      /* The path is the last one less N bytes, and a NUL-terminated suffix. */
      if (o >= len) goto unusable;
      uint32_t c = buf[o++];
      size_t strip = c & 127;
      while (c & 128) {
        if (o >= len || strip > 0xffffff) goto unusable;
        c = buf[o++];
        strip = ((strip + 1) << 7) | (c & 127);
      }
      const uint8_t *nul = memchr(buf + o, 0, len - o);
      if (!nul || strip > prev_len) goto unusable;
      size_t suffix = (size_t)(nul - (buf + o)), keep = prev_len - strip;
      if (keep + suffix > prev_cap) {
        size_t cap = prev_cap ? prev_cap : 256;
        while (cap < keep + suffix) cap *= 2;
        uint8_t *p = realloc(prev, cap);
        if (!p) goto nomem;
        prev = p;
        prev_cap = cap;
      }
      memcpy(prev + keep, buf + o, suffix);
      prev_len = keep + suffix;
      o += suffix + 1;
      path = prev;
      path_len = prev_len;
    } else {
      /* The flags' low 12 bits hold the name's length (0xfff: that long or longer, to its NUL). */
      size_t name_len = flags & 0xfff, end;
      if (name_len < 0xfff) {
        end = o + name_len;
      } else {
        const uint8_t *nul = memchr(buf + o, 0, len - o);
        if (!nul) goto unusable;
        end = (size_t)(nul - buf);
      }
      if (end >= len || buf[end] != 0) goto unusable;
      path = buf + o;
      path_len = end - o;
      /* Entries are padded with 1 to 8 NULs to a multiple of 8 bytes. */
      o = start + ((end - start + 8) & ~(size_t)7);
    }
    size_t slash = path_len; /* the name starts here */
    while (slash > 0 && path[slash - 1] != '/') slash--;
    size_t dir_len = slash ? slash - 1 : 0; /* the folder part, '' at the root */
    if (!have_last || dir_len != last_dir_len || memcmp(path, last_dir, dir_len) != 0) {
      /* The index is sorted: a folder's entries come in runs, and only a run's first is looked up. */
      if (dir_len > last_dir_cap) {
        size_t cap = last_dir_cap ? last_dir_cap : 256;
        while (cap < dir_len) cap *= 2;
        uint8_t *p = realloc(last_dir, cap);
        if (!p) goto nomem;
        last_dir = p;
        last_dir_cap = cap;
      }
      memcpy(last_dir, path, dir_len);
      last_dir_len = dir_len;
      have_last = true;
      if (asked->n > 0 && dir_len > 0 && asked_folders(asked, path, dir_len, tracked, &asked_at, &asked_len)) goto nomem;
      if (memchr(path, '\n', dir_len)) {
        dir_id = -1; /* its files cannot be named on cat-file's input */
      } else if ((dir_id = folder_id(t, path, dir_len)) < 0) {
        goto nomem;
      }
    }
    uint32_t stage = (flags >> 12) & 3;
    if (stage != 0 || (flags & 0x8000) || (extended & 0x6000)) continue;
    const uint8_t *e = buf + start;
    if (be32(e + 24) >> 12 != 0x8) continue; /* links and submodules are not blobs of a file */
    double mtime = (double)be32(e + 8) * 1000 + (double)be32(e + 12) / 1e6;
    if (mtime >= index_mtime || be32(e + 36) == 0) continue; /* racy, or smudged by git as racy */
    if (dir_id < 0) continue;
    const uint8_t *name = path + slash;
    size_t name_len = path_len - slash;
    if (memchr(name, '\n', name_len)) continue; /* cannot be named on cat-file's input */
    int64_t at = keep_bytes(t, name, name_len);
    if (at < 0) goto nomem;
    pending_t *p = &pend[n_pend++];
    p->e.name_off = (uint32_t)at;
    p->e.name_len = (uint32_t)name_len;
    p->e.entry_off = (uint32_t)start;
    p->folder = (uint32_t)dir_id;
    t->folders[dir_id].count++;
  }
  /* Extensions: a split index ("link") or sparse folders ("sdir") leave entries out. */
  while (len >= hash_len && o + 8 <= len - hash_len) {
    if (memcmp(buf + o, "link", 4) == 0 || memcmp(buf + o, "sdir", 4) == 0) goto unusable;
    o += 8 + (size_t)be32(buf + o + 4);
  }
  /* Grouped by folder (a counting sort keeps the index's order within each). */
  t->entries = malloc((n_pend ? n_pend : 1) * sizeof *t->entries);
  if (!t->entries) goto nomem;
  uint32_t at = 0;
  for (size_t f = 0; f < t->n_folders; f++) {
    t->folders[f].first = at;
    at += t->folders[f].count;
    t->folders[f].count = 0;
  }
  for (size_t k = 0; k < n_pend; k++) {
    folder_t *f = &t->folders[pend[k].folder];
    t->entries[f->first + f->count++] = pend[k].e;
  }
  /*
   * Each folder's names in byte order, one entry a name: the index is sorted, so they come so;
   * an index that is not is sorted here, and of a name met twice the last one is kept (as a map
   * keyed by name keeps it).
   */
  const uint8_t *base = names_base(t);
  size_t n = 0;
  for (size_t f = 0; f < t->n_folders; f++) {
    folder_t *fo = &t->folders[f];
    git_entry_t *run = t->entries + fo->first;
    bool sorted = true;
    for (uint32_t k = 1; k < fo->count && sorted; k++) sorted = entry_cmp(base, &run[k - 1], &run[k]) < 0;
    if (!sorted) sort_entries(base, run, (git_entry_t *)pend, fo->count); /* `pend` is done with: scratch */
    uint32_t first = (uint32_t)n;
    for (uint32_t k = 0; k < fo->count; k++) {
      if (k + 1 < fo->count && run[k].name_len == run[k + 1].name_len && memcmp(base + run[k].name_off, base + run[k + 1].name_off, run[k].name_len) == 0) continue;
      t->entries[n++] = run[k];
    }
    fo->first = first;
    fo->count = (uint32_t)n - first;
  }
  t->n_entries = n;
  goto done;
unusable:
  status = READ_UNUSABLE;
  goto done;
nomem:
  status = READ_NOMEM;
done:
  free(pend);
  free(prev);
  free(last_dir);
  return status;
}

static void finalize_table(napi_env env, void *data, void *hint) {
  git_table_t *t = data;
  if (t->ref) napi_delete_reference(env, t->ref);
  table_free(t);
}

/* A tag that tells this module's tables from any other external. */
static const napi_type_tag TABLE_TAG = {0x74616b656261636bull, 0x6769742d696e6478ull};

git_table_t *git_table_of(napi_env env, napi_value v) {
  napi_valuetype type;
  bool tagged = false;
  void *data = NULL;
  if (napi_typeof(env, v, &type) != napi_ok || type != napi_external) return NULL;
  if (napi_check_object_type_tag(env, v, &TABLE_TAG, &tagged) != napi_ok || !tagged) return NULL;
  if (napi_get_value_external(env, v, &data) != napi_ok) return NULL;
  return data;
}

const git_entry_t *git_table_folder(const git_table_t *t, const uint8_t *dir, size_t len, size_t *count) {
  int64_t id = find_folder(t, dir, len);
  if (id < 0 || t->folders[id].count == 0) {
    *count = 0;
    return NULL;
  }
  *count = t->folders[id].count;
  return t->entries + t->folders[id].first;
}

const uint8_t *git_table_name(const git_table_t *t, const git_entry_t *e) { return names_base(t) + e->name_off; }

/* The low 32 bits of a size or inode as JavaScript sees it (a double, `% 2 ** 32`). */
static uint32_t low32(double d) { return d >= 18446744073709551616.0 ? 0 : (uint32_t)(uint64_t)d; }

const uint8_t *git_table_match(const git_table_t *t, const git_entry_t *e, double size, double ino, double mtime_ms, double ctime_ms) {
  const uint8_t *p = t->index + e->entry_off;
  if (low32(size) != be32(p + 36) || low32(ino) != be32(p + 20)) return NULL;
  double dm = mtime_ms - ((double)be32(p + 8) * 1000 + (double)be32(p + 12) / 1e6);
  double dc = ctime_ms - ((double)be32(p) * 1000 + (double)be32(p + 4) / 1e6);
  return dm < 0.001 && dm > -0.001 && dc < 0.001 && dc > -0.001 ? p + 40 : NULL;
}

int git_table_hash_len(const git_table_t *t) { return t->hash_len; }

static napi_value git_index_table(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4) return tb_fail(env, "gitIndexTable: four arguments");
  bool is_buffer = false;
  void *data = NULL;
  size_t len = 0;
  if (napi_is_buffer(env, argv[0], &is_buffer) != napi_ok || !is_buffer || napi_get_buffer_info(env, argv[0], &data, &len) != napi_ok) {
    return tb_fail(env, "gitIndexTable: index must be a Buffer");
  }
  double hash_len = 0, index_mtime = 0;
  if (napi_get_value_double(env, argv[1], &hash_len) != napi_ok || (hash_len != 20 && hash_len != 32)) return tb_fail(env, "gitIndexTable: hashLen must be 20 or 32");
  if (napi_get_value_double(env, argv[2], &index_mtime) != napi_ok) return tb_fail(env, "gitIndexTable: indexMtimeMs must be a number");
  bool is_array = false;
  uint32_t n_asked = 0;
  if (napi_is_array(env, argv[3], &is_array) != napi_ok || !is_array || napi_get_array_length(env, argv[3], &n_asked) != napi_ok) {
    return tb_fail(env, "gitIndexTable: askedNames must be an array");
  }
  asked_t asked = {calloc(n_asked ? n_asked : 1, sizeof(char *)), calloc(n_asked ? n_asked : 1, sizeof(size_t)), n_asked};
  git_table_t *t = calloc(1, sizeof *t);
  out_t tracked = {0};
  const char *error = NULL;
  if (!asked.names || !asked.lens || !t) error = "gitIndexTable: out of memory";
  for (uint32_t k = 0; !error && k < n_asked; k++) {
    napi_value s;
    if (napi_get_element(env, argv[3], k, &s) != napi_ok || !(asked.names[k] = tb_utf8(env, s, &asked.lens[k]))) error = "gitIndexTable: askedNames must hold strings";
  }
  read_status st = READ_OK;
  if (!error) {
    t->index = data;
    t->index_len = len;
    t->hash_len = (int)hash_len;
    st = read_index(t, index_mtime, &asked, &tracked);
    if (st == READ_NOMEM) error = "gitIndexTable: out of memory";
  }
  napi_value result = NULL;
  if (!error && st == READ_UNUSABLE) {
    napi_get_null(env, &result);
  } else if (!error) {
    napi_value ext, buf;
    void *bytes = NULL;
    if (napi_create_object(env, &result) != napi_ok || napi_create_buffer_copy(env, tracked.n, tracked.n ? tracked.p : (void *)"", &bytes, &buf) != napi_ok ||
        napi_set_named_property(env, result, "trackedExcluded", buf) != napi_ok || napi_create_reference(env, argv[0], 1, &t->ref) != napi_ok) {
      error = "gitIndexTable: could not make the result";
    } else if (napi_create_external(env, t, finalize_table, NULL, &ext) != napi_ok) {
      napi_delete_reference(env, t->ref);
      error = "gitIndexTable: could not make the result";
    } else {
      t = NULL; /* the external owns it now */
      if (napi_type_tag_object(env, ext, &TABLE_TAG) != napi_ok || napi_set_named_property(env, result, "table", ext) != napi_ok) error = "gitIndexTable: could not make the result";
    }
  }
  table_free(t);
  free(tracked.p);
  for (uint32_t k = 0; k < n_asked; k++) {
    if (asked.names) free(asked.names[k]);
  }
  free(asked.names);
  free(asked.lens);
  if (error) return tb_fail(env, error);
  return result;
}

int git_index_init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "gitIndexTable", NAPI_AUTO_LENGTH, git_index_table, NULL, &fn) != napi_ok) return -1;
  return napi_set_named_property(env, exports, "gitIndexTable", fn) == napi_ok ? 0 : -1;
}
