import fs from 'node:fs';

/*
 * The file-level steps of an undo or redo (write a small file over the one there in place, or
 * write a file or a link beside its place and rename it in; change a file's mode; remove a file
 * or a link), written once and run two ways (jobs.ts):
 *
 * - one at a time on the calling thread, with Node's synchronous calls (`runSync`: every write of
 *   safe-fs.ts that is not a folder goes through here);
 * - many at once, in two stages: the calling thread makes each write's temporary file, in order,
 *   while a worker thread (write-worker.ts, which imports this module) renames them into place
 *   (and runs the removals and mode changes), several at once through libuv's thread pool. On
 *   ext4 a replacing rename frees the old inode and may wait for its blocks to be discarded right
 *   then: those waits overlap across threads; making a file (finding a free inode) is work for
 *   the CPU and does not, so it stays on one thread (bench/RESULTS.md).
 *
 * Each step is a generator that yields the file system calls it needs (`Call`) and gets their
 * results back (or their errors thrown in), so that the checks and their order are the same
 * whichever way the calls are made. This module imports nothing but node:fs: the worker loads it.
 */

/** What is at a path, never following a link; null when nothing is there (ENOENT, ENOTDIR). */
export type Kind = 'dir' | 'link' | 'file' | 'other';

/**
 * What a path held (a file or a link) when its step read it, as lstat or fstat gave it: the
 * inode, the type and permission bits, the size, and the time of the last write, in
 * milliseconds. A write or a removal goes ahead only while the path still holds the same: a save
 * the person made between the step's read and its write (by rename or in place) is never written
 * over. Null: nothing was there.
 */
export interface Found {
  ino: number;
  mode: number;
  size: number;
  mtimeMs: number;
}

/** True when `now` (what is at the path now, null: nothing) is what `found` says was there. */
export function sameFound(found: Found | null, now: Found | null): boolean {
  if (found === null || now === null) return found === now;
  return found.ino === now.ino && found.mode === now.mode && found.size === now.size && found.mtimeMs === now.mtimeMs;
}

/** The {@link Found} of a stat. */
export function foundOf(st: { ino: number; mode: number; size: number; mtimeMs: number }): Found {
  return { ino: st.ino, mode: st.mode, size: st.size, mtimeMs: st.mtimeMs };
}

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
  /** What the step found at `abs` (null: nothing); the write stops when something else is there now. Absent: not checked (a put back, a recovery). */
  found?: Found | null;
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
  /** What the step found at `abs`, as for {@link WriteJob}'s `found`. */
  found?: Found | null;
}

/** One file-level step, as plain data (it is handed to the worker as it is). Its paths name entries of folders safe-fs.ts holds open (`/proc/self/fd/<fd>/<name>`, see there) until the step is done. */
export type FileJob = WriteJob | ChmodJob | RemoveJob;

/** A file system call a step asks for; see `callSyncWith` for what each does and returns. */
export type Call =
  | { call: 'lstat'; path: string }
  | { call: 'found'; path: string }
  | { call: 'realpath'; path: string }
  | { call: 'unlink'; path: string }
  | { call: 'rmdir'; path: string }
  | { call: 'symlink'; target: string; path: string }
  | { call: 'create'; path: string; bytes: Uint8Array; mode: number }
  | { call: 'overwrite'; path: string; bytes: Uint8Array; mode: number; max: number; found?: Found | null }
  | { call: 'chmod'; path: string; mode: number }
  | { call: 'rename'; from: string; to: string };

/** A step: yields its calls, gets their results back, returns `T`. */
export type Step<T> = Generator<Call, T, unknown>;

/**
 * The in-place rule: a write of `size` bytes may go over a plain file in place (see
 * {@link WriteJob}) when both it and the file there (`oldSize` bytes, when known: a write checks it
 * on the open file) are at most `max` bytes; `max` 0 means never, empty files too.
 */
export function fitsInPlace(size: number, max: number, oldSize?: number): boolean {
  return max > 0 && size <= max && (oldSize === undefined || oldSize <= max);
}

/**
 * True for a job whose second stage may wait on an inode being freed (see the top): a removal, or
 * a write that will not go in place (a link, or bytes over its limit).
 */
export function mayFreeInode(job: FileJob): boolean {
  return job.kind === 'remove' || (job.kind === 'write' && (job.bytes === null || !fitsInPlace(job.bytes.length, job.inPlaceMax)));
}

/** A refusal: `why` becomes "refusing to write <rel>: <why>" (`outside-workspace`). */
function jobRefusal(why: string): Error {
  return Object.assign(new Error(why), { refuse: why });
}

/** The error of a path that no longer holds what its step found (see {@link Found}): "<rel> changed meanwhile" (`busy`). */
function changedMeanwhile(): Error {
  return Object.assign(new Error('changed meanwhile'), { changed: true });
}

