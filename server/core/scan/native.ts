import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CheckInput, CheckResult } from './stat-check.js';

/*
 * The native warm-scan check (native/scan-check.c), when this install built it: the same rules
 * as `checkRows` in stat-check.ts, from C, on several threads at once (bench/RESULTS.md, fourth
 * round: an lstat costs about 1.8 µs from C here against 4.5 µs through Node's fs binding).
 * `npm ci` builds it (scripts/build-native.mjs) and carries on without it when it cannot;
 * TAKEBACK_NATIVE=0 leaves it unused.
 */

/** The module's functions (see native/scan-check.c for checkRows' arguments). */
interface NativeModule {
  /** `data`: every row in one buffer with `offsets`, or one buffer a row (`offsets` null); `ring`: may use io_uring (absent before it: treated as false). */
  checkRows(root: string, dirs: string[], data: Uint8Array | readonly Uint8Array[], offsets: Int32Array | null, racyMs: number, threads: number, ring?: boolean): CheckResult & { ring?: boolean };
  /** See native/scan-check.c; absent from a module built before it. */
  rowArena?(bytes: number): ArrayBuffer;
  /** See native/scan-check.c (checkBegin, checkFeed, checkEnd); absent from a module built before them. */
  checkBegin?(root: string, racyMs: number, threads: number, ring: boolean): object;
  checkFeed?(handle: object, dirs: string[], rows: Uint8Array[]): void;
  checkEnd?(handle: object): CheckResult & { ring?: boolean };
  /** See native/scan-list.c; absent from a module built before it. */
  listRows?(root: string, dirs: string[], threads: number, table: object | null, names: object): Buffer;
  /** See native/scan-list.c; absent from a module built before it. */
  nameTable?(): object;
  /** See native/git-index.c; absent from a module built before it. */
  gitIndexTable?(index: Buffer, hashLen: number, indexMtimeMs: number, askedNames: string[]): { table: object; trackedExcluded: Buffer } | null;
  /** See native/sync-paths.c; absent from a module built before it. */
  syncPaths?(files: string[], folders: string[], threads: number): Uint8Array;
  /** See native/sync-paths.c; absent from a module built before it. */
  syncFs?(path: string): boolean;
}

const lazy = createRequire(import.meta.url);
let loaded: NativeModule | null | undefined;

/** The built module, looked for in native/build/Release/ up the folders from this file (a bundle or a compiled module); null when there is none or it does not load. */
function load(): NativeModule | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  if (process.env.TAKEBACK_NATIVE === '0') return loaded;
  try {
    let dir = dirname(fileURLToPath(import.meta.url));
    for (let up = 0; up < 6; up++, dir = dirname(dir)) {
      const file = join(dir, 'native', 'build', 'Release', 'takeback_native.node');
      if (!existsSync(file)) continue;
      const mod = lazy(file) as Partial<NativeModule>;
      if (typeof mod.checkRows === 'function') loaded = mod as NativeModule;
      break;
    }
  } catch {
    loaded = null;
  }
  return loaded;
}

/** True when the native check is there (a caller then needs no stat worker thread). */
export function haveNativeCheck(): boolean {
  return load() !== null;
}

