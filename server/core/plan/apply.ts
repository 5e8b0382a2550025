import { randomBytes } from 'node:crypto';
import { syncIndex } from '../capture/index-sync.js';
import type { Workspace } from '../open-workspace.js';
import { TakebackError } from '../errors.js';
import { readWorkspaceState, type ReadState } from '../fsstate.js';
import type { OpPath } from '../journal/oplog.js';
import type { TxnOp } from '../journal/txns.js';
import { makeChange } from '../capture/file-change.js';
import { sameState, type CaptureGap, type ChangeSet, type FileChange, type FileState } from '../types.js';
import { diskReader, gapFor, heldDiskReader, makePlan, type CurrentReader, type Narrowing, type Plan, type PlannedFile } from './plan.js';
import { recoverTxns, syncWritten } from './recover.js';
import { fitsInPlace, foundOf, type Found } from './job-steps.js';
import { fromWorkspacePath } from '../workspace.js';
import { closePool, POOL_MIN_JOBS, runJobs, startPool, type FileJob, type WritePool } from './jobs.js';
import {
  chmodJob,
  chmodState,
  closeContext,
  ensureParent,
  IN_PLACE_MAX_BYTES,
  keepFoldersOpen,
  openFolderCount,
  putBackContext,
  removeJob,
  removeTemp,
  stateThrough,
  writeContext,
  writeJob,
  writeState,
  withPlainPaths,
  type WriteContext,
} from './safe-fs.js';

/*
 * Undo and redo, in three phases:
 *   prepare — under the journal's write lock: plan against what is there now, stop on
 *             conflicts, keep the bytes there now, read and verify every target;
 *   write   — under the lock: a transaction record, then each file written (a small one over
 *             the file there, in place; others beside their place and renamed in), put back
 *             on failure;
 *   record  — under the lock: the step recorded in the operation log (the sets' files undone,
 *             or redone) and the snapshot index taught the new states.
 * `runStep` runs all three under one lock (the command line). The sidecar runs them as
 * separate steps so that an editor round trip can sit between prepare and write, and the record
 * can wait until the editor has saved: `prepareStep`, `writeStep`, `recordStep` re-check what
 * they rely on, since the lock is let go in between.
 */

/** The outcome of an undo or redo. Nothing is written when `written` is false. */
export interface ApplyResult {
  direction: 'undo' | 'redo';
  /** Ids of the sets the step moved (undone; redo: applied again), in walk order: never a selected set whose every path was a gap. */
  sets: string[];
  /** Paths written (or already in place). */
  applied: PlannedFile[];
  /** Paths that changed since; when not forced, nothing at all was written. */
  conflicts: PlannedFile[];
  /** Paths that could not be written back, and why. */
  gaps: CaptureGap[];
  skipped: Plan['skipped'];
  /** Things left as they were on purpose (a folder that is not empty). */
  notes: string[];
  written: boolean;
  forced: boolean;
}

/**
 * Writes `op.to` to disk with {@link writeState} (or only the mode, when that is all that
 * differs), one op at a time, through `ctx`'s folders (see putBackContext): how a failed step's
 * writes are put back. With `sure`, only over what the step wrote (`op.from`, which the step put
 * there): a path that holds anything else was changed since by someone else (a person's save
 * between the step's write and its failure) and is left as it is, throwing `busy` "changed
 * meanwhile" — their change is not the step's to take back. Without `sure` (a write cut short,
 * which may have left part of its bytes), and for a folder, it is put back whatever is there.
 */
function putBackWriter(ws: Workspace, ctx: WriteContext): (op: TxnOp, bytes: Buffer | null, tag: string, sure: boolean) => void {
  return (op, bytes, tag, sure) => {
    let found: Found | null | undefined;
    // A folder holds no bytes of anyone's to lose (what is in it has its own ops), and its mode
    // may be set only after what is inside it: put back as it was, unchecked.
    const folder = (op.to.exists && op.to.type === 'dir') || (op.from.exists && op.from.type === 'dir');
    if (sure && !folder) {
      const now = stateThrough(ws.root, op.path, ctx);
      if (!sameState(now.state, op.from)) throw new TakebackError('busy', `${op.path} changed meanwhile, left as it is`, { failures: [op.path] });
      found = now.found;
    }
    if (modeOnly(op)) chmodState(ws.root, op.path, op.to.exists ? op.to.mode : 0, ctx);
    else writeState(ws.root, op.path, op.to, bytes, tag, [], ctx, found);
  };
}

