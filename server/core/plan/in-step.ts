import { lstatSync } from 'node:fs';
import type { Workspace } from '../open-workspace.js';
import { readWorkspaceState } from '../fsstate.js';
import { sameState, type ChangeSet, type FileChange, type FileChangeState, type FileState, type SetState } from '../types.js';
import { fromWorkspacePath } from '../workspace.js';

/** Reads the state of a workspace path (`abs`: its place on disk); plan.ts's CurrentReader. */
type Reader = (path: string, abs: string) => FileState;

/**
 * How much of change `f` is in place in the file at `abs` (state `now`), which is neither what
 * the change left nor what it found: `all` its hunks (the change given back around later edits:
 * an editor's own undo of an undo, saved), `some`, or `none`. A later edit on other lines keeps
 * the change in place, one over its every hunk does not (see service/in-place.ts, which diffs;
 * this module does not, so that a listing loads no diff until a file moved from what the journal
 * left there).
 */
export type HunkInPlace = (f: FileChange, abs: string, now: FileState) => 'all' | 'some' | 'none';

/**
 * Whether a hunk of change `f` can be in place in a file of state `now` at all, from the states
 * alone (no blob nor file read): both sides of the change and `now` regular files, `now` no
 * larger than `maxFileBytes`. When false, a {@link HunkInPlace} answers `none`: a listing asks
 * for no diff (and reads no blob) for a file removed or replaced since.
 */
export function hunksMayBeInPlace(f: FileChange, now: FileState, maxFileBytes: number): boolean {
  const text = (s: FileState) => s.exists && s.type === 'file';
  return text(f.before) && text(f.after) && !!f.before.sha256 && !!f.after.sha256 && text(now) && now.size <= maxFileBytes;
}

/*
 * The journal in step with the disk. A change's state per file is what the disk says, not only
 * the operation log's flag: a file an editor's own undo (and a save) gave the agent's bytes back
 * is applied again, and one the person wrote over is no longer in place (`overwritten`). The flag stands whenever the disk holds what the journal last left
 * there (the common case, decided from the file's state alone); only a path whose disk moved
 * since is judged, newest change first, against each live change to it.
 */

/**
 * A reader for the journal's own questions, kept cheap: a file whose stat (type,
 * mode, size, inode, mtime, ctime) is the snapshot index's, and was so before the last scan
 * began (git's racy rule), is taken at the index's hash without being read; any other path is
 * read and hashed (no bytes kept). The index's folder rows are read once, for the paths asked
 * for in `paths` up front.
 */
export function statReader(ws: Workspace, paths: Iterable<string>): Reader {
  const meta = ws.journal.snapshot.meta();
  const usable = meta?.status === 'ok';
  const index = usable ? ws.journal.snapshot.packedAt([...paths].filter((p) => !p.startsWith('/'))) : new Map();
  const racyMs = usable ? Number(BigInt(meta!.startedNs) / 1_000_000n) : 0;
  return (path, abs) => {
    const e = index.get(path);
    if (e && e.type === 'file' && e.sha256 && !e.gap && e.mtimeMs < racyMs) {
      let st;
      try {
        st = lstatSync(abs);
      } catch {
        st = null;
      }
      if (st?.isFile() && (st.mode & 0o7777) === e.mode && st.size === e.size && st.ino === e.ino && st.mtimeMs === e.mtimeMs && st.ctimeMs === e.ctimeMs) {
        return { exists: true, type: 'file', mode: e.mode, size: e.size, sha256: e.sha256 };
      }
    }
    return readWorkspaceState(ws, path, { abs }).state;
  };
}

/**
 * What the flag alone says the disk holds for change `f`: its `before` when undone, its `after`
 * when in place, null when partly undone (some hunks: the disk holds neither side).
 */
function flagged(f: FileChange): FileState | null {
  return f.partial ? null : f.undone ? f.before : f.after;
}

/** The state its flags give change `f`. */
function flagState(f: FileChange): FileChangeState {
  return f.partial ? 'partial' : f.undone ? 'undone' : 'applied';
}

/** A set's state from its files' (derived) flags, as the journal's rule has it: see sets.ts's toSet. */
function stateOf(set: ChangeSet): SetState {
  if (set.state === 'expired') return 'expired';
  const movable = set.files.filter((f) => !f.gap);
  if (movable.some((f) => f.partial)) return 'partial';
  const n = movable.filter((f) => f.undone).length;
  return n === 0 ? 'applied' : n === movable.length ? 'undone' : 'partial';
}

