import type { Engine } from '../engine.js';
import { readWorkspaceState, unkeptGap, type ReadState } from '../fsstate.js';
import type { OpLog, StepToInvert } from '../journal/oplog.js';
import { sha256 } from '../store/blobs.js';
import { isKept, sameState, type CaptureGap, type ChangeSet, type FileState, type GapReason } from '../types.js';
import { fromWorkspacePath } from '../workspace.js';
import { inStepWithDisk } from './in-step.js';
import { isMergeableText, linesText, mergeBytes, type MergeOverlap } from './merge.js';

/**
 * What an undo or redo does to one path, seen from what is there now:
 * - `put-back`: write the kept bytes over the file;
 * - `remove`: delete it (undo: the agent created it);
 * - `bring-back`: create it again (undo: the agent deleted it);
 * - `restore-mode`: only the permission bits change;
 * - `restore-link`: a symbolic link comes back (or replaces what took its place);
 * - `none`: the path is already as it should be.
 */
export type Action = 'put-back' | 'remove' | 'bring-back' | 'restore-mode' | 'restore-link' | 'none';

/**
 * Why a path cannot be undone without replacing someone's later work:
 * - `changed-since`: its bytes, mode or type differ from what the change left;
 * - `interleaved`: another change still in place touched it between the selected ones;
 * - `unsaved-in-editor`: an editor holds unsaved text for it (set by the sidecar).
 */
export interface Conflict {
  reason: 'changed-since' | 'interleaved' | 'unsaved-in-editor';
  detail: string;
  /** For `interleaved`: the sets in between. */
  sets?: string[];
}

/** One path of a plan. States are as in the journal (`types.ts`). */
export interface PlannedFile {
  path: string;
  action: Action;
  /** What the walk expects to find: the state the selected changes left (redo: the state the undo left). */
  expected: FileState;
  /** What the path becomes. */
  target: FileState;
  /** What is there now. */
  current: FileState;
  conflict: Conflict | null;
  /** Set when the path cannot be written back; such a path is skipped and named. */
  gap: CaptureGap | null;
  /** The sets that touched this path, in walk order. */
  sets: string[];
  /**
   * The bytes the step writes when they are a three-way merge — the selected changes taken back
   * (redo: made again) over later edits that do not overlap them — else null; `target` is then
   * their state. They are not in the blob store until the step stores them (apply.ts).
   */
  merged: Buffer | null;
}

/** An undo or redo, planned: nothing has been written. */
export interface Plan {
  direction: 'undo' | 'redo';
  /** The sets the plan moves, in walk order (undo: newest first; redo: oldest first). */
  sets: ChangeSet[];
  /** Selected sets already in the wanted state, with the reason. */
  skipped: { id: string; reason: string }[];
  files: PlannedFile[];
}

/** Reads the current state of a workspace-relative path; the sidecar passes one that sees editor buffers. */
export type CurrentReader = (path: string, abs: string) => FileState;

/**
 * The bytes of a workspace path as `state` (what the plan's reader saw) says they are, or null
 * when they cannot be had, or are no longer those (a hash that differs): such a path is not merged.
 */
export type CurrentBytes = (path: string, abs: string, state: FileState) => Buffer | null;

const GAP_TEXT: Record<GapReason, string> = {
  'too-large': 'over the size limit: its bytes were not kept',
  secret: 'a secret place: its bytes are never kept',
  'symlink-target': 'written through a symbolic link: the content behind the link was not kept',
  excluded: 'an excluded path: not captured',
  'outside-workspace': 'outside the workspace: takeback never writes there',
  'workspace-too-large': 'the workspace is over the scan limits',
  unreadable: 'could not be read when it changed',
};

/** A capture gap for `path` with a sentence for people. */
export function gapFor(path: string, reason: GapReason): CaptureGap {
  return { path, reason, detail: GAP_TEXT[reason] };
}

function actionFor(current: FileState, target: FileState): Action {
  if (sameState(current, target)) return 'none';
  if (!target.exists) return 'remove';
  if (!current.exists) return 'bring-back';
  if (target.type === 'symlink' || current.type === 'symlink') return 'restore-link';
  if (
    target.type === 'file' &&
    current.type === 'file' &&
    target.sha256 !== null &&
    target.sha256 === current.sha256 &&
    target.mode !== current.mode
  ) {
    return 'restore-mode';
  }
  if (target.type === 'dir' && current.type === 'dir') return 'restore-mode';
  return 'put-back';
}