/** True when `op` changes only a file's permission bits (same bytes before and after). */
function modeOnly(op: TxnOp): boolean {
  const { from, to } = op;
  return from.exists && to.exists && from.type === 'file' && to.type === 'file' && from.sha256 !== null && from.sha256 === to.sha256;
}

/** About how many folders one step holds open at once (each a descriptor; the usual limit is 1024). */
const MAX_OPEN_FOLDERS = 256;

/** True for an op on a folder (one made, or one removed): those are written one at a time, in order. */
function folderOp(op: TxnOp): boolean {
  return op.to.exists ? op.to.type === 'dir' : op.from.exists && op.from.type === 'dir';
}

/**
 * How {@link writeInLock} writes `ops` (in the order of {@link order}) to disk.
 * Each run of consecutive file and link ops (removals first, then writes) is independent of
 * itself, and runs as one batch of jobs ({@link runJobs}: several at once once there are enough);
 * a folder op runs alone, in order, between them. Every call goes through folders of `ctx`, opened
 * one component at a time from the root before the batch starts (made, or refused with the
 * component at fault: see safe-fs.ts); each write checks its folder's real path before making its
 * temporary file and again right before its rename. Ops written are appended to `done` (in
 * order) and notes to `notes`; the first failure is thrown after every job started has finished,
 * with its temporary file removed. `pool`, when given, is the worker started for this step.
 */
function writeOnDisk(ws: Workspace, ops: StepOp[], tag: string, done: TxnOp[], notes: string[], pool: WritePool | null, ctx: WriteContext, unsure: Set<TxnOp>): void {
  const { root } = ws;
  let batch: StepOp[] = [];
  /** Runs `part` (consecutive ops of a batch) as one batch of jobs. */
  const run = (part: StepOp[]) => {
    const jobs: FileJob[] = [];
    for (const { op, bytes, found } of part) {
      if (!op.to.exists) {
        jobs.push(removeJob(root, op.path, ctx, found));
        continue;
      }
      ensureParent(root, op.path, [], ctx);
      jobs.push(modeOnly(op) ? chmodJob(root, ctx, op.path, op.to.mode) : writeJob(root, ctx, op.path, op.to, bytes, tag, true, found));
    }
    const outcomes = runJobs(jobs, { pool });
    let failure: Error | null = null;
    outcomes.forEach((o, i) => {
      if (o.status === 'done') {
        done.push(part[i]!.op);
        if (o.note) notes.push(o.note);
      } else if (o.status === 'failed' || o.status === 'unknown') {
        // Unknown (the worker stopped answering): it may have been written, so it is put back too;
        // and its folders stay open, since the worker may yet use them.
        if (o.status === 'unknown') {
          done.push(part[i]!.op);
          unsure.add(part[i]!.op);
          keepFoldersOpen(ctx);
        }
        failure ??= withPlainPaths(ctx, o.error);
        if (jobs[i]!.kind === 'write') removeTemp(root, jobs[i]!.rel, tag, ctx);
      }
    });
    if (failure) throw failure;
  };
  const flush = () => {
    // Each folder open is a descriptor, held until its jobs are done: a batch below more folders
    // than that runs in parts, the folders let go in between.
    const parts: StepOp[][] = [[]];
    const dirs = new Set<string>();
    for (const o of batch) {
      const dir = o.op.path.slice(0, Math.max(0, o.op.path.lastIndexOf('/')));
      if (!dirs.has(dir) && dirs.size + openFolderCount(ctx) >= MAX_OPEN_FOLDERS) {
        parts.push([]);
        dirs.clear();
      }
      dirs.add(dir);
      parts[parts.length - 1]!.push(o);
    }
    batch = [];
    parts.forEach((part, i) => {
      if (i > 0) closeContext(ctx);
      if (part.length > 0) run(part);
    });
  };
  // A folder whose mode shuts its owner out (chmod 000) is made, or set, open to its owner
  // (u+rwx) in its place, and given its own mode only once every other write is done (innermost
  // first): the writes below it go through it meanwhile.
  const shut: TxnOp[] = [];
  for (const o of ops) {
    if (!folderOp(o.op)) {
      batch.push(o);
      continue;
    }
    flush();
    const { to } = o.op;
    const closes = to.exists && to.type === 'dir' && (to.mode & 0o700) !== 0o700;
    const note = writeState(root, o.op.path, closes ? { ...to, mode: to.mode | 0o700 } : to, o.bytes, tag, [], ctx);
    done.push(o.op);
    if (closes) shut.push(o.op);
    if (note) notes.push(note);
  }
  flush();
  for (const op of shut.reverse()) writeState(root, op.path, op.to, null, tag, [], ctx);
}