/**
 * The state of each live change to `path` (set id → state) when the disk holds `now` there and
 * it is not what the journal last left; `at` gives the changes to the path at hand (others are
 * read from the journal). Newest first: a change whose `after` is on disk is applied, and every
 * older one applied keeps its flag (it sits under it); one undone or partly undone whose every
 * hunk `inPlace` finds on disk is applied (the agent's lines given back around later edits, by an
 * editor's own undo and a save; under a later change too, whose capture saw them in place), and
 * otherwise keeps its flag; one applied whose `before` is on
 * disk stays applied (taken back outside the journal, or by a step not yet recorded: an undo
 * finds it in place and records it), as does one `inPlace` says a hunk of is still there; any
 * other is overwritten.
 */
function judge(ws: Workspace, path: string, abs: string, now: FileState, at: Map<string, FileChange>, inPlace: HunkInPlace | undefined): Map<string, FileChangeState> {
  const out = new Map<string, FileChangeState>();
  let under = false;
  for (const id of ws.journal.sets.liveOn(path)) {
    const f = at.get(id) ?? ws.journal.sets.get(id).files.find((x) => x.path === path);
    if (!f) continue;
    if (!under && sameState(now, f.after)) {
      out.set(id, 'applied');
      under = true;
    } else if (f.undone || f.partial) out.set(id, inPlace?.(f, abs, now) === 'all' ? 'applied' : flagState(f));
    else if (under) out.set(id, flagState(f));
    else out.set(id, sameState(now, f.before) || (inPlace !== undefined && inPlace(f, abs, now) !== 'none') ? 'applied' : 'overwritten');
  }
  return out;
}

/** What the journal last left at `path` (see OpLog.leftAt), or null when it cannot say. */
function leftAt(ws: Workspace, path: string, at: Map<string, FileChange>): FileState | null {
  const left = ws.journal.oplog.leftAt(path);
  if (!left) return null;
  if ('state' in left) return left.state;
  let f = at.get(left.set);
  if (!f) {
    try {
      f = ws.journal.sets.get(left.set).files.find((x) => x.path === path);
    } catch {
      return null;
    }
  }
  return f ? f[left.side] : null;
}

/**
 * `sets` as the disk has them: copies whose files (no capture gap, inside the workspace, among
 * `paths` when given) carry `state` and the `undone` and `partial` flags from what `read` finds at each path
 * (each path read once), and whose set state follows. A path that holds what the flag says, or
 * what the journal last left there, keeps the flags; any other is judged against every live
 * change to it ({@link judge}); without `inPlace`, a change applied there is overwritten unless
 * what it left or what it found is on disk (the plan needs no more: both are in place to it).
 * Expired sets and gap files are as they were. Reads, never writes.
 */
export function inStepWithDisk(ws: Workspace, sets: ChangeSet[], read: Reader, paths?: ReadonlySet<string> | null, inPlace?: HunkInPlace): ChangeSet[] {
  const byPath = new Map<string, Map<string, FileChange>>();
  for (const s of sets) {
    if (s.state === 'expired') continue;
    for (const f of s.files) {
      if (f.gap || (paths && !paths.has(f.path))) continue;
      let m = byPath.get(f.path);
      if (!m) byPath.set(f.path, (m = new Map()));
      m.set(s.id, f);
    }
  }
  const judged = new Map<string, Map<string, FileChangeState> | null>();
  for (const [path, at] of byPath) {
    let abs: string;
    try {
      abs = fromWorkspacePath(ws.root, path);
    } catch {
      continue; // outside the workspace: never written, the flag stands
    }
    const now = read(path, abs);
    const asFlagged = [...at.values()].every((f) => {
      const st = flagged(f);
      return st !== null && sameState(now, st);
    });
    if (asFlagged) {
      judged.set(path, null);
      continue;
    }
    const left = leftAt(ws, path, at);
    judged.set(path, left && sameState(now, left) ? null : judge(ws, path, abs, now, at, inPlace));
  }
  return sets.map((s) => {
    if (s.state === 'expired') return s;
    let moved = false;
    const files = s.files.map((f): FileChange => {
      const verdict = judged.get(f.path)?.get(s.id);
      if (f.gap || (paths && !paths.has(f.path)) || !byPath.has(f.path)) return f;
      const state: FileChangeState = verdict ?? flagState(f);
      if (state === flagState(f) || (state === 'overwritten' && flagState(f) === 'applied')) return { ...f, state };
      moved = true;
      // The disk overrules the flags: what they say follows it.
      const out: FileChange = { ...f, state };
      delete out.undone;
      delete out.partial;
      delete out.undoneBy;
      if (state === 'undone') out.undone = true;
      else if (state === 'partial') out.partial = true;
      return out;
    });
    const copy: ChangeSet = { ...s, files };
    if (moved) copy.state = stateOf(copy);
    return copy;
  });
}
