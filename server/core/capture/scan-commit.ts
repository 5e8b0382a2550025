import type { Engine } from '../engine.js';
import { scanRows, type ScanOutcome } from '../scan/scan.js';
import { haveNativeCheck } from '../scan/native.js';
import { PARALLEL_MIN_PATHS, StatWorker } from '../scan/stat-check.js';

/**
 * Scans the workspace against its persisted index and writes the new index (only the folders
 * that moved). Must run inside a write transaction, so that two processes never interleave a
 * scan's read-compare-write. A workspace over the limits gets its index cleared: the next scan
 * under the limits starts a new baseline rather than reporting the whole tree as created.
 */
export function scanAndCommit(engine: Engine, onProgress?: (files: number) => void): ScanOutcome {
  const { journal, root, config } = engine;
  const prevMeta = journal.snapshot.meta();
  // A second thread for a large index: started first, it boots while the index loads (and
  // stays for the process's next scans).
  // `TAKEBACK_SCAN_THREADS=1` keeps the scan on one thread (less memory, slower).
  // A stat worker thread for a large index, unless the native check (threads of its own) is there.
  const worker = prevMeta?.status === 'ok' && prevMeta.files >= PARALLEL_MIN_PATHS && process.env.TAKEBACK_SCAN_THREADS !== '1' && !haveNativeCheck() ? StatWorker.start() : null;
  const rows = journal.snapshot.rows();
  const r = scanRows({ root, rows, prevMeta, blobs: journal.blobs, config, onProgress, worker });
  if (r.status === 'too-large') {
    if (rows.size > 0) journal.snapshot.clear();
  } else {
    journal.snapshot.writeRows(r.put, r.del);
  }
  journal.snapshot.setMeta(r.meta);
  return { status: r.status, ...(r.reason !== undefined ? { reason: r.reason } : {}), changes: r.changes, meta: r.meta, read: r.read };
}