/**
 * One write of a prepared step: the path's state found now (`op.from`), its target (`op.to`) and
 * the target's verified bytes; `found`, what the read of `op.from` saw there (a file or a link;
 * null: nothing), which the write checks right before it writes (absent for a folder: not checked).
 */
export interface StepOp {
  op: TxnOp;
  bytes: Buffer | null;
  file: PlannedFile;
  found?: Found | null;
  /**
   * What the step replaces when that is not the disk's `op.from`: an editor's unsaved text the
   * merge went over (kept in the blob store). The operation log records it as what was found.
   */
  replaces?: FileState;
}

/** The {@link StepOp} `found` of read `r`: a file's or a link's stat, null when nothing is there, absent for a folder (its entries change under the step's own writes). */
function foundBy(r: ReadState): Found | null | undefined {
  if (!r.state.exists) return null;
  if (r.state.type === 'dir' || !r.stat) return undefined;
  return foundOf(r.stat);
}

/** An undo or redo planned and checked under the lock; nothing written yet. */
export interface PreparedStep {
  direction: 'undo' | 'redo';
  force: boolean;
  plan: Plan;
  /** Paths that changed since (written over only when `force`). */
  conflicts: PlannedFile[];
  gaps: CaptureGap[];
  /** True when conflicts stop the step (no `force`): nothing is to be written. */
  blocked: boolean;
  /** The writes, in the order to make them: folders first, then files and links, then removals. */
  ops: StepOp[];
  /** Paths already as the step leaves them. */
  inPlace: PlannedFile[];
  /** The operation log's newest operation when the step was planned (null: none yet): an operation after it that moved the step's files stops the step. */
  head: number | null;
}

export interface PrepareOptions {
  force?: boolean;
  /** What is there now (default: the disk). The sidecar passes one that sees unsaved editor text. */
  read?: CurrentReader;
  /** Narrows the sets to these workspace paths. */
  paths?: string[];
  /** Into the files of `paths`: only some hunks, and the bytes they are found in (see `makePlan`). */
  narrowing?: Narrowing;
  /** Called with the plan before conflicts are counted (the sidecar marks `unsaved-in-editor` here). */
  annotate?: (plan: Plan) => void;
}

/** How many segments workspace path `p` has. */
function depthOf(p: string): number {
  let n = 1;
  for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) n++;
  return n;
}

function order(op: TxnOp): number {
  // Removals first — files and links, then folders innermost first — so that a folder turning
  // back into a file (or a link) is empty by the time the file is renamed into its place; then
  // folders to make, outermost first; then files and links.
  if (!op.to.exists) return op.from.exists && op.from.type === 'dir' ? 20_000 - depthOf(op.path) : 0;
  if (op.to.type === 'dir') return 20_000 + depthOf(op.path);
  return 40_000;
}

/**
 * True when writing `f` is likely to free an inode — a removal, or a replace by rename (anything
 * the in-place rule, {@link fitsInPlace}, does not let go over a plain file) — which is what the
 * write pool's worker overlaps (jobs.ts).
 */
function freesInode(f: PlannedFile): boolean {
  const { current: now, target: to } = f;
  if (!now.exists) return false;
  if (!to.exists) return true;
  return !(now.type === 'file' && to.type === 'file' && fitsInPlace(to.size, IN_PLACE_MAX_BYTES, now.size));
}

/**
 * Steps 1–3 of {@link runStep}. Call inside the lock, after recovery. `planned` is told how many
 * of the step's writes are likely to free an inode ({@link freesInode}), once the plan is made and
 * before their rollback copies are kept.
 */
