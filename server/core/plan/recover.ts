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
