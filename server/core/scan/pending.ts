import { readWorkspaceState } from '../fsstate.js';
import type { BlobStore } from '../store/blobs.js';
import type { GapReason } from '../types.js';
import { decodeRow, patchRow, rowCounts, type PackedEntry, type RowEdit } from './packed.js';
import { S_IFMT, S_IFREG, type StatReader } from './lstat.js';
import { mainReader } from './stat-check.js';

/*
 * The background half of a large baseline (see scanRows' `background`): the scan kept each file
 * by its stat alone, named `baseline-incomplete`; here their bytes are read and kept, a slice at a
 * time, so that no slice holds the journal long. A file whose stat moved since the scan saw it is
 * left pending: the next scan sees it moved and records the change, named as a gap (its bytes
 * before are not known).
 */

/** How much one slice of {@link keepPending} may read: files, bytes, and time (ms). */
export interface PendingBudget {
  files: number;
  bytes: number;
  ms: number;
}

/** What one slice of {@link keepPending} did: rows to write, what it kept, and what is left. */
export interface PendingSlice {
  /** The rows it changed (folder → the new row). */
  put: Map<string, Buffer>;
  /** Files whose bytes it kept (or named as a gap: too large, a secret, unreadable). */
  kept: number;
  /** Bytes it kept. */
  bytes: number;
  /** Files still pending in the rows it wrote and those it did not (left for later, or left for a scan). */
  left: number;
  /** Files left pending because their stat moved or is racy (the next scan looks at them). */
  skipped: number;
}

/** Two times that are the same stat (as scan.ts compares them). */
function near(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) < 0.001;
}

/** True when stat `v` ([mode, size, ino, mtimeMs, ctimeMs]) is the one entry `e` was kept with. */
function sameStat(e: PackedEntry, v: ArrayLike<number>): boolean {
  return (v[0]! & S_IFMT) === S_IFREG && (v[0]! & 0o7777) === e.mode && v[1] === e.size && v[2] === e.ino && near(v[3]!, e.mtimeMs) && near(v[4]!, e.ctimeMs);
}

/** What reading one pending file gave: its hash (null when its bytes are not kept) and why not, and its size. */
export interface PendingRead {
  sha256: string | null;
  gap: GapReason | null;
  size: number;
}

/**
 * Reads pending file `rel` (its entry `e`, kept by the baseline's scan) into `blobs` by the
 * workspace's rules (secrets, the size limit): null, and nothing read, when its stat is no longer
 * the one the baseline saw (`stat`: this thread's reader) or it is racy (modified after `racyMs`,
 * ms since the epoch: it may change again within the same stat); null too when its stat moved
 * while it was read. Throws what the blob store throws (a full disk).
 */
export function readPending(root: string, rel: string, e: PackedEntry, racyMs: number, blobs: BlobStore, config: { maxFileBytes: number }, stat: StatReader): PendingRead | null {
  const abs = `${root}/${rel}`;
  const v = stat(abs);
  if (!v || !sameStat(e, v) || e.mtimeMs >= racyMs) return null;
  const r = readWorkspaceState({ root, config }, rel, { abs, blobs, seen: { mode: v[0]!, size: v[1]! } });
  const st = r.stat;
  // Moved while it was read: the scan sees it.
  if (!r.state.exists || r.state.type !== 'file' || !st || !st.isFile() || (st.mode & 0o7777) !== e.mode || st.size !== e.size || st.ino !== e.ino || !near(st.mtimeMs, e.mtimeMs)) return null;
  return { sha256: r.state.sha256, gap: r.gap ?? null, size: e.size };
}

/**
 * Reads and keeps the bytes of files the baseline left pending in `rows`, until `budget` is
 * spent, into `blobs` (see {@link readPending}), on this thread. Writes nothing but blobs: the
 * caller writes `put` (and the meta's counts) back.
 */