function prepareInLock(ws: Workspace, sets: ChangeSet[], direction: 'undo' | 'redo', opts: PrepareOptions, planned?: (writes: number) => void): PreparedStep {
  const { journal } = ws;
  const force = opts.force ?? false;
  const head = journal.oplog.head();
  const disk = opts.read ? null : heldDiskReader(ws);
  // With an editor's reader, the journal's state of each file is still the disk's.
  const narrowing = opts.read ? { ...opts.narrowing, disk: opts.narrowing?.disk ?? diskReader(ws) } : opts.narrowing;
  // An editor's bytes (its unsaved text among them) are what its view of the files merges over.
  const plan = makePlan(ws, sets, direction, opts.read ?? disk!.read, opts.paths, disk?.bytes ?? opts.narrowing?.bytes, narrowing);
  opts.annotate?.(plan);
  const conflicts = plan.files.filter((f) => f.conflict);
  const gaps = plan.files.filter((f) => f.gap).map((f) => f.gap!);
  if (conflicts.length > 0 && !force) {
    return { direction, force, plan, conflicts, gaps, blocked: true, ops: [], inPlace: [], head };
  }
  const todo = plan.files.filter((f) => !f.gap && f.action !== 'none');
  const inPlace = plan.files.filter((f) => !f.gap && f.action === 'none');
  planned?.(todo.filter(freesInode).length);

  // Keep what is there now (so a failure, or a later redo, can put it back) and verify targets.
  const ops: StepOp[] = [];
  for (const f of todo) {
    const held = disk?.held.get(f.path);
    let now: ReadState;
    if (held) {
      // The bytes the plan read: stored (or an existing blob freshened) as readState would —
      // unless they are what the step expected to find, whose blob the sets themselves refer to
      // (the sweep keeps it), and which is there.
      const st = held.state;
      if (held.bytes && st.exists && st.type === 'file' && st.sha256 && !(sameState(st, f.expected) && journal.blobs.has(st.sha256))) journal.blobs.put(held.bytes, st.sha256);
      now = held;
    } else {
      now = readWorkspaceState(ws, f.path, { blobs: journal.blobs });
      // Read again (the plan's bytes were not held): what the plan compared, and merged, must still be there.
      if (disk && !sameState(now.state, f.current)) throw new TakebackError('busy', `${direction} stopped, nothing was written: ${f.path} changed meanwhile`, { failures: [f.path] });
    }
    if (now.gap) {
      gaps.push({ ...gapFor(f.path, now.gap), detail: `the file there now is ${now.gap === 'too-large' ? 'over the size limit' : 'not keepable'}: takeback will not replace what it could not bring back` });
      continue;
    }
    const to: FileState = f.target;
    // Merged bytes become a blob of their own before anything is written, like the copies above:
    // the transaction record and a later redo refer to them by hash.
    if (f.merged && to.exists && to.type === 'file' && to.sha256) journal.blobs.put(f.merged, to.sha256);
    const bytes = f.merged ?? (to.exists && to.type === 'file' && to.sha256 ? journal.blobs.get(to.sha256) : null);
    ops.push({ op: { path: f.path, from: now.state, to }, bytes, file: f, found: foundBy(now), ...editorFound(ws, f, now.state, opts) });
  }
  disk?.held.clear();
  const rank = new Map(ops.map((o) => [o, order(o.op)]));
  ops.sort((a, b) => rank.get(a)! - rank.get(b)! || (a.op.path < b.op.path ? -1 : 1));
  return { direction, force, plan, conflicts, gaps, blocked: false, ops, inPlace, head };
}

/**
 * For a merge made over an editor's text that is not the disk's (its unsaved text): that text,
 * kept in the blob store, as what the step replaces (`replaces`), so that the operation log says
 * what the person saw and a redo gives it back. Empty otherwise.
 */
function editorFound(ws: Workspace, f: PlannedFile, disk: FileState, opts: PrepareOptions): { replaces?: FileState } {
  const cur = f.current;
  if (!opts.read || !f.merged || sameState(cur, disk) || !cur.exists || cur.type !== 'file' || !cur.sha256) return {};
  let abs: string;
  try {
    abs = fromWorkspacePath(ws.root, f.path);
  } catch {
    return {};
  }
  const b = opts.narrowing?.bytes?.(f.path, abs, cur);
  if (!b) return {};
  ws.journal.blobs.put(b, cur.sha256);
  return { replaces: cur };
}

/**
 * Step 4: records transaction `txnId`, writes `ops` in order ({@link writeOnDisk}) and, on a
 * failure part-way, puts back what was already written and rethrows. Returns the notes. Call
 * inside the lock.
 */