/** {@link CurrentBytes} from the disk: the file read again, and taken only when its hash is still `state`'s. */
export function diskBytes(engine: Engine): CurrentBytes {
  return (path, abs, state) => {
    if (!state.exists || state.type !== 'file' || !state.sha256) return null;
    const r = readWorkspaceState(engine, path, { abs });
    return r.bytes && r.state.exists && r.state.type === 'file' && r.state.sha256 === state.sha256 ? r.bytes : null;
  };
}

/** The current state of workspace path `path` from the disk (bytes hashed, not stored). */
export function diskReader(engine: Engine): CurrentReader {
  return (path, abs) => readWorkspaceState(engine, path, { abs }).state;
}

/** At most this many bytes of the files a plan reads are held by {@link heldDiskReader} (the rest are read again). */
const HELD_BYTES_MAX = 64 * 1024 * 1024;

/**
 * {@link diskReader} that also holds what it read — each path's state and bytes, by workspace
 * path, up to {@link HELD_BYTES_MAX} bytes in all — so that the step after the plan (an undo's
 * rollback copies, a preview's diffs) uses the very bytes the plan compared, without reading and
 * hashing each file a second time. `bytes` hands a path's held bytes to a merge (read again
 * when they were not held).
 */
export function heldDiskReader(engine: Engine): { read: CurrentReader; held: Map<string, ReadState>; bytes: CurrentBytes } {
  const held = new Map<string, ReadState>();
  let bytes = 0;
  const read: CurrentReader = (path, abs) => {
    const r = readWorkspaceState(engine, path, { abs });
    const size = r.bytes?.length ?? 0;
    if (bytes + size <= HELD_BYTES_MAX) {
      held.set(path, r);
      bytes += size;
    }
    return r.state;
  };
  const fallback = diskBytes(engine);
  const heldBytes: CurrentBytes = (path, abs, state) => {
    const r = held.get(path);
    return r && sameState(r.state, state) && r.bytes ? r.bytes : fallback(path, abs, state);
  };
  return { read, held, bytes: heldBytes };
}

/** One selected change's part in a path's walk: what it expects to find and what it leaves (undo: after → before). */
interface WalkStep {
  from: FileState;
  to: FileState;
}

/** What a merge attempt gives: the bytes and state to write, or why not (null: no merge is possible, the conflict stays as it is). */
type MergeAttempt = { merged: Buffer; target: FileState } | { detail: string } | null;

/** The bytes of kept file state `s` from the blob store (null: not a text file that can be merged). */
function textBlob(engine: Engine, s: FileState): Buffer | null {
  if (!s.exists || s.type !== 'file' || !s.sha256) return null;
  let b: Buffer;
  try {
    b = engine.journal.blobs.get(s.sha256);
  } catch {
    return null;
  }
  return isMergeableText(b) ? b : null;
}

/**
 * "lines 8-10 changed by the agent and lines 9-11 since" for the overlaps of one merge: the
 * change's lines as it left them (redo: as the undo left them), then the lines of the file now.
 */
function overlapText(overlaps: MergeOverlap[]): string {
  const parts = overlaps.slice(0, 3).map((o) => `${linesText(o.change)} changed by the agent and ${linesText(o.since)} since`);
  const more = overlaps.length > 3 ? ` (and ${overlaps.length - 3} more)` : '';
  return `${parts.join('; ')}${more}`;
}

/**
 * The three-way merge of one path whose current state is not what the walk expects (or that
 * another change still in place touched in between): each selected change in walk order is
 * taken back (redo: made again) over what is there, with base = what the change left, ours =
 * the file now (merged so far), theirs = what it found (redo: base = before, theirs = after).
 * Only files whose every state is a kept text file are merged (no NUL byte, under the size
 * limit); links, folders, binary files, a file missing on either side, and a mode changed since
 * stay conflicts. The mode is the target's when the file's mode now is what the walk expects.
 */
function tryMerge(engine: Engine, steps: WalkStep[], expected: FileState, target: FileState, current: FileState, ours: Buffer | null): MergeAttempt {
  if (!ours || !current.exists || current.type !== 'file' || !expected.exists || expected.type !== 'file' || !target.exists || target.type !== 'file') return null;
  if (current.mode !== expected.mode) return null;
  if (ours.length > engine.config.maxFileBytes || !isMergeableText(ours)) return null;
  let now = ours;
  for (const s of steps) {
    const base = textBlob(engine, s.from);
    const theirs = textBlob(engine, s.to);
    if (!base || !theirs) return null;
    const r = mergeBytes(base, now, theirs);
    if (!r.ok) return { detail: r.tooManyEdits ? 'changed since, too much to merge' : overlapText(r.overlaps) };
    now = r.bytes;
  }
  return { merged: now, target: { exists: true, type: 'file', mode: target.mode, size: now.length, sha256: sha256(now) } };
}

