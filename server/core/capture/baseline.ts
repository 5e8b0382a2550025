import type { Workspace } from '../open-workspace.js';
import { applyPending, keepPending, pendingItems, type PendingBudget, type PendingItem, type PendingSlice } from '../scan/pending.js';
import { PendingReader } from '../scan/pending-reader.js';
import type { PendingAnswer, PendingRequest } from '../scan/pending-worker.js';
import { RACY_WINDOW_MS } from '../scan/scan.js';
import { useBackgroundBaseline } from './scan-commit.js';

/*
 * A large baseline made in the background (a workspace past `maxWorkspaceFiles`, outside git):
 * the scan keeps each file's stat at once and leaves its bytes pending; a long-lived process (the
 * capture daemon, the sidecar) keeps them here, between the events it serves: a worker thread
 * reads, hashes, compresses and stores a batch of files, and the thread that holds the journal
 * writes what it read in one short write transaction (without threads, the slices read on that
 * thread, within a time budget). No hook waits for the baseline: a command's change to a file not
 * yet kept is named as a gap (`baseline-incomplete`).
 */

/**
 * One slice: a write transaction that keeps pending files' bytes (see keepPending) within
 * `budget` and writes their rows and the snapshot's counts back. Null when the snapshot has
 * nothing pending (or none usable). Throws what the journal throws (its lock held too long).
 */
export function keepBaselineSlice(ws: Workspace, budget: PendingBudget): PendingSlice | null {
  const { journal, root, config } = ws;
  return journal.write(() => {
    const meta = journal.snapshot.meta();
    if (!meta || meta.status !== 'ok' || !meta.pending) return null;
    const racyMs = Number(BigInt(meta.startedNs) / 1_000_000n) - RACY_WINDOW_MS;
    const r = keepPending({ root, rows: journal.snapshot.rows(), racyMs, blobs: journal.blobs, config, budget });
    if (r.put.size > 0) journal.snapshot.writeRows(r.put, []);
    const { pending: _was, ...rest } = meta;
    journal.snapshot.setMeta({ ...rest, bytes: meta.bytes + r.bytes, ...(r.left > 0 ? { pending: r.left } : {}) });
    return r;
  });
}

/** What the worker thread is asked to read for one slice, without its id: see {@link baselineRequest}. */
export type BaselineRequest = Omit<PendingRequest, 'id'>;

/**
 * The pending files of `ws`'s snapshot for the worker thread to read, up to `files` files and
 * `bytes` of their sizes (none racy), with the snapshot's racy line; null when none is to be read. Reads the
 * journal, writes nothing.
 */
export function baselineRequest(ws: Workspace, files: number, bytes: number): BaselineRequest | null {
  const meta = ws.journal.snapshot.meta();
  if (!meta || meta.status !== 'ok' || !meta.pending) return null;
  const racyMs = Number(BigInt(meta.startedNs) / 1_000_000n) - RACY_WINDOW_MS;
  const items = pendingItems(ws.journal.snapshot.rows(), files, bytes, racyMs);
  if (items.length === 0) return null;
  return { root: ws.root, home: ws.home, racyMs, maxFileBytes: ws.config.maxFileBytes, items };
}

/**
 * Writes what the worker read of `items` (its `answer`) into `ws`'s snapshot, in one write
 * transaction whose commit first syncs the blobs the worker stored: each entry the rows still
 * hold as it was read is kept, and the meta's counts follow. Null when the snapshot has nothing
 * pending any more. Throws what the journal throws (its lock held too long).
 */
export function keepBaselineRead(ws: Workspace, items: readonly PendingItem[], answer: Pick<PendingAnswer, 'reads' | 'unsynced'>): PendingSlice | null {
  const { journal } = ws;
  return journal.write(() => {
    journal.blobs.adopt(answer.unsynced);
    const meta = journal.snapshot.meta();
    if (!meta || meta.status !== 'ok' || !meta.pending) return null;
    const r = applyPending(journal.snapshot.rows(), items, answer.reads);
    if (r.put.size > 0) journal.snapshot.writeRows(r.put, []);
    const { pending: _was, ...rest } = meta;
    journal.snapshot.setMeta({ ...rest, bytes: meta.bytes + r.bytes, ...(r.left > 0 ? { pending: r.left } : {}) });
    return r;
  });
}

