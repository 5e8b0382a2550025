import { spawnSync } from 'node:child_process';
import { closeSync, constants, fdatasyncSync, fsyncSync, openSync } from 'node:fs';
import { nativeSyncFs, nativeSyncPaths } from './scan/native.js';

/*
 * Making writes durable: what a step depends on after a power cut is on the disk before that
 * step. A file's bytes are durable after its fdatasync; its name (a creation, rename or unlink
 * in a folder) after that folder's fsync. One fsync costs milliseconds on many disks, so a batch
 * larger than SYNC_EACH_MAX is made durable with one syncfs of the filesystem instead, as the
 * `sync -f` command does. A smaller batch is synced all at once from threads where the native
 * module is built (native/sync-paths.c): syncs in flight together are committed together by the
 * filesystem's journal (ext4's jbd2 joins them), where one after the other each waits for a
 * commit of its own. Every sync of a batch has returned before syncAll does, so what comes after
 * (the commit naming the blobs) still follows all of them.
 */

/** Up to this many files and folders are synced each (all at once where the native module is built); more, with one syncfs. */
export const SYNC_EACH_MAX = 24;

/**
 * For benchmarks only (bench/fsync.mjs measures what the syncs cost): with
 * `TAKEBACK_BENCH_NO_SYNC=1` every sync here is skipped, and a power cut can lose what takeback
 * keeps. Read once, when the process starts.
 */
const SKIP_SYNCS = process.env.TAKEBACK_BENCH_NO_SYNC === '1';

/** Opens `path` with `flags` and runs `sync` on it; false when it cannot be opened or synced. */
function syncOpened(path: string, flags: number, sync: (fd: number) => void): boolean {
  if (SKIP_SYNCS) return true;
  let fd: number;
  try {
    fd = openSync(path, flags);
  } catch {
    return false;
  }
  try {
    sync(fd);
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/**
 * Flushes file `path`'s bytes to the disk (fdatasync). Never follows a link (a link is not ours
 * to sync through) and never blocks on a FIFO. A path that is gone, or cannot be opened, is
 * skipped: returns false.
 */
export function syncFile(path: string): boolean {
  return syncOpened(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK, fdatasyncSync);
}

/** Flushes folder `path`'s entries to the disk (fsync of the folder). False when it cannot be opened. */
export function syncFolder(path: string): boolean {
  return syncOpened(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW, fsyncSync);
}

/**
 * Flushes everything written to the filesystem that holds `path` (syncfs: from the native module,
 * else through `sync -f`). False when that cannot be done here (no module and no `sync` that
 * knows -f): the caller syncs one by one.
 */
export function syncFilesystem(path: string): boolean {
  if (SKIP_SYNCS) return true;
  const native = nativeSyncFs(path);
  if (native !== null) return native;
  try {
    const r = spawnSync('sync', ['-f', path], { stdio: 'ignore', timeout: 120_000 });
    return r.status === 0;
  } catch {
    return false;
  }
}

/**
 * Makes `files` (their bytes) and `folders` (their entries) durable: up to {@link SYNC_EACH_MAX}
 * of them all at once from the native module's threads (else one by one), more with one syncfs
 * of the filesystem of `anyPath` (all of them must be on it), falling back to one by one. A path
 * that is gone or cannot be opened is skipped, as by {@link syncFile} and {@link syncFolder}.
 * Returns true when every one of them was made durable, false when any was skipped or failed.
 */
export function syncAll(files: Iterable<string>, folders: Iterable<string>, anyPath: string): boolean {
  const fs = [...new Set(files)];
  const ds = [...new Set(folders)];
  if (fs.length + ds.length === 0 || SKIP_SYNCS) return true;
  if (fs.length + ds.length > SYNC_EACH_MAX && syncFilesystem(anyPath)) return true;
  if (fs.length + ds.length > 1) {
    const failed = nativeSyncPaths(fs, ds);
    if (failed !== null) return failed === 0;
  }
  let all = true;
  for (const f of fs) all = syncFile(f) && all;
  for (const d of ds) all = syncFolder(d) && all;
  return all;
}
