import type { Workspace } from '../open-workspace.js';
import { unifiedDiff } from '../diffs.js';
import { readWorkspaceState } from '../fsstate.js';
import type { CaptureGap, FileState } from '../types.js';
import { fromWorkspacePath } from '../workspace.js';
import type { LineRange } from './merge.js';
import { heldDiskReader, type Action, type Conflict, type CurrentBytes, type CurrentReader, type Plan } from './plan.js';

/** One path of a preview: what will happen, the diff from now to after, and why it may not. */
export interface PreviewFile {
  path: string;
  action: Action;
  conflict: Conflict | null;
  gap: CaptureGap | null;
  /** Unified diff (3 lines of context) from what is there now to what the step leaves; null when there is none to show. */
  diff: string | null;
  /** Said instead of a diff: "binary files differ", "too large to show a diff", "a secret: not shown". */
  note: string | null;
  sets: string[];
  /**
   * True when the step writes a three-way merge: the change taken back (redo: made again) while
   * the later edits to the file, which do not overlap it, are kept ("put back, keeping later
   * changes"); `diff` then goes from the file now to the merged text. Absent otherwise.
   */
  merged?: boolean;
  /**
   * With the step narrowed to files: the selected changes' hunks of this path that are still in
   * the file, each placed by its changed lines in the file now (1-based; `end < start`: lines go
   * in just before `start`) with its set, and `taken` when the step moves it (all of them, without
   * `--lines`). `lines` is how many changed lines it has there; `before` and `after` are its changed
   * lines in what the change found and in what it left (`lines: 0`: the place just before
   * `start`). Absent otherwise, and for a path that is not text.
   */
  hunks?: { set: string; start: number; end: number; lines: number; before: LineSpan; after: LineSpan; taken: boolean }[];
}

/** A run of lines: the first (1-based) and how many (0: the place just before `start`). */
export interface LineSpan {
  start: number;
  lines: number;
}

/** The span of an inclusive range (`end < start`: none, the place just before `start`). */
export function lineSpan(r: LineRange): LineSpan {
  return { start: r.start, lines: Math.max(0, r.end - r.start + 1) };
}

/**
 * Reads the bytes a path holds now: null when there are none to show (gone, not a file, too
 * large, unreadable), `'secret'` when they hold a secret (a secret place's file, or content in
 * which core/secrets.ts finds a token or key), whose bytes a preview never prints. The sidecar
 * passes one that sees unsaved editor text.
 */
export type BytesReader = (path: string, abs: string) => Buffer | null | 'secret';

/** What a preview says instead of the diff of a file whose bytes hold a secret. */
export const SECRET_NOTE = 'a secret: not shown';

function diskBytes(ws: Workspace): BytesReader {
  return (path, abs) => {
    const r = readWorkspaceState(ws, path, { abs });
    return r.gap === 'secret' ? 'secret' : (r.bytes ?? null);
  };
}

/**
 * The disk readers of one preview, sharing their reads: `state` reads a path as `diskReader`
 * (plan.ts) does and holds the bytes it read ({@link heldDiskReader}); `merge` hands the plan's
 * three-way merges and hunks those bytes, and `bytes` hands them to the diff (once), instead of reading and
 * hashing the file again. A path whose bytes were not held (a secret place, too large to keep,
 * past the held total) is read from the disk as before. Use them for one plan and its preview
 * only, `merge` in the plan before `bytes` in the preview.
 */
export function diskReaders(ws: Workspace): { state: CurrentReader; merge: CurrentBytes; bytes: BytesReader } {
  const { read, held, bytes: merge } = heldDiskReader(ws);
  const fallback = diskBytes(ws);
  return {
    state: read,
    merge,
    bytes: (path, abs) => {
      const r = held.get(path);
      held.delete(path);
      if (r?.gap === 'secret') return 'secret';
      return r?.bytes ?? fallback(path, abs);
    },
  };
}

/** The bytes of kept blob `s` (null: not a kept file, or its blob is missing or damaged). */
function blobBytes(ws: Workspace, s: FileState): Buffer | null {
  if (!s.exists || s.type !== 'file' || !s.sha256) return null;
  try {
    return ws.journal.blobs.get(s.sha256);
  } catch {
    return null;
  }
}

/** The preview of a plan: per path its action, conflict, gap and diff. Writes nothing. */
export function previewPlan(ws: Workspace, plan: Plan, readBytes: BytesReader = diskBytes(ws)): PreviewFile[] {
  // A blob that is the target of several paths (copies of one file) is read and verified once.
  const seen = new Set<string>();
  const shared = new Map<string, Buffer | null>();
  for (const f of plan.files) {
    const h = f.target.exists && f.target.type === 'file' ? f.target.sha256 : null;
    if (h === null) continue;
    if (seen.has(h)) shared.set(h, null);
    else seen.add(h);
  }
  const targetBytes = (s: FileState): Buffer | null => {
    const h = s.exists && s.type === 'file' ? s.sha256 : null;
    if (h === null || !shared.has(h)) return blobBytes(ws, s);
    const had = shared.get(h);
    if (had) return had;
    const bytes = blobBytes(ws, s);
    if (bytes) shared.set(h, bytes);
    return bytes;
  };
  return plan.files.map((f) => {
    let diff: string | null = null;
    let note: string | null = null;
    if (!f.gap && f.action !== 'none') {
      if (f.current.exists && f.current.type !== 'file') note = f.current.type === 'symlink' ? `a link to ${f.current.target}` : 'a folder';
      if (f.target.exists && f.target.type === 'symlink') note = `becomes a link to ${f.target.target}`;
      else if (f.target.exists && f.target.type === 'dir') note = f.current.exists ? 'mode only' : 'folder comes back';
      else if (!f.target.exists && f.current.exists && f.current.type === 'dir') note = 'folder removed';
      if (note === null || (f.current.exists && f.current.type === 'file') || (f.target.exists && f.target.type === 'file')) {
        if (f.action === 'restore-mode') {
          // Only the mode changes: the bytes are not needed.
          const m = (s: FileState) => (s.exists ? `0${s.mode.toString(8)}` : '-');
          note = `mode ${m(f.current)} → ${m(f.target)}`;
        } else {
          let abs: string | null = null;
          try {
            abs = fromWorkspacePath(ws.root, f.path);
          } catch {
            abs = null;
          }
          const now = abs && f.current.exists && f.current.type === 'file' ? readBytes(f.path, abs) : null;
          if (now === 'secret') {
            // The file as it is now holds a secret: its text is never printed, not even as the
            // old side of a diff.
            note = SECRET_NOTE;
          } else {
            const d = unifiedDiff(f.path, now, f.merged ?? targetBytes(f.target));
            diff = d.diff;
            note = d.note ?? note;
          }
        }
      }
    }
    return {
      path: f.path,
      action: f.action,
      conflict: f.conflict,
      gap: f.gap,
      diff,
      note,
      sets: f.sets,
      ...(f.merged ? { merged: true } : {}),
      ...(f.hunks
        ? { hunks: f.hunks.map((h) => ({ set: h.set, start: h.now.start, end: h.now.end, lines: lineSpan(h.now).lines, before: lineSpan(h.before), after: lineSpan(h.after), taken: h.taken })) }
        : {}),
    };
  });
}
