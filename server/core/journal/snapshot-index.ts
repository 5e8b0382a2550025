import type { FileType, GapReason } from '../types.js';
import type { Db } from './db.js';

/**
 * One path in the last look at the workspace: its stat (the key to "did it move?") and, for a
 * kept file, the hash of its bytes in the blob store. `mtime`/`ctime` are nanoseconds since the
 * epoch as decimal strings; `ino` likewise.
 */
export interface IndexEntry {
  type: FileType;
  size: number;
  mtime: string;
  ctime: string;
  ino: string;
  mode: number;
  sha256: string | null;
  target: string | null;
  gap: GapReason | null;
}

/** Facts about the last scan. `startedNs` is when it began (the "racy" line, as in git's index). */
export interface ScanMeta {
  status: 'ok' | 'too-large';
  startedNs: string;
  files: number;
  bytes: number;
  /** Why the workspace is over the limits, when `status` is `too-large`. */
  reason?: string;
}

type Row = { path: string } & Omit<IndexEntry, 'type' | 'gap'> & { type: string; gap: string | null };

/** The persisted snapshot index of one workspace: only the first scan reads every file. */
export class SnapshotIndex {
  constructor(private readonly db: Db) {}

  /** Every entry, keyed by workspace-relative path. */
  load(): Map<string, IndexEntry> {
    const map = new Map<string, IndexEntry>();
    for (const r of this.db.prepare('SELECT * FROM snapshot').all() as Row[]) {
      map.set(r.path, {
        type: r.type as FileType,
        size: r.size,
        mtime: r.mtime,
        ctime: r.ctime,
        ino: r.ino,
        mode: r.mode,
        sha256: r.sha256,
        target: r.target,
        gap: r.gap as GapReason | null,
      });
    }
    return map;
  }

  /** Writes entries that changed and removes paths that are gone (call inside a transaction). */
  update(upserts: Iterable<[string, IndexEntry]>, deletes: Iterable<string>): void {
    const put = this.db.prepare(
      'INSERT OR REPLACE INTO snapshot (path, type, size, mtime, ctime, ino, mode, sha256, target, gap) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const del = this.db.prepare('DELETE FROM snapshot WHERE path = ?');
    for (const [p, e] of upserts) put.run(p, e.type, e.size, e.mtime, e.ctime, e.ino, e.mode, e.sha256, e.target, e.gap);
    for (const p of deletes) del.run(p);
  }

  /** Forgets every entry (the workspace went over the limits). */
  clear(): void {
    this.db.prepare('DELETE FROM snapshot').run();
  }

  meta(): ScanMeta | null {
    const r = this.db.prepare("SELECT value FROM meta WHERE key = 'scan'").get() as { value: string } | undefined;
    return r ? (JSON.parse(r.value) as ScanMeta) : null;
  }

  setMeta(m: ScanMeta): void {
    this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('scan', ?)").run(JSON.stringify(m));
  }

  /** Hashes of blobs the snapshot refers to (kept by the sweep: they are the "before" of the next command). */
  blobRefs(): string[] {
    return (this.db.prepare('SELECT sha256 FROM snapshot WHERE sha256 IS NOT NULL').all() as { sha256: string }[]).map((r) => r.sha256);
  }
}
