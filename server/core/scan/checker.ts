import { haveNativeCheck, nativeCheckRowList, nativeCheckRows, nativeEarlyCheck, type EarlyCheck } from './native.js';
import { subRow } from './packed.js';
import type { RowFeed } from './snapshot-index.js';
import { checkAll, PARALLEL_MIN_PATHS, StatWorker, type CheckInput, type CheckResult } from './stat-check.js';

/*
 * The warm scan's first pass, behind one interface: does each row of the packed index (one a
 * folder) still have the stats it was written with? Checked in C where `npm ci` built the native
 * module (native.ts), else in JavaScript on this thread and, for a large index, a stat worker
 * thread (stat-check.ts). A watcher may narrow it (ChangeHints, after git's fsmonitor): then only
 * the rows its paths fall in are checked, and in a row reached only through paths inside it, only
 * those entries and the folder's own stat (hintedCheck).
 */

/**
 * Paths that may have moved since the last scan, as a file watcher reports them: workspace-
 * relative with `/` separators ('' the root); a folder's path stands for its listing and its own
 * stat. `sinceMs` (ms since the epoch) is when the watcher began to vouch for its list: it covers
 * a scan only when it was watching before that scan's racy line (the last scan's start less the
 * racy window), since a change in the racy window leaves no trace in the stats. Otherwise every
 * row is checked, as with no hints.
 */
export interface ChangeHints {
  paths: ReadonlySet<string>;
  sinceMs: number;
}

/** One way of checking the rows (see {@link chooseChecker}). */
export interface StatChecker {
  /** Which one: C threads, JavaScript on this thread and a worker, or JavaScript here alone. */
  readonly kind: 'native' | 'worker' | 'javascript';
  /** A buffer of `size` bytes for {@link CheckInput.data} (one the worker thread sees, when there is one). */
  buffer(size: number): Uint8Array;
  /** The rows of `input` whose folder must be listed again, and the entries to look at again. */
  check(input: CheckInput): CheckResult;
  /**
   * {@link check} of rows given one buffer a folder (`rows[i]` is `dirs[i]`'s), where the checker
   * takes them so (the native one): nothing copied. Null when it failed; the caller then lays the
   * rows out in one buffer for {@link check}.
   */
  checkList?(root: string, dirs: string[], rows: readonly Uint8Array[], racyMs: number): CheckResult | null;
}

/**
 * The checker for an index of `paths` entries: the native one when this install has it, else the
 * JavaScript one, with `worker` beside this thread from {@link PARALLEL_MIN_PATHS} entries. The
 * native one falls back to JavaScript on this thread when it fails.
 */
export function chooseChecker(paths: number, worker?: StatWorker | null): StatChecker {
  const plain = (input: CheckInput) => checkAll(input);
  const own = (size: number) => new Uint8Array(size);
  if (haveNativeCheck()) {
    return {
      kind: 'native',
      buffer: own,
      check: (input) => nativeCheckRows(input, paths, PARALLEL_MIN_PATHS / 10) ?? plain(input),
      checkList: (root, dirs, rows, racyMs) => nativeCheckRowList(root, dirs, rows, racyMs, paths, PARALLEL_MIN_PATHS / 10),
    };
  }
  if (worker && paths >= PARALLEL_MIN_PATHS) return { kind: 'worker', buffer: (size) => worker.buffer(size), check: (input) => worker.run(input) };
  return { kind: 'javascript', buffer: own, check: plain };
}

/**
 * The stat worker for a scan of an index of `files` files (the last scan's count), started now so
 * that it boots while the index loads, and kept for the process's next scans: from
 * {@link PARALLEL_MIN_PATHS} files, unless the native check (threads of its own) is there or
 * `TAKEBACK_SCAN_THREADS=1` keeps the scan on one thread (less memory, slower). Null otherwise,
 * or when no thread can be started.
 */
export function statWorkerFor(files: number): StatWorker | null {
  return files >= PARALLEL_MIN_PATHS && process.env.TAKEBACK_SCAN_THREADS !== '1' && !haveNativeCheck() ? StatWorker.start() : null;
}

