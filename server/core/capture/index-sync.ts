import { lstatSync } from 'node:fs';
import type { Engine } from '../engine.js';
import type { IndexEntry } from '../journal/snapshot-index.js';
import { ScanFilter } from '../scan/filter.js';
import { fromWorkspacePath } from '../workspace.js';
import type { FileState, GapReason } from '../types.js';

/**
 * Brings the snapshot index up to date for `paths` (workspace-relative) whose new state takeback
 * already knows: a file tool's result, an undo's writes. Without this the next command's scan
 * would see those paths move and blame the command (or the turn) for them. Paths the scan does
 * not cover are left out, as are workspaces with no usable snapshot. Call inside a write
 * transaction.
 */
export function syncIndex(engine: Engine, changed: { path: string; state: FileState; gap?: GapReason | undefined }[]): void {
  const { journal, root, config } = engine;
  const meta = journal.snapshot.meta();
  if (!meta || meta.status !== 'ok' || changed.length === 0) return;
  const filter = new ScanFilter(root, config.excludeNames, meta.trackedExcluded ?? []);
  const upserts: [string, IndexEntry][] = [];
  const deletes: string[] = [];
  for (const change of changed) {
    const { path, gap } = change;
    let { state } = change;
    if (path.startsWith('/')) continue;
    if (!state.exists) {
      // A folder meant to go may still be there (not empty: left in place on purpose).
      try {
        const st = lstatSync(fromWorkspacePath(root, path));
        if (st.isDirectory()) state = { exists: true, type: 'dir', mode: st.mode & 0o7777 };
      } catch {
        // gone, as planned
      }
    }
    if (filter.skips(path, state.exists && state.type === 'dir')) continue;
    if (!state.exists) {
      deletes.push(path);
      continue;
    }
    let st;
    try {
      st = lstatSync(fromWorkspacePath(root, path), { bigint: true });
    } catch {
      deletes.push(path);
      continue;
    }
    upserts.push([
      path,
      {
        type: state.type,
        size: state.type === 'file' ? state.size : 0,
        mtime: String(st.mtimeNs),
        ctime: String(st.ctimeNs),
        ino: String(st.ino),
        mode: state.mode,
        sha256: state.type === 'file' ? state.sha256 : null,
        target: state.type === 'symlink' ? state.target : null,
        gap: gap ?? null,
      },
    ]);
  }
  journal.snapshot.update(upserts, deletes);
}
