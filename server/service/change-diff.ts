import type { Workspace } from '../core/open-workspace.js';
import { unifiedDiff } from '../core/diffs.js';
import { findRenames } from '../core/renames.js';
import type { FileChange, FileState } from '../core/types.js';

/*
 * What the agent did, as a person reads it in `takeback show`: each file's own diff, forward
 * (from the bytes before the change to the bytes it left), and a `mv` as a rename.
 */

/**
 * One path of a change, forward: `diff` is the unified diff (3 lines of context) from before to
 * after, or null with `note` saying why there is none ("binary files differ", "too large to show
 * a diff", "not kept: secret", "mode 0644 → 0755"). A rename is one entry: `path` the new path,
 * `renamedFrom` the old, `diff` null when the bytes are the same.
 */
export interface ChangeFileDiff {
  path: string;
  renamedFrom?: string;
  diff: string | null;
  note: string | null;
}

/** The sha256 of a regular file's kept bytes, or null. */
function keptHash(s: FileState): string | null {
  return s.exists && s.type === 'file' ? s.sha256 : null;
}

/** The kept bytes of state `s`: null when it is no file, or its bytes were not kept or are missing. */
function bytesOf(ws: Workspace, s: FileState): Buffer | null {
  const h = keptHash(s);
  if (h === null) return null;
  try {
    return ws.journal.blobs.get(h);
  } catch {
    return null;
  }
}

function modeText(s: FileState): string {
  return s.exists ? `0${(s.mode & 0o7777).toString(8)}` : '';
}

/** Why a path's forward change has no text diff, when it is not about bytes. */
function stateNote(f: FileChange): string | null {
  if (f.gap) return `not kept: ${f.gap}`;
  const { before: b, after: a } = f;
  if (b.exists && a.exists && b.type !== a.type) return `${b.type} → ${a.type}`;
  if ((b.exists && b.type === 'symlink') || (a.exists && a.type === 'symlink')) {
    const from = b.exists && b.type === 'symlink' ? b.target : null;
    const to = a.exists && a.type === 'symlink' ? a.target : null;
    return from === null ? `link → ${to}` : to === null ? `link → ${from} removed` : `link → ${from} now → ${to}`;
  }
  if ((b.exists && b.type === 'dir') || (a.exists && a.type === 'dir')) return a.exists ? (b.exists ? `folder mode ${modeText(b)} → ${modeText(a)}` : 'folder created') : 'folder removed';
  return null;
}

/**
 * Each path of change set `id`, forward, in the set's order, with renames folded into one entry
 * (core/renames.ts). Reads the kept blobs; writes nothing. Throws as `sets.get` does
 * (`invalid-id`, `not-found`, `expired`).
 */
export function changeDiffs(ws: Workspace, id: string): ChangeFileDiff[] {
  const set = ws.journal.sets.get(id);
  const renames = findRenames(set.files);
  const renamedAway = new Set(renames.values());
  const out: ChangeFileDiff[] = [];
  for (const f of set.files) {
    if (renamedAway.has(f.path)) continue;
    const from = renames.get(f.path);
    if (from !== undefined) {
      out.push({ path: f.path, renamedFrom: from, diff: null, note: null });
      continue;
    }
    const note = stateNote(f);
    if (note !== null) {
      out.push({ path: f.path, diff: null, note });
      continue;
    }
    const before = bytesOf(ws, f.before);
    const after = bytesOf(ws, f.after);
    if ((f.before.exists && before === null) || (f.after.exists && after === null)) {
      out.push({ path: f.path, diff: null, note: 'its kept copy is missing' });
      continue;
    }
    const d = unifiedDiff(f.path, before, after);
    const mode = f.before.exists && f.after.exists && f.before.mode !== f.after.mode ? `mode ${modeText(f.before)} → ${modeText(f.after)}` : null;
    out.push({ path: f.path, diff: d.diff, note: [mode, d.note].filter(Boolean).join('; ') || null });
  }
  return out;
}
