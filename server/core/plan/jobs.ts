import { createRequire } from 'node:module';
import type { MessagePort, Worker } from 'node:worker_threads';
import { TakebackError } from '../errors.js';
import { workerFile } from '../worker-file.js';
import {
  DONE,
  FAILED,
  FINISHED,
  jobAbandon,
  jobFinish,
  jobPrepare,
  mayFreeInode,
  NEXT,
  NOT_RUN,
  PREPARED,
  READY,
  runSync,
  STATUS,
  STOP,
  type Batch,
  type ErrorData,
  type FileJob,
  type WorkerData,
} from './job-steps.js';

export type { ChmodJob, FileJob, RemoveJob, WriteJob } from './job-steps.js';

// node:worker_threads is loaded by the first step big enough for the worker: every command and
// hook that loads this module would pay for it otherwise.
const lazy = createRequire(import.meta.url);
const threads = () => lazy('node:worker_threads') as typeof import('node:worker_threads');

/*
 * Running the steps of job-steps.ts: one job at a time on this thread (`runJobSync`), or many at
 * once (`runJobs`): first stages here, second stages on a worker thread's lanes (write-worker.ts).
 */

/** True for the error of a write in place cut short once writing began (the file may hold part of the new bytes). */
export function isTorn(e: unknown): boolean {
  return (e as { torn?: unknown } | null)?.torn === true;
}

/**
 * The error a failed job stands for: a refusal becomes `outside-workspace` naming the path; a
 * path that no longer holds what the step found, `busy` "<path> changed meanwhile"; any other
 * error `busy`, naming the path too.
 */
export function jobError(job: FileJob, e: unknown): Error {
  const why = (e as { refuse?: unknown } | null)?.refuse;
  if (typeof why === 'string') return new TakebackError('outside-workspace', `refusing to write ${job.rel}: ${why}`, { path: job.rel });
  if ((e as { changed?: unknown } | null)?.changed === true) return new TakebackError('busy', `${job.rel} changed meanwhile`, { failures: [job.rel] });
  if (e instanceof TakebackError) return e;
  // A file system error (a full disk, a file size limit, no permission) names the path it hit
  // (`busy`, with the path in `failures`, as protocol/README.md says of a write that failed).
  const message = e instanceof Error ? e.message : String(e);
  const out = new TakebackError('busy', `${job.rel}: ${message}`, { failures: [job.rel] });
  if (isTorn(e)) Object.assign(out, { torn: true });
  return out;
}


/** Runs `job` (both stages) on this thread, one call at a time. Returns its note (see `jobFinish`); throws as {@link jobError}. */
export function runJobSync(job: FileJob): string | null {
  try {
    if (runSync(jobPrepare(job))) return null;
    return runSync(jobFinish(job));
  } catch (e) {
    throw jobError(job, e);
  }
}


/**
 * What became of one job of {@link runJobs}: `unknown` when it may or may not have changed its
 * path — the worker stopped answering while it was under way, or a write in place failed
 * part-way (see {@link isTorn}); such a path is to be put back like one written.
 */
export type JobOutcome =
  | { status: 'done'; note: string | null }
  | { status: 'failed'; error: Error }
  | { status: 'unknown'; error: Error }
  | { status: 'not-run' };

/** Steps of at least this many file jobs start a worker (below, this thread runs them all: a worker takes longer to start than they do). */
export const POOL_MIN_JOBS = 100;
/** A batch of at least this many jobs goes to a worker already started (below, this thread runs it). */
const POOL_MIN_BATCH = 8;
/** The worker's lanes: second stages under way there at once (libuv's pool has 4 threads unless `UV_THREADPOOL_SIZE` says otherwise). */
export const POOL_LANES = 8;
/** How long the wait for the worker may go without one of its jobs finishing before the step gives up (ms). */
const STALL_MS = 60_000;

/**
 * A worker thread for the second stages of {@link runJobs}, started ahead of them (it takes tens
 * of milliseconds to start: the caller plans meanwhile) and used for one batch after another.
 */