/** Throws {@link changedMeanwhile} unless `abs` still holds what `found` says (not checked when `found` is absent). */
function* jobCheckFound(abs: string, found: Found | null | undefined): Step<void> {
  if (found === undefined) return;
  const now = (yield { call: 'found', path: abs }) as Found | null;
  if (!sameFound(found, now)) throw changedMeanwhile();
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
export function* jobPrepare(job: FileJob): Step<boolean> {
  if (job.kind !== 'write') return false;
  let checked = false;
  if (job.bytes !== null && fitsInPlace(job.bytes.length, job.inPlaceMax)) {
    yield* jobCheckParent(job.parent, job.parentReal);
    checked = true;
    if (yield { call: 'overwrite', path: job.abs, bytes: job.bytes, mode: job.mode, max: job.inPlaceMax, found: job.found }) return true;
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
export function* jobFinish(job: FileJob): Step<string | null> {
  if (job.kind === 'remove') {
    // Never remove through a link: a folder on the way swapped for a link to elsewhere would
    // have us delete outside the workspace.
    for (const [dir, dirRel] of job.walk) {
      const kind = yield { call: 'lstat', path: dir };
      if (kind === null) return null; // a folder on the way is gone: nothing is left to remove
      if (kind !== 'dir') throw jobRefusal(`${dirRel} is ${kind === 'link' ? 'a symbolic link' : 'not a folder'}`);
    }
    yield* jobCheckFound(job.abs, job.found);
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
    yield* jobCheckFound(job.abs, job.found);
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
export function* jobAbandon(job: FileJob): Step<void> {
  if (job.kind !== 'write') return;
  try {
    yield* jobRemoveAt(job.tmp);
  } catch {
    // Left for recovery, which removes a transaction's temporary files.
  }
}


/**
 * Makes call `c` with `fs`'s synchronous functions: `lstat` gives a {@link Kind} or null,
 * `found` the {@link Found} of what is there (never following a link) or null, `realpath` the real path, `create` makes `path` exclusively (never through a link, mode 0600
 * while written), writes all of `bytes`, sets `mode` and closes it (removing it again on a
 * failure), `chmod` sets the mode of a file through a descriptor opened without following a
 * link. `overwrite` writes `bytes` over the file at `path` in place and gives true — when that
 * file opens for writing without following a link or waiting (a FIFO), and is a regular file
 * with one link and at most `max` bytes — else touches nothing and gives false; an error once
 * writing began is thrown with `torn: true` (the file may hold part of `bytes`); when `found` is
 * given and the open file is not what it says, it throws {@link changedMeanwhile} before writing.
 * The rest return nothing.
 */
export function callSyncWith(fs: typeof import('node:fs'), c: Call): unknown {
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
    case 'found': {
      const st = fs.lstatSync(c.path, { throwIfNoEntry: false });
      return st ? foundOf(st) : null;
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
        if (c.found !== undefined && !sameFound(c.found, foundOf(st))) throw changedMeanwhile();
        if (!st.isFile() || st.nlink !== 1 || !fitsInPlace(c.bytes.length, c.max, st.size)) return false;
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
        if ((e as { changed?: unknown }).changed === true) throw e;
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

/** Runs `step` on the calling thread with the synchronous calls; returns what it returns, throws what it throws. */
export function runSync<T>(step: Step<T>): T {
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

/**
 * Runs `step` with `call` making its calls, awaiting those that give a promise (the worker's
 * renames and removals); resolves with what the step returns, rejects with what it throws.
 */
export async function runAsync<T>(step: Step<T>, call: (c: Call) => unknown): Promise<T> {
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
}

/*
 * Shared between the calling thread and the worker (an Int32Array over a SharedArrayBuffer):
 *   [0 NEXT]      the next job whose second stage is to be taken (each taker does Atomics.add)
 *   [1 STOP]      1 once a job failed: no stage is started after that
 *   [2 FINISHED]  jobs taken for their second stage and finished with (done, failed or not run)
 *   [3 READY]     1 once the worker takes jobs
 *   [4+i]         job i: 0 first stage not done yet, 1 ready for its second stage, 2 done,
 *                 3 failed, 4 not run (its temporary file, if any, removed)
 * The calling thread runs every first stage, in order, and marks each job 1 (or 3, or 4 after a
 * failure); a taker of a second stage waits for that mark. The worker posts {i, note} and
 * {i, error} on its port before counting the job finished, so that every message is there once
 * the count says so.
 */
export const NEXT = 0;
export const STOP = 1;
export const FINISHED = 2;
export const READY = 3;
export const STATUS = 4;
export const PREPARED = 1;
export const DONE = 2;
export const FAILED = 3;
export const NOT_RUN = 4;

/** What the worker is started with: its end of the channel and how many second stages it runs at once. */
export interface WorkerData {
  port: import('node:worker_threads').MessagePort;
  lanes: number;
}

/** One batch handed to the worker: its jobs and the shared state (see above). */
export interface Batch {
  batch: number;
  jobs: FileJob[];
  shared: SharedArrayBuffer;
}

/** An error as plain data for the port (its message, code, refusal, and whether its path changed meanwhile). */
export interface ErrorData {
  message: string;
  code?: string;
  refuse?: string;
  changed?: boolean;
}
