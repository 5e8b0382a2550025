import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Config } from '../config.js';
import { writeTxn, type Db } from '../journal/db.js';
import { overBudget, type SetRefs } from '../journal/retention.js';
import { Sets } from '../journal/sets.js';
import { BlobStore } from '../store/blobs.js';
import { BUSY, isBusy, listStore, markSetsAgain, openJournals, PAGE, readJournal, UNIT, type JournalSets, type Listed, type OpenJournal, type Yield } from './mark.js';
import { stampOf } from './schedule.js';

// Loaded by the first stamp written, as txns.ts loads it: a hook that never claims a sweep does
// not pay for loading it.
const lazy = createRequire(import.meta.url);
const writeFileAtomic = () => lazy('write-file-atomic') as typeof import('write-file-atomic');

/*
 * Bounded storage: expire what the retention rules say (journal/retention.ts), then sweep the
 * blobs nothing refers to. Blobs are shared by every workspace under $TAKEBACK_HOME, so the sweep
 * reads every journal first (mark.ts). When it runs on its own: schedule.ts.
 *
 * The work is a resumable sweep (`GcSweep`) that does a bounded amount at a time: `step(ms)` runs
 * units of work (one stat, one page of rows, one blob removed, one small write transaction) until
 * `ms` have passed, and returns. `takeback gc` and `doctor` run it to the end at once; the sidecar
 * runs it in slices of a few milliseconds while no request is in flight (sidecar/serve.ts).
 *
 * Why a blob that a writer refers to meanwhile is never swept, however long the slices take:
 * - Each journal is read in one SQLite read transaction (held across slices; WAL lets writers go
 *   on): what it refers to is one consistent view, taken at some time t after the sweep began.
 * - A row committed after t that refers to blob h either refers to something the journal already
 *   referred to at t (then h is kept), or got h from `BlobStore.put`, which stores h or freshens
 *   its mtime, before the row is committed. Every blob reference in takeback is made through put.
 * - A blob is removed only when its mtime is still older than `now - graceMs` (`now` being when the
 *   sweep began) at that moment: it is renamed aside, checked once more, and put back if a writer
 *   freshened it in between. So a put made after the sweep began (or within `graceMs` before it)
 *   keeps its blob. `graceMs` (an hour by default) covers a writer's time between put and commit.
 * - Blobs stored after the store was listed are not looked at in this sweep.
 */

/** Blobs untouched for less than this are never swept (a writer may be about to refer to them). */
export const DEFAULT_GRACE_MS = 60 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Sets expired in one write transaction. */
const EXPIRE_CHUNK = 64;

/** Bytes and counts of blobs, by why they are kept. A blob is counted once, under the first reason that holds. */
export interface StorageUse {
  /** Every blob in the store. */
  total: { count: number; bytes: number };
  /** Referred to by the snapshot index (the "before" of the next command), a tool call or undo in flight, or a turn's drift. */
  working: { count: number; bytes: number };
  /** Referred to by change sets that have not expired. */
  sets: { count: number; bytes: number };
  /** Referred to by nothing, but too young to sweep. */
  young: { count: number; bytes: number };
  /** Referred to by nothing: swept (or, in a dry run, would be). */
  unreferenced: { count: number; bytes: number };
}

/** What a sweep did (a dry run: would do), for every workspace under a home. Counts; bytes on disk; times in ms since the epoch. */
export interface GcReport {
  /** Journals read. */
  workspaces: number;
  /** Sets expired (dry run: that would be) because of their age, and to fit the size limit. */
  expired: { byAge: number; bySize: number };
  /** Sets left (not expired), and the time of the oldest (ms) or null. */
  sets: { live: number; oldest: number | null; tombstones: number };
  use: StorageUse;
  limits: { retentionDays: number; maxJournalBytes: number; graceMs: number };
  dryRun: boolean;
}

/** What the sweep is given. Times in ms since the epoch, durations in ms. */
export interface GcOptions {
  /** `$TAKEBACK_HOME`. */
  home: string;
  config: Config;
  /** The sweep's time (default: when it is made): sets older than `now - retentionDays` expire, blobs older than `now - graceMs` go. */
  now?: number;
  /** Default {@link DEFAULT_GRACE_MS}. */
  graceMs?: number;
  /** Change nothing; say what would go (for `doctor`). */
  dryRun?: boolean;
  /**
   * Never wait for a journal's write lock (held by a writer in another process): a step that
   * needs it ends at once with 'wait' and tries again at the next step. Default false: wait, as
   * every writer does (up to 30 s). The sidecar sets it, so that a slice never blocks.
   */
  nonBlocking?: boolean;
}