export function keepPending(opts: {
  root: string;
  rows: Map<string, Uint8Array>;
  racyMs: number;
  blobs: BlobStore;
  config: { maxFileBytes: number };
  budget: PendingBudget;
}): PendingSlice {
  const { root, rows, racyMs, blobs, config, budget } = opts;
  const stat = mainReader();
  const until = Date.now() + budget.ms;
  const out: PendingSlice = { put: new Map(), kept: 0, bytes: 0, left: 0, skipped: 0 };
  let spent = false;
  for (const [dir, buf] of rows) {
    const pending = rowCounts(buf).pending;
    if (pending === 0) continue;
    if (spent) {
      out.left += pending;
      continue;
    }
    const edits: RowEdit[] = [];
    let stillPending = 0;
    for (const e of decodeRow(buf)) {
      if (e.gap !== 'baseline-incomplete') continue;
      if (spent || out.kept >= budget.files || out.bytes >= budget.bytes || Date.now() >= until) {
        spent = true;
        stillPending++;
        continue;
      }
      const r = readPending(root, dir === '' ? e.name : `${dir}/${e.name}`, e, racyMs, blobs, config, stat);
      if (!r) {
        stillPending++;
        out.skipped++;
        continue;
      }
      edits.push({ name: e.name, entry: { ...e, sha256: r.sha256, gap: r.gap } });
      out.kept++;
      if (r.sha256) out.bytes += e.size;
    }
    out.left += stillPending;
    const next = edits.length > 0 ? patchRow(buf, edits) : null;
    if (next) out.put.set(dir, next);
  }
  return out;
}

/** Pending files handed to another thread to read: each one's folder, name and entry as the rows had it. */
export interface PendingItem {
  dir: string;
  entry: PackedEntry;
}

/**
 * The first pending files of `rows`, up to `files` of them and `bytes` of their sizes (at least
 * one), for {@link readPending} elsewhere (a worker thread) and {@link applyPending} after. Files
 * racy by their entry (modified after `racyMs`) are passed over: {@link readPending} would leave
 * them, and a batch of them alone would keep nothing and stop the baseline until the next scan.
 */
export function pendingItems(rows: Map<string, Uint8Array>, files: number, bytes: number, racyMs: number): PendingItem[] {
  const out: PendingItem[] = [];
  let size = 0;
  for (const [dir, buf] of rows) {
    if (rowCounts(buf).pending === 0) continue;
    for (const e of decodeRow(buf)) {
      if (e.gap !== 'baseline-incomplete' || e.mtimeMs >= racyMs) continue;
      if (out.length >= files || (out.length > 0 && size + e.size > bytes)) return out;
      out.push({ dir, entry: e });
      size += e.size;
    }
  }
  return out;
}

/** Two entries that are the same file as the baseline saw it (the same stat, still pending). */
function samePending(a: PackedEntry, b: PackedEntry): boolean {
  return b.gap === 'baseline-incomplete' && a.type === b.type && a.mode === b.mode && a.size === b.size && a.ino === b.ino && near(a.mtimeMs, b.mtimeMs) && near(a.ctimeMs, b.ctimeMs);
}

/**
 * Writes what another thread read of `items` (`reads[i]` for `items[i]`: null, left pending) into
 * `rows` as they are now: an entry is kept only where the row still holds the very entry that
 * was read (a scan since may have found the file moved, or gone). Returns the rows to write and
 * the counts, as {@link keepPending} does; `left` counts every file still pending in `rows`.
 */
export function applyPending(rows: Map<string, Uint8Array>, items: readonly PendingItem[], reads: readonly (PendingRead | null)[]): PendingSlice {
  const out: PendingSlice = { put: new Map(), kept: 0, bytes: 0, left: 0, skipped: 0 };
  const byDir = new Map<string, Map<string, { e: PackedEntry; r: PendingRead }>>();
  items.forEach((it, i) => {
    const r = reads[i];
    if (!r) {
      out.skipped++;
      return;
    }
    let m = byDir.get(it.dir);
    if (!m) byDir.set(it.dir, (m = new Map()));
    m.set(it.entry.name, { e: it.entry, r });
  });
  for (const [dir, read] of byDir) {
    const buf = rows.get(dir);
    if (!buf) continue;
    const edits: RowEdit[] = [];
    for (const now of decodeRow(buf)) {
      const got = read.get(now.name);
      if (!got || !samePending(got.e, now)) continue;
      edits.push({ name: now.name, entry: { ...now, sha256: got.r.sha256, gap: got.r.gap } });
      out.kept++;
      if (got.r.sha256) out.bytes += now.size;
    }
    const next = edits.length > 0 ? patchRow(buf, edits) : null;
    if (next) out.put.set(dir, next);
  }
  for (const [dir, buf] of rows) out.left += rowCounts(out.put.get(dir) ?? buf).pending;
  return out;
}
