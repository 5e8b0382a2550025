import type { Workspace } from '../open-workspace.js';
import { readWorkspaceState } from '../fsstate.js';
import { ScanFilter } from '../scan/filter.js';
import { entryState, materializeGit } from '../scan/scan.js';
import { sameState, type ChangeSet } from '../types.js';
import { fromWorkspacePath } from '../workspace.js';
import { makeChange } from './file-change.js';
import { syncIndex } from './index-sync.js';

/**
 * A save the person made in an editor connected to the sidecar (`editor`: its name, `Neovim`):
 * what workspace path `path` holds now, against what the snapshot index last held for it, is
 * recorded as a set of the person's (source `person`, outside any turn), and the index is brought
 * up to date, so that no command's scan, nor a turn's end, takes the save for the agent's doing.
 * Nothing is recorded without a usable snapshot (nothing to compare with), for a path the scan
 * does not cover (excluded, ignored), when the file is as the index holds it (a save of what the
 * agent or an undo left), or when it holds what the newest recorded change to it found or left,
 * or what takeback's newest undo or redo there found (the editor's own undo of the agent's edit,
 * or of takeback's, saved: of a per-hunk undo, or of one that kept later edits, the file holds
 * neither side of the change): the journal's own states of the path judge those. Returns the
 * set, or null. Call inside a write transaction.
 */
export function recordSave(ws: Workspace, path: string, editor: string, now?: number): ChangeSet | null {
  const { journal, root, config } = ws;
  const meta = journal.snapshot.meta();
  if (!meta || meta.status !== 'ok') return null;
  let abs: string;
  try {
    abs = fromWorkspacePath(root, path);
  } catch {
    return null;
  }
  const r = readWorkspaceState(ws, path, { abs, blobs: journal.blobs });
  const filter = new ScanFilter(root, config.excludeNames, meta.trackedExcluded ?? [], config.excludePaths);
  if (filter.skips(path, r.state.exists && r.state.type === 'dir')) return null;
  const newest = [...journal.sets.touching(path, false), ...journal.sets.touching(path, true)].sort((a, b) => Number(b.id) - Number(a.id))[0];
  const known = newest?.files.find((f) => f.path === path);
  const found = journal.oplog.foundAt(path);
  if ((known && (sameState(known.before, r.state) || sameState(known.after, r.state))) || (found && sameState(found, r.state))) {
    syncIndex(ws, [{ path, state: r.state, gap: r.gap }]);
    return null;
  }
  const entry = journal.snapshot.entry(path);
  // A tracked file the index knows by its git blob only: its bytes go to the store, as a scan's change would.
  if (entry) materializeGit(root, journal.blobs, [{ path, before: entry, after: undefined }]);
  const change = makeChange(journal.blobs, path, entryState(entry), r.state, r.gap ?? entry?.gap ?? undefined, r.bytes ?? undefined);
  if (!change) return null;
  const set = journal.sets.add({ turn: null, agent: null, session: null, source: { kind: 'person', editor }, files: [change], now });
  syncIndex(ws, [{ path, state: r.state, gap: r.gap }]);
  return set;
}