/** What one {@link GcSweep.step} left: more to do, a journal locked by a writer (step again a little later), or nothing. */
export type GcStep = 'more' | 'wait' | 'done';

/** How a sweep ran. Durations in ms (`performance.now()`), times in ms since the epoch. */
export interface GcSweepStats {
  /** Calls of `step` that did work. */
  steps: number;
  /** Units of work done (a stat, a page of rows, a blob removed, a write transaction...). */
  units: number;
  /** The longest step (ms). */
  longestMs: number;
  /** All steps together (ms): the time the sweep took from its process, idle time between steps left out. */
  workMs: number;
  /** When the sweep was made, and when its last step ended (null before). */
  startedAt: number;
  finishedAt: number | null;
}

/**
 * Where a sweep is: listing the store, reading the journals, expiring sets (age, then size),
 * removing blobs, removing writers' leftover temporary files, or done.
 */
export type GcPhase = 'list' | 'read' | 'expire' | 'sweep' | 'temps' | 'done';

/**
 * A resumable sweep of `opts.home`: the retention rules, then the blobs nothing refers to
 * (see the top of this file for why it is safe with writers running). Each {@link step} does a
 * bounded amount of work and returns; nothing is left half done between steps but a read
 * transaction on one journal. {@link close} a sweep given up (the work done so far stands).
 *
 * ```ts
 * const s = new GcSweep({ home, config, nonBlocking: true });
 * while (s.step(5) !== 'done') await idle();   // ≈ 5 ms of work a step
 * s.report; // GcReport
 * ```
 */
export class GcSweep {
  readonly stats: GcSweepStats = { steps: 0, units: 0, longestMs: 0, workMs: 0, startedAt: Date.now(), finishedAt: null };
  private readonly work: Generator<Yield, GcReport>;
  private readonly dryRun: boolean;
  private readonly home: string;
  private readonly now: number;
  private result: GcReport | null = null;
  private ended = false;
  private readonly progress: { phase: GcPhase } = { phase: 'list' };

  constructor(opts: GcOptions) {
    this.home = opts.home;
    this.now = opts.now ?? Date.now();
    this.dryRun = Boolean(opts.dryRun);
    this.work = sweepWork({ ...opts, now: this.now }, this.progress);
  }

  /**
   * Does units of work until `budgetMs` (ms) have passed (at least one unit, so a step may
   * exceed its budget by the time of one unit: one stat, one page of {@link PAGE} rows, one
   * blob removed, a write of a few sets), and says what is left. Throws what the sweep hit (a
   * damaged journal...); the sweep is then over. When it ends, a sweep that is not a dry run
   * writes what it did to `gc.json` (see {@link lastSweep}).
   */
  step(budgetMs = Infinity): GcStep {
    if (this.ended) return 'done';
    const t0 = performance.now();
    let out: GcStep = 'more';
    try {
      for (;;) {
        const r = this.work.next();
        if (r.done) {
          this.result = r.value;
          out = 'done';
          break;
        }
        if (r.value === BUSY) {
          out = 'wait';
          break;
        }
        this.stats.units++;
        if (performance.now() - t0 >= budgetMs) break;
      }
    } catch (e) {
      this.ended = true;
      throw e;
    } finally {
      const ms = performance.now() - t0;
      this.stats.steps++;
      this.stats.workMs += ms;
      if (ms > this.stats.longestMs) this.stats.longestMs = ms;
    }
    if (out === 'done') {
      this.ended = true;
      this.stats.finishedAt = Date.now();
      if (!this.dryRun) this.writeStamp();
    }
    return out;
  }

  /** What the sweep did (a dry run: would do), once a step has answered 'done'; null before. */
  get report(): GcReport | null {
    return this.result;
  }

  /** The phase the next step works in (each phase begins with a unit of its own: no work of it is done before a step sees it). */
  get phase(): GcPhase {
    return this.ended ? 'done' : this.progress.phase;
  }

  /** True once the sweep has finished, failed or been closed. */
  get done(): boolean {
    return this.ended;
  }

