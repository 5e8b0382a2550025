import type { Engine } from '../engine.js';
import { scanWorkspace, type ScanOutcome } from '../scan/scan.js';

/**
 * Scans the workspace against its persisted index and writes the new index (only what moved).
 * Must run inside a write transaction, so that two processes never interleave a scan's
 * read-compare-write. A workspace over the limits gets its index cleared: the next scan under the
 * limits starts a new baseline rather than reporting the whole tree as created.
 */
export function scanAndCommit(engine: Engine, onProgress?: (files: number) => void): ScanOutcome {
  const { journal, root, config } = engine;
  const prev = journal.snapshot.load();
  const prevMeta = journal.snapshot.meta();
  const outcome = scanWorkspace({ root, prev, prevMeta, blobs: journal.blobs, config, onProgress });
  if (outcome.status === 'too-large') {
    if (prev.size > 0) journal.snapshot.clear();
  } else {
    const upserts: [string, (typeof outcome.entries extends Map<string, infer E> ? E : never)][] = [];
    for (const [p, e] of outcome.entries) if (prev.get(p) !== e) upserts.push([p, e]);
    const deletes: string[] = [];
    for (const p of prev.keys()) if (!outcome.entries.has(p)) deletes.push(p);
    journal.snapshot.update(upserts, deletes);
  }
  journal.snapshot.setMeta(outcome.meta);
  return outcome;
}