/** The progress of a workspace's baseline: files whose bytes are kept, of the snapshot's files; null when complete (or no snapshot). */
export function baselineProgress(ws: Workspace): { kept: number; files: number } | null {
  const meta = ws.journal.snapshot.meta();
  if (!meta || meta.status !== 'ok' || !meta.pending) return null;
  return { kept: Math.max(0, meta.files - meta.pending), files: meta.files };
}

/**
 * What one slice may read. Each slice pays a commit and the sync of its blobs (one syncfs, about
 * 20 ms here): at 40 ms a slice half the time went to them, at 100 ms a fifth; an event that
 * comes meanwhile waits at most about that long (bench/RESULTS.md, the 200,000-file tree).
 */
export const SLICE_BUDGET: PendingBudget = { files: 5000, bytes: 64 * 1024 * 1024, ms: 100 };

/**
 * What one slice hands the worker thread at most: files and bytes. Its commit (a syncfs, the rows
 * patched) costs the hooks' thread a few tens of ms whatever the batch, so batches are large.
 */
const READ_BATCH = { files: 4000, bytes: 64 * 1024 * 1024 };

/** The pause between two slices (ms): the events queued meanwhile go first. */
const SLICE_PAUSE_MS = 5;

/** How a process's background baselines go: each slice's budget, and the pause between two slices of one workspace (ms). */
export interface BaselinePace {
  budget: PendingBudget;
  pauseMs: number;
  /** False: every slice reads on the journal's thread, never on a worker (`TAKEBACK_BASELINE_WORKER=0`, to compare the two). */
  worker?: boolean;
}

/**
 * The pace of `env`: {@link SLICE_BUDGET} and {@link SLICE_PAUSE_MS}, or exactly
 * `TAKEBACK_BASELINE_SLICE_FILES` files a slice (however long it takes) and
 * `TAKEBACK_BASELINE_PAUSE_MS` between slices (to watch a baseline half made); with
 * `TAKEBACK_BASELINE_WORKER=0`, read on the journal's thread alone.
 */
