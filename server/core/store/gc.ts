import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Config } from '../config.js';
import { Captures } from '../journal/captures.js';
import { openDb, writeTxn, type Db } from '../journal/db.js';
import { Drift } from '../journal/drift.js';
import { liveSets, overBudget, pastRetention, type SetRefs } from '../journal/retention.js';
import { Sets } from '../journal/sets.js';
import { SnapshotIndex } from '../journal/snapshot-index.js';
import { Txns } from '../journal/txns.js';
import { BlobStore } from './blobs.js';

/*
 * Bounded storage: expire what the retention rules say (journal/retention.ts), then sweep the
 * blobs nothing refers to. Blobs are shared by every workspace under $TAKEBACK_HOME, so the sweep
 * reads every journal first. A writer stores a blob before it commits the row that refers to it,
 * and `BlobStore.put` freshens the mtime of a blob it finds already there: so only blobs left
 * unreferenced and untouched for `graceMs` are swept, and each is renamed aside and checked once
 * more before it is unlinked.
 */

/** Blobs untouched for less than this are never swept (a writer may be about to refer to them). */
export const DEFAULT_GRACE_MS = 60 * 60 * 1000;

/** How often the retention rules run on their own (the sidecar, an agent's session start). */
export const GC_EVERY_MS = 6 * 60 * 60 * 1000;

/** `$TAKEBACK_HOME/gc.json`: when the last sweep ran (its mtime) and what it did. */
function stampOf(home: string): string {
  return join(home, 'gc.json');
}

/** True when no sweep ran under `home` for {@link GC_EVERY_MS} (or ever). */
export function gcDue(home: string, now = Date.now()): boolean {
  try {
    return statSync(stampOf(home)).mtimeMs < now - GC_EVERY_MS;
  } catch {
    return true;
  }
}

/**
 * Runs `takeback gc` in a process of its own that outlives the caller (a hook must not wait for
 * a sweep), when one is due. `bin` is the takeback script. The stamp is written first, so that
 * hooks starting at the same moment start one sweep, not several.
 */
export function startGcIfDue(home: string, bin: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!gcDue(home)) return false;
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(stampOf(home), '{}\n', { mode: 0o600 });
    const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
    spawn(process.execPath, [bin, 'gc'], { detached: true, stdio: 'ignore', env }).unref();
    return true;
  } catch {
    return false;
  }
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

export interface GcReport {
  workspaces: number;
  /** Sets expired (dry run: that would be) because of their age, and to fit the size limit. */
  expired: { byAge: number; bySize: number };
  /** Sets left (not expired), and the time of the oldest (ms) or null. */
  sets: { live: number; oldest: number | null; tombstones: number };
  use: StorageUse;
  limits: { retentionDays: number; maxJournalBytes: number; graceMs: number };
  dryRun: boolean;
}

interface OpenJournal {
  dir: string;
  db: Db;
}

function journals(home: string): OpenJournal[] {
  const root = join(home, 'workspaces');
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const out: OpenJournal[] = [];
  for (const n of names) {
    const dir = join(root, n);
    if (!existsSync(join(dir, 'journal.db'))) continue;
    out.push({ dir, db: openDb(join(dir, 'journal.db')) });
  }
  return out;
}

/** Hashes the working state of one journal refers to: its snapshot index, tool calls in flight, drift, unfinished undos. */
function workingRefs(j: OpenJournal, out: Set<string>): void {
  for (const h of new SnapshotIndex(j.db).blobRefs()) out.add(h);
  for (const h of new Captures(j.db).blobRefs()) out.add(h);
  for (const h of new Drift(j.db).blobRefs()) out.add(h);
  for (const h of new Txns(j.dir).blobRefs()) out.add(h);
}

/**
 * Applies the retention rules to every journal under `home` and sweeps unreferenced blobs older
 * than `graceMs`. With `dryRun`, changes nothing and says what it would do (for `doctor`).
 */
