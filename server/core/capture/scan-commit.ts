import type { Engine } from '../engine.js';
import { scanRows, type ScanOutcome } from '../scan/scan.js';
import { statWorkerFor, type ChangeHints } from '../scan/checker.js';

/**
 * Scans the workspace against its persisted index and writes the new index (only the folders
 * that moved). Must run inside a write transaction, so that two processes never interleave a
 * scan's read-compare-write. A workspace over the limits gets its index cleared: the next scan
 * under the limits starts a new baseline rather than reporting the whole tree as created.
 * `hints`, from a file watcher, narrow a warm scan to what they name (see ChangeHints).
 */
export function scanAndCommit(engine: Engine, onProgress?: (files: number) => void, hints?: ChangeHints): ScanOutcome {
  const { journal, root, config } = engine;
  const prevMeta = journal.snapshot.meta();
  // Started before the index loads, to boot meanwhile.
  const worker = prevMeta?.status === 'ok' ? statWorkerFor(prevMeta.files) : null;
  const rows = journal.snapshot.rows();
  const r = scanRows({ root, rows, prevMeta, blobs: journal.blobs, config, onProgress, worker, hints });
  if (r.status === 'too-large') {
    if (rows.size > 0) journal.snapshot.clear();
  } else {
    journal.snapshot.writeRows(r.put, r.del);
  }
  journal.snapshot.setMeta(r.meta);
  return { status: r.status, ...(r.reason !== undefined ? { reason: r.reason } : {}), changes: r.changes, meta: r.meta, read: r.read };
}