export function baselinePace(env: NodeJS.ProcessEnv): BaselinePace {
  const num = (name: string) => {
    const n = Number(env[name]);
    return env[name] !== undefined && env[name] !== '' && Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  const files = num('TAKEBACK_BASELINE_SLICE_FILES');
  // A slice of so many files exactly: no time limit cuts it short.
  const budget = files !== undefined ? { files: Math.max(1, files), bytes: Infinity, ms: Infinity } : SLICE_BUDGET;
  return { budget, pauseMs: num('TAKEBACK_BASELINE_PAUSE_MS') ?? SLICE_PAUSE_MS, worker: env.TAKEBACK_BASELINE_WORKER !== '0' };
}

/** A workspace whose baseline is waiting: how to open it again. */
interface Waiting {
  root: string;
  env: NodeJS.ProcessEnv;
}

/**
 * The baselines a long-lived process makes in the background. Once made, it is the process's
 * keeper: its scans take the background limits (see scanRows), and each scan that leaves files
 * pending wakes it. Then it keeps their bytes a slice at a time on timers of its own (never on a
 * hook's time), workspace after workspace, until none is pending, and sleeps until woken again.
 */
export class BackgroundBaselines {
  private readonly waiting = new Map<string, Waiting>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** The worker thread that reads, started with the first slice (null: none can be had, the slices read here). */
  private reader: PendingReader | null | undefined;
  /** True while a slice's batch is on the worker. */
  private reading = false;

  /**
   * `open(root, env)` gives the workspace of `root` as the process opens it (with the
   * environment its event had), `release` gives it back; `log` hears each baseline completed
   * and each slice that failed.
   */
  constructor(
    private readonly open: (root: string, env: NodeJS.ProcessEnv) => Workspace,
    private readonly release: (ws: Workspace) => void,
    private readonly log?: (message: string) => void,
    private readonly pace: BaselinePace = { budget: SLICE_BUDGET, pauseMs: SLICE_PAUSE_MS },
  ) {
    if (pace.worker === false) this.reader = null;
    useBackgroundBaseline((ws) => this.wake(ws));
  }

  /** True while some workspace's baseline is still being kept. */
  busy(): boolean {
    return this.waiting.size > 0 || this.reading;
  }

  /** Keeps the pending files of `ws` from the next slice on (called by a scan that left some; env: this process's now). */
  wake(ws: Workspace): void {
    if (this.closed) return;
    this.waiting.set(`${ws.home}\0${ws.root}`, { root: ws.root, env: { ...process.env, TAKEBACK_HOME: ws.home } });
    this.schedule();
  }

  /** The next slice, after `ms` (a first one soon; the next ones after the pace's pause). */
  private schedule(ms = SLICE_PAUSE_MS): void {
    if (this.timer || this.reading || this.closed || this.waiting.size === 0) return;
    this.timer = setTimeout(() => this.slice(), ms);
    this.timer.unref();
  }

  /** One slice of the first waiting workspace; it goes to the back of the line, or out when done. */
  private slice(): void {
    this.timer = null;
    const first = this.waiting.entries().next();
    if (first.done) return;
    const [key, w] = first.value;
    this.waiting.delete(key);
    if (this.reader === undefined) this.reader = PendingReader.start();
    if (this.reader && !this.reader.failed) {
      void this.sliceOnWorker(key, w, this.reader);
      return;
    }
    let again = false;
    let ws: Workspace | null = null;
    try {
      ws = this.open(w.root, w.env);
      const r = keepBaselineSlice(ws, this.pace.budget);
      // Nothing kept (every file left moved since the scan): the next scan looks at them and wakes this again.
      again = r !== null && r.left > 0 && r.kept > 0;
      if (r && r.left === 0) this.log?.(`baseline of ${w.root} complete`);
    } catch (e) {
      // The journal's lock held, a workspace gone: the next scan that leaves files pending wakes it again.
      this.log?.(`baseline of ${w.root}: ${(e as Error).message}`);
    } finally {
      if (ws) this.release(ws);
    }
    if (again && !this.waiting.has(key)) this.waiting.set(key, w);
    this.schedule(this.pace.pauseMs);
  }

  /**
   * One slice read on the worker: the batch gathered from the journal, read there while this
   * thread serves events, and written here. A worker that failed leaves the batch to the next
   * slice, which reads on this thread.
   */
  private async sliceOnWorker(key: string, w: Waiting, reader: PendingReader): Promise<void> {
    this.reading = true;
    let again = false;
    try {
      const { budget } = this.pace;
      // A pace of so many files exactly (no time limit) is one batch of them.
      const files = budget.ms === Infinity ? budget.files : Math.min(budget.files, READ_BATCH.files);
      const req = this.with(w, (ws) => baselineRequest(ws, files, Math.min(budget.bytes, READ_BATCH.bytes)));
      const answer = req ? await reader.read(req) : null;
      if (req && !answer) again = true;
      if (req && answer && !this.closed) {
        if (answer.error) this.log?.(`baseline of ${w.root}: ${answer.error}`);
        const r = this.with(w, (ws) => keepBaselineRead(ws, req.items, answer));
        // Nothing kept (every file of the batch moved since the scan): the next scan looks at them and wakes this again.
        again = r !== null && r.left > 0 && r.kept > 0;
        if (r && r.left === 0) this.log?.(`baseline of ${w.root} complete`);
      }
    } catch (e) {
      // The journal's lock held, a workspace gone: the next scan that leaves files pending wakes it again.
      this.log?.(`baseline of ${w.root}: ${(e as Error).message}`);
    } finally {
      this.reading = false;
    }
    if (again && !this.closed && !this.waiting.has(key)) this.waiting.set(key, w);
    this.schedule(this.pace.pauseMs);
  }

  /** Runs `fn` on the workspace of `w`, opened and given back around it. */
  private with<T>(w: Waiting, fn: (ws: Workspace) => T): T {
    const ws = this.open(w.root, w.env);
    try {
      return fn(ws);
    } finally {
      this.release(ws);
    }
  }

  /** Stops keeping baselines; this process's scans take the limits of reading at once again. */
  close(): void {
    this.closed = true;
    this.reader?.close();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.waiting.clear();
    useBackgroundBaseline(null);
  }
}
