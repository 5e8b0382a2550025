import type { Workspace } from '../open-workspace.js';
import { RACY_WINDOW_MS, scanRows, type ScanOutcome } from '../scan/scan.js';
import { beginCheck, statWorkerFor, type ChangeHints } from '../scan/checker.js';
import type { ScanMeta } from '../scan/snapshot-index.js';

/**
 * Where a long-lived process's file watcher hands a scan its hints: given the workspace root, the
 * racy line of the snapshot the scan compares with (ms since the epoch: that scan's start less
 * the racy window) and that snapshot's generation (a random token each write of the rows sets;
 * null when unknown), the paths that may have moved since, or undefined (the scan walks).
 */
export type HintSource = (root: string, racyMs: number, snapshotGen: string | null) => ChangeHints | undefined;

/**
 * Told, after a scan given hints by the hint source wrote its snapshot (not yet committed: its
 * transaction may still roll back), the workspace root and the generation that snapshot has.
 */
export type HintsWritten = (root: string, snapshotGen: string) => void;

/**
 * Told of each warm scan (one compared with a snapshot) a process's hint source was asked for:
 * the workspace root, how long its look took (ms, monotonic: the walk, or the hints asked for
 * and the check of the paths hinted, see RowScanOutcome's `lookMs`), and whether it had hints. What the scan read after the
 * look is left out: reading what changed (the bytes before, from git's objects when git vouched
 * for them) costs the same walked or hinted, and can outweigh the look itself many times, so it
 * says nothing of which look is cheaper.
 */
export type ScanTimer = (root: string, ms: number, hinted: boolean) => void;

let hintSource: HintSource | null = null;
let scanTimer: ScanTimer | null = null;
let hintsWritten: HintsWritten | null = null;

/**
 * From now on every {@link scanAndCommit} of this process given no hints asks `source` (null: none,
 * the default), tells `timer`, when given, what each warm scan cost, and `written`, when given,
 * the snapshot each scan given the source's hints wrote.
 */
export function useChangeHints(source: HintSource | null, timer: ScanTimer | null = null, written: HintsWritten | null = null): void {
  hintSource = source;
  scanTimer = source ? timer : null;
  hintsWritten = source ? written : null;
}

/**
 * Whether a workspace (its root; its last snapshot's meta, of a complete look) is scanned without
 * holding its rows between scans (see {@link useLeanRows}).
 */
export type LeanRows = (root: string, meta: ScanMeta) => boolean;

let leanRows: LeanRows | null = null;

/**
 * From now on, in this process, a workspace `lean` says so of (null, the default: none) is
 * scanned without holding its rows between scans: a scan given hints reads only the rows it looks
 * up (the snapshot index's `lazy`), and the rows another scan loads (a walk) are let go once
 * written. For a long-lived process that watches large workspaces, where the rows (about 70
 * bytes a file) would be most of its memory; such a process had better make its walks elsewhere
 * (the capture daemon hands them to a child). A snapshot whose baseline is still being kept in
 * the background keeps its rows held as before.
 */
export function useLeanRows(lean: LeanRows | null): void {
  leanRows = lean;
}

/** Whether this process scans workspace `root`, whose last snapshot is `meta`, without holding its rows (see {@link useLeanRows}). */
export function leanRowsFor(root: string, meta: ScanMeta | null): boolean {
  return leanRows !== null && meta !== null && meta.status === 'ok' && !meta.pending && leanRows(root, meta);
}

/**
 * Where a long-lived process keeps a large baseline's bytes in the background (see
 * BackgroundBaselines in baseline.ts): given the workspace whose scan left files pending.
 */
export type BaselineKeeper = (ws: Workspace) => void;

let keeper: BaselineKeeper | null = null;

/**
 * From now on every {@link scanAndCommit} of this process takes the background limits and wakes
 * `k` when it leaves files pending (null: none, the default: a baseline past `maxWorkspaceFiles`
 * is `too-large`, as nothing would keep its bytes).
 */
export function useBackgroundBaseline(k: BaselineKeeper | null): void {
  keeper = k;
}