export interface WritePool {
  readonly worker: Worker;
  readonly port: MessagePort;
  batches: number;
}

/** Starts a {@link WritePool} with `lanes` second stages at once (default {@link POOL_LANES}); null when no thread can be started. Close it with {@link closePool}. */
export function startPool(lanes: number = POOL_LANES): WritePool | null {
  try {
    const { MessageChannel, Worker } = threads();
    const channel = new MessageChannel();
    const data: WorkerData = { port: channel.port2, lanes: Math.max(1, lanes) };
    // Its stdout and stderr are its own (never mixed into the command's output).
    const worker = new Worker(workerFile(import.meta.url, 'core/plan/write-worker'), { workerData: data, transferList: [channel.port2], stdout: true, stderr: true });
    // The worker's own failure never reaches the process: the jobs it did not take are run here.
    worker.on('error', () => {});
    worker.unref();
    return { worker, port: channel.port1, batches: 0 };
  } catch {
    return null;
  }
}

/** Lets the pool's worker go (it ends once its port is closed; it is also terminated). */
export function closePool(pool: WritePool): void {
  pool.port.close();
  void pool.worker.terminate().catch(() => {});
}

/**
 * Runs `jobs`, which must be independent of one another (no job's path is on the way to
 * another's, and no two jobs share a path or a temporary name), and returns what became of each,
 * in order. This thread runs every first stage (a write's temporary file), in order, each job's
 * second stage (its rename, or the whole of a removal or a mode change) right after it as long as
 * no worker is ready. For at least `minForPool` jobs (default: a few with `pool`, else
 * {@link POOL_MIN_JOBS} jobs that may free an inode: removals, and writes too big to be written
 * in place or of a link) a worker — `pool`'s, else one started here and let go at the end — runs
 * the second stages as the first ones are done, several at once; this thread then
 * takes those the worker has not. With `mainFinishes: false` this thread runs no second stage
 * while there is a worker (the tests use it to have the worker run them all; this thread waits
 * for it to be ready). After a failure no stage is started, and temporary files made for jobs not
 * finished are removed. Each job comes back `done` (with its note), `failed` (with the error as
 * {@link jobError} gives it) or `not-run` (nothing of it is left). Returns once every job has
 * been dealt with (or, should the worker stop answering for a minute, those it had under way come
 * back `unknown`).
 */
