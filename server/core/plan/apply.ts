import { randomBytes } from 'node:crypto';
import { syncIndex } from '../capture/index-sync.js';
import type { Engine } from '../engine.js';
import { TakebackError } from '../errors.js';
import { readState } from '../fsstate.js';
import type { TxnOp } from '../journal/txns.js';
import { isSecretPath } from '../secrets.js';
import type { CaptureGap, ChangeSet, FileState } from '../types.js';
import { fromWorkspacePath } from '../workspace.js';
import { diskReader, gapFor, makePlan, type CurrentReader, type Plan, type PlannedFile } from './plan.js';
import { recoverTxns } from './recover.js';
import { chmodState, writeState } from './safe-fs.js';

/** The outcome of an undo or redo. Nothing is written when `written` is false. */
export interface ApplyResult {
  direction: 'undo' | 'redo';
  /** Ids of the sets now undone (redo: applied again). */
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
 * Writes the files of a planned step. Takes the plan's files that have work to do; the default
 * writes to disk. The sidecar passes one that sends text edits to the editor for some paths and
 * falls back to this for the rest.
 */
export type FileWriter = (op: TxnOp, bytes: Buffer | null, tag: string, made: string[]) => string | null;

/** Writes `op.to` to disk with {@link writeState} (or only the mode, when that is all that differs). */
export function diskWriter(engine: Engine): FileWriter {
  return (op, bytes, tag, made) => {
    const { from, to } = op;
    if (from.exists && to.exists && from.type === 'file' && to.type === 'file' && from.sha256 !== null && from.sha256 === to.sha256) {
      chmodState(engine.root, op.path, to.mode);
      return null;
    }
    return writeState(engine.root, op.path, to, bytes, tag, made);
  };
}

function order(op: TxnOp): number {
  // Folders to make first (outermost first), then files and links, then removals (files before
  // their folders, innermost first).
  const depth = op.path.split('/').length;
  if (op.to.exists && op.to.type === 'dir') return depth;
  if (op.to.exists) return 10_000;
  if (op.from.exists && op.from.type === 'dir') return 30_000 - depth;
  return 20_000;
}

/**
 * Undoes or redoes the sets `select()` returns, as one transaction:
 * 1. inside the journal's write lock, a transaction left by a killed process is rolled back,
 *    the sets are read again and the plan is made against what is there now;
 * 2. with conflicts and no `force`, nothing is written and each conflict is returned;
 * 3. the bytes there now are kept in the blob store and every target blob is read and verified
 *    (a blob whose hash does not match stops everything before a write: `capture-gap`);
 * 4. a transaction record is written and fsynced, then each file is written beside its place
 *    and renamed in; a failure part-way puts back what was already written, and rethrows;
 * 5. the sets are marked undone (or redone) and the snapshot index learns the new states, in
 *    the same SQLite transaction that records the step as done.
 */
export function applyUndo(
  engine: Engine,
  select: () => ChangeSet[],
  direction: 'undo' | 'redo',
  opts: { force?: boolean; read?: CurrentReader; writer?: FileWriter; now?: number; paths?: string[] } = {},
): ApplyResult {
  const { journal } = engine;
  const force = opts.force ?? false;
  let txnId: string | null = null;
  const result = journal.write((): ApplyResult => {
    recoverTxns(engine);
    const plan = makePlan(engine, select(), direction, opts.read ?? diskReader(engine), opts.paths);
    const conflicts = plan.files.filter((f) => f.conflict);
    const gaps = plan.files.filter((f) => f.gap).map((f) => f.gap!);
    const base = { direction, skipped: plan.skipped, forced: force, notes: [] as string[] };
    if (conflicts.length > 0 && !force) {
      return { ...base, sets: [], applied: [], conflicts, gaps, written: false };
    }
    const todo = plan.files.filter((f) => !f.gap && f.action !== 'none');
    const inPlace = plan.files.filter((f) => !f.gap && f.action === 'none');

    // Keep what is there now (so a failure, or a later redo, can put it back) and verify targets.
    const ops: { op: TxnOp; bytes: Buffer | null; file: PlannedFile }[] = [];
    for (const f of todo) {
      const abs = fromWorkspacePath(engine.root, f.path);
      const now = readState(abs, { blobs: journal.blobs, maxFileBytes: engine.config.maxFileBytes, secret: isSecretPath(f.path) });
      if (now.gap) {
        gaps.push({ ...gapFor(f.path, now.gap), detail: `the file there now is ${now.gap === 'too-large' ? 'over the size limit' : 'not keepable'}: takeback will not replace what it could not bring back` });
        continue;
      }
      const to: FileState = f.target;
      const bytes = to.exists && to.type === 'file' && to.sha256 ? journal.blobs.get(to.sha256) : null;
      ops.push({ op: { path: f.path, from: now.state, to }, bytes, file: f });
    }
    ops.sort((a, b) => order(a.op) - order(b.op) || (a.op.path < b.op.path ? -1 : 1));

    txnId = randomBytes(8).toString('hex');
    journal.txns.put({ id: txnId, created: Date.now(), ops: ops.map((o) => o.op) });
    const writer = opts.writer ?? diskWriter(engine);
    const disk = diskWriter(engine);
    const done: TxnOp[] = [];
    const notes: string[] = [];
    try {
      for (const { op, bytes } of ops) {
        const made: string[] = [];
        const note = writer(op, bytes, txnId, made);
        done.push(op);
        if (note) notes.push(note);
      }
    } catch (e) {
      // Put back what was already written, newest first, from the copies kept above.
      const failures: string[] = [];
      for (const op of done.reverse()) {
        try {
          const back = op.from.exists && op.from.type === 'file' && op.from.sha256 ? journal.blobs.get(op.from.sha256) : null;
          disk({ path: op.path, from: op.to, to: op.from }, back, `${txnId}r`, []);
        } catch (e2) {
          failures.push(`${op.path}: ${(e2 as Error).message}`);
        }
      }
      journal.txns.remove(txnId);
      txnId = null;
      const msg = (e as Error).message;
      if (failures.length) {
        throw new TakebackError('busy', `${direction} failed (${msg}) and could not put everything back: ${failures.join('; ')}`, { failures });
      }
      if (e instanceof TakebackError) throw new TakebackError(e.code, `${direction} failed, nothing was changed: ${msg}`, e.data);
      throw new TakebackError('busy', `${direction} failed, nothing was changed: ${msg}`);
    }

    const ids = plan.sets.map((s) => s.id);
    const moved = new Map<string, string[]>();
    for (const f of [...todo, ...inPlace]) for (const id of f.sets) moved.set(id, [...(moved.get(id) ?? []), f.path]);
    journal.sets.markFiles(moved, direction === 'undo', {
      action: direction === 'undo' ? 'undone' : 'redone',
      time: opts.now ?? Date.now(),
      ...(force && conflicts.length > 0 ? { forced: true } : {}),
    });
    syncIndex(
      engine,
      ops.map(({ op }) => ({ path: op.path, state: op.to })),
    );
    journal.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, 'done')").run(`txn:${txnId}`);
    return { ...base, notes, sets: ids, applied: [...ops.map((o) => o.file), ...inPlace], conflicts, gaps, written: true };
  });
  if (txnId) {
    journal.txns.remove(txnId);
    journal.db.prepare('DELETE FROM meta WHERE key = ?').run(`txn:${txnId}`);
  }
  return result;
}