/**
 * The step before this one on `path` when this one takes it back exactly (see
 * {@link OpLog.toInvert}): the path holds what that step wrote, and what it found there is kept
 * (a file's bytes in the blob store), so the plan gives back those very bytes — a merged undo's
 * later edits with the agent's change, a forced undo's later edits over it. Null otherwise, and
 * when that step found the path as it left it (it wrote nothing there: the change's own state
 * comes back as usual).
 */
function exactInverse(
  engine: Engine,
  path: string,
  sets: string[],
  direction: 'undo' | 'redo',
  current: FileState,
  target: FileState,
  undos: Map<string, StepToInvert & { moved: Set<string> }>,
): StepToInvert | null {
  let inv: StepToInvert | null;
  if (direction === 'redo') {
    const u = undos.get(path);
    inv = u && u.moved.size === new Set(sets).size && sets.every((id) => u.moved.has(id)) ? u : null;
  } else inv = engine.journal.oplog.toInvert(path, sets, direction);
  // A step that found the path as it left it wrote nothing there: nothing of it to take back.
  if (!inv || sameState(inv.found, inv.wrote) || !sameState(current, inv.wrote) || !isKept(inv.found)) return null;
  // The bytes it found are the usual target's (a plain undo's) or must be in the store.
  const f = inv.found;
  if (f.exists && f.type === 'file' && !sameState(f, target) && (f.sha256 === null || !engine.journal.blobs.has(f.sha256))) return null;
  return inv;
}

/**
 * Plans an undo (or redo) of `sets`, each file's change as the disk has it (undone or applied:
 * see in-step.ts; `read` gives what is there, each path read once). Sets already undone (redo:
 * already applied) are skipped.
 * The walk goes newest first for undo and oldest first for redo; for each path the expected
 * state comes from the first set the walk meets and the target from the last (what the first
 * change found is what the walk back arrives at).
 * A path whose state now is neither the expected state nor already the target — or that another
 * change still in place touched between the selected ones — is merged when it can be (a text
 * file whose later edits do not overlap the selected changes' hunks: `merged` holds the bytes,
 * `target` their state, the action stays `put-back`), else it is a conflict, whose detail names
 * the overlapping lines of both sides when there are any. A path whose expected or target bytes
 * were not kept is a gap. `bytesNow` gives a path's bytes for a merge (default: read from the
 * disk again). A path that holds what the undo (redo) before it on the path wrote, for exactly
 * the sets selected there, gets back what that step found ({@link exactInverse}); the set keeping
 * what a forced undo replaced is then moved along (it joins `sets`). Reads, never writes.
 */