/** The CPUs this process may use. */
function cpus(): number {
  const os = lazy('node:os') as typeof import('node:os');
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

/** How many threads the native check uses: the CPUs this process may use, at most 8 (1 with TAKEBACK_SCAN_THREADS=1, or below `minParallel` paths). */
function threadsFor(paths: number, minParallel: number): number {
  if (process.env.TAKEBACK_SCAN_THREADS === '1' || paths < minParallel) return 1;
  return Math.max(1, Math.min(8, cpus()));
}

/**
 * Whether a native check on `threads` threads states entries through io_uring
 * (native/scan-check.c; Linux, where the kernel allows it, from two threads): only when
 * TAKEBACK_SCAN_RING=1 asks for it (see {@link ringWhen}). One thread never takes the ring.
 */
function ringAllowed(threads: number): boolean {
  return threads > 1 && ringWhen(process.env.TAKEBACK_SCAN_RING);
}

/**
 * The rule of {@link ringAllowed}: the ring only where `setting` (TAKEBACK_SCAN_RING's value) is
 * '1'. A stat through the ring costs fewer system calls, but the kernel hands each statx to its
 * own workers, and what that costs depends on the machine: on one virtual machine a
 * million-file check was 10 % sooner through the ring beside three busy processes and 12 %
 * later when idle; on another (a Firecracker guest) twice as long idle and 1.6 times as long
 * beside three busy processes (bench/RESULTS.md). The threads are never far from the best.
 */
export function ringWhen(setting: string | undefined): boolean {
  return setting === '1';
}

/** A native check's verdicts, and whether io_uring stated the entries (`ring`). */
export type NativeCheckResult = CheckResult & { ring: boolean };

/**
 * Checks every row of `input` natively, on up to `threadsFor` threads; null when the module is
 * not there or fails (the caller then checks in JavaScript). `paths` is how many entries the rows
 * hold; below `minParallel` one thread does it all.
 */
export function nativeCheckRows(input: CheckInput, paths: number, minParallel: number): NativeCheckResult | null {
  const mod = load();
  if (!mod) return null;
  try {
    const threads = threadsFor(paths, minParallel);
    const r = mod.checkRows(input.root, input.dirs, input.data, input.offsets, input.racyMs, threads, ringAllowed(threads));
    return { dirty: r.dirty, suspects: r.suspects, ring: r.ring === true };
  } catch {
    return null;
  }
}

/**
 * {@link nativeCheckRows} of rows given one buffer a folder (`rows[i]` is folder `dirs[i]`'s, as
 * the snapshot index holds them): nothing is copied into one buffer first. Null when the module
 * is not there or fails.
 */
export function nativeCheckRowList(root: string, dirs: string[], rows: readonly Uint8Array[], racyMs: number, paths: number, minParallel: number): NativeCheckResult | null {
  const mod = load();
  if (!mod) return null;
  try {
    const threads = threadsFor(paths, minParallel);
    const r = mod.checkRows(root, dirs, rows, null, racyMs, threads, ringAllowed(threads));
    return { dirty: r.dirty, suspects: r.suspects, ring: r.ring === true };
  } catch {
    return null;
  }
}

/**
 * A native check begun before its rows are all there (native/scan-check.c's checkBegin): a
 * thread of its own checks the rows fed while the caller reads the next ones. Row numbers in the
 * result count the rows in the order fed. Every array of rows fed is kept alive until the end.
 */
export interface EarlyCheck {
  /** Hands over more rows: `rows[i]` is folder `dirs[i]`'s. False when the check failed (it is then given up). */
  feed(dirs: string[], rows: Uint8Array[]): boolean;
  /** No more rows: waits for the verdicts; null when the check failed (the caller checks as usual). Once. */
  finish(): NativeCheckResult | null;
}

/**
 * Begins a native check of the rows of workspace `root` against racy line `racyMs`, for an index
 * of about `paths` entries (how many threads it takes); null when the module is not there,
 * predates it or fails.
 */
export function nativeEarlyCheck(root: string, racyMs: number, paths: number, minParallel: number): EarlyCheck | null {
  const mod = load();
  if (!mod || typeof mod.checkBegin !== 'function' || typeof mod.checkFeed !== 'function' || typeof mod.checkEnd !== 'function') return null;
  let handle: object | null;
  try {
    const threads = threadsFor(paths, minParallel);
    handle = mod.checkBegin(root, racyMs, threads, ringAllowed(threads));
  } catch {
    return null;
  }
  return {
    feed(dirs, rows) {
      if (!handle) return false;
      try {
        mod.checkFeed!(handle, dirs, rows);
        return true;
      } catch {
        this.finish();
        return false;
      }
    },
    finish() {
      if (!handle) return null;
      const h = handle;
      handle = null;
      try {
        const r = mod.checkEnd!(h);
        return { dirty: r.dirty, suspects: r.suspects, ring: r.ring === true };
      } catch {
        return null;
      }
    },
  };
}

/**
 * `bytes` (rounded up to 2 MiB) of memory for the snapshot index's rows, in huge pages where the
 * kernel gives them (native/scan-check.c's rowArena); null when the module is not there, predates
 * it or fails (the caller then allocates a plain buffer). Its bytes are not zeroed: a caller reads
 * only what it wrote.
 */
export function nativeRowArena(bytes: number): Buffer | null {
  const mod = load();
  if (!mod || typeof mod.rowArena !== 'function') return null;
  try {
    return Buffer.from(mod.rowArena(bytes));
  } catch {
    return null;
  }
}

/** True when the native listing is there (native/scan-list.c and git-index.c, in a module built with them). */
export function haveNativeList(): boolean {
  const mod = load();
  return typeof mod?.listRows === 'function' && typeof mod.nameTable === 'function' && typeof mod.gitIndexTable === 'function';
}

/** Below this many folders at once the listing runs on this thread alone. */
const LIST_PARALLEL_MIN = 8;

/**
 * The listings of folders `dirs` (workspace-relative) of `root` as rows, natively on up to
 * `threadsFor` threads, each regular file matched against git's index `table` (a
 * {@link nativeGitTable}'s; null: none), each entry's name given its id in `names` (a
 * {@link nativeNameTable}), as one buffer of records (native/scan-list.c says its layout;
 * listing.ts reads it); null when the module is not there, predates the listing or fails (the
 * caller lists in JavaScript).
 */
export function nativeListRows(root: string, dirs: string[], table: object | null, names: object): Buffer | null {
  const mod = load();
  if (!mod || typeof mod.listRows !== 'function') return null;
  try {
    return mod.listRows(root, dirs, threadsFor(dirs.length, LIST_PARALLEL_MIN), table, names);
  } catch {
    return null;
  }
}

/** A new table of the names a walk's native listings meet (see {@link nativeListRows}); null when the module is not there or predates it. */
export function nativeNameTable(): object | null {
  const mod = load();
  if (!mod || typeof mod.nameTable !== 'function') return null;
  try {
    return mod.nameTable();
  } catch {
    return null;
  }
}

/**
 * git's index file `index` read natively (native/git-index.c) into a table for
 * {@link nativeListRows}, with the folders of `askedNames` it holds (NUL-terminated paths);
 * null when the index is one the reader does not follow; undefined when the module is not there,
 * predates it or fails (the caller reads the index in JavaScript).
 */
export function nativeGitTable(index: Buffer, hashLen: number, indexMtimeMs: number, askedNames: string[]): { table: object; trackedExcluded: Buffer } | null | undefined {
  const mod = load();
  if (!mod || typeof mod.gitIndexTable !== 'function') return undefined;
  try {
    return mod.gitIndexTable(index, hashLen, indexMtimeMs, askedNames);
  } catch {
    return undefined;
  }
}

/** At most this many syncs are in flight at once: they wait on the disk, not on a CPU. */
const SYNC_THREADS_MAX = 16;

/**
 * Makes `files` durable (fdatasync) and `folders`' entries durable (fsync), all issued at once
 * from up to 16 threads (native/sync-paths.c), so that the filesystem commits them together.
 * Returns how many of them could not be opened or synced, or null when the module is not there,
 * predates the syncs or fails (the caller syncs them one by one).
 */
export function nativeSyncPaths(files: string[], folders: string[]): number | null {
  const mod = load();
  if (!mod || typeof mod.syncPaths !== 'function') return null;
  try {
    const ok = mod.syncPaths(files, folders, Math.min(SYNC_THREADS_MAX, files.length + folders.length));
    return ok.reduce((failed, v) => failed + (v === 1 ? 0 : 1), 0);
  } catch {
    return null;
  }
}

/**
 * syncfs(2) of the filesystem holding `path`, natively (native/sync-paths.c): true when done,
 * false when it failed, null when the module is not there or predates it.
 */
export function nativeSyncFs(path: string): boolean | null {
  const mod = load();
  if (!mod || typeof mod.syncFs !== 'function') return null;
  try {
    return mod.syncFs(path);
  } catch {
    return null;
  }
}