export function collectGarbage(opts: { home: string; config: Config; now?: number; graceMs?: number; dryRun?: boolean }): GcReport {
  const now = opts.now ?? Date.now();
  const graceMs = opts.graceMs ?? DEFAULT_GRACE_MS;
  const dryRun = Boolean(opts.dryRun);
  const { config } = opts;
  const blobs = new BlobStore(opts.home);
  const open = journals(opts.home);
  try {
    // The store first, then the references: a blob stored after this listing is not swept now.
    const inStore = new Map<string, { size: number; mtimeMs: number }>();
    for (const b of blobs.list()) inStore.set(b.hash, { size: b.size, mtimeMs: b.mtimeMs });
    const size = (h: string) => inStore.get(h)?.size ?? 0;

    // Age first, journal by journal.
    let byAge = 0;
    const live: SetRefs[] = [];
    open.forEach((j, i) => {
      const sets = liveSets(j.db, i);
      const old = pastRetention(sets, config, now);
      if (old.length > 0 && !dryRun) writeTxn(j.db, () => new Sets(j.db).expire(old.map((s) => s.id)));
      byAge += old.length;
      const gone = new Set(old);
      for (const s of sets) if (!gone.has(s)) live.push(s);
    });

    // Then size, across all journals: the oldest sets first until what is kept fits.
    const working = new Set<string>();
    for (const j of open) workingRefs(j, working);
    const referenced = new Set(working);
    for (const s of live) for (const h of s.blobs) referenced.add(h);
    let young = 0;
    for (const [h, b] of inStore) if (!referenced.has(h) && b.mtimeMs >= now - graceMs) young += b.size;
    const bySize = overBudget(live, size, working, young, config);
    if (bySize.length > 0 && !dryRun) {
      open.forEach((j, i) => {
        const ids = bySize.filter((s) => s.journal === i).map((s) => s.id);
        if (ids.length > 0) writeTxn(j.db, () => new Sets(j.db).expire(ids));
      });
    }
    const expiredNow = new Set(bySize);
    const remaining = live.filter((s) => !expiredNow.has(s));

    // What is kept, and why; sweep the rest.
    const bySets = new Set<string>();
    for (const s of remaining) for (const h of s.blobs) if (!working.has(h)) bySets.add(h);
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
    for (const [h, b] of inStore) {
      add('total', b.size);
      if (working.has(h)) add('working', b.size);
      else if (bySets.has(h)) add('sets', b.size);
      else if (b.mtimeMs >= now - graceMs) add('young', b.size);
      else if (dryRun || sweep(blobs, h, now - graceMs)) add('unreferenced', b.size);
      else add('young', b.size); // freshened by a writer while we looked
    }
    if (!dryRun) sweepTemps(blobs, now - graceMs);
    let tombstones = 0;
    for (const j of open) tombstones += (j.db.prepare("SELECT count(*) FROM sets WHERE state = 'expired'").pluck().get() as number) ?? 0;
    const oldest = remaining.reduce<number | null>((m, s) => (m === null || s.time < m ? s.time : m), null);
    const report: GcReport = {
      workspaces: open.length,
      expired: { byAge, bySize: bySize.length },
      sets: { live: remaining.length, oldest, tombstones: dryRun ? tombstones + byAge + bySize.length : tombstones },
      use,
      limits: { retentionDays: config.retentionDays, maxJournalBytes: config.maxJournalBytes, graceMs },
      dryRun,
    };
    if (!dryRun) {
      try {
        writeFileSync(stampOf(opts.home), `${JSON.stringify({ time: now, expired: report.expired, swept: report.use.unreferenced })}\n`, { mode: 0o600 });
      } catch {
        // no stamp: the next session start sweeps again
      }
    }
    return report;
  } finally {
    for (const j of open) j.db.close();
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

/** Removes temporary files writers left (killed mid-write) once they are older than `cutoffMs`. */
function sweepTemps(blobs: BlobStore, cutoffMs: number): void {
  let subs: string[];
  try {
    subs = readdirSync(blobs.dir);
  } catch {
    return;
  }
  for (const sub of subs) {
    if (sub.length !== 2) continue;
    let names: string[];
    try {
      names = readdirSync(join(blobs.dir, sub));
    } catch {
      continue;
    }
    for (const n of names) {
      if (!n.startsWith('.tmp-')) continue;
      const p = join(blobs.dir, sub, n);
      try {
        if (statSync(p).mtimeMs < cutoffMs) unlinkSync(p);
      } catch {
        // gone
      }
    }
  }
}
