import { readWorkspaceState } from '../fsstate.js';
import type { BlobStore } from '../store/blobs.js';
import { decodeRow, patchRow, rowCounts, type PackedEntry, type RowEdit } from './packed.js';
import { S_IFMT, S_IFREG } from './lstat.js';
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

/**
 * Reads and keeps the bytes of files the baseline left pending in `rows`, until `budget` is
 * spent, into `blobs` (by the workspace's rules: secrets, the size limit). A file is read only
 * while its stat is the one the baseline saw and it is not racy (modified after `racyMs`, ms
 * since the epoch: it may change again within the same stat); after the read its stat is checked
 * again. Writes nothing but blobs: the caller writes `put` (and the meta's counts) back.
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
      const rel = dir === '' ? e.name : `${dir}/${e.name}`;
      const abs = `${root}/${rel}`;
      const v = stat(abs);
      if (!v || !sameStat(e, v) || e.mtimeMs >= racyMs) {
        stillPending++;
        out.skipped++;
        continue;
      }
      const r = readWorkspaceState({ root, config }, rel, { abs, blobs });
      const st = r.stat;
      if (!r.state.exists || r.state.type !== 'file' || !st || !st.isFile() || (st.mode & 0o7777) !== e.mode || st.size !== e.size || st.ino !== e.ino || !near(st.mtimeMs, e.mtimeMs)) {
        // Moved while it was read: the scan sees it.
        stillPending++;
        out.skipped++;
        continue;
      }
      edits.push({ name: e.name, entry: { ...e, sha256: r.state.sha256, gap: r.gap ?? null } });
      out.kept++;
      if (r.state.sha256) out.bytes += e.size;
    }
    out.left += stillPending;
    const next = edits.length > 0 ? patchRow(buf, edits) : null;
    if (next) out.put.set(dir, next);
  }
  return out;
}
