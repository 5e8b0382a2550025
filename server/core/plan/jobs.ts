import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { MessagePort, Worker } from 'node:worker_threads';
import { TakebackError } from '../errors.js';

// node:worker_threads is loaded by the first step big enough for the worker: every command and
// hook that loads this module would pay for it otherwise.
const lazy = createRequire(import.meta.url);
const threads = () => lazy('node:worker_threads') as typeof import('node:worker_threads');

/*
 * The file-level steps of an undo or redo (write a small file over the one there in place, or
 * write a file or a link beside its place and rename it in; change a file's mode; remove a file
 * or a link), written once and run two ways:
 *
 * - one at a time on this thread, with Node's synchronous calls (`runJobSync`: every write of
 *   safe-fs.ts that is not a folder goes through here);
 * - many at once (`runJobs`), in two stages: this thread makes each write's temporary file, in
 *   order, while a worker thread renames them into place (and runs the removals and mode
 *   changes), several at once through libuv's thread pool. On ext4 a replacing rename frees the
 *   old inode and may wait for its blocks to be discarded right then: those waits overlap across
 *   threads; making a file (finding a free inode) is work for the CPU and does not, so it stays
 *   on one thread (bench/RESULTS.md).
 *
 * Each step is a generator that yields the file system calls it needs (`Call`) and gets their
 * results back (or their errors thrown in), so that the checks and their order are the same
 * whichever way the calls are made. The generators and the worker's loop are handed to the worker
 * as their source text (`Function.prototype.toString`), so they must not use anything from
 * outside themselves but each other and the globals.
 */

/** What is at a path, never following a link; null when nothing is there (ENOENT, ENOTDIR). */
export type Kind = 'dir' | 'link' | 'file' | 'other';

/**
 * Writes `abs`: a file of `bytes` and `mode`, or a link to `link`. A file of at most `inPlaceMax`
 * bytes whose place holds a plain file (one link, not a link itself, at most `inPlaceMax` bytes)
 * is written over it in place; anything else is written to the temporary name `tmp` beside it
 * and renamed in.
 *
 * Why in place: replacing a file by rename makes a new inode and frees the old one, and on ext4
 * mounted with `discard` each freed inode waits for its blocks to be discarded; writing over the
 * same blocks (then truncating to the new length) does neither, and is what `cp` does
 * (bench/RESULTS.md: 500 small files 12 ms in place against 110–150 ms by rename). What keeps it
 * safe: the step's transaction record (journal/txns.ts) is on disk before the first write, and
 * the bytes each path held are in the blob store, so a write cut short — a full disk part-way, a
 * killed process — is put back by the rollback or by recovery (recover.ts), as a rename cut short
 * is. What it gives up: a reader of the file during its write may see part of it, which is why
 * only small files (one write call) go this way.
 */
export interface WriteJob {
  kind: 'write';
  /** The workspace-relative path (for messages). */
  rel: string;
  abs: string;
  /** The temporary name beside `abs` (`.<name>.takeback-<tag>`); one already there is replaced. */
  tmp: string;
  /** `abs`'s folder, and the real path it must have (under the root's real path; null: not checked, see safe-fs.ts's putBackContext). */
  parent: string;
  parentReal: string | null;
  /** Check `parent` before creating the temporary file too (not only before the rename). */
  checkFirst: boolean;
  /** Permission bits of the file (not used for a link). */
  mode: number;
  /** The file's verified bytes; null for a link. */
  bytes: Uint8Array | null;
  /** The link's target; null for a file. */
  link: string | null;
  /** Files of at most this many bytes are written in place over a plain file there (0: never; see above). */
  inPlaceMax: number;
}

/** Sets the permission bits of the file at `abs` (not following a link). */
export interface ChmodJob {
  kind: 'chmod';
  rel: string;
  abs: string;
  parent: string;
  parentReal: string | null;
  mode: number;
}

/** Removes the file, link or empty folder at `abs`; every folder on the way must be a real folder. */
export interface RemoveJob {
  kind: 'remove';
  rel: string;
  abs: string;
  /** The folders from the root down to `abs`'s parent: absolute path and workspace-relative path (for messages); empty when `abs` names an entry of a folder already open (safe-fs.ts: opened one component at a time). */
  walk: [string, string][];
}

