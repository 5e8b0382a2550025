import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BlobRefs } from '../journal/blob-refs.js';
import { Captures } from '../journal/captures.js';
import { openDb, type Db } from '../journal/db.js';
import { Drift } from '../journal/drift.js';
import { changeRefs, type SetRefs } from '../journal/retention.js';
import { Txns } from '../journal/txns.js';
import { rowBlobRefs } from '../scan/packed.js';
import type { BlobStore } from '../store/blobs.js';
import type { FileChange, FileState } from '../types.js';

/*
 * The sweep's mark phase: the store is listed first, then every journal's references are marked
 * on what was listed (a hash not listed cannot be swept now, so no set of every hash referred to
 * is kept: the sweep's memory is that of the listing). Each generator yields once per unit of
 * work (see sweep.ts).
 */

/** One unit of work done, or a journal found locked (see `GcOptions.nonBlocking`). */
export const UNIT = 0;
export const BUSY = 1;
export type Yield = typeof UNIT | typeof BUSY;

/** Rows read from a table at once while the journals are read (a page is a unit of work: 8 sets of 30 files parse in about 1 ms). */
export const PAGE = 8;

/** A blob as the sweep lists it: its bytes on disk, its mtime (ms), and what refers to it (set while the journals are read). */
export interface Listed {
  size: number;
  mtimeMs: number;
  /** The working state of some journal: a snapshot, a tool call in flight, drift, an unfinished undo. */
  working: boolean;
  /** A set that has not expired. */
  sets: boolean;
}

/** The blob store as listed at the sweep's start: its blobs by hash, writers' leftover temporary files, and the bytes of all blobs. */
export interface StoreListing {
  blobs: Map<string, Listed>;
  temps: string[];
  bytes: number;
}

/** A journal the sweep opened: its folder and its connection. */
export interface OpenJournal {
  dir: string;
  db: Db;
}

/** The sets of one journal, read in one read transaction. */
export interface JournalSets {
  /** Sets not expired and not past the retention time, with their blobs when `keepBlobs`. */
  live: SetRefs[];
  /** Sets past the retention time, to expire. */
  old: string[];
  /** Sets already expired. */
  tombstones: number;
}

/** True for SQLite's answer to a lock another connection holds. */
export function isBusy(e: unknown): boolean {
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

/** Lists the blob store `blobs` (one unit per folder and per blob), nothing marked yet. */
export function* listStore(blobs: BlobStore): Generator<Yield, StoreListing> {
  const out: StoreListing = { blobs: new Map(), temps: [], bytes: 0 };
  for (const sub of readdirOr(blobs.dir)) {
    if (sub.length !== 2) continue;
    const names = readdirOr(join(blobs.dir, sub));
    yield UNIT;
    for (const name of names) {
      if (name.startsWith('.tmp-')) {
        out.temps.push(join(blobs.dir, sub, name));
        continue;
      }
      const hash = sub + name;
      if (!/^[0-9a-f]{64}$/.test(hash)) continue;
      try {
        const st = statSync(join(blobs.dir, sub, name));
        out.blobs.set(hash, { size: st.size, mtimeMs: st.mtimeMs, working: false, sets: false });
        out.bytes += st.size;
      } catch {
        // swept meanwhile
      }
      yield UNIT;
    }
  }
  return out;
}

/**
 * Opens every journal under `home` (one unit each), pushing each onto `open` as it is opened, so
 * that the caller closes them all whatever happens. With `nonBlocking`, a connection never waits
 * for a lock.
 */
export function* openJournals(home: string, nonBlocking: boolean, open: OpenJournal[]): Generator<Yield, void> {
  const root = join(home, 'workspaces');
  for (const n of readdirOr(root)) {
    const dir = join(root, n);
    if (!existsSync(join(dir, 'journal.db'))) continue;
    const db = openDb(join(dir, 'journal.db'));
    open.push({ dir, db });
    if (nonBlocking) db.pragma('busy_timeout = 0');
    yield UNIT;
  }
}

/**
 * Reads what journal `j` (number `index`) refers to, in one read transaction held across units
 * (a consistent view however many slices it takes): marks the listed blobs its working state
 * and its live sets refer to, and returns its sets. Sets older than `ageCutoff` (ms since the
 * epoch) are returned as old, unmarked. A journal locked in a way that stops a read (rare in WAL
 * mode) is read again from the start after a 'wait' when `nonBlocking` (the marks a failed read
 * made stay: they keep more, never less).
 */
export function* readJournal(j: OpenJournal, index: number, ageCutoff: number, keepBlobs: boolean, nonBlocking: boolean, listed: Map<string, Listed>): Generator<Yield, JournalSets> {
  const working = (h: string) => {
    const b = listed.get(h);
    if (b) b.working = true;
  };
  const refs = new BlobRefs(j.db);
  for (;;) {
    const out: JournalSets = { live: [], old: [], tombstones: 0 };
    try {
      j.db.exec('BEGIN'); // deferred: the view is taken at the first read
      let last = 0;
      for (;;) {
        const rows = refs.setsAfter(last, PAGE);
        for (const [id, time, expired, files, opStates] of rows) {
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
          // What the undos and redos of the set found and wrote: an exact inverse writes it back.
          if (opStates) for (const pair of JSON.parse(opStates) as [string, string][]) stateRefs(pair, hashes);
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
        const rows = refs.snapshotRowsAfter(after, PAGE);
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

/** Appends the blob of each kept file among `states` (FileState JSON texts) to `out`. */
function stateRefs(states: string[], out: string[]): void {
  for (const text of states) {
    const s = JSON.parse(text) as FileState;
    if (s.exists && s.type === 'file' && s.sha256) out.push(s.sha256);
  }
}

/**
 * Marks again, from nothing, what the sets left (`remaining`) refer to: after sets were expired to
 * fit the size limit. `k` counts the blobs the caller has looked at so far (a unit every 1,024).
 */
export function* markSetsAgain(listed: Map<string, Listed>, remaining: SetRefs[], k: number): Generator<Yield, void> {
  for (const b of listed.values()) {
    b.sets = false;
    if (++k % 1024 === 0) yield UNIT;
  }
  for (const s of remaining) {
    for (const h of s.blobs) {
      const b = listed.get(h);
      if (b) b.sets = true;
    }
    yield UNIT;
  }
}
