import { dirname } from 'node:path';
import { syncAll } from '../durable.js';
import type { Journal } from '../journal/journal.js';
import { readState } from '../fsstate.js';
import { sameState, type FileState } from '../types.js';
import { fromWorkspacePath } from '../workspace.js';
import { removeTemp, writeState } from './safe-fs.js';

/**
 * Finishes what a killed process left: each undo/redo transaction file still present either
 * completed (its step is recorded as done: the file is just removed) or did not (every path it
 * touched is put back to the state found before it began, from the copies kept in the blob
 * store, and temporary files are removed). `ws` is the workspace: its root (a real path) and its
 * journal (an opened workspace will do). Must run inside the journal's write lock, which a live applier holds for the whole
 * of its step. Returns the number of transactions rolled back.
 */
export function recoverTxns(ws: { root: string; journal: Journal }): number {
  const { root, journal } = ws;
  let rolledBack = 0;
  for (const t of journal.txns.all()) {
    const done = journal.db.prepare('SELECT 1 FROM meta WHERE key = ?').get(`txn:${t.id}`);
    if (!done) {
      for (const op of [...t.ops].reverse()) {
        removeTemp(root, op.path, t.id);
        try {
          const abs = fromWorkspacePath(root, op.path);
          const now = readState(abs, { maxFileBytes: Number.MAX_SAFE_INTEGER });
          if (sameState(now.state, op.from)) continue;
          // Someone else's since the step was cut short (a person's save before this start): theirs
          // to keep, and the next scan sees it as their change. Only what the step wrote, or a
          // write in place it was cut short in, is put back.
          if (!sameState(now.state, op.to) && !cutShort(now.bytes, op, journal)) continue;
          const from = op.from;
          const bytes = from.exists && from.type === 'file' && from.sha256 ? journal.blobs.get(from.sha256) : null;
          writeState(root, op.path, from, bytes, `${t.id}r`);
        } catch {
          // A path that cannot be put back stays as it is; doctor names leftover transactions.
        }
      }
      // What was put back is durable before the record that could put it back again goes.
      syncWritten(root, t.ops);
      rolledBack++;
    }
    journal.txns.remove(t.id);
    journal.db.prepare('DELETE FROM meta WHERE key = ?').run(`txn:${t.id}`);
  }
  return rolledBack;
}

/**
 * True when `now` (the bytes at a path, undefined: not a file whose bytes could be read) may be
 * what a write of file `op.to` that was cut short (by a kill or a power cut) leaves there: no
 * bytes yet (a new file renamed in before its bytes reached the disk), the step's bytes up to
 * some point or with blocks of zeros where they had not reached it, or — written in place over
 * file `op.from` — the step's bytes up to some offset followed by the file's bytes from before
 * from there (the write goes from the start; a shorter file is cut last). The mode is not
 * looked at (it may not be set yet). Also true when the bytes of either side are not kept (it
 * cannot be told apart: put back, as any step's write). False for anything else: bytes no write
 * of `op` leaves, someone else's since.
 */
function cutShort(now: Buffer | undefined, op: { from: FileState; to: FileState }, journal: Journal): boolean {
  const { from, to } = op;
  if (!now || !(to.exists && to.type === 'file')) return false;
  const b = to.sha256 ? journal.blobs.get(to.sha256) : null;
  if (!b) return true;
  if (now.length <= b.length) {
    let i = 0;
    while (i < now.length && (now[i] === b[i] || now[i] === 0)) i++;
    if (i === now.length) return true;
  }
  if (!(from.exists && from.type === 'file')) return false;
  const a = from.sha256 ? journal.blobs.get(from.sha256) : null;
  if (!a) return true;
  // In place: some k with now[0, k) = b[0, k) and now[k, …) = a[k, …), now as long as the
  // longer of a and k. p: how far now begins as b does; j: from where now ends as a does.
  let p = 0;
  while (p < now.length && p < b.length && now[p] === b[p]) p++;
  if (now.length !== a.length) return p === now.length && now.length > a.length; // k = now's length
  let j = now.length;
  while (j > 0 && now[j - 1] === a[j - 1]) j--;
  return j <= p;
}

/**
 * Makes the workspace paths of `ops` durable as written: each file's bytes and each folder
 * holding a path written, made or removed (see durable.ts: one by one, or one syncfs for many).
 * A path that cannot be opened (gone, or a link) is skipped.
 */
export function syncWritten(root: string, ops: readonly { path: string; to: FileState }[]): void {
  const files: string[] = [];
  const folders: string[] = [];
  for (const op of ops) {
    const abs = fromWorkspacePath(root, op.path);
    if (op.to.exists && op.to.type === 'file') files.push(abs);
    if (op.to.exists && op.to.type === 'dir') folders.push(abs);
    folders.push(dirname(abs));
  }
  syncAll(files, folders, root);
}