/**
 * The folders of the rows under folder `dir` (not '' and not `dir` itself), at any depth: what
 * the snapshot index's `rowsUnder` gives, without a pass over every row.
 */
export type RowsUnder = (dir: string) => Iterable<string>;

/**
 * The rows that `hints` say may have moved: each hinted path's nearest folder that has a row
 * (its own folder's, or, for a path in a folder the index does not know, the nearest one above:
 * the folder that gained it), and for a hinted path that is a folder with a row, that row and
 * every row under it (a folder moved or replaced moves everything below it, which a watcher may
 * not report path by path; found by `under` when given, else by a pass over every row). Null
 * (check them all) without hints, or with hints that do not cover the scan whose racy line is
 * `racyMs` (see {@link ChangeHints}).
 */
export function hintedRows(rows: ReadonlyMap<string, Uint8Array>, racyMs: number, hints?: ChangeHints, under?: RowsUnder): string[] | null {
  return hintedCheck(rows, racyMs, hints, under)?.dirs ?? null;
}

/**
 * {@link hintedRows}, and of those rows, the ones reached only through hinted paths inside them
 * (not a hinted folder, nor under one): for each, the names of its entries that the hints name
 * (`names`). Only those entries of such a row need their stat checked, besides the folder's own
 * (which a name added, removed or renamed moves): a watcher that covers the scan vouches for the
 * others, as it does for every entry of the rows it does not name. A row missing from `names` is
 * checked whole.
 */
export function hintedCheck(rows: ReadonlyMap<string, Uint8Array>, racyMs: number, hints?: ChangeHints, under?: RowsUnder): { dirs: string[]; names: Map<string, Set<string>> } | null {
  if (!hints || !(hints.sinceMs <= racyMs)) return null;
  const out = new Set<string>();
  const folders = new Set<string>();
  const names = new Map<string, Set<string>>();
  for (const p of hints.paths) {
    if (rows.has(p)) {
      out.add(p);
      folders.add(p);
    }
    let dir = p;
    while (dir !== '') {
      const slash = dir.lastIndexOf('/');
      const child = slash < 0 ? dir : dir.slice(slash + 1);
      dir = slash < 0 ? '' : dir.slice(0, slash);
      if (rows.has(dir)) {
        out.add(dir);
        let set = names.get(dir);
        if (!set) names.set(dir, (set = new Set()));
        set.add(child);
        break;
      }
    }
  }
  if (folders.has('')) return { dirs: [...rows.keys()], names: new Map() };
  if (under) {
    for (const f of folders) for (const k of under(f)) out.add(k);
  } else if (folders.size > 0) {
    for (const k of rows.keys()) {
      for (let i = k.indexOf('/'); i >= 0; i = k.indexOf('/', i + 1)) {
        if (folders.has(k.slice(0, i))) {
          out.add(k);
          break;
        }
      }
    }
  }
  // A hinted folder's row, and the rows under one, are checked whole.
  for (const k of out) if (folders.has(k) || !names.has(k)) names.delete(k);
  for (const f of folders) for (const k of names.keys()) if (k.startsWith(`${f}/`)) names.delete(k);
  return { dirs: [...out], names };
}

/** Checks begun while the rows of a map loaded (see {@link beginCheck}), by that map. */
const begun = new WeakMap<ReadonlyMap<string, Uint8Array>, { root: string; racyMs: number; check: EarlyCheck }>();

/**
 * A check of every row of the snapshot index of workspace `root` (racy line `racyMs`, about
 * `files` files), begun natively before its rows are loaded, to be fed them as they load (the
 * snapshot index's `rows(feed)`): the stats of the first rows are taken while SQLite reads the
 * rest. {@link checkIndex} of the map they loaded into then takes its verdicts instead of checking
 * again, when it would check every row with the same racy line; otherwise the check is given up.
 * Null below {@link PARALLEL_MIN_PATHS} files (a thread to start costs more than it saves), and
 * without the native module. The caller cancels it once its scan is done (a no-op when taken).
 * Its stats come before the scan's own start (the racy line it leaves for the next scan): sound,
 * since a stat that matched only keeps a row's entry as it was, and a change made after that stat
 * moves the file's times away from that entry's, which the next scan sees.
 */
