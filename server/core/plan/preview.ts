import type { Engine } from '../engine.js';
import { unifiedDiff } from '../diffs.js';
import { readState } from '../fsstate.js';
import type { CaptureGap, FileState } from '../types.js';
import { fromWorkspacePath } from '../workspace.js';
import type { Action, Conflict, Plan } from './plan.js';

/** One path of a preview: what will happen, the diff from now to after, and why it may not. */
export interface PreviewFile {
  path: string;
  action: Action;
  conflict: Conflict | null;
  gap: CaptureGap | null;
  /** Unified diff (3 lines of context) from what is there now to what the step leaves; null when there is none to show. */
  diff: string | null;
  /** Said instead of a diff: "binary files differ", "too large to show a diff". */
  note: string | null;
  sets: string[];
}

/** Reads the bytes a path holds now; the sidecar passes one that sees unsaved editor text. */
export type BytesReader = (path: string, abs: string) => Buffer | null;

function diskBytes(engine: Engine): BytesReader {
  return (_path, abs) => readState(abs, { maxFileBytes: engine.config.maxFileBytes }).bytes ?? null;
}

function blobBytes(engine: Engine, s: FileState): Buffer | null {
  if (!s.exists || s.type !== 'file' || !s.sha256) return null;
  try {
    return engine.journal.blobs.get(s.sha256);
  } catch {
    return null;
  }
}

/** The preview of a plan: per path its action, conflict, gap and diff. Writes nothing. */
export function previewPlan(engine: Engine, plan: Plan, readBytes: BytesReader = diskBytes(engine)): PreviewFile[] {
  return plan.files.map((f) => {
    let diff: string | null = null;
    let note: string | null = null;
    if (!f.gap && f.action !== 'none') {
      if (f.current.exists && f.current.type !== 'file') note = f.current.type === 'symlink' ? `a link to ${f.current.target}` : 'a folder';
      if (f.target.exists && f.target.type === 'symlink') note = `becomes a link to ${f.target.target}`;
      else if (f.target.exists && f.target.type === 'dir') note = f.current.exists ? 'mode only' : 'folder comes back';
      else if (!f.target.exists && f.current.exists && f.current.type === 'dir') note = 'folder removed';
      if (note === null || (f.current.exists && f.current.type === 'file') || (f.target.exists && f.target.type === 'file')) {
        let abs: string | null = null;
        try {
          abs = fromWorkspacePath(engine.root, f.path);
        } catch {
          abs = null;
        }
        const now = abs && f.current.exists && f.current.type === 'file' ? readBytes(f.path, abs) : null;
        const to = blobBytes(engine, f.target);
        if (f.action === 'restore-mode') {
          const m = (s: FileState) => (s.exists ? `0${s.mode.toString(8)}` : '-');
          note = `mode ${m(f.current)} → ${m(f.target)}`;
        } else {
          const d = unifiedDiff(f.path, now, to);
          diff = d.diff;
          note = d.note ?? note;
        }
      }
    }
    return { path: f.path, action: f.action, conflict: f.conflict, gap: f.gap, diff, note, sets: f.sets };
  });
}