  /** Gives the sweep up: ends its read transaction and closes the journals it opened. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.work.return(undefined as unknown as GcReport);
  }

  private writeStamp(): void {
    const r = this.result!;
    const s = this.stats;
    const stamp = {
      time: this.now,
      finished: s.finishedAt,
      pid: process.pid,
      expired: r.expired,
      swept: r.use.unreferenced,
      slices: { steps: s.steps, longestMs: Math.round(s.longestMs * 100) / 100, workMs: Math.round(s.workMs * 100) / 100 },
    };
    try {
      mkdirSync(this.home, { recursive: true, mode: 0o700 });
      // Whole or not at all: doctor, a hook or another sidecar may read the stamp meanwhile.
      writeFileAtomic().sync(stampOf(this.home), `${JSON.stringify(stamp)}\n`, { mode: 0o600, fsync: false });
    } catch {
      // no stamp: the next session start sweeps again
    }
  }
}

/**
 * Applies the retention rules to every journal under `home` and sweeps unreferenced blobs older
 * than `graceMs` (ms), all at once (a {@link GcSweep} run to its end). With `dryRun`, changes
 * nothing and says what it would do (for `doctor`).
 */
export function collectGarbage(opts: GcOptions): GcReport {
  const s = new GcSweep(opts);
  try {
    while (s.step(Infinity) !== 'done');
    return s.report!;
  } finally {
    s.close();
  }
}

/** The sweep itself, one unit of work between yields (see {@link GcSweep}): list and mark, expire by age, then by size, remove. */
function* sweepWork(opts: GcOptions & { now: number }, progress: { phase: GcPhase }): Generator<Yield, GcReport> {
  const { config, now } = opts;
  const graceMs = opts.graceMs ?? DEFAULT_GRACE_MS;
  const cutoff = now - graceMs;
  const dryRun = Boolean(opts.dryRun);
  const nonBlocking = Boolean(opts.nonBlocking);
  const blobs = new BlobStore(opts.home);
  const open: OpenJournal[] = [];
  try {
    // The store first, then the references: a blob stored after this listing is not swept now.
    const store = yield* listStore(blobs);
    const inStore = store.blobs;

    // Every journal, each in one read transaction. The size rule can apply only when the store
    // holds more than the limit: only then is each set's list of blobs kept for it.
    const keepBlobs = store.bytes > config.maxJournalBytes;
    progress.phase = 'read';
    yield UNIT;
    yield* openJournals(opts.home, nonBlocking, open);
    const ageCutoff = now - config.retentionDays * DAY_MS;
    const refs: JournalSets[] = [];
    for (let i = 0; i < open.length; i++) refs.push(yield* readJournal(open[i]!, i, ageCutoff, keepBlobs, nonBlocking, inStore));

    // Age first, journal by journal.
    progress.phase = 'expire';
    yield UNIT;
    let byAge = 0;
    for (let i = 0; i < open.length; i++) {
      const old = refs[i]!.old;
      byAge += old.length;
      if (!dryRun) yield* expire(open[i]!.db, old, nonBlocking);
    }

    // Then size, across all journals: the oldest sets first until what is kept fits.
    let remaining: SetRefs[] = refs.flatMap((r) => r.live);
    const bySize = keepBlobs ? yield* expireBySize(open, inStore, remaining, cutoff, config, dryRun, nonBlocking) : [];
    if (bySize.length > 0) {
      const expiredNow = new Set(bySize);
      remaining = remaining.filter((s) => !expiredNow.has(s));
    }

    // What is kept, and why; sweep the rest.
    progress.phase = 'sweep';
    yield UNIT;
    const use = yield* removeUnreferenced(blobs, inStore, cutoff, dryRun);
    // Temporary files writers left (killed mid-write) go once older than the cutoff.
    progress.phase = 'temps';
    yield UNIT;
    if (!dryRun) yield* removeTemps(store.temps, cutoff);
    let tombstones = 0;
    for (const r of refs) tombstones += r.tombstones;
    const oldest = remaining.reduce<number | null>((m, s) => (m === null || s.time < m ? s.time : m), null);
    return {
      workspaces: open.length,
      expired: { byAge, bySize: bySize.length },
      sets: { live: remaining.length, oldest, tombstones: tombstones + byAge + bySize.length },
      use,
      limits: { retentionDays: config.retentionDays, maxJournalBytes: config.maxJournalBytes, graceMs },
      dryRun,
    };
  } finally {
    for (const j of open) {
      try {
        if (j.db.inTransaction) j.db.exec('ROLLBACK');
      } catch {
        // closing ends it anyway
      }
      j.db.close();
    }
  }
}

/**
 * The size rule: the oldest of the `live` sets (of journals `open`) expired until what is kept
 * fits `config.maxJournalBytes`, counting what the working state needs and the unreferenced blobs
 * younger than `cutoff` (ms since the epoch). Expires them (unless `dryRun`), marks again what
 * the sets left refer to, and returns the sets it expired.
 */
function* expireBySize(open: OpenJournal[], inStore: Map<string, Listed>, live: SetRefs[], cutoff: number, config: Config, dryRun: boolean, nonBlocking: boolean): Generator<Yield, SetRefs[]> {
  let young = 0;
  const working = new Set<string>();
  let k = 0;
  for (const [h, b] of inStore) {
    if (b.working) working.add(h);
    else if (!b.sets && b.mtimeMs >= cutoff) young += b.size;
    if (++k % 1024 === 0) yield UNIT;
  }
  const bySize = overBudget(live, (h) => inStore.get(h)?.size ?? 0, working, young, config);
  yield UNIT;
  if (bySize.length === 0) return bySize;
  for (let i = 0; i < open.length; i++) {
    const ids = bySize.filter((s) => s.journal === i).map((s) => s.id);
    if (ids.length > 0 && !dryRun) yield* expire(open[i]!.db, ids, nonBlocking);
  }
  const expiredNow = new Set(bySize);
  yield* markSetsAgain(
    inStore,
    live.filter((s) => !expiredNow.has(s)),
    k,
  );
  return bySize;
}

/**
 * Counts every listed blob under the first reason it is kept for, and removes (unless `dryRun`)
 * those nothing refers to that are older than `cutoff` (ms since the epoch).
 */
function* removeUnreferenced(blobs: BlobStore, inStore: Map<string, Listed>, cutoff: number, dryRun: boolean): Generator<Yield, StorageUse> {
  const use: StorageUse = {
    total: { count: 0, bytes: 0 },
    working: { count: 0, bytes: 0 },
    sets: { count: 0, bytes: 0 },
    young: { count: 0, bytes: 0 },
    unreferenced: { count: 0, bytes: 0 },
  };
  const add = (k: keyof StorageUse, n: number) => {
    use[k].count++;
    use[k].bytes += n;
  };
  let kept = 0;
  for (const [h, b] of inStore) {
    add('total', b.size);
    if (b.working) add('working', b.size);
    else if (b.sets) add('sets', b.size);
    else if (b.mtimeMs >= cutoff) add('young', b.size);
    else {
      if (dryRun || removeBlob(blobs, h, cutoff)) add('unreferenced', b.size);
      else add('young', b.size); // freshened by a writer while we looked
      yield UNIT;
      continue;
    }
    if (++kept % 64 === 0) yield UNIT;
  }
  return use;
}

/** Removes the temporary files `temps` that are older than `cutoff` (ms since the epoch), one unit each. */
function* removeTemps(temps: string[], cutoff: number): Generator<Yield, void> {
  for (const p of temps) {
    try {
      if (statSync(p).mtimeMs < cutoff) unlinkSync(p);
    } catch {
      // gone
    }
    yield UNIT;
  }
}

/** Expires sets `ids` of `db`, {@link EXPIRE_CHUNK} a write transaction, one unit each; a 'wait' while the journal is locked when `nonBlocking`. */
function* expire(db: Db, ids: string[], nonBlocking: boolean): Generator<Yield, void> {
  for (let k = 0; k < ids.length;) {
    const chunk = ids.slice(k, k + EXPIRE_CHUNK);
    try {
      writeTxn(db, () => new Sets(db).expire(chunk));
    } catch (e) {
      if (!(nonBlocking && isBusy(e))) throw e;
      yield BUSY;
      continue;
    }
    k += chunk.length;
    yield UNIT;
  }
}

/**
 * Removes blob `hash` if it is still older than `cutoffMs`: it is renamed aside first, so that a
 * writer freshening it at that moment either finds it gone (and stores it again) or has moved its
 * mtime past the cutoff (and it is put back).
 */
function removeBlob(blobs: BlobStore, hash: string, cutoffMs: number): boolean {
  const file = blobs.pathOf(hash);
  const aside = join(dirname(file), `.tmp-gc-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    renameSync(file, aside);
  } catch {
    return false;
  }
  try {
    if (statSync(aside).mtimeMs >= cutoffMs) {
      try {
        linkSync(aside, file); // put back, unless a writer already stored it again
      } catch {
        // it did
      }
      return false;
    }
    return true;
  } finally {
    try {
      unlinkSync(aside);
    } catch {
      // already gone
    }
  }
}
