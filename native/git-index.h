/*
 * git's index as the first scan's listing asks it (native/git-index.c builds it, scan-list.c reads
 * it): for a folder, its files' names in byte order, each with the fields a stat is matched
 * against and its blob's object id as bytes. Read only once built, so the listing's threads share
 * it.
 */
#ifndef TAKEBACK_GIT_INDEX_H
#define TAKEBACK_GIT_INDEX_H

#include <node_api.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One usable stage-0 regular file of the index (see readGitIndex in git-index.ts for which are):
 * where its name is (git_table_name) and where its entry starts in the index's bytes (its stat
 * fields and object id are read there, for a name that matches).
 */
typedef struct {
  uint32_t name_off, name_len, entry_off;
} git_entry_t;

typedef struct git_table git_table_t;

/* The table of a `gitIndexTable` result (a JavaScript external); NULL when `v` is not one. */
git_table_t *git_table_of(napi_env env, napi_value v);

/*
 * The files of folder `dir` (`len` bytes, workspace-relative, empty for the root), sorted by name
 * in byte order with no name twice: `*count` of them from the returned pointer; NULL (and 0) when
 * the index has none there.
 */
const git_entry_t *git_table_folder(const git_table_t *t, const uint8_t *dir, size_t len, size_t *count);

/* The name bytes of entry `e` of table `t`. */
const uint8_t *git_table_name(const git_table_t *t, const git_entry_t *e);

/*
 * The object id (git_table_hash_len bytes) of entry `e` of table `t` when a file of that name
 * with the stat fields given matches it (statMatchesGit in git-index.ts: the low 32 bits of size
 * and inode, times within a microsecond; `size` and `ino` as JavaScript holds them, doubles),
 * else NULL.
 */
const uint8_t *git_table_match(const git_table_t *t, const git_entry_t *e, double size, double ino, double mtime_ms, double ctime_ms);

/* The object id length of table `t`'s repository: 20 (SHA-1) or 32 (SHA-256). */
int git_table_hash_len(const git_table_t *t);

/* Registers `gitIndexTable` on `exports`; 0 when done. */
int git_index_init(napi_env env, napi_value exports);

#endif