export function beginCheck(root: string, racyMs: number, files: number): RowFeed | null {
  if (files < PARALLEL_MIN_PATHS) return null;
  const check = nativeEarlyCheck(root, racyMs, files, PARALLEL_MIN_PATHS / 10);
  if (!check) return null;
  let fed = true;
  return {
    rows: (dirs, rows) => {
      if (fed) fed = check.feed(dirs, rows);
    },
    loaded: (map) => {
      if (fed) begun.set(map, { root, racyMs, check });
      else check.finish();
    },
    cancel: () => {
      check.finish();
    },
  };
}

/** How many entries row `row` holds (its header's count, little-endian at byte 32; see packed.ts); 0 for a row too short to say. */
function entriesOf(row: Uint8Array): number {
  return row.byteLength < 36 ? 0 : (row[32]! | (row[33]! << 8) | (row[34]! << 16)) + row[35]! * 0x1000000;
}

/**
 * Checks the rows of the index of workspace `root` (all, or those {@link hintedRows} names), the
 * checker chosen by their size: handed to it as they are, one buffer a folder, where it takes
 * them so (the native check), else laid out in one buffer; or the verdicts of the check begun
 * while `rows` loaded ({@link beginCheck}; `begun` then). Returns the folders checked, in the
 * order the result's row numbers refer to, and the result.
 */
export function checkIndex(opts: {
  root: string;
  rows: ReadonlyMap<string, Uint8Array>;
  racyMs: number;
  worker?: StatWorker | null;
  hints?: ChangeHints;
  under?: RowsUnder;
}): { dirs: string[]; result: CheckResult; begun: boolean } {
  const { root, rows, racyMs } = opts;
  const hinted = hintedCheck(rows, racyMs, opts.hints, opts.under);
  const early = begun.get(rows);
  if (early) {
    begun.delete(rows);
    // Its verdicts stand for this check when this one looks at every row, with the same racy line.
    const r = early.check.finish();
    if (r && !hinted && early.root === root && early.racyMs === racyMs) return { dirs: [...rows.keys()], result: r, begun: true };
  }
  const dirs = hinted ? hinted.dirs : [...rows.keys()];
  const list: Uint8Array[] = hinted ? hinted.dirs.map((d) => rows.get(d)!) : [...rows.values()];
  // A row reached only through hinted paths inside it is checked for those entries alone (its
  // folder's own stat as always); `cuts[i]` maps the cut's entries back to row i's.
  const cuts: (number[] | undefined)[] = [];
  if (hinted) {
    for (let i = 0; i < dirs.length; i++) {
      const want = hinted.names.get(dirs[i]!);
      const cut = want ? subRow(list[i]!, want) : null;
      if (cut) {
        list[i] = cut.row;
        cuts[i] = cut.index;
      }
    }
  }
  const result = checkList(root, dirs, list, racyMs, opts.worker);
  if (cuts.length > 0) for (let k = 0; k < result.suspects.length; k += 2) {
    const index = cuts[result.suspects[k]!];
    if (index) result.suspects[k + 1] = index[result.suspects[k + 1]!]!;
  }
  return { dirs, result, begun: false };
}

/** Checks rows `list` (`list[i]` is folder `dirs[i]`'s) with the checker their size calls for. */
function checkList(root: string, dirs: string[], list: Uint8Array[], racyMs: number, worker?: StatWorker | null): CheckResult {
  // The entries counted only as far as the checker's choice needs (a second thread's threshold).
  let paths = 0;
  for (let i = 0; i < list.length && paths < PARALLEL_MIN_PATHS; i++) paths += entriesOf(list[i]!);
  const checker = chooseChecker(paths, worker);
  const listed = checker.checkList?.(root, dirs, list, racyMs);
  if (listed) return listed;
  const offsets = new Int32Array(dirs.length + 1);
  let total = 0;
  for (let i = 0; i < list.length; i++) {
    offsets[i] = total;
    total += list[i]!.byteLength;
  }
  offsets[dirs.length] = total;
  const data = checker.buffer(total);
  for (let i = 0; i < list.length; i++) data.set(list[i]!, offsets[i]!);
  return checker.check({ root, dirs, data, offsets, racyMs });
}
