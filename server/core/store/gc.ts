import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Config } from '../config.js';
import { rowBlobRefs } from '../scan/packed.js';
import type { FileChange } from '../types.js';
import { Captures } from '../journal/captures.js';
import { openDb, writeTxn, type Db } from '../journal/db.js';
import { Drift } from '../journal/drift.js';
import { changeRefs, overBudget, type SetRefs } from '../journal/retention.js';
import { Sets } from '../journal/sets.js';
import { Txns } from '../journal/txns.js';
import { BlobStore } from './blobs.js';

/*
 * Bounded storage: expire what the retention rules say (journal/retention.ts), then sweep the
 * blobs nothing refers to. Blobs are shared by every workspace under $TAKEBACK_HOME, so the sweep
 * reads every journal first.
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

/** How often the retention rules run on their own (the sidecar, an agent's session start). */
export const GC_EVERY_MS = 6 * 60 * 60 * 1000;

/** A claim (`gc.claim`) older than this belongs to a process that died while claiming: it is taken over. */
const CLAIM_STALE_MS = 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Rows read from a table at once while the journals are read (a page is a unit of work: 8 sets of 30 files parse in about 1 ms). */
const PAGE = 8;

/** Sets expired in one write transaction. */
const EXPIRE_CHUNK = 64;

/** `$TAKEBACK_HOME/gc.json`: when the last sweep was claimed (its mtime) and what it did. */
function stampOf(home: string): string {
  return join(home, 'gc.json');
}

/** True when no sweep ran (or was claimed) under `home` for {@link GC_EVERY_MS} (or ever). `now` in ms since the epoch. */
export function gcDue(home: string, now = Date.now()): boolean {
  try {
    return statSync(stampOf(home)).mtimeMs < now - GC_EVERY_MS;
  } catch {
    return true;
  }
}

/**
 * Claims the sweep that is due under `home`, for the caller to run: true when one was due and this
 * process got it, false when none is due or another process claimed it first. The claim is the
 * stamp (`gc.json`, written at once with `{ claimed, pid }`), so that the next one is due in
 * {@link GC_EVERY_MS}; the check and the write are done under an exclusive file (`gc.claim`), so
 * that processes starting at the same moment (hooks, sidecars) claim one sweep between them.
 * `now` in ms since the epoch.
 */
export function claimSweep(home: string, now = Date.now()): boolean {
  if (!gcDue(home, now)) return false;
  const lock = join(home, 'gc.claim');
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    for (let attempt = 0; ; attempt++) {
      try {
        closeSync(openSync(lock, 'wx', 0o600));
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) return false;
        // Held: by a process claiming right now (it wins), or by one that died claiming (take it over).
        try {
          if (statSync(lock).mtimeMs >= now - CLAIM_STALE_MS) return false;
          unlinkSync(lock);
        } catch {
          // gone meanwhile: try once more
        }
      }
    }
    try {
      if (!gcDue(home, now)) return false; // another process claimed and let go between our two looks
      writeFileSync(stampOf(home), `${JSON.stringify({ claimed: now, pid: process.pid })}\n`, { mode: 0o600 });
      return true;
    } finally {
      try {
        unlinkSync(lock);
      } catch {
        // already gone
      }
    }
  } catch {
    return false;
  }
}

/**
 * Gives back a claim this process made ({@link claimSweep}) for a sweep it did not finish (a
 * sidecar leaving mid-sweep): the stamp's mtime is set back, so the sweep is due again at once
 * for the next hook or sidecar. A stamp another process wrote since is left alone.
 */
export function releaseSweep(home: string): void {
  try {
    const stamp = JSON.parse(readFileSync(stampOf(home), 'utf8')) as { claimed?: unknown; pid?: unknown; time?: unknown };
    if (stamp.pid !== process.pid || stamp.claimed === undefined || stamp.time !== undefined) return;
    const past = (Date.now() - GC_EVERY_MS) / 1000 - 1;
    utimesSync(stampOf(home), past, past);
  } catch {
    // no stamp, or not ours
  }
}

