import type { Workspace } from '../open-workspace.js';
import { keepPending, type PendingBudget, type PendingSlice } from '../scan/pending.js';
import { RACY_WINDOW_MS } from '../scan/scan.js';
import { useBackgroundBaseline } from './scan-commit.js';

/*
 * A large baseline made in the background (a workspace past `maxWorkspaceFiles`, outside git):
 * the scan keeps each file's stat at once and leaves its bytes pending; a long-lived process (the
 * capture daemon, the sidecar) keeps them here, one short write transaction at a time, between
 * the events it serves. No hook waits for the baseline: a command's change to a file not yet
 * kept is named as a gap (`baseline-incomplete`).
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

/** The pause between two slices (ms): the events queued meanwhile go first. */
const SLICE_PAUSE_MS = 5;

/** How a process's background baselines go: each slice's budget, and the pause between two slices of one workspace (ms). */
export interface BaselinePace {
  budget: PendingBudget;
  pauseMs: number;
}

/**
 * The pace of `env`: {@link SLICE_BUDGET} and {@link SLICE_PAUSE_MS}, or exactly
 * `TAKEBACK_BASELINE_SLICE_FILES` files a slice (however long it takes) and
 * `TAKEBACK_BASELINE_PAUSE_MS` between slices (to watch a baseline half made).
 */
export function baselinePace(env: NodeJS.ProcessEnv): BaselinePace {
  const num = (name: string) => {
    const n = Number(env[name]);
    return env[name] !== undefined && env[name] !== '' && Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  const files = num('TAKEBACK_BASELINE_SLICE_FILES');
  // A slice of so many files exactly: no time limit cuts it short.
  const budget = files !== undefined ? { files: Math.max(1, files), bytes: Infinity, ms: Infinity } : SLICE_BUDGET;
  return { budget, pauseMs: num('TAKEBACK_BASELINE_PAUSE_MS') ?? SLICE_PAUSE_MS };
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
    useBackgroundBaseline((ws) => this.wake(ws));
  }

  /** True while some workspace's baseline is still being kept. */
  busy(): boolean {
    return this.waiting.size > 0;
  }

  /** Keeps the pending files of `ws` from the next slice on (called by a scan that left some; env: this process's now). */
  wake(ws: Workspace): void {
    if (this.closed) return;
    this.waiting.set(`${ws.home}\0${ws.root}`, { root: ws.root, env: { ...process.env, TAKEBACK_HOME: ws.home } });
    this.schedule();
  }

  /** The next slice, after `ms` (a first one soon; the next ones after the pace's pause). */
  private schedule(ms = SLICE_PAUSE_MS): void {
    if (this.timer || this.closed || this.waiting.size === 0) return;
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

  /** Stops keeping baselines; this process's scans take the limits of reading at once again. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.waiting.clear();
    useBackgroundBaseline(null);
  }
}
