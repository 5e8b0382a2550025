import type { Workspace } from '../open-workspace.js';
import { readWorkspaceState, unkeptGap, type ReadState } from '../fsstate.js';
import type { OpLog, StepToInvert } from '../journal/oplog.js';
import { sha256 } from '../store/blobs.js';
import { isKept, sameState, type CaptureGap, type ChangeSet, type FileState, type GapReason } from '../types.js';
import { fromWorkspacePath } from '../workspace.js';
import { TakebackError } from '../errors.js';
import { applyHunks, diffHunks, mapRanges, placeHunks, rangeText, touches, type Hunk } from './hunks.js';
import { inStepWithDisk, type HunkInPlace } from './in-step.js';
import { isMergeableText, linesText, mergeBytes, type LineRange, type MergeOverlap } from './merge.js';
import { withWho } from './who.js';

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
  /**
   * For people: what differs and who changed it since ("changed since by #5 (prettier, turn 3):
   * line 8 changed by the agent and line 8 since", "deleted since outside takeback", "unsaved in
   * Neovim").
   */
  detail: string;
  /**
   * For `interleaved`: the sets in between. For `changed-since`: the changes recorded since that
   * touched the path and are still in place, oldest first (absent when there are none).
   */
  sets?: string[];
  /**
   * For a `changed-since` conflict of an undo with later changes in `sets`: the ids, ascending,
   * of the one undo that takes those back too (the selected sets and `sets`), for a client to
   * offer in its own words ("`takeback undo 2 5` takes both back"). Absent otherwise.
   */
  combined?: string[];
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
  /**
   * For a `changed-since` conflict found by a merge: where the sides overlap, in the words the
   * detail ends with ("line 3 changed by the agent and line 3 since"), so a
   * later rule that rewrites the conflict (an editor's unsaved text) keeps them without parsing
   * the detail. Absent otherwise.
   */
  overlap?: string;
  /**
   * With the plan narrowed to files: the selected changes' hunks of this path (each step's diff,
   * undo: from what the change left to what it found), placed in the file now; `taken` when the
   * step moves it. Absent for a path that is not text on both sides of every step.
   */
  hunks?: PlanHunk[];
  /** With `--lines`: the sets whose change to this path the step moves only in part (their other hunks stay). */
  partial?: string[];
  /** True when the step moves only some hunks of this path (`--lines`): its redo is then its inverse. */
  byHunks?: boolean;
}

/**
 * How a plan narrowed to files goes into them: `lines` (with exactly one path) takes only the
 * hunks touching those lines of the file now; `bytes` gives the file's bytes for its hunks and
 * their merge (an editor's text; default: the plan's `bytesNow`).
 */
export interface Narrowing {
  lines?: LineRange;
  bytes?: CurrentBytes;
  /**
   * The disk's reader, when the plan's reader gives an editor's view (its unsaved text): a
   * change's state per file is what the disk holds (in-step.ts), never what a buffer holds
   * unsaved. Without it the plan's own reader is taken for the disk's.
   */
  disk?: CurrentReader;
  /**
   * How much of a change taken back is on disk again around later edits (in-step.ts's
   * HunkInPlace, the check `list` uses): with it, such a change is planned as in place, as `list`
   * shows it. Without it only a file that holds the change's own bytes is.
   */
  inPlace?: HunkInPlace;
}

/**
 * One hunk of a planned path: the set it is of, its changed lines in the file now, in what the
 * change found (`before`) and in what it left (`after`), and whether the step moves it. Ranges
 * are 1-based and inclusive; `end < start` is the place just before `start` (no line there).
 */
export interface PlanHunk {
  set: string;
  now: LineRange;
  before: LineRange;
  after: LineRange;
  taken: boolean;
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
  excluded: 'an excluded path: not captured (a skipped folder: entries made, removed or renamed in it, or in the folders a few levels below, are seen; a file rewritten in place inside it is not)',
  'outside-workspace': 'outside the workspace: takeback never writes there',
  'workspace-too-large': 'the workspace is over the scan limits',
  unreadable: 'could not be read when it changed (a folder: what it held is not known)',
  'not-kept': 'could not be kept when it changed: the journal could not be written then',
  'name-not-utf8': 'its name is not valid UTF-8: never captured',
  'baseline-incomplete': 'changed before the workspace\'s first copy had kept it: its bytes before were not kept',
};