/**
 * Runs `takeback gc` in a process of its own that outlives the caller (a hook must not wait for
 * a sweep), when one is due and this process claims it ({@link claimSweep}). `bin` is the
 * takeback script. True when it started one.
 */
export function startGcIfDue(home: string, bin: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!claimSweep(home)) return false;
  try {
    const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
    spawn(process.execPath, [bin, 'gc'], { detached: true, stdio: 'ignore', env }).unref();
    return true;
  } catch {
    return false;
  }
}

/** What `gc.json` says of the last sweep under a home (see {@link lastSweep}). Times in ms since the epoch, durations in ms. */
export interface LastSweep {
  /** When the last sweep was claimed or run (the stamp's mtime): the next is due {@link GC_EVERY_MS} after. */
  at: number;
  /** When the last finished sweep began, or null while the last one claimed has not finished (or died). */
  time: number | null;
  /** When it finished, or null (not known for sweeps of older versions). */
  finished: number | null;
  /** The process that ran it. */
  pid: number | null;
  /** Sets it expired. */
  expired: { byAge: number; bySize: number } | null;
  /** Blobs it removed, and their bytes. */
  swept: { count: number; bytes: number } | null;
  /** How it ran: the number of steps, the longest (ms) and their sum (ms). Null for older stamps. */
  slices: { steps: number; longestMs: number; workMs: number } | null;
}

/** The last sweep under `home` as `gc.json` records it, or null when none was ever claimed. */
export function lastSweep(home: string): LastSweep | null {
  let at: number;
  let stamp: Record<string, unknown> = {};
  try {
    at = statSync(stampOf(home)).mtimeMs;
  } catch {
    return null;
  }
  try {
    stamp = JSON.parse(readFileSync(stampOf(home), 'utf8')) as Record<string, unknown>;
  } catch {
    // torn or unreadable: only its mtime says something
  }
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const obj = <T>(v: unknown) => (v && typeof v === 'object' ? (v as T) : null);
  return {
    at: Math.round(at),
    time: num(stamp.time),
    finished: num(stamp.finished),
    pid: num(stamp.pid),
    expired: obj<LastSweep['expired']>(stamp.expired),
    swept: obj<LastSweep['swept']>(stamp.swept),
    slices: obj<LastSweep['slices']>(stamp.slices),
  };
}

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

/** One unit of work done, or a journal found locked (see {@link GcOptions.nonBlocking}). */
const UNIT = 0;
const BUSY = 1;
type Yield = typeof UNIT | typeof BUSY;

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
      writeFileSync(stampOf(this.home), `${JSON.stringify(stamp)}\n`, { mode: 0o600 });
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

interface OpenJournal {
  dir: string;
  db: Db;
}

/** The sets of one journal, read in one read transaction. */
interface JournalSets {
  /** Sets not expired and not past the retention time, with their blobs when `keepBlobs`. */
  live: SetRefs[];
  /** Sets past the retention time, to expire. */
  old: string[];
  /** Sets already expired. */
  tombstones: number;
}

