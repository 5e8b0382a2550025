import type { Workspace } from '../open-workspace.js';
import { ScanFilter } from '../scan/filter.js';
import { S_IFDIR, S_IFMT } from '../scan/lstat.js';
import type { PackedEntry } from '../scan/packed.js';
import { mainReader } from '../scan/stat-check.js';
import { fromWorkspacePath } from '../workspace.js';
import type { FileState, GapReason } from '../types.js';

/**
 * Brings the snapshot index up to date for `paths` (workspace-relative) whose new state takeback
 * already knows: a file tool's result, an undo's writes. Without this the next command's scan
 * would see those paths move and blame the command (or the turn) for them. Paths the scan does
 * not cover are left out, as are workspaces with no usable snapshot. Call inside a write
 * transaction.
 */
export function syncIndex(ws: Workspace, changed: { path: string; state: FileState; gap?: GapReason | undefined }[]): void {
  const { journal, root, config } = ws;
  const meta = journal.snapshot.meta();
  if (!meta || meta.status !== 'ok' || changed.length === 0) return;
  const filter = new ScanFilter(root, config.excludeNames, meta.trackedExcluded ?? [], config.excludePaths);
  // [mode, size, ino, mtimeMs, ctimeMs]: Node's `*Ms` values, as the packed index keeps them.
  const lstat = mainReader();
  const upserts: [string, PackedEntry][] = [];
  const deletes: string[] = [];
  for (let i = 0; i < changed.length; i++) {
    const path = changed[i]!.path;
    let state = changed[i]!.state;
    if (path.startsWith('/')) continue;
    let abs: string | null;
    try {
      abs = fromWorkspacePath(root, path);
    } catch {
      abs = null; // not a workspace path: nothing there to look at
    }
    if (!state.exists) {
      // A folder meant to go may still be there (not empty: left in place on purpose).
      const st = abs === null ? null : lstat(abs);
      if (st && (st[0]! & S_IFMT) === S_IFDIR) state = { exists: true, type: 'dir', mode: st[0]! & 0o7777 };
    }
    if (filter.skips(path, state.exists && state.type === 'dir')) continue;
    if (!state.exists) {
      deletes.push(path);
      continue;
    }
    const st = abs === null ? null : lstat(abs);
    if (!st) {
      deletes.push(path);
      continue;
    }
    upserts.push([
      path,
      {
        name: '',
        type: state.type,
        mode: state.mode,
        size: state.type === 'file' ? state.size : 0,
        mtimeMs: st[3]!,
        ctimeMs: st[4]!,
        ino: st[2]!,
        sha256: state.type === 'file' ? state.sha256 : null,
        git: null,
        target: state.type === 'symlink' ? state.target : null,
        gap: changed[i]!.gap ?? null,
      },
    ]);
  }
  journal.snapshot.updatePacked(upserts, deletes);
}