export function makePlan(
  engine: Engine,
  sets: ChangeSet[],
  direction: 'undo' | 'redo',
  read: CurrentReader = diskReader(engine),
  paths?: string[],
  bytesNow: CurrentBytes = diskBytes(engine),
): Plan {
  const only = paths && paths.length > 0 ? new Set(paths) : null;
  // Each path is read once: for the state the disk gives its changes, then for the walk.
  const seen = new Map<string, FileState>();
  const readOnce: CurrentReader = (path, abs) => {
    let st = seen.get(path);
    if (st === undefined) {
      st = read(path, abs);
      seen.set(path, st);
    }
    return st;
  };
  sets = inStepWithDisk(engine, sets, readOnce, only);
  const skipped: Plan['skipped'] = [];
  const active: ChangeSet[] = [];
  // A file is in the walk when it is in the wanted state: undo takes what is applied, redo what is undone.
  const inWalk = (f: ChangeSet['files'][number]) => (only === null || only.has(f.path)) && (direction === 'undo' ? !f.undone : Boolean(f.undone));
  for (const s of sets) {
    if (s.state === 'expired') skipped.push({ id: s.id, reason: 'expired' });
    else if (s.files.some(inWalk)) active.push(s);
    else if (only && !s.files.some((f) => only.has(f.path))) skipped.push({ id: s.id, reason: 'does not touch that file' });
    else skipped.push({ id: s.id, reason: direction === 'undo' ? 'already undone' : 'not undone' });
  }
  active.sort((a, b) => (direction === 'undo' ? Number(b.id) - Number(a.id) : Number(a.id) - Number(b.id)));

  type Acc = { expected: FileState; target: FileState; sets: string[]; steps: WalkStep[]; gap: GapReason | null };
  const byPath = new Map<string, Acc>();
  for (const s of active) {
    for (const f of s.files) {
      if (!inWalk(f)) continue;
      const [from, to] = direction === 'undo' ? [f.after, f.before] : [f.before, f.after];
      let acc = byPath.get(f.path);
      if (!acc) {
        acc = { expected: from, target: to, sets: [], steps: [], gap: null };
        byPath.set(f.path, acc);
      }
      acc.target = to;
      acc.sets.push(s.id);
      acc.steps.push({ from, to });
      if (f.gap && !acc.gap) acc.gap = f.gap;
    }
  }

  // Changes still in place that sit between the selected ones on the same path.
  const activeIds = new Set(active.map((s) => s.id));
  const between = new Map<string, string[]>();
  for (const [path, acc] of byPath) {
    if (acc.sets.length < 2) continue;
    const nums = acc.sets.map(Number);
    const ids = engine.journal.sets.inPlaceBetween(path, Math.min(...nums), Math.max(...nums)).filter((id) => !activeIds.has(id));
    if (ids.length > 0) between.set(path, ids);
  }

  const files: PlannedFile[] = [];
  const redone = new Set(active.filter((s) => s.history.some((h) => h.action === 'redone')).map((s) => s.id));
  const undos = direction === 'redo' ? engine.journal.oplog.undosToInvert(active.map((s) => s.id)) : new Map<string, StepToInvert & { moved: Set<string> }>();
  /** Sets an exact inverse moves along with the selected ones (what a forced undo replaced). */
  const alongside = new Set<string>();
  for (const [path, acc] of [...byPath].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    let gapReason: GapReason | null = null;
    let current: FileState = { exists: false };
    let abs: string | null = null;
    try {
      abs = fromWorkspacePath(engine.root, path);
    } catch {
      gapReason = 'outside-workspace';
    }
    if (abs) current = readOnce(path, abs);
    if (gapReason) {
      // outside the workspace: named, never written
    } else if (!isKept(acc.target) || !isKept(acc.expected)) {
      gapReason = acc.gap ?? unkeptGap(path, acc.target, acc.expected)!;
    } else if (acc.gap === 'symlink-target' && sameState(acc.expected, acc.target)) {
      gapReason = 'symlink-target';
    }
    let action: Action = gapReason ? 'none' : actionFor(current, acc.target);
    let conflict: Conflict | null = null;
    let target = acc.target;
    let expected = acc.expected;
    let pathSets = acc.sets;
    let merged: Buffer | null = null;
    // An undo can take back only a redo: the log is asked only when one of its sets was redone.
    const mayInvert = !gapReason && (direction === 'redo' || acc.sets.some((id) => redone.has(id)));
    const inverse = mayInvert ? exactInverse(engine, path, acc.sets, direction, current, acc.target, undos) : null;
    if (inverse) {
      // The step takes back the one before it on this path: what that one found comes back.
      expected = inverse.wrote;
      target = inverse.found;
      action = actionFor(current, target);
      if (inverse.replaced !== null) {
        pathSets = [...acc.sets, inverse.replaced];
        alongside.add(inverse.replaced);
      }
    } else if (!gapReason && action !== 'none') {
      const changed = !sameState(current, acc.expected);
      const ids = between.get(path);
      if (changed) {
        conflict = {
          reason: 'changed-since',
          detail: !current.exists ? 'deleted since' : !acc.expected.exists ? 'created since' : 'changed since',
        };
      } else if (ids) {
        conflict = { reason: 'interleaved', detail: `also changed by ${ids.length === 1 ? 'change' : 'changes'} ${ids.join(', ')}, not selected`, sets: ids };
      }
      // A text file edited since (or by a change in between that stays): the later edits are kept
      // when they do not overlap the selected changes' hunks.
      if (conflict && abs) {
        const m = tryMerge(engine, acc.steps, acc.expected, acc.target, current, bytesNow(path, abs, current));
        if (m && 'merged' in m) {
          conflict = null;
          merged = m.merged;
          target = m.target;
          action = actionFor(current, target);
        } else if (m) conflict = { ...conflict, detail: `${conflict.detail}: ${m.detail}` };
      }
    }
    files.push({
      path,
      action,
      expected,
      target,
      current,
      conflict,
      gap: gapReason ? gapFor(path, gapReason) : null,
      sets: pathSets,
      merged,
    });
  }
  for (const id of alongside) if (!activeIds.has(id)) active.push(engine.journal.sets.get(id));
  active.sort((a, b) => (direction === 'undo' ? Number(b.id) - Number(a.id) : Number(a.id) - Number(b.id)));
  return { direction, sets: active, skipped, files };
}