/** Whether this process keeps baselines in the background (see {@link useBackgroundBaseline}): its scans take the background limits. */
export function keepsBaselines(): boolean {
  return keeper !== null;
}

/** The racy line of the snapshot `meta` describes (ms since the epoch), -Infinity without one. */
export function racyLineOf(meta: ScanMeta | null): number {
  return meta ? Number(BigInt(meta.startedNs) / 1_000_000n) - RACY_WINDOW_MS : -Infinity;
}

/**
 * Scans the workspace against its persisted index and writes the new index (only the folders
 * that moved). Must run inside a write transaction, so that two processes never interleave a
 * scan's read-compare-write. A workspace over the limits gets its index cleared: the next scan
 * under the limits starts a new baseline rather than reporting the whole tree as created.
 * `hints`, from a file watcher, narrow a warm scan to what they name (see ChangeHints); without
 * them, the process's hint source is asked ({@link useChangeHints}). In a process that keeps
 * baselines in the background ({@link useBackgroundBaseline}), a baseline past
 * `maxWorkspaceFiles` keeps the files' stats now and leaves their bytes to it. `read`: called once
 * the scan has read what it reads of the workspace (its blobs stored, not yet synced), before the
 * index is written.
 */
export function scanAndCommit(ws: Workspace, onProgress?: (files: number) => void, hints?: ChangeHints, read?: () => void): ScanOutcome {
  const { journal, root, config } = ws;
  const prevMeta = journal.snapshot.meta();
  // Started before the index loads, to boot meanwhile.
  const worker = prevMeta?.status === 'ok' ? statWorkerFor(prevMeta.files) : null;
  // With no watcher to narrow it, the check of every row begins while the rows load (checker.ts).
  const early = !hints && hintSource === null && prevMeta?.status === 'ok' ? beginCheck(root, racyLineOf(prevMeta), prevMeta.files) : null;
  let r: ReturnType<typeof scanRows>;
  let rows: ReadonlyMap<string, Uint8Array>;
  let given: ChangeHints | undefined;
  const asked = !hints && hintSource !== null && prevMeta?.status === 'ok';
  const lean = leanRowsFor(root, prevMeta);
  try {
    // The hints first: without its rows held (useLeanRows), a scan they vouch for reads only the rows it looks up.
    const asking = asked && scanTimer ? performance.now() : 0;
    given = hints ?? (asked ? hintSource!(root, racyLineOf(prevMeta), journal.snapshot.generation() || null) : undefined);
    const hintsMs = asked && scanTimer ? performance.now() - asking : 0;
    const lazy = lean && given ? journal.snapshot.lazy() : null;
    const all = lazy ? null : journal.snapshot.rows(early ?? undefined);
    // Rows read whole from the database are kept as an image for the next process, while the check runs.
    if (all) journal.snapshot.saveImage();
    rows = lazy ? lazy.rows : all!;
    const totals = lazy ? lazy.totals : journal.snapshot.totals(all!);
    const under = lazy ? lazy.under : (dir: string) => journal.snapshot.rowsUnder(all!, dir);
    r = scanRows({ root, rows, totals, under, prevMeta, blobs: journal.blobs, config, onProgress, worker, hints: given, background: keeper !== null });
    if (asked && scanTimer && r.lookMs !== undefined) scanTimer(root, hintsMs + r.lookMs, given !== undefined);
  } finally {
    early?.cancel();
  }
  read?.();
  if (r.status === 'too-large') {
    if (rows.size > 0) journal.snapshot.clear();
  } else {
    journal.snapshot.writeRows(r.put, r.del);
  }
  if (lean) journal.snapshot.release();
  journal.snapshot.setMeta(r.meta);
  const gen = journal.snapshot.heldGeneration;
  if (asked && given && hintsWritten && gen !== null) hintsWritten(root, gen);
  if (keeper && r.meta.pending) keeper(ws);
  return { status: r.status, ...(r.reason !== undefined ? { reason: r.reason } : {}), changes: r.changes, meta: r.meta, read: r.read };
}