export function runJobs(jobs: FileJob[], opts: { pool?: WritePool | null; minForPool?: number; lanes?: number; mainFinishes?: boolean } = {}): JobOutcome[] {
  const n = jobs.length;
  const out: JobOutcome[] = jobs.map(() => ({ status: 'not-run' }));
  const s = new Int32Array(new SharedArrayBuffer(4 * (STATUS + n)));
  let pool: WritePool | null = null;
  let own = false;
  // Without a pool or a threshold given, count only the jobs that may wait on a freed inode.
  const count = opts.minForPool !== undefined || opts.pool ? n : jobs.filter(mayFreeInode).length;
  if (n > 1 && count >= (opts.minForPool ?? (opts.pool ? POOL_MIN_BATCH : POOL_MIN_JOBS))) {
    pool = opts.pool ?? startPool(opts.lanes);
    own = !opts.pool && pool !== null;
  }
  const batch = pool ? ++pool.batches : 0;
  if (pool) {
    try {
      pool.port.postMessage({ batch, jobs, shared: s.buffer } satisfies Batch);
    } catch {
      pool = null; // this thread runs them all
    }
  }
  const mark = (i: number, status: number) => {
    Atomics.store(s, STATUS + i, status);
    Atomics.notify(s, STATUS + i);
  };
  /** The second stage of prepared job `i`, here (or its temporary file removed, after a failure); counts it finished. */
  const finishHere = (i: number) => {
    if (Atomics.load(s, STATUS + i) === PREPARED) {
      if (Atomics.load(s, STOP) !== 0) {
        runSync(jobAbandon(jobs[i]!));
        Atomics.store(s, STATUS + i, NOT_RUN);
      } else {
        try {
          out[i] = { status: 'done', note: runSync(jobFinish(jobs[i]!)) };
          Atomics.store(s, STATUS + i, DONE);
        } catch (e) {
          out[i] = { status: 'failed', error: jobError(jobs[i]!, e) };
          Atomics.store(s, STOP, 1);
          Atomics.store(s, STATUS + i, FAILED);
        }
      }
    }
    Atomics.add(s, FINISHED, 1);
  };
  try {
    // First stages, in order. Until the worker is ready, each job's second stage follows its first
    // here (as one at a time); from then on the worker takes them.
    for (let i = 0; i < n; i++) {
      if (Atomics.load(s, STOP) !== 0) {
        for (let j = i; j < n; j++) mark(j, NOT_RUN);
        break;
      }
      try {
        if (runSync(jobPrepare(jobs[i]!))) {
          // Written in place: no second stage (a taker finds it done and only counts it).
          out[i] = { status: 'done', note: null };
          mark(i, DONE);
        } else mark(i, PREPARED);
      } catch (e) {
        // A write in place cut short may have changed the file: it is to be put back.
        out[i] = { status: isTorn(e) ? 'unknown' : 'failed', error: jobError(jobs[i]!, e) };
        Atomics.store(s, STOP, 1);
        mark(i, FAILED);
      }
      if ((opts.mainFinishes !== false || !pool) && Atomics.load(s, READY) === 0 && Atomics.compareExchange(s, NEXT, i, i + 1) === i) finishHere(i);
    }
    if (pool && opts.mainFinishes === false) {
      // Wait for the worker to be ready (it then takes every second stage); if it never is, run them here.
      const since = Date.now();
      while (Atomics.load(s, READY) === 0 && Date.now() - since < STALL_MS) Atomics.wait(s, READY, 0, 50);
    }
    // Second stages the worker has not taken.
    if (!pool || opts.mainFinishes !== false || Atomics.load(s, READY) === 0) {
      for (let i = Atomics.add(s, NEXT, 1); i < n; i = Atomics.add(s, NEXT, 1)) finishHere(i);
    }
    if (pool) waitForWorker(jobs, s, pool.port, batch, out);
  } finally {
    if (own && pool) closePool(pool);
  }
  return out;
}

/** Waits until every job of batch `batch` of {@link runJobs} has been taken for its second stage and finished with, then reads the worker's outcomes into `out`. */
function waitForWorker(jobs: FileJob[], s: Int32Array, port: MessagePort, batch: number, out: JobOutcome[]): void {
  const n = jobs.length;
  let seen = Atomics.load(s, FINISHED);
  let since = Date.now();
  while (seen < n) {
    Atomics.wait(s, FINISHED, seen, 1000);
    const now = Atomics.load(s, FINISHED);
    if (now !== seen) {
      seen = now;
      since = Date.now();
    } else if (Date.now() - since > STALL_MS) {
      // The worker stopped answering with jobs under way: what they did is unknown.
      for (let i = 0; i < n; i++) {
        if (Atomics.load(s, STATUS + i) === PREPARED) {
          out[i] = { status: 'unknown', error: new TakebackError('busy', `the writer thread stopped while writing ${jobs[i]!.rel}`, { path: jobs[i]!.rel }) };
        }
      }
      break;
    }
  }
  const { receiveMessageOnPort } = threads();
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    const msg = m.message as { batch: number; i: number; note?: string; error?: ErrorData };
    if (msg.batch !== batch) continue;
    if (msg.error) out[msg.i] = { status: 'failed', error: jobError(jobs[msg.i]!, Object.assign(new Error(msg.error.message), msg.error)) };
    else if (msg.note !== undefined) out[msg.i] = { status: 'done', note: msg.note };
  }
  for (let i = 0; i < n; i++) {
    if (Atomics.load(s, STATUS + i) === DONE && out[i]!.status === 'not-run') out[i] = { status: 'done', note: null };
  }
}
