import { spawnSync } from 'node:child_process';
import { closeSync, constants, fdatasyncSync, fsyncSync, openSync } from 'node:fs';

/*
 * Making writes durable: what a step depends on after a power cut is on the disk before that
 * step. A file's bytes are durable after its fdatasync; its name (a creation, rename or unlink
 * in a folder) after that folder's fsync. One fsync costs milliseconds on many disks, so a batch
 * larger than SYNC_EACH_MAX is made durable with one syncfs of the filesystem instead, as the
 * `sync -f` command does.
 */

/** Up to this many files and folders are synced one by one; more, with one syncfs. */
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
 * Flushes everything written to the filesystem that holds `path` (syncfs, through `sync -f`).
 * False when that cannot be done here (no `sync` that knows -f): the caller syncs one by one.
 */
export function syncFilesystem(path: string): boolean {
  if (SKIP_SYNCS) return true;
  try {
    const r = spawnSync('sync', ['-f', path], { stdio: 'ignore', timeout: 120_000 });
    return r.status === 0;
  } catch {
    return false;
  }
}

/**
 * Makes `files` (their bytes) and `folders` (their entries) durable: one by one up to
 * {@link SYNC_EACH_MAX} of them, else one syncfs of the filesystem of `anyPath` (all of them
 * must be on it), falling back to one by one.
 */
export function syncAll(files: Iterable<string>, folders: Iterable<string>, anyPath: string): void {
  const fs = [...new Set(files)];
  const ds = [...new Set(folders)];
  if (fs.length + ds.length === 0) return;
  if (fs.length + ds.length > SYNC_EACH_MAX && syncFilesystem(anyPath)) return;
  for (const f of fs) syncFile(f);
  for (const d of ds) syncFolder(d);
}