function writeInLock(ws: Workspace, ops: StepOp[], direction: 'undo' | 'redo', txnId: string, pool: WritePool | null = null): string[] {
  const { journal } = ws;
  // Durable before the record that depends on them: the copies a rollback writes back (and what
  // a forced step replaces), then the record itself (Txns.put syncs it).
  journal.blobs.sync();
  journal.txns.put({ id: txnId, created: Date.now(), ops: ops.map((o) => o.op) });
  // The step's folders, opened once; a failure puts back through the same ones (see putBackContext).
  const ctx = writeContext(ws.root);
  const putBack = putBackWriter(ws, putBackContext(ctx));
  const done: TxnOp[] = [];
  const unsure = new Set<TxnOp>();
  const notes: string[] = [];
  try {
    writeOnDisk(ws, ops, txnId, done, notes, pool, ctx, unsure);
  } catch (e) {
    // Put back what was already written, newest first, from the copies kept above; only over
    // what the step wrote (see putBackWriter).
    const failures: string[] = [];
    for (const op of done.reverse()) {
      try {
        const back = op.from.exists && op.from.type === 'file' && op.from.sha256 ? journal.blobs.get(op.from.sha256) : null;
        putBack({ path: op.path, from: op.to, to: op.from }, back, `${txnId}r`, !unsure.has(op));
      } catch (e2) {
        failures.push(`${op.path}: ${(e2 as Error).message}`);
      }
    }
    journal.txns.remove(txnId);
    const msg = (e as Error).message;
    if (failures.length) {
      throw new TakebackError('busy', `${direction} failed (${msg}) and could not put everything back: ${failures.join('; ')}`, { failures });
    }
    if (e instanceof TakebackError) throw new TakebackError(e.code, `${direction} failed, nothing was changed: ${msg}`, e.data);
    throw new TakebackError('busy', `${direction} failed, nothing was changed: ${msg}`);
  } finally {
    closeContext(ctx);
  }
  // The files written are durable before the step is recorded as done, and that record is
  // durable before the transaction file goes: a power cut leaves the step either rolled back
  // from the record or whole.
  syncWritten(ws.root, ops.map((o) => o.op));
  journal.commitDurably();
  return notes;
}

/**
 * Step 5: records the step in the operation log: the (set, path) pairs it moved, and per path
 * what it found there (kept in prepare) and what it wrote. A forced step first records what it
 * wrote over (from what it expected to find to what it found, for each conflicting path) as a set
 * of its own, taken back at once by a `replace` operation that comes just before the step's own,
 * and the step names that set: `redo --last` takes the step back first, then those changes. Call
 * inside the lock. Returns the ids of the sets moved, in walk order.
 */
function recordInLock(ws: Workspace, step: PreparedStep, now: number): string[] {
  const { journal } = ws;
  const moved = new Map<string, string[]>();
  const found = new Map(step.ops.map((o) => [o.op.path, o.replaces ?? o.op.from]));
  const paths: OpPath[] = [];
  // A change left partly undone is marked so; one whose undo took its last hunks (by lines, or
  // the rest of a change partly undone) is redone as this step's inverse.
  const marks = new Map<string, number>();
  const wasPartial = new Set(step.plan.sets.flatMap((s) => s.files.filter((f) => f.partial).map((f) => `${s.id}\0${f.path}`)));
  const taken = takenPaths(step);
  for (const f of step.plan.files) {
    if (!taken.has(f.path)) continue;
    paths.push({ path: f.path, found: found.get(f.path) ?? f.current, wrote: f.target });
    for (const id of f.sets) {
      const key = `${id}\0${f.path}`;
      if (f.partial?.includes(id)) marks.set(key, 2);
      else if (step.direction === 'undo' && (f.byHunks || wasPartial.has(key))) marks.set(key, 3);
    }
    for (const id of f.sets) {
      const list = moved.get(id);
      if (list) list.push(f.path);
      else moved.set(id, [f.path]);
    }
  }
  const forced = step.force && step.conflicts.length > 0;
  let replaced: string | null = null;
  if (forced) {
    const conflicting = new Map(step.conflicts.map((f) => [f.path, f]));
    const files: FileChange[] = [];
    for (const { op } of step.ops) {
      const f = conflicting.get(op.path);
      if (!f) continue;
      const c = makeChange(journal.blobs, op.path, f.expected, op.from);
      if (c) files.push(c);
    }
    const kept = journal.sets.add({
      turn: null,
      source: { kind: 'replaced', direction: step.direction, sets: step.plan.sets.map((s) => s.id) },
      files,
      now,
      replace: true,
    });
    replaced = kept?.id ?? null;
  }
  journal.oplog.recordStep({ direction: step.direction, forced, files: moved, paths, replaced, time: now, marks });
  return movingSets(step);
}