/** One file-level step, as plain data (it is handed to the worker as it is). Its paths name entries of folders safe-fs.ts holds open (`/proc/self/fd/<fd>/<name>`, see there) until the step is done. */
export type FileJob = WriteJob | ChmodJob | RemoveJob;

/** A file system call a step asks for; see `callSyncWith` for what each does and returns. */
export type Call =
  | { call: 'lstat'; path: string }
  | { call: 'realpath'; path: string }
  | { call: 'unlink'; path: string }
  | { call: 'rmdir'; path: string }
  | { call: 'symlink'; target: string; path: string }
  | { call: 'create'; path: string; bytes: Uint8Array; mode: number }
  | { call: 'overwrite'; path: string; bytes: Uint8Array; mode: number; max: number }
  | { call: 'chmod'; path: string; mode: number }
  | { call: 'rename'; from: string; to: string };

type Step<T> = Generator<Call, T, unknown>;

// ---------------------------------------------------------------------------------------------
// The steps (self-contained: see above).

/** A refusal: `why` becomes "refusing to write <rel>: <why>" (`outside-workspace`). */
function jobRefusal(why: string): Error {
  return Object.assign(new Error(why), { refuse: why });
}

/** Removes what is at `abs` (a file, a link, or an empty folder). Returns false for a folder that is not empty. */
function* jobRemoveAt(abs: string): Step<boolean> {
  const kind = yield { call: 'lstat', path: abs };
  if (kind === null) return true;
  if (kind === 'dir') {
    try {
      yield { call: 'rmdir', path: abs };
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') return false;
      throw e;
    }
    return true;
  }
  yield { call: 'unlink', path: abs };
  return true;
}

/**
 * `parent`'s real path is `parentReal` (the literal path under the root's real path), else a
 * refusal: a link anywhere on the way, or a folder moved, gives another real path (or none). Not
 * a folder at all (a file there) makes the next call fail with ENOTDIR. A null `parentReal` is
 * not checked.
 */
function* jobCheckParent(parent: string, parentReal: string | null): Step<void> {
  if (parentReal === null) return;
  let real: unknown;
  try {
    real = yield { call: 'realpath', path: parent };
  } catch {
    throw jobRefusal('its folder moved');
  }
  if (real !== parentReal) throw jobRefusal('its folder moved');
}

/**
 * The first stage of a job: a small file written over the one there in place (its folder checked
 * first), which completes the job; else a write's temporary file, made beside its place (its
 * folder checked first when `checkFirst`). A temporary file of the same name is one a rollback or
 * a recovery left when cut short, and is replaced. Removals and mode changes have no first stage.
 * Returns true when the job is complete (written in place): it has no second stage then.
 */
function* jobPrepare(job: FileJob): Step<boolean> {
  if (job.kind !== 'write') return false;
  let checked = false;
  if (job.bytes !== null && job.inPlaceMax > 0 && job.bytes.length <= job.inPlaceMax) {
    yield* jobCheckParent(job.parent, job.parentReal);
    checked = true;
    if (yield { call: 'overwrite', path: job.abs, bytes: job.bytes, mode: job.mode, max: job.inPlaceMax }) return true;
  }
  if (job.checkFirst && !checked) yield* jobCheckParent(job.parent, job.parentReal);
  const make: Call = job.link !== null ? { call: 'symlink', target: job.link, path: job.tmp } : { call: 'create', path: job.tmp, bytes: job.bytes as Uint8Array, mode: job.mode };
  try {
    yield make;
  } catch (e) {
    if ((e as { code?: string }).code !== 'EEXIST') throw e;
    yield* jobRemoveAt(job.tmp);
    yield make;
  }
  return false;
}

/**
 * The second stage of a job (the whole of a removal or a mode change). A write checks its folder
 * again right before renaming its temporary file into place; a folder in the way goes first if it
 * is empty; on a failure the temporary file is removed. Returns a note when something was left as
 * it was on purpose (a folder that is not empty, for a removal), else null. Throws the call's
 * error, or a refusal.
 */
