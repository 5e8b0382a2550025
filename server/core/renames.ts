import type { FileChange, FileState } from './types.js';

/*
 * A `mv` as one change: a command's scan sees a path deleted and another created; when both hold
 * the same bytes and mode, the change is a rename, as git's diff calls it. Only how a change is
 * shown and counted depends on it: the journal keeps both paths, and an undo puts each back.
 */

/** The sha256 of a regular file's kept bytes, or null. */
function keptHash(s: FileState): string | null {
  return s.exists && s.type === 'file' ? s.sha256 : null;
}

/**
 * Renames in one change: a path deleted and another created with the same kept bytes (the same
 * blob) and the same mode, neither a capture gap. Each deleted path pairs with at most one created
 * path, in the change's order, so two copies of one file moved to two places pair one to one.
 * Returns new path → old path (empty when there is none). O(files).
 */
export function findRenames(files: readonly FileChange[]): Map<string, string> {
  const gone = new Map<string, FileChange[]>();
  for (const f of files) {
    const h = f.status === 'deleted' && !f.gap ? keptHash(f.before) : null;
    if (h === null) continue;
    const list = gone.get(h) ?? [];
    list.push(f);
    gone.set(h, list);
  }
  const renames = new Map<string, string>();
  if (gone.size === 0) return renames;
  for (const f of files) {
    const h = f.status === 'created' && !f.gap ? keptHash(f.after) : null;
    const list = h === null ? undefined : gone.get(h);
    if (!list) continue;
    const i = list.findIndex((d) => d.before.exists && f.after.exists && d.before.mode === f.after.mode);
    if (i < 0) continue;
    renames.set(f.path, list.splice(i, 1)[0]!.path);
  }
  return renames;
}