/**
 * The ids of the sets step `step` moves, in walk order: those with a path the step takes
 * ({@link takenPaths}). A selected set whose every path is a gap, or left out, stays as it is,
 * and is not named.
 */
export function movingSets(step: PreparedStep): string[] {
  const taken = takenPaths(step);
  const moving = new Set<string>();
  for (const f of step.plan.files) if (taken.has(f.path)) for (const id of f.sets) moving.add(id);
  return step.plan.sets.map((s) => s.id).filter((id) => moving.has(id));
}

/**
 * The paths step `step` takes: those it writes and those already as it leaves them. A path of
 * the plan left out at prepare (a capture gap; a file there now that could not be kept, which
 * the step will not replace) is not among them: it stays as it is, and so does its change.
 */
function takenPaths(step: PreparedStep): Set<string> {
  return new Set([...step.ops.map((o) => o.op.path), ...step.inPlace.map((f) => f.path)]);
}

function markDone(ws: Workspace, txnId: string): void {
  ws.journal.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, 'done')").run(`txn:${txnId}`);
}

function cleanUp(ws: Workspace, txnId: string): void {
  ws.journal.txns.remove(txnId);
  ws.journal.db.prepare('DELETE FROM meta WHERE key = ?').run(`txn:${txnId}`);
}

function newTxnId(): string {
  return randomBytes(8).toString('hex');
}

/**
 * Undoes or redoes the sets `select()` returns, as one transaction:
 * 1. inside the journal's write lock, a transaction left by a killed process is rolled back,
 *    the sets are read again and the plan is made against what is there now;
 * 2. with conflicts and no `force`, nothing is written and each conflict is returned;
 * 3. the bytes there now (as read for the plan) are kept in the blob store and every target blob
 *    is read and verified (a blob whose hash does not match stops everything before a write:
 *    `capture-gap`);
 * 4. a transaction record is written and fsynced, then each file is written: a small file over
 *    a plain file there in place, anything else beside its place and renamed in (in a step with
 *    {@link POOL_MIN_JOBS} or more removals and renames, those run several at once on a worker
 *    thread started at step 3); a failure part-way — a write in place cut short included — puts
 *    back what was already written, and rethrows;
 * 5. the step is recorded in the operation log (the sets' files undone, or redone) and the
 *    snapshot index learns the new states, in the same SQLite transaction that records the step
 *    as done.
 */
export function runStep(ws: Workspace, select: () => ChangeSet[], direction: 'undo' | 'redo', opts: PrepareOptions & { now?: number } = {}): ApplyResult {
  const { journal } = ws;
  let txnId: string | null = null;
  // A step with enough removals and renames for the write pool starts its worker as soon as the
  // plan says so: it starts while the rollback copies are kept and the targets verified.
  let pool: WritePool | null = null;
  const planned = (slow: number) => {
    if (slow >= POOL_MIN_JOBS) pool = startPool();
  };
  let result: ApplyResult;
  try {
    result = journal.write((): ApplyResult => {
      recoverTxns(ws);
      const step = prepareInLock(ws, select(), direction, opts, planned);
      const base = { direction, skipped: step.plan.skipped, forced: step.force, conflicts: step.conflicts, gaps: step.gaps };
      if (step.blocked) return { ...base, sets: [], applied: [], notes: [], written: false };
      // Nothing to write and nothing already in place (every path a capture gap): no step at all.
      if (step.ops.length === 0 && step.inPlace.length === 0) return { ...base, sets: [], applied: [], notes: [], written: false };
      const id = newTxnId();
      const notes = writeInLock(ws, step.ops, direction, id, pool);
      txnId = id;
      const sets = recordInLock(ws, step, opts.now ?? Date.now());
      syncIndex(
        ws,
        step.ops.map(({ op }) => ({ path: op.path, state: op.to })),
      );
      markDone(ws, id);
      return { ...base, notes, sets, applied: [...step.ops.map((o) => o.file), ...step.inPlace], written: true };
    });
  } finally {
    if (pool) closePool(pool);
  }
  if (txnId) cleanUp(ws, txnId);
  return result;
}

// ---------------------------------------------------------------------------------------------
// The same step in separate phases, for a caller that lets go of the lock in between.