function* jobFinish(job: FileJob): Step<string | null> {
  if (job.kind === 'remove') {
    // Never remove through a link: a folder on the way swapped for a link to elsewhere would
    // have us delete outside the workspace.
    for (const [dir, dirRel] of job.walk) {
      const kind = yield { call: 'lstat', path: dir };
      if (kind === null) return null; // a folder on the way is gone: nothing is left to remove
      if (kind !== 'dir') throw jobRefusal(`${dirRel} is ${kind === 'link' ? 'a symbolic link' : 'not a folder'}`);
    }
    const gone = yield* jobRemoveAt(job.abs);
    return gone ? null : `${job.rel}: folder not empty, left in place`;
  }
  if (job.kind === 'chmod') {
    yield* jobCheckParent(job.parent, job.parentReal);
    yield { call: 'chmod', path: job.abs, mode: job.mode };
    return null;
  }
  try {
    yield* jobCheckParent(job.parent, job.parentReal);
    try {
      yield { call: 'rename', from: job.tmp, to: job.abs };
    } catch (e) {
      if ((e as { code?: string }).code !== 'EISDIR') throw e;
      if (!(yield* jobRemoveAt(job.abs))) throw jobRefusal('a folder that is not empty is in the way');
      yield* jobCheckParent(job.parent, job.parentReal);
      yield { call: 'rename', from: job.tmp, to: job.abs };
    }
  } catch (e) {
    yield* jobAbandon(job);
    throw e;
  }
  return null;
}

/** Removes the temporary file of a write whose first stage was done and whose second will not be. Never throws. */
function* jobAbandon(job: FileJob): Step<void> {
  if (job.kind !== 'write') return;
  try {
    yield* jobRemoveAt(job.tmp);
  } catch {
    // Left for recovery, which removes a transaction's temporary files.
  }
}

// ---------------------------------------------------------------------------------------------
// Making the calls.

/**
 * Makes call `c` with `fs`'s synchronous functions: `lstat` gives a {@link Kind} or null,
 * `realpath` the real path, `create` makes `path` exclusively (never through a link, mode 0600
 * while written), writes all of `bytes`, sets `mode` and closes it (removing it again on a
 * failure), `chmod` sets the mode of a file through a descriptor opened without following a
 * link. `overwrite` writes `bytes` over the file at `path` in place and gives true — when that
 * file opens for writing without following a link or waiting (a FIFO), and is a regular file
 * with one link and at most `max` bytes — else touches nothing and gives false; an error once
 * writing began is thrown with `torn: true` (the file may hold part of `bytes`). The rest return
 * nothing. (Self-contained: the worker runs it too.)
 */
