import type { Workspace } from '../core/open-workspace.js';
import { readWorkspaceState } from '../core/fsstate.js';
import { changeHunks } from '../core/plan/hunks.js';
import { isMergeableText } from '../core/plan/merge.js';
import { textBlob } from '../core/plan/plan.js';
import type { BytesReader } from '../core/plan/preview.js';
import { fromWorkspacePath } from '../core/workspace.js';
import { toFileHunk, type ListResult } from '../wire.js';

/*
 * The hunks of one file in a listing (`list --hunks PATH`, `changes/list` with `hunks`): a module
 * of its own, loaded only when asked, so that a plain listing reads no file and loads no diff.
 */

/** The bytes of workspace path `path` on the disk now; 'secret' for a secret's, null when there are none. */
function diskBytes(ws: Workspace): BytesReader {
  return (path, abs) => {
    const r = readWorkspaceState(ws, path, { abs });
    return r.gap === 'secret' ? 'secret' : (r.bytes ?? null);
  };
}

/**
 * Gives `path`'s summary in each set of `list` the hunks of that set's change to it, placed in
 * the file as `now` reads it (default: the disk), and returns `list`. The file is read once, and
 * only when a listed set touches it, with the kept copies of those sets; a change whose sides are
 * not both kept text (created, deleted, binary, a link) gets none, and so does every change while
 * the file now is not text.
 */
export function withHunks(ws: Workspace, list: ListResult, path: string, now: BytesReader = diskBytes(ws)): ListResult {
  let bytes: Buffer | null | undefined;
  for (const summary of list.sets) {
    const file = summary.files.find((f) => f.path === path);
    // A tombstone's copies are gone.
    if (!file || summary.state === 'expired') continue;
    if (bytes === undefined) {
      const b = now(path, fromWorkspacePath(ws.root, path));
      bytes = b instanceof Buffer && isMergeableText(b) ? b : null;
    }
    if (bytes === null) break;
    const change = ws.journal.sets.get(summary.id).files.find((f) => f.path === path);
    const before = change && textBlob(ws, change.before);
    const after = before && change && textBlob(ws, change.after);
    if (!before || !after) continue;
    file.hunks = changeHunks(before, after, bytes).map(toFileHunk);
  }
  return list;
}