/** Phase 1: plans the step under the lock (rolling back a killed process's transaction first). Writes nothing to the workspace. */
export function prepareStep(ws: Workspace, select: () => ChangeSet[], direction: 'undo' | 'redo', opts: PrepareOptions = {}): PreparedStep {
  return ws.journal.write(() => {
    recoverTxns(ws);
    return prepareInLock(ws, select(), direction, opts);
  });
}

/**
 * Why the step's sets can no longer be moved as planned (one expired, or another process undid
 * or redid some of their files since `prepareStep`: an operation newer than the step's `head`
 * moved them), or null.
 */
function setsMoved(ws: Workspace, step: PreparedStep): string | null {
  const { journal } = ws;
  for (const s of step.plan.sets) {
    try {
      journal.sets.get(s.id);
    } catch (e) {
      return (e as Error).message;
    }
    for (const f of step.plan.files) {
      if (f.gap || !f.sets.includes(s.id)) continue;
      const op = journal.oplog.lastMoved(s.id, f.path);
      if (op !== null && op > (step.head ?? 0)) return `change ${s.id} was undone or redone meanwhile (${f.path})`;
    }
  }
  return null;
}

/**
 * Phase 2: writes `ops` (some or all of `step.ops`) to disk as one transaction, under the lock.
 * Each path must still hold the state found at prepare (`op.from`); one already at its target is
 * left alone. Otherwise nothing is written: `busy`. The snapshot index learns the states written.
 * Returns the notes.
 */
export function writeStep(ws: Workspace, step: PreparedStep, ops: StepOp[]): { notes: string[] } {
  if (ops.length === 0) return { notes: [] };
  const { journal } = ws;
  let txnId: string | null = null;
  const notes = journal.write(() => {
    recoverTxns(ws);
    const moved = setsMoved(ws, step);
    if (moved) throw new TakebackError('busy', `${step.direction} stopped, nothing was written: ${moved}`);
    const todo: StepOp[] = [];
    for (const o of ops) {
      const read = readWorkspaceState(ws, o.op.path);
      const now = read.state;
      if (sameState(now, o.op.to)) continue;
      // A folder another writer (the editor) made on the way to a file is fine: only its mode is ours to set.
      const dirMade = o.op.to.exists && o.op.to.type === 'dir' && now.exists && now.type === 'dir';
      if (!sameState(now, o.op.from) && !dirMade) {
        throw new TakebackError('busy', `${step.direction} stopped, nothing was written: ${o.op.path} changed meanwhile`, { failures: [o.op.path] });
      }
      todo.push(dirMade ? { ...o, op: { ...o.op, from: now }, found: undefined } : { ...o, found: foundBy(read) });
    }
    const id = newTxnId();
    const n = writeInLock(ws, todo, step.direction, id);
    txnId = id;
    syncIndex(
      ws,
      todo.map(({ op }) => ({ path: op.path, state: op.to })),
    );
    markDone(ws, id);
    return n;
  });
  if (txnId) cleanUp(ws, txnId);
  return { notes };
}

/** The outcome of {@link recordStep}. */
export interface RecordOutcome {
  /** True when the sets were marked. */
  recorded: boolean;
  /** Paths not yet in place on disk (nothing was marked). */
  missing: string[];
  /** Why the step can no longer be recorded (its sets moved meanwhile); null otherwise. */
  stale: string | null;
}

/**
 * Phase 3: when every path of the step is in place on disk, records the step in the operation
 * log (the sets' files undone; redo: applied again) and teaches the snapshot index the states,
 * under the lock. Otherwise records nothing and names the paths still missing. Can be called again later (after an editor saved).
 */
export function recordStep(ws: Workspace, step: PreparedStep, opts: { now?: number } = {}): RecordOutcome {
  return ws.journal.write((): RecordOutcome => {
    const stale = setsMoved(ws, step);
    if (stale) return { recorded: false, missing: [], stale };
    const missing: string[] = [];
    const states: { path: string; state: FileState }[] = [];
    for (const f of step.plan.files) {
      if (f.gap) continue;
      const now = readWorkspaceState(ws, f.path).state;
      if (!sameState(now, f.target)) missing.push(f.path);
      else states.push({ path: f.path, state: f.target });
    }
    if (missing.length > 0) return { recorded: false, missing, stale: null };
    if (step.plan.sets.length > 0) recordInLock(ws, step, opts.now ?? Date.now());
    syncIndex(ws, states);
    return { recorded: true, missing: [], stale: null };
  });
}