function callSyncWith(fs: typeof import('node:fs'), c: Call): unknown {
  const C = fs.constants;
  switch (c.call) {
    case 'lstat':
      try {
        const st = fs.lstatSync(c.path, { throwIfNoEntry: false });
        if (!st) return null;
        return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') return null;
        throw e;
      }
    case 'realpath':
      return fs.realpathSync.native(c.path);
    case 'unlink':
      return fs.unlinkSync(c.path);
    case 'rmdir':
      return fs.rmdirSync(c.path);
    case 'symlink':
      return fs.symlinkSync(c.target, c.path);
    case 'create': {
      const fd = fs.openSync(c.path, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
      try {
        let off = 0;
        while (off < c.bytes.length) off += fs.writeSync(fd, c.bytes, off, c.bytes.length - off);
        fs.fchmodSync(fd, c.mode);
      } catch (e) {
        fs.closeSync(fd);
        try {
          fs.unlinkSync(c.path);
        } catch {
          // already gone
        }
        throw e;
      }
      fs.closeSync(fd);
      return undefined;
    }
    case 'overwrite': {
      // Only where a link can be refused at open (not Windows): never write through one.
      if (C.O_NOFOLLOW === undefined || C.O_NONBLOCK === undefined) return false;
      let fd: number;
      try {
        fd = fs.openSync(c.path, C.O_WRONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
      } catch {
        // Not there, a link (ELOOP), a folder, a FIFO without a reader, no write permission, a
        // running program's file: the rename does it, or says why not.
        return false;
      }
      let began = false;
      try {
        const st = fs.fstatSync(fd);
        if (!st.isFile() || st.nlink !== 1 || st.size > c.max) return false;
        // Set-user/group-id bits, which writing clears, can be set again only by the owner.
        if ((c.mode & 0o6000) !== 0 && typeof process.geteuid === 'function' && process.geteuid() !== 0 && st.uid !== process.geteuid()) return false;
        // The mode first, while nothing is written: a file this process may write but does not
        // own cannot have its mode set, and goes by rename (a new file of its own) instead.
        if ((st.mode & 0o7777) !== c.mode) fs.fchmodSync(fd, c.mode);
        began = true;
        let off = 0;
        while (off < c.bytes.length) off += fs.writeSync(fd, c.bytes, off, c.bytes.length - off, off);
        // Only a file that was longer is cut (a truncate that frees nothing still costs a
        // metadata update on ext4: 500 of them 16 ms).
        if (st.size > c.bytes.length) fs.ftruncateSync(fd, c.bytes.length);
        // Writing clears set-user/group-id bits: they are set again.
        if ((c.mode & 0o6000) !== 0) fs.fchmodSync(fd, c.mode);
        return true;
      } catch (e) {
        if (began) throw Object.assign(e as object, { torn: true });
        return false;
      } finally {
        fs.closeSync(fd);
      }
    }
    case 'chmod': {
      const fd = fs.openSync(c.path, C.O_RDONLY | C.O_NOFOLLOW);
      try {
        fs.fchmodSync(fd, c.mode);
      } finally {
        fs.closeSync(fd);
      }
      return undefined;
    }
    case 'rename':
      return fs.renameSync(c.from, c.to);
  }
}

/** True for the error of a write in place cut short once writing began (the file may hold part of the new bytes). */
export function isTorn(e: unknown): boolean {
  return (e as { torn?: unknown } | null)?.torn === true;
}

/** The error a failed job stands for: a refusal becomes `outside-workspace` naming the path; any other error `busy`, naming it too. */
export function jobError(job: FileJob, e: unknown): Error {
  const why = (e as { refuse?: unknown } | null)?.refuse;
  if (typeof why === 'string') return new TakebackError('outside-workspace', `refusing to write ${job.rel}: ${why}`, { path: job.rel });
  if (e instanceof TakebackError) return e;
  // A file system error (a full disk, a file size limit, no permission) names the path it hit
  // (`busy`, with the path in `failures`, as protocol/README.md says of a write that failed).
  const message = e instanceof Error ? e.message : String(e);
  const out = new TakebackError('busy', `${job.rel}: ${message}`, { failures: [job.rel] });
  if (isTorn(e)) Object.assign(out, { torn: true });
  return out;
}

/** Runs `step` on this thread with the synchronous calls; returns what it returns, throws what it throws. */
function runSync<T>(step: Step<T>): T {
  let r = step.next();
  while (!r.done) {
    let value: unknown;
    let failed = false;
    let error: unknown;
    try {
      value = callSyncWith(fs, r.value);
    } catch (e) {
      failed = true;
      error = e;
    }
    r = failed ? step.throw(error) : step.next(value);
  }
  return r.value;
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

// ---------------------------------------------------------------------------------------------
// Running many jobs at once: first stages here, second stages on a worker thread's lanes.

/*
 * Shared between this thread and the worker (an Int32Array over a SharedArrayBuffer; the worker's
 * code uses the numbers themselves, since it sees nothing outside its functions):
 *   [0 NEXT]      the next job whose second stage is to be taken (each taker does Atomics.add)
 *   [1 STOP]      1 once a job failed: no stage is started after that
 *   [2 FINISHED]  jobs taken for their second stage and finished with (done, failed or not run)
 *   [3 READY]     1 once the worker takes jobs
 *   [4+i]         job i: 0 first stage not done yet, 1 ready for its second stage, 2 done,
 *                 3 failed, 4 not run (its temporary file, if any, removed)
 * This thread runs every first stage, in order, and marks each job 1 (or 3, or 4 after a
 * failure); a taker of a second stage waits for that mark. The worker posts {i, note} and
 * {i, error} on its port before counting the job finished, so that every message is there once
 * the count says so.
 */
const NEXT = 0;
const STOP = 1;
const FINISHED = 2;
const READY = 3;
const STATUS = 4;
const PREPARED = 1;
const DONE = 2;
const FAILED = 3;
const NOT_RUN = 4;

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

/** What the worker is started with: its end of the channel and how many second stages it runs at once. */
interface WorkerData {
  port: MessagePort;
  lanes: number;
}

/** One batch handed to the worker: its jobs and the shared state (see above). */
interface Batch {
  batch: number;
  jobs: FileJob[];
  shared: SharedArrayBuffer;
}

/** An error as plain data for the port (its message, code and refusal). */
interface ErrorData {
  message: string;
  code?: string;
  refuse?: string;
}

/**
 * The worker's side: for each batch posted to it, `lanes` loops, each taking the next job,
 * waiting for its first stage, and running its second. The calls that wait on the kernel (rename,
 * unlink, rmdir: an inode freed, its blocks perhaps discarded right then) go through libuv's
 * thread pool, so that up to `lanes` of them are under way at once; the others (lstat, realpath)
 * are quick and made in line. Its listening port keeps it alive until this thread closes it.
 */
function workerMain(data: WorkerData, fs: typeof import('node:fs')): void {
  const { port, lanes } = data;
  const call = (c: Call): unknown => {
    if (c.call === 'rename') {
      const { from, to } = c;
      return new Promise<void>((resolve, reject) => fs.rename(from, to, (e) => (e ? reject(e) : resolve())));
    }
    if (c.call === 'unlink' || c.call === 'rmdir') {
      const { path } = c;
      return new Promise<void>((resolve, reject) => (c.call === 'unlink' ? fs.unlink : fs.rmdir)(path, (e) => (e ? reject(e) : resolve())));
    }
    return callSyncWith(fs, c);
  };
  // runSync's loop, awaiting each call: this function's own text is all the worker is given
  // (workerSource), so it cannot call runSync.
  const run = async <T>(step: Generator<Call, T, unknown>): Promise<T> => {
    let r = step.next();
    while (!r.done) {
      let value: unknown;
      let failed = false;
      let error: unknown;
      try {
        value = call(r.value);
        if (value instanceof Promise) value = await value;
      } catch (e) {
        failed = true;
        error = e;
      }
      r = failed ? step.throw(error) : step.next(value);
    }
    return r.value;
  };
  // Atomics.waitAsync (V8 8.7, Node 16) is not in TypeScript's ES2023 library.
  const atomics = Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: unknown } };
  port.on('message', ({ batch, jobs, shared }: Batch) => {
    const s = new Int32Array(shared);
    const n = jobs.length;
    const lane = async () => {
      for (;;) {
        const i = Atomics.add(s, 0, 1);
        if (i >= n) return;
        while (Atomics.load(s, 4 + i) === 0) {
          const w = atomics.waitAsync(s, 4 + i, 0);
          if (w.async) await w.value;
        }
        if (Atomics.load(s, 4 + i) === 1) {
          if (Atomics.load(s, 1) !== 0) {
            await run(jobAbandon(jobs[i]!));
            Atomics.store(s, 4 + i, 4);
          } else {
            try {
              const note = await run(jobFinish(jobs[i]!));
              if (note !== null) port.postMessage({ batch, i, note });
              Atomics.store(s, 4 + i, 2);
            } catch (e) {
              Atomics.store(s, 1, 1);
              const err = e as { message?: unknown; code?: unknown; refuse?: unknown };
              const error: ErrorData = { message: String(err?.message ?? e) };
              if (typeof err?.code === 'string') error.code = err.code;
              if (typeof err?.refuse === 'string') error.refuse = err.refuse;
              port.postMessage({ batch, i, error });
              Atomics.store(s, 4 + i, 3);
            }
          }
        }
        Atomics.add(s, 2, 1);
        Atomics.notify(s, 2);
      }
    };
    Atomics.store(s, 3, 1);
    Atomics.notify(s, 3);
    void Promise.all(Array.from({ length: lanes }, lane));
  });
}

/** The worker's source: the steps, the calls and its loop, as text (see the comment at the top). */
const workerSource = (): string =>
  [
    "'use strict';",
    jobRefusal.toString(),
    jobRemoveAt.toString(),
    jobCheckParent.toString(),
    jobFinish.toString(),
    jobAbandon.toString(),
    callSyncWith.toString(),
    `const workerMain = ${workerMain.toString()};`,
    "const { workerData } = require('node:worker_threads');",
    "workerMain(workerData, require('node:fs'));",
  ].join('\n');

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
    const worker = new Worker(workerSource(), { eval: true, workerData: data, transferList: [channel.port2], stdout: true, stderr: true });
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

/** True for a job whose second stage may wait on an inode being freed: a removal, or a write that will not be done in place. */
function mayFreeInode(job: FileJob): boolean {
  return job.kind === 'remove' || (job.kind === 'write' && (job.bytes === null || job.inPlaceMax <= 0 || job.bytes.length > job.inPlaceMax));
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