/** A blob as the sweep lists it: its bytes on disk, its mtime (ms), and what refers to it (set while the journals are read). */
interface Listed {
  size: number;
  mtimeMs: number;
  /** The working state of some journal: a snapshot, a tool call in flight, drift, an unfinished undo. */
  working: boolean;
  /** A set that has not expired. */
  sets: boolean;
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

function readdirOr(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The sweep itself, one unit of work between yields (see {@link GcSweep}). */
function* sweepWork(opts: GcOptions & { now: number }, progress: { phase: GcPhase }): Generator<Yield, GcReport> {
  const { config, now } = opts;
  const graceMs = opts.graceMs ?? DEFAULT_GRACE_MS;
  const cutoff = now - graceMs;
  const dryRun = Boolean(opts.dryRun);
  const blobs = new BlobStore(opts.home);
  const open: OpenJournal[] = [];
  try {
    // The store first, then the references: a blob stored after this listing is not swept now.
    const inStore = new Map<string, Listed>();
    const temps: string[] = [];
    let storeBytes = 0;
    for (const sub of readdirOr(blobs.dir)) {
      if (sub.length !== 2) continue;
      const names = readdirOr(join(blobs.dir, sub));
      yield UNIT;
      for (const name of names) {
        if (name.startsWith('.tmp-')) {
          temps.push(join(blobs.dir, sub, name));
          continue;
        }
        const hash = sub + name;
        if (!/^[0-9a-f]{64}$/.test(hash)) continue;
        try {
          const st = statSync(join(blobs.dir, sub, name));
          inStore.set(hash, { size: st.size, mtimeMs: st.mtimeMs, working: false, sets: false });
          storeBytes += st.size;
        } catch {
          // swept meanwhile
        }
        yield UNIT;
      }
    }
    const size = (h: string) => inStore.get(h)?.size ?? 0;

    // Every journal, each in one read transaction. The size rule can apply only when the store
    // holds more than the limit: only then is each set's list of blobs kept for it.
    const keepBlobs = storeBytes > config.maxJournalBytes;
    progress.phase = 'read';
    yield UNIT;
    const root = join(opts.home, 'workspaces');
    for (const n of readdirOr(root)) {
      const dir = join(root, n);
      if (!existsSync(join(dir, 'journal.db'))) continue;
      const db = openDb(join(dir, 'journal.db'));
      open.push({ dir, db });
      if (opts.nonBlocking) db.pragma('busy_timeout = 0');
      yield UNIT;
    }
    const ageCutoff = now - config.retentionDays * DAY_MS;
    // References are marked on the listed blobs (a hash not listed cannot be swept now): no set
    // of every hash referred to is kept, so the sweep's memory is that of the listing.
    const refs: JournalSets[] = [];
    for (let i = 0; i < open.length; i++) refs.push(yield* readJournal(open[i]!, i, ageCutoff, keepBlobs, Boolean(opts.nonBlocking), inStore));

    // Age first, journal by journal.
    progress.phase = 'expire';
    yield UNIT;
    let byAge = 0;
    for (let i = 0; i < open.length; i++) {
      const old = refs[i]!.old;
      byAge += old.length;
      if (!dryRun) yield* expire(open[i]!.db, old, Boolean(opts.nonBlocking));
    }

    // Then size, across all journals: the oldest sets first until what is kept fits.
    let remaining: SetRefs[] = refs.flatMap((r) => r.live);
    let bySize: SetRefs[] = [];
    if (keepBlobs) {
      let young = 0;
      const working = new Set<string>();
      let k = 0;
      for (const [h, b] of inStore) {
        if (b.working) working.add(h);
        else if (!b.sets && b.mtimeMs >= cutoff) young += b.size;
        if (++k % 1024 === 0) yield UNIT;
      }
      bySize = overBudget(remaining, size, working, young, config);
      yield UNIT;
      if (bySize.length > 0) {
        for (let i = 0; i < open.length; i++) {
          const ids = bySize.filter((s) => s.journal === i).map((s) => s.id);
          if (ids.length > 0 && !dryRun) yield* expire(open[i]!.db, ids, Boolean(opts.nonBlocking));
        }
        const expiredNow = new Set(bySize);
        remaining = remaining.filter((s) => !expiredNow.has(s));
        // What the sets left refer to, marked again.
        for (const b of inStore.values()) {
          b.sets = false;
          if (++k % 1024 === 0) yield UNIT;
        }
        for (const s of remaining) {
          for (const h of s.blobs) {
            const b = inStore.get(h);
            if (b) b.sets = true;
          }
          yield UNIT;
        }
      }
    }

    // What is kept, and why; sweep the rest.
    progress.phase = 'sweep';
    yield UNIT;
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
        if (dryRun || sweep(blobs, h, cutoff)) add('unreferenced', b.size);
        else add('young', b.size); // freshened by a writer while we looked
        yield UNIT;
        continue;
      }
      if (++kept % 64 === 0) yield UNIT;
    }
    // Temporary files writers left (killed mid-write) go once older than the cutoff.
    progress.phase = 'temps';
    yield UNIT;
    if (!dryRun) {
      for (const p of temps) {
        try {
          if (statSync(p).mtimeMs < cutoff) unlinkSync(p);
        } catch {
          // gone
        }
        yield UNIT;
      }
    }
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
 * Reads what journal `j` (number `index`) refers to, in one read transaction held across units
 * (a consistent view however many slices it takes): marks the listed blobs its working state
 * and its live sets refer to, and returns its sets. A journal locked in a way that stops a read
 * (rare in WAL mode) is read again from the start after a 'wait' when `nonBlocking` (the marks a
 * failed read made stay: they keep more, never less).
 */
function* readJournal(
  j: OpenJournal,
  index: number,
  ageCutoff: number,
  keepBlobs: boolean,
  nonBlocking: boolean,
  listed: Map<string, Listed>,
): Generator<Yield, JournalSets> {
  const working = (h: string) => {
    const b = listed.get(h);
    if (b) b.working = true;
  };
  const sets = j.db.prepare("SELECT id, created_at, state = 'expired', CASE WHEN state = 'expired' THEN NULL ELSE files END FROM sets WHERE id > ? ORDER BY id LIMIT ?").raw();
  const firstRows = j.db.prepare('SELECT dir, data FROM snapshot_rows ORDER BY dir LIMIT ?').raw();
  const nextRows = j.db.prepare('SELECT dir, data FROM snapshot_rows WHERE dir > ? ORDER BY dir LIMIT ?').raw();
  for (;;) {
    const out: JournalSets = { live: [], old: [], tombstones: 0 };
    try {
      j.db.exec('BEGIN'); // deferred: the view is taken at the first read
      let last = 0;
      for (;;) {
        const rows = sets.all(last, PAGE) as [number, number, number, string | null][];
        for (const [id, time, expired, files] of rows) {
          last = id;
          if (expired || files === null) {
            out.tombstones++;
            continue;
          }
          if (time < ageCutoff) {
            out.old.push(String(id));
            continue;
          }
          const hashes = changeRefs(JSON.parse(files) as FileChange[]);
          for (const h of hashes) {
            const b = listed.get(h);
            if (b) b.sets = true;
          }
          out.live.push({ journal: index, id: String(id), time, blobs: keepBlobs ? hashes : [] });
        }
        yield UNIT;
        if (rows.length < PAGE) break;
      }
      const hashes: string[] = [];
      let after: string | null = null;
      for (;;) {
        const rows = (after === null ? firstRows.all(PAGE) : nextRows.all(after, PAGE)) as [string, Buffer][];
        for (const [dir, data] of rows) {
          after = dir;
          rowBlobRefs(data, hashes);
        }
        for (const h of hashes) working(h);
        hashes.length = 0;
        yield UNIT;
        if (rows.length < PAGE) break;
      }
      for (const h of new Captures(j.db).blobRefs()) working(h);
      for (const h of new Drift(j.db).blobRefs()) working(h);
      j.db.exec('COMMIT');
      yield UNIT;
      for (const h of new Txns(j.dir).blobRefs()) working(h);
      yield UNIT;
      return out;
    } catch (e) {
      try {
        if (j.db.inTransaction) j.db.exec('ROLLBACK');
      } catch {
        // ended already
      }
      if (!(nonBlocking && isBusy(e))) throw e;
    }
    yield BUSY;
  }
}

/** Expires sets `ids` of `db`, {@link EXPIRE_CHUNK} a write transaction, one unit each; a 'wait' while the journal is locked when `nonBlocking`. */
function* expire(db: Db, ids: string[], nonBlocking: boolean): Generator<Yield, void> {
  for (let k = 0; k < ids.length; ) {
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
function sweep(blobs: BlobStore, hash: string, cutoffMs: number): boolean {
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