const isDir = (s: FileState) => s.exists && s.type === 'dir';

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
export function diskBytes(ws: Workspace): CurrentBytes {
  return (path, abs, state) => {
    if (!state.exists || state.type !== 'file' || !state.sha256) return null;
    const r = readWorkspaceState(ws, path, { abs });
    return r.bytes && r.state.exists && r.state.type === 'file' && r.state.sha256 === state.sha256 ? r.bytes : null;
  };
}

/** The current state of workspace path `path` from the disk (bytes hashed, not stored). */
export function diskReader(ws: Workspace): CurrentReader {
  return (path, abs) => readWorkspaceState(ws, path, { abs }).state;
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
export function heldDiskReader(ws: Workspace): { read: CurrentReader; held: Map<string, ReadState>; bytes: CurrentBytes } {
  const held = new Map<string, ReadState>();
  let bytes = 0;
  const read: CurrentReader = (path, abs) => {
    const r = readWorkspaceState(ws, path, { abs });
    const size = r.bytes?.length ?? 0;
    if (bytes + size <= HELD_BYTES_MAX) {
      held.set(path, r);
      bytes += size;
    }
    return r.state;
  };
  const fallback = diskBytes(ws);
  const heldBytes: CurrentBytes = (path, abs, state) => {
    const r = held.get(path);
    return r && sameState(r.state, state) && r.bytes ? r.bytes : fallback(path, abs, state);
  };
  return { read, held, bytes: heldBytes };
}

/** One selected change's part in a path's walk: what it expects to find and what it leaves (undo: after → before). */
interface WalkStep {
  /** The set. */
  id: string;
  from: FileState;
  to: FileState;
  /** For a redo that is the inverse of a step by hunks: the set's own change of the path. */
  change?: ChangeSet['files'][number];
}

/**
 * What operation `op` found at `path` and wrote there, when both are text files whose bytes are
 * still kept (else null: the redo goes by the change itself).
 */
function inverseOf(ws: Workspace, op: number, path: string): { found: FileState; wrote: FileState } | null {
  const p = ws.journal.oplog.get(op)?.paths.find((x) => x.path === path);
  if (!p) return null;
  const kept = (st: FileState) => st.exists && st.type === 'file' && st.sha256 !== null && ws.journal.blobs.has(st.sha256);
  return kept(p.found) && kept(p.wrote) ? { found: p.found, wrote: p.wrote } : null;
}

/** What a merge attempt gives: the bytes and state to write, or why not (null: no merge is possible, the conflict stays as it is). */
type MergeAttempt = { merged: Buffer; target: FileState } | { detail: string } | null;

/** The bytes of kept file state `s` from the blob store, or null when it is not a text file a merge takes (not a kept file, binary, a missing or damaged blob). */
export function textBlob(ws: Workspace, s: FileState): Buffer | null {
  if (!s.exists || s.type !== 'file' || !s.sha256) return null;
  let b: Buffer;
  try {
    b = ws.journal.blobs.get(s.sha256);
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
function tryMerge(ws: Workspace, steps: WalkStep[], expected: FileState, target: FileState, current: FileState, ours: Buffer | null): MergeAttempt {
  if (!ours || !current.exists || current.type !== 'file' || !expected.exists || expected.type !== 'file' || !target.exists || target.type !== 'file') return null;
  if (current.mode !== expected.mode) return null;
  if (ours.length > ws.config.maxFileBytes || !isMergeableText(ours)) return null;
  let now = ours;
  for (const s of steps) {
    const base = textBlob(ws, s.from);
    const theirs = textBlob(ws, s.to);
    if (!base || !theirs) return null;
    const r = mergeBytes(base, now, theirs);
    if (!r.ok) return { detail: r.tooManyEdits ? 'too much to merge' : overlapText(r.overlaps) };
    now = r.bytes;
  }
  return { merged: now, target: { exists: true, type: 'file', mode: target.mode, size: now.length, sha256: sha256(now) } };
}

/**
 * After a redo that is the inverse of a step by hunks: the sets whose change to `file` still has
 * hunks undone in what the redo leaves (the hunks earlier steps took back) go to `file.partial`.
 */
function stillPartial(ws: Workspace, file: PlannedFile, steps: WalkStep[]): void {
  const inverse = steps.filter((s) => s.change);
  if (inverse.length === 0) return;
  const left = file.merged ?? textBlob(ws, file.target);
  if (!left) return;
  for (const s of inverse) {
    const before = textBlob(ws, s.change!.before);
    const after = textBlob(ws, s.change!.after);
    if (!before || !after) continue;
    if (placeHunks(diffHunks(before, after), before, left).some((h) => h.intact)) (file.partial ??= []).push(s.id);
  }
}

/**
 * The lines of each of `hunks` (of the diff from the step's `from` to its `to`) in what the
 * change found (`before`) and in what it left (`after`). An undo's step goes from what the change
 * left to what it found, a redo's the other way; a redo that is the inverse of a step by hunks
 * goes between what that step found and wrote, whose lines are mapped to the change's own sides
 * (a range with no line there stays as the step has it).
 */
function hunkSides(ws: Workspace, step: WalkStep, from: Buffer, to: Buffer, hunks: Hunk[], direction: 'undo' | 'redo'): { before: LineRange; after: LineRange }[] {
  const fromSide = hunks.map((h) => h.changed);
  const toSide = hunks.map((h) => h.changedTo);
  const [before, after] = direction === 'undo' ? [toSide, fromSide] : [fromSide, toSide];
  const own = step.change && { before: textBlob(ws, step.change.before), after: textBlob(ws, step.change.after) };
  if (!own || !own.before || !own.after) return hunks.map((_, k) => ({ before: before[k]!, after: after[k]! }));
  const [beforeOf, afterOf] = direction === 'undo' ? [to, from] : [from, to];
  const b = mapRanges(before, beforeOf, own.before);
  const a = mapRanges(after, afterOf, own.after);
  return hunks.map((_, k) => ({ before: b[k] ?? before[k]!, after: a[k] ?? after[k]! }));
}

/** Why a step of a path has no hunks: a side that is not a kept text file. */
function noHunks(s: FileState, b: Buffer | null): string {
  if (!s.exists) return 'it does not exist on one side of the change (created or deleted)';
  if (s.type !== 'file') return s.type === 'symlink' ? 'a symbolic link' : 'a folder';
  if (!s.sha256) return 'its bytes were not kept';
  return b === null ? 'binary' : 'not text';
}

/** "change 3" or "changes 3, 5". */
function setsText(ids: string[]): string {
  return ids.length === 1 ? `change ${ids[0]}` : `changes ${ids.join(', ')}`;
}

/**
 * With the plan narrowed to files: `file`'s hunks ({@link PlannedFile.hunks}), and with `lines`
 * the path's step narrowed to the hunks that touch those lines of the file now: each step in
 * walk order merges (as {@link tryMerge}) only its chosen hunks — base = what the step expects,
 * ours = the file now (merged so far), theirs = the step's `from` with those hunks made as in its
 * `to` — so that its other hunks and every later edit stay. A selection that takes every hunk of
 * a path in place is the whole step, planned as without `lines`. Sets with no chosen hunk drop out
 * of the path's sets; sets with hunks left in place go to `partial`. The mode stays what it is now.
 * Throws `usage` when a side is not text (a binary file, a link, a file created or deleted: no
 * hunks) and `not-found` when no hunk still to move touches the lines (nothing is written) and
 * the file does not already hold what the step leaves (then it is in place, as for the whole step).
 */
function narrow(ws: Workspace, file: PlannedFile, steps: WalkStep[], now: Buffer | null, lines: LineRange | undefined, direction: 'undo' | 'redo'): void {
  const texts = steps.map((s) => ({ id: s.id, from: textBlob(ws, s.from), to: textBlob(ws, s.to), step: s }));
  const bad = texts.find((t) => !t.from || !t.to);
  if (bad || now === null || !isMergeableText(now)) {
    if (!lines) return;
    const why = bad ? (!bad.from ? noHunks(bad.step.from, bad.from) : noHunks(bad.step.to, bad.to)) : !file.current.exists || file.current.type !== 'file' ? 'not a file now' : 'not text now';
    throw new TakebackError('usage', `${file.path} has no hunks (${why}): take it back whole, without --lines`, { path: file.path });
  }
  const placed = texts.map((t) => placeHunks(diffHunks(t.from!, t.to!), t.from!, now));
  const chosen = placed.map((p) => new Set(lines ? p.filter((h) => h.now && touches(h.now, lines)) : p));
  file.hunks = placed.flatMap((p, i) => {
    const sides = hunkSides(ws, texts[i]!.step, texts[i]!.from!, texts[i]!.to!, p, direction);
    return p.flatMap((h, k) => (h.now ? [{ set: texts[i]!.id, now: h.now, ...sides[k]!, taken: chosen[i]!.has(h) }] : []));
  });
  if (!lines) return;
  // The file already holds what the step leaves (an editor's buffer that holds the step's text,
  // unsaved: the person's own undo after a step by lines): in place, as the whole step would find
  // it, whatever lines are named.
  if (file.action === 'none' && !file.conflict && sameState(file.current, file.target)) return;
  const where = `line${lines.end > lines.start ? 's' : ''} ${rangeText(lines)} of ${file.path} as it is now`;
  if (chosen.every((c) => c.size === 0)) throw new TakebackError('not-found', `no hunk of ${setsText(file.sets)} touches ${where}`, { path: file.path });
  if (sameState(file.current, file.expected) && placed.every((p, i) => p.every((h) => chosen[i]!.has(h)))) return;
  let cur = now;
  for (const [i, t] of texts.entries()) {
    if (chosen[i]!.size === 0) continue;
    const r = mergeBytes(t.from!, cur, applyHunks(t.from!, t.to!, [...chosen[i]!]));
    if (!r.ok) {
      file.merged = null;
      file.overlap = r.tooManyEdits ? 'too much to merge' : overlapText(r.overlaps);
      file.conflict = { reason: 'changed-since', detail: `changed since: ${file.overlap}` };
      return;
    }
    cur = r.bytes;
  }
  if (cur.equals(now)) throw new TakebackError('not-found', `no hunk of ${setsText(file.sets)} is left to move on ${where}`, { path: file.path });
  const mode = file.current.exists ? file.current.mode : 0o644;
  file.merged = cur;
  file.byHunks = true;
  file.target = { exists: true, type: 'file', mode, size: cur.length, sha256: sha256(cur) };
  file.action = actionFor(file.current, file.target);
  file.conflict = null;
  file.sets = texts.filter((_, i) => chosen[i]!.size > 0).map((t) => t.id);
  file.partial = texts.filter((_, i) => chosen[i]!.size > 0 && placed[i]!.some((h) => h.intact && !chosen[i]!.has(h))).map((t) => t.id);
}

/**
 * True when the text file in state `found` still holds, intact, a hunk of one of the undo's
 * `steps` (each from what its change left to what it found): the change was partly in place
 * there. False when a file is not kept text (nothing to say by hunks).
 */
function holdsSomeHunk(ws: Workspace, steps: WalkStep[], found: FileState): boolean {
  const bytes = textBlob(ws, found);
  if (!bytes) return false;
  return steps.some((s) => {
    const left = textBlob(ws, s.from);
    const before = textBlob(ws, s.to);
    return left !== null && before !== null && placeHunks(diffHunks(left, before), left, bytes).some((h) => h.intact);
  });
}

/**
 * The step before this one on `path` when this one takes it back exactly (see
 * {@link OpLog.toInvert}): the path holds what that step wrote, and what it found there is kept
 * (a file's bytes in the blob store), so the plan gives back those very bytes — a merged undo's
 * later edits with the agent's change, a forced undo's later edits over it. Null otherwise, and
 * when that step found the path as it left it (it wrote nothing there: the change's own state
 * comes back as usual). An undo takes back a redo only when that redo found the changes wholly
 * taken back there: a redo by lines that finished a change partly undone found some of its
 * hunks in place, and the undo of the change takes those back too (`steps`: the walk's).
 */
function exactInverse(
  ws: Workspace,
  path: string,
  sets: string[],
  direction: 'undo' | 'redo',
  current: FileState,
  target: FileState,
  undos: Map<string, StepToInvert & { moved: Set<string> }>,
  steps: WalkStep[],
): StepToInvert | null {
  let inv: StepToInvert | null;
  if (direction === 'redo') {
    const u = undos.get(path);
    inv = u && u.moved.size === new Set(sets).size && sets.every((id) => u.moved.has(id)) ? u : null;
  } else inv = ws.journal.oplog.toInvert(path, sets, direction);
  // A step that found the path as it left it wrote nothing there: nothing of it to take back.
  if (!inv || sameState(inv.found, inv.wrote) || !sameState(current, inv.wrote) || !isKept(inv.found)) return null;
  // The bytes it found are the usual target's (a plain undo's) or must be in the store.
  const f = inv.found;
  if (f.exists && f.type === 'file' && !sameState(f, target) && (f.sha256 === null || !ws.journal.blobs.has(f.sha256))) return null;
  if (direction === 'undo' && !sameState(f, target) && holdsSomeHunk(ws, steps, f)) return null;
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
 * what a forced undo replaced is then moved along (it joins `sets`). Narrowed to `paths`, each
 * text file gets its hunks, and `narrowing.lines` takes only some of them (see {@link narrow}).
 * Reads, never writes.
 */
export function makePlan(
  ws: Workspace,
  sets: ChangeSet[],
  direction: 'undo' | 'redo',
  read: CurrentReader = diskReader(ws),
  paths?: string[],
  bytesNow: CurrentBytes = diskBytes(ws),
  narrowing: Narrowing = {},
): Plan {
  const { lines } = narrowing;
  const only = paths && paths.length > 0 ? new Set(paths) : null;
  // Each path is read once: for the state the disk gives its changes, then for the walk.
  const readStates = new Map<string, FileState>();
  const readOnce: CurrentReader = (path, abs) => {
    let st = readStates.get(path);
    if (st === undefined) {
      st = read(path, abs);
      readStates.set(path, st);
    }
    return st;
  };
  sets = inStepWithDisk(ws, sets, narrowing.disk ?? readOnce, only, narrowing.inPlace);
  const skipped: Plan['skipped'] = [];
  const active: ChangeSet[] = [];
  // A file is in the walk when it is in the wanted state: undo takes what is applied, redo what is undone.
  // A file partly undone (some hunks) is in the walk both ways.
  const inWalk = (f: ChangeSet['files'][number]) =>
    (only === null || only.has(f.path)) && (Boolean(f.partial) || (direction === 'undo' ? !f.undone : Boolean(f.undone)));
  for (const s of sets) {
    if (s.state === 'expired') skipped.push({ id: s.id, reason: 'expired' });
    else if (s.files.some(inWalk)) active.push(s);
    else if (only && !s.files.some((f) => only.has(f.path))) skipped.push({ id: s.id, reason: 'does not touch that file' });
    else skipped.push({ id: s.id, reason: direction === 'undo' ? 'already undone' : 'not undone' });
  }
  active.sort((a, b) => (direction === 'undo' ? Number(b.id) - Number(a.id) : Number(a.id) - Number(b.id)));

  /**
   * `broken`: for an undo, the first two selected changes of the path, later then earlier, where
   * what the earlier one left is not what the later one found, nor what the earlier one found
   * (the path was changed between them by no recorded change: a person's edit between two
   * commands). Going from the last one's after straight to the first one's before would take that
   * edit away with them.
   */
  type Acc = { expected: FileState; target: FileState; sets: string[]; steps: WalkStep[]; gap: GapReason | null; broken: [string, string] | null };
  if (lines && (paths?.length !== 1)) throw new TakebackError('usage', '--lines needs exactly one --file');
  const byPath = new Map<string, Acc>();
  // A change undone by a step that took its last hunks, or left partly undone by an undo of some,
  // is redone as that step's inverse (what it found, over what it wrote), once for every change
  // that step moved on the path.
  const inverted = new Map<string, Set<number>>();
  for (const s of active) {
    for (const f of s.files) {
      if (!inWalk(f)) continue;
      let [from, to] = direction === 'undo' ? [f.after, f.before] : [f.before, f.after];
      // Narrowed to lines, a change partly undone is redone by its own hunks, whichever undo took them.
      const inverse = direction === 'redo' && f.undoneBy !== undefined && !(f.partial && lines) ? inverseOf(ws, f.undoneBy, f.path) : null;
      const seen = inverted.get(f.path) ?? new Set<number>();
      if (inverse) [from, to] = [inverse.wrote, inverse.found];
      let acc = byPath.get(f.path);
      if (!acc) {
        acc = { expected: from, target: to, sets: [], steps: [], gap: null, broken: null };
        byPath.set(f.path, acc);
      }
      acc.sets.push(s.id);
      if (f.gap && !acc.gap) acc.gap = f.gap;
      if (inverse && seen.has(f.undoneBy!)) continue;
      if (inverse) inverted.set(f.path, seen.add(f.undoneBy!));
      const prev = acc.steps[acc.steps.length - 1];
      // Not when both found the path as it was (two commands at once, each seeing the same change).
      if (direction === 'undo' && prev && !acc.broken && !sameState(prev.to, from) && !sameState(prev.to, to)) acc.broken = [prev.id, s.id];
      acc.target = to;
      acc.steps.push({ id: s.id, from, to, ...(inverse ? { change: f } : {}) });
    }
  }

  // Changes still in place that sit between the selected ones on the same path.
  const activeIds = new Set(active.map((s) => s.id));
  const between = new Map<string, string[]>();
  for (const [path, acc] of byPath) {
    if (acc.sets.length < 2) continue;
    const nums = acc.sets.map(Number);
    const ids = ws.journal.sets.inPlaceBetween(path, Math.min(...nums), Math.max(...nums)).filter((id) => !activeIds.has(id));
    if (ids.length > 0) between.set(path, ids);
  }

  const files: PlannedFile[] = [];
  const redone = new Set(active.filter((s) => s.history.some((h) => h.action === 'redone')).map((s) => s.id));
  const undos = direction === 'redo' ? ws.journal.oplog.undosToInvert(active.map((s) => s.id)) : new Map<string, StepToInvert & { moved: Set<string> }>();
  /** Sets an exact inverse moves along with the selected ones (what a forced undo replaced). */
  const alongside = new Set<string>();
  for (const [path, acc] of [...byPath].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    let gapReason: GapReason | null = null;
    let current: FileState = { exists: false };
    let abs: string | null = null;
    try {
      abs = fromWorkspacePath(ws.root, path);
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
    } else if (acc.gap === 'not-kept') {
      // What the change found or left was seen late (it may hold later changes): never written back.
      gapReason = 'not-kept';
    } else if (acc.gap === 'name-not-utf8') {
      // Its path cannot be spelled as the journal's paths are: nothing is written there.
      gapReason = 'name-not-utf8';
    } else if ((acc.gap === 'unreadable' || acc.gap === 'excluded') && (isDir(acc.expected) || isDir(acc.target))) {
      // A folder that could not be listed, or that is skipped: what it held is not known, so it is left as it is.
      gapReason = acc.gap;
    }
    let action: Action = gapReason ? 'none' : actionFor(current, acc.target);
    let conflict: Conflict | null = null;
    let target = acc.target;
    let expected = acc.expected;
    let pathSets = acc.sets;
    let merged: Buffer | null = null;
    let overlap: string | undefined;
    // An undo can take back only a redo: the log is asked only when one of its sets was redone.
    const mayInvert = !gapReason && (direction === 'redo' || acc.sets.some((id) => redone.has(id)));
    const inverse = mayInvert ? exactInverse(ws, path, acc.sets, direction, current, acc.target, undos, acc.steps) : null;
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
      } else if (acc.broken) {
        // Each change is taken back over what is there, as for an edit since: the edit between them stays.
        conflict = { reason: 'interleaved', detail: `changed between change ${acc.broken[1]} and change ${acc.broken[0]}, by neither` };
      }
      // A text file edited since (or by a change in between that stays): the later edits are kept
      // when they do not overlap the selected changes' hunks.
      if (conflict && abs) {
        const m = tryMerge(ws, acc.steps, acc.expected, acc.target, current, bytesNow(path, abs, current));
        if (m && 'merged' in m) {
          conflict = null;
          merged = m.merged;
          target = m.target;
          action = actionFor(current, target);
        } else if (m) {
          overlap = m.detail;
          conflict = { ...conflict, detail: `${conflict.detail}: ${m.detail}` };
        }
      }
    }
    const file: PlannedFile = {
      path,
      action,
      expected,
      target,
      current,
      conflict,
      gap: gapReason ? gapFor(path, gapReason) : null,
      sets: pathSets,
      merged,
      ...(overlap === undefined ? {} : { overlap }),
    };
    if (only && !gapReason && abs) narrow(ws, file, acc.steps, (narrowing.bytes ?? bytesNow)(path, abs, current), lines, direction);
    if (file.conflict?.reason === 'changed-since') file.conflict = withWho(ws, file.conflict, path, acc.sets, current, direction, active.map((s) => s.id));
    if (!gapReason && !file.conflict) stillPartial(ws, file, acc.steps);
    files.push(file);
  }
  if (lines) {
    // Narrowed to lines, a set none of whose hunks is there takes no part in the step.
    const moving = new Set(files.flatMap((f) => f.sets));
    for (const set of active) if (!moving.has(set.id)) skipped.push({ id: set.id, reason: 'no hunk on those lines' });
    return { direction, sets: active.filter((set) => moving.has(set.id)), skipped, files };
  }
  for (const id of alongside) if (!activeIds.has(id)) active.push(ws.journal.sets.get(id));
  active.sort((a, b) => (direction === 'undo' ? Number(b.id) - Number(a.id) : Number(a.id) - Number(b.id)));
  return { direction, sets: active, skipped, files };
}
