import { randomBytes } from 'node:crypto';
import { decodeRow, encodeRow, fromIndexEntry, rowBlobRefs, rowStamp, splitPath, unpackIndex, UNKNOWN_STAMP, type PackedEntry } from '../scan/packed.js';
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
  /**
   * The git blob that holds the file's bytes (a tracked file whose stat matched git's index): its
   * bytes are in git's object store, not copied into the journal (`sha256` may then be null).
   */
  git?: string | null;
}

/** Facts about the last scan. `startedNs` is when it began (the "racy" line, as in git's index). */
export interface ScanMeta {
  status: 'ok' | 'too-large';
  startedNs: string;
  files: number;
  bytes: number;
  /** Why the workspace is over the limits, when `status` is `too-large`. */
  reason?: string;
  /** Files whose bytes the journal keeps itself (the rest are in git's object store). */
  copied?: number;
  /** The excluded folder names the scan used (when they change, every folder is listed again). */
  excludes?: string;
  /** The ignore-rule files the scan used, with their stat (when one moves, every folder is listed again). */
  rules?: Record<string, string>;
  /** The git index file's stat when the scan last read it (see `gitIndexStamp`). */
  gitIndex?: string;
  /** Folders of excluded names that hold tracked files, scanned after all (`trackedExcludedDirs` in scan/git-index.ts). */
  trackedExcluded?: string[];
}

/**
 * The persisted snapshot index of one workspace: only the first scan reads every file. Kept
 * packed, one row a folder (`scan/packed.ts`): a warm scan loads it in one query and checks it
 * without an object per path; a change rewrites only the rows of the folders it touched.
 */
export class SnapshotIndex {
  /**
   * The rows as last read or written by this process, with the generation they belong to. Every
   * write of the rows (by any process) sets a new random generation in `meta`, in the same
   * transaction: a long-lived process (the sidecar) reloads the rows only when the generation
   * moved, instead of reading megabytes of rows for every scan. A random token, not a counter:
   * a rolled-back write's generation can never come back and match other rows.
   */
  private cache: { gen: string; rows: Map<string, Buffer> } | null = null;

  constructor(private readonly db: Db) {}

  private generation(): string {
    const r = this.db.prepare("SELECT value FROM meta WHERE key = 'snapshot_gen'").get() as { value: string } | undefined;
    return r?.value ?? '';
  }

  private bump(): string {
    const gen = randomBytes(12).toString('hex');
    this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('snapshot_gen', ?)").run(gen);
    return gen;
  }

  /**
   * Every row: folder (workspace-relative, '' for the root) → its packed children. The map is this
   * process's cache, kept up to date by {@link writeRows}: callers only read it.
   */
  rows(): Map<string, Buffer> {
    const gen = this.generation();
    if (this.cache && gen !== '' && this.cache.gen === gen) return this.cache.rows;
    const out = new Map<string, Buffer>();
    for (const r of this.db.prepare('SELECT dir, data FROM snapshot_rows').raw().all() as [string, Buffer][]) out.set(r[0], r[1]);
    this.cache = gen === '' ? null : { gen, rows: out };
    return out;
  }

  /**
   * Writes rows and removes others (call inside a transaction). The cached map, when it is the
   * one `rows()` gave, is brought up to date here, so that the next `rows()` of this process
   * reads nothing.
   */
  writeRows(put: Map<string, Uint8Array>, del: Iterable<string>): void {
    const ins = this.db.prepare('INSERT OR REPLACE INTO snapshot_rows (dir, data) VALUES (?, ?)');
    const rm = this.db.prepare('DELETE FROM snapshot_rows WHERE dir = ?');
    const cached = this.cache && this.cache.gen === this.generation() ? this.cache.rows : null;
    for (const d of del) {
      rm.run(d);
      cached?.delete(d);
    }
    for (const [d, b] of put) {
      ins.run(d, b);
      cached?.set(d, Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    }
    const gen = this.bump();
    this.cache = cached ? { gen, rows: cached } : null;
  }

  /** Every entry, keyed by workspace-relative path. */
  load(): Map<string, IndexEntry> {
    return unpackIndex(this.rows());
  }

  /**
   * Writes entries that changed and removes paths that are gone (call inside a transaction).
   * Removing a folder removes what the index holds under it.
   */
  update(upserts: Iterable<[string, IndexEntry]>, deletes: Iterable<string>): void {
    const get = this.db.prepare('SELECT data FROM snapshot_rows WHERE dir = ?').pluck();
    type Touched = { stamp: ReturnType<typeof rowStamp>; entries: Map<string, PackedEntry>; changed: boolean };
    const touched = new Map<string, Touched>();
    const rowOf = (dir: string): Touched => {
      let r = touched.get(dir);
      if (!r) {
        const buf = get.get(dir) as Buffer | undefined;
        r = { stamp: buf ? rowStamp(buf) : UNKNOWN_STAMP, entries: new Map(buf ? decodeRow(buf).map((e) => [e.name, e]) : []), changed: !buf };
        touched.set(dir, r);
      }
      return r;
    };
    const dropRows: string[] = [];
    for (const p of deletes) {
      const [dir, name] = splitPath(p);
      const row = rowOf(dir);
      if (row.entries.get(name)?.type === 'dir') dropRows.push(p);
      if (row.entries.delete(name)) row.changed = true;
    }
    for (const [p, e] of upserts) {
      const [dir, name] = splitPath(p);
      const row = rowOf(dir);
      const was = row.entries.get(name);
      row.entries.set(name, fromIndexEntry(name, e));
      row.changed = true;
      if (e.type === 'dir') rowOf(p); // a new folder gets a row (listed by the next scan)
      if (was?.type === 'dir' && e.type !== 'dir') dropRows.push(p);
    }
    const under = (d: string) => dropRows.some((r) => d === r || d.startsWith(`${r}/`));
    const del = dropRows.length > 0 ? (this.db.prepare('SELECT dir FROM snapshot_rows').pluck().all() as string[]).filter(under) : [];
    const put = new Map<string, Buffer>();
    for (const [dir, row] of touched) {
      if (row.changed && !under(dir)) put.set(dir, encodeRow(row.stamp, [...row.entries.values()]));
    }
    this.writeRows(put, del);
  }

  /** Forgets every entry (the workspace went over the limits). */
  clear(): void {
    this.db.prepare('DELETE FROM snapshot_rows').run();
    this.bump();
    this.cache = null;
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
    const out: string[] = [];
    for (const buf of this.db.prepare('SELECT data FROM snapshot_rows').pluck().all() as Buffer[]) rowBlobRefs(buf, out);
    return out;
  }
}
