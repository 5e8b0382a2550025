import { randomBytes } from 'node:crypto';
import { statement } from '../statements.js';
import type Database from 'better-sqlite3';
import { nativeRowArena } from './native.js';
import { readRowsImage, writeRowsImage } from './rows-image.js';
import { addRowTotals, decodeRow, HEADER_BYTES, fromIndexEntry, noTotals, patchRow, rowBlobRefs, splitPath, toIndexEntry, unpackIndex, type IndexEntry, type PackedEntry, type RowEdit, type RowTotals } from './packed.js';

/** The journal's database, whose `snapshot_rows` and `meta` tables hold the index (see journal/db.ts). */
type Db = Database.Database;

export type { IndexEntry };

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
  /**
   * The baseline was made for a long-lived process (see `Config.maxBackgroundFiles`): every scan
   * of this snapshot, in any process, counts against the background limits.
   */
  background?: true;
  /** Files whose bytes the baseline has not kept yet (gap `baseline-incomplete`); absent when none. */
  pending?: number;
  /** The excluded folder names the scan used (when they change, every folder is listed again). */
  excludes?: string;
  /** The ignore-rule files the scan used, with their stat (when one moves, every folder is listed again). */
  rules?: Record<string, string>;
  /** The git index file's stat when the scan last read it (see `gitIndexStamp`). */
  gitIndex?: string;
  /** Folders of excluded names that hold tracked files, scanned after all (`trackedExcludedDirs` in scan/git-index.ts). */
  trackedExcluded?: string[];
  /**
   * The folders the scan skipped (excluded names, ignored paths; never `.git` nor takeback's own
   * store) as the walk met them, with their own stat (`mtimeMs:ctimeMs:ino:mode`) and the stamp of
   * the folders below it (`:hex`, scan.ts's `belowStamp`): a folder whose stamp moves had an entry
   * made, removed or renamed in it or below, a capture gap on that change.
   */
  skipped?: Record<string, string>;
  /** For each skipped folder, the folders below it that its stamp looks at (paths relative to it, in the order looked at): stat again without listing while nothing moved. */
  skippedBelow?: Record<string, string[]>;
}

/** Past this many rows written or removed at once, the sorted folders are sorted anew when next asked for (see `rowsUnder`). */
const SORTED_EDITS_MAX = 256;

/** The rows loaded are copied into blocks of memory of at most this size (see `loadRows`); a row over an eighth of it keeps a buffer of its own. */
const ROW_BLOCK_BYTES = 32 << 20;

/** The rows image's file name in the journal's folder (see rows-image.ts). */
export const ROWS_IMAGE = 'rows.image';

/** Rows handed to a {@link RowFeed} at once, as they load. */
const FEED_ROWS = 2048;

/**
 * Rows read from the database that weigh this much or more are written as a rows image
 * (rows-image.ts) for the next process: 16 MiB, the rows of about 200,000 files. Tests and
 * benchmarks may set another bound in bytes with TAKEBACK_ROWS_IMAGE_MIN_BYTES.
 */
function imageMinBytes(): number {
  const v = Number(process.env.TAKEBACK_ROWS_IMAGE_MIN_BYTES);
  return Number.isFinite(v) && v >= 0 ? v : 16 << 20;
}

/** A write of more folders than this at once lets the rows image go (written anew after the next full read) rather than naming them all as moved. */
const IMAGE_FOLLOW_MAX = 4096;

/** The rows image is written anew once more folders than this, or than a sixteenth of the rows, were written since it was. */
const IMAGE_MOVED_MIN = 1024;

/**
 * Where the rows go as they load, besides the map (the warm scan's check, begun before the last
 * row is read: checker.ts's beginCheck): `rows` in the order loaded, then `loaded` with the map
 * they went into; `cancel` when the rows did not load (this process's cache was current).
 */
export interface RowFeed {
  rows(dirs: string[], rows: Uint8Array[]): void;
  loaded(map: ReadonlyMap<string, Uint8Array>): void;
  cancel(): void;
}

/**
 * Adds rows to `out` and hands them to `feed` (when given) {@link FEED_ROWS} at a time; `end`
 * hands over the rest and the map.
 */
function rowSink(out: Map<string, Buffer>, feed?: RowFeed): { add(dir: string, row: Buffer): void; end(): void } {
  let dirs: string[] = [];
  let batch: Uint8Array[] = [];
  return {
    add(dir, row) {
      out.set(dir, row);
      if (!feed) return;
      dirs.push(dir);
      batch.push(row);
      if (batch.length < FEED_ROWS) return;
      feed.rows(dirs, batch);
      dirs = [];
      batch = [];
    },
    end() {
      if (!feed) return;
      if (batch.length > 0) feed.rows(dirs, batch);
      feed.loaded(out);
    },
  };
}

/**
 * Every row of `db`'s index, folder → its bytes, each a view of a few large blocks (32 MiB, in
 * huge pages where the kernel gives them: nativeRowArena; no larger than the database, which
 * holds them all, for a small index). Read a row at a time and copied, so that the buffer SQLite's
 * binding makes of each dies young: a million-file index holds 55,000 rows, and 55,000 buffers
 * kept alive each with memory of its own cost the process more to make, fault in and collect
 * than the reading itself (bench/RESULTS.md, "Issue 18 §3 on the 1,000,000-file tree: the CLI
 * bracket without a watcher").
 */
function loadRows(db: Db, feed?: RowFeed): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const sink = rowSink(out, feed);
  const dbBytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
  const size = Math.max(64 << 10, Math.min(ROW_BLOCK_BYTES, dbBytes));
  let block: Buffer | null = null;
  let at = 0;
  for (const r of db.prepare('SELECT dir, data FROM snapshot_rows').raw().iterate() as IterableIterator<[string, Buffer]>) {
    const data = r[1];
    let row = data;
    if (data.length <= size / 8) {
      if (!block || at + data.length > block.length) {
        block = (size === ROW_BLOCK_BYTES ? nativeRowArena(size) : null) ?? Buffer.allocUnsafeSlow(size);
        at = 0;
      }
      data.copy(block, at);
      row = block.subarray(at, at + data.length);
      at += data.length;
    }
    sink.add(r[0], row);
  }
  sink.end();
  return out;
}

/** The first position of sorted `list` whose string is not before `s` (by UTF-16 code units, as `<`). */
function lowerBound(list: readonly string[], s: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < s) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The counts in the header of every row of `db`'s index summed, reading each row's header alone
 * (bytes 32–56, see packed.ts), so that no row is held.
 */
function sumRowTotals(db: Db): RowTotals {
  const t = noTotals();
  const header = Buffer.alloc(HEADER_BYTES);
  for (const h of statement(db, 'SELECT substr(data, 33, 24) FROM snapshot_rows').pluck().iterate() as IterableIterator<Buffer>) {
    if (h.length !== 24) continue;
    h.copy(header, 32);
    addRowTotals(t, header);
  }
  return t;
}

/**
 * The rows of a snapshot index read a folder at a time as a scan asks for them: one point query
 * a folder looked up (kept for the rest of the scan), the folders' names only when a scan asks
 * for all of them. For a long-lived process whose watcher names what may have moved in a large
 * workspace (see {@link SnapshotIndex.lazy}): its hinted scans touch a few rows, and holding
 * every row (about 70 bytes a file) would be most of its memory. Made for one scan: another
 * process's writes meanwhile are not seen (the scan runs inside the journal's write transaction).
 */
export class LazyRows implements ReadonlyMap<string, Buffer> {
  private readonly got = new Map<string, Buffer | null>();
  private dirs: string[] | null = null;
  private count: number | null = null;

  constructor(private readonly db: Db) {}

  get(dir: string): Buffer | undefined {
    const had = this.got.get(dir);
    if (had !== undefined) return had ?? undefined;
    const row = statement(this.db, 'SELECT data FROM snapshot_rows WHERE dir = ?').pluck().get(dir) as Buffer | undefined;
    this.got.set(dir, row ?? null);
    return row;
  }

  has(dir: string): boolean {
    return this.get(dir) !== undefined;
  }

  /** Every folder's name, read once (a scan that asks for all of them: a folder removed, a walk). */
  private names(): string[] {
    this.dirs ??= statement(this.db, 'SELECT dir FROM snapshot_rows').pluck().all() as string[];
    return this.dirs;
  }

  get size(): number {
    this.count ??= this.dirs ? this.dirs.length : (statement(this.db, 'SELECT count(*) FROM snapshot_rows').pluck().get() as number);
    return this.count;
  }

  keys(): MapIterator<string> {
    return this.names()[Symbol.iterator]();
  }

  *values(): MapIterator<Buffer> {
    for (const k of this.names()) yield this.get(k)!;
  }

  *entries(): MapIterator<[string, Buffer]> {
    for (const k of this.names()) yield [k, this.get(k)!];
  }

  [Symbol.iterator](): MapIterator<[string, Buffer]> {
    return this.entries();
  }

  forEach(fn: (value: Buffer, key: string, map: ReadonlyMap<string, Buffer>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }

  /**
   * The folders of rows under folder `dir` (not '' and not `dir` itself), at any depth: one range
   * query on the folder key (every `dir/...` sorts between `dir/` and `dir0`, '0' following '/',
   * in SQLite's byte order as in JavaScript's).
   */
  under(dir: string): string[] {
    return statement(this.db, 'SELECT dir FROM snapshot_rows WHERE dir > ? AND dir < ?').pluck().all(`${dir}/`, `${dir}0`) as string[];
  }
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
   * a rolled-back write's generation can never come back and match other rows. `totals` are the
   * counts of every cached row summed (null until asked for), kept in step by {@link writeRows}:
   * a warm scan of a large index needs them for the rows it did not touch, and summing 50,000
   * rows' headers for every event costs more than the rest of a hinted scan. `rows` null: the
   * process holds the generation and the totals alone (see {@link lazy}).
   */
  private cache: { gen: string; rows: Map<string, Buffer> | null; totals: RowTotals | null; sorted: string[] | null } | null = null;

  /**
   * How this process's rows were last read, for {@link saveImage}: the generation, from the
   * database (`bytes` read) or from the rows image (`moved`: the folders read from the database
   * over it). Null when no full read happened since the last look.
   */
  private lastRead: { gen: string; from: 'db'; bytes: number } | { gen: string; from: 'image'; moved: number } | null = null;

  /** Where this process last read every row from: the database, the rows image (with the folders moved since from the database), or nowhere yet. */
  rowsReadFrom: 'database' | 'image' | null = null;

  /**
   * `db`: the journal's database. `imagePath`: where this workspace's rows image goes (see
   * rows-image.ts), beside the database; null for none.
   */
  constructor(
    private readonly db: Db,
    private readonly imagePath: string | null = null,
  ) {}

  /** The generation of the rows in the journal now (a random token, '' before any write; see {@link cache}). */
  generation(): string {
    const r = statement(this.db, "SELECT value FROM meta WHERE key = 'snapshot_gen'").get() as { value: string } | undefined;
    return r?.value ?? '';
  }

  private bump(): string {
    const gen = randomBytes(12).toString('hex');
    statement(this.db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('snapshot_gen', ?)").run(gen);
    return gen;
  }

  /**
   * The generation of the rows this process last read or wrote (a random token, see
   * {@link cache}), null when it holds none: right after {@link rows} or {@link writeRows}, the
   * journal's own.
   */
  get heldGeneration(): string | null {
    return this.cache?.gen ?? null;
  }

  /** Whether this process holds every row in memory (a map {@link rows} gave), rather than their generation and totals alone, or nothing. */
  get holdsRows(): boolean {
    return Boolean(this.cache?.rows);
  }

  /**
   * Every row: folder (workspace-relative, '' for the root) → its packed children. The map is this
   * process's cache, kept up to date by {@link writeRows}: callers only read it. `feed`, when
   * given, is handed the rows as they load (cancelled when none load: the cache was current).
   */
  rows(feed?: RowFeed): Map<string, Buffer> {
    const gen = this.generation();
    if (this.cache?.rows && gen !== '' && this.cache.gen === gen) {
      feed?.cancel();
      return this.cache.rows;
    }
    const imaged = gen !== '' && this.imagePath ? this.rowsFromImage(gen, feed) : null;
    const out = imaged?.rows ?? loadRows(this.db, feed);
    this.rowsReadFrom = imaged ? 'image' : 'database';
    if (imaged) this.lastRead = { gen, from: 'image', moved: imaged.moved };
    else if (gen !== '' && this.imagePath) {
      let bytes = 0;
      for (const b of out.values()) bytes += b.length;
      this.lastRead = { gen, from: 'db', bytes };
    }
    this.cache = gen === '' ? null : { gen, rows: out, totals: null, sorted: null };
    return out;
  }

  /** The image's token and the generation its rows and the folders named moved since stand for, from `meta`; null without one. */
  private imageMeta(): { token: string; gen: string } | null {
    const r = statement(this.db, "SELECT value FROM meta WHERE key = 'rows_image'").get() as { value: string } | undefined;
    const m = r ? /^([0-9a-f]+) ([0-9a-f]+)$/.exec(r.value) : null;
    return m ? { token: m[1]!, gen: m[2]! } : null;
  }

  /**
   * Every row at generation `gen`, read from the rows image and, for the folders written since
   * it was made (`snapshot_moved`), from the database (a folder named there with no row is gone);
   * handed to `feed` as {@link loadRows} does. Null, having fed nothing, when the image does not
   * stand for `gen` or cannot be read whole: the caller reads the database. Read in one
   * transaction (its own when none is under way), so that the generation, the image's meta and
   * the folders moved since agree; an image replaced meanwhile by another process carries
   * another token.
   */
  private rowsFromImage(gen: string, feed?: RowFeed): { rows: Map<string, Buffer>; moved: number } | null {
    const read = () => {
      const meta = this.imageMeta();
      if (!meta || meta.gen !== gen || this.generation() !== gen) return null;
      const image = readRowsImage(this.imagePath!, meta.token);
      if (!image) return null;
      const moved = statement(this.db, 'SELECT m.dir, r.data FROM snapshot_moved m LEFT JOIN snapshot_rows r ON r.dir = m.dir').raw().all() as [string, Buffer | null][];
      return { image, moved };
    };
    let got: ReturnType<typeof read>;
    try {
      got = this.db.inTransaction ? read() : this.db.transaction(read)();
    } catch {
      // A journal unreadable now: the database is read instead (and says why).
      return null;
    }
    if (!got) return null;
    const { image, moved } = got;
    const since = new Set<string>();
    for (const m of moved) since.add(m[0]);
    const out = new Map<string, Buffer>();
    const sink = rowSink(out, feed);
    for (let i = 0; i < image.dirs.length; i++) if (!since.has(image.dirs[i]!)) sink.add(image.dirs[i]!, image.rows[i]!);
    for (const m of moved) if (m[1]) sink.add(m[0], m[1]);
    sink.end();
    return { rows: out, moved: moved.length };
  }

  /**
   * Writes the rows this process holds as the workspace's rows image, when they were just read
   * whole from the database and weigh at least {@link imageMinBytes}, or read from an image over
   * which many folders have been written since (see {@link IMAGE_MOVED_MIN}); otherwise does
   * nothing. Call inside the write transaction of the scan that read them (scan-commit.ts, while
   * the check of their stats runs on other threads): the image's meta is written in it. An image
   * that cannot be written (a full disk) is left for another time; a database error is thrown.
   */
  saveImage(): void {
    const read = this.lastRead;
    const c = this.cache;
    this.lastRead = null;
    if (!this.imagePath || !read || !c?.rows || c.gen !== read.gen || !this.db.inTransaction) return;
    const due = read.from === 'db' ? read.bytes >= imageMinBytes() : read.moved > Math.max(IMAGE_MOVED_MIN, c.rows.size / 16);
    if (!due || this.generation() !== c.gen) return;
    const token = randomBytes(12).toString('hex');
    if (!writeRowsImage(this.imagePath, token, c.rows)) return;
    this.movedTable();
    statement(this.db, 'DELETE FROM snapshot_moved').run();
    statement(this.db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('rows_image', ?)").run(`${token} ${c.gen}`);
  }

  /** Makes the table of the folders moved since the image, where the journal has none yet (it came with the first image). */
  private movedTable(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS snapshot_moved (dir TEXT PRIMARY KEY) WITHOUT ROWID');
  }

  /**
   * Keeps the rows image standing for the rows after a write from generation `before` (whose
   * image meta was `image`) to `after`: the folders written or removed are named moved; a write
   * of very many folders, or an image already behind `before` (rows written by a takeback that
   * keeps no image), lets the image go instead.
   */
  private followImage(image: { token: string; gen: string }, before: string, after: string, dirs: readonly string[]): void {
    // Without the table of the folders moved since (a journal tampered with), the image cannot be kept in step.
    if (image.gen !== before || dirs.length > IMAGE_FOLLOW_MAX || !this.hasMovedTable()) {
      this.dropImage();
      return;
    }
    const add = statement(this.db, 'INSERT OR IGNORE INTO snapshot_moved (dir) VALUES (?)');
    for (const d of dirs) add.run(d);
    statement(this.db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('rows_image', ?)").run(`${image.token} ${after}`);
  }

  /** Whether the journal has the table of the folders moved since the image. */
  private hasMovedTable(): boolean {
    return statement(this.db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'snapshot_moved'").get() !== undefined;
  }

  /** Forgets the rows image (its meta and the folders moved since; the file is replaced by the next one written). */
  private dropImage(): void {
    statement(this.db, "DELETE FROM meta WHERE key = 'rows_image'").run();
    if (this.hasMovedTable()) statement(this.db, 'DELETE FROM snapshot_moved').run();
  }

  /**
   * The rows for a scan that touches few of them, without holding them all: this process's
   * cached map when it is current, else {@link LazyRows} (a point query a folder the scan looks
   * up), with every row's counts summed (`totals`: held with the generation, and kept in step by
   * {@link writeRows}; summed from the rows' headers when the generation moved) and the folders
   * under a folder (`under`). For a long-lived process's hinted scans of a large workspace,
   * after {@link release}.
   */
  lazy(): { rows: ReadonlyMap<string, Buffer>; totals: RowTotals; under: (dir: string) => string[] } {
    const gen = this.generation();
    const current = this.cache && gen !== '' && this.cache.gen === gen ? this.cache : null;
    if (current?.rows) {
      const rows = current.rows;
      return { rows, totals: this.totals(rows), under: (dir) => this.rowsUnder(rows, dir) };
    }
    let totals = current?.totals ?? null;
    if (!totals) {
      totals = sumRowTotals(this.db);
      this.cache = gen === '' ? null : { gen, rows: null, totals, sorted: null };
    }
    const rows = new LazyRows(this.db);
    return { rows, totals, under: (dir) => rows.under(dir) };
  }

  /**
   * Lets go of the rows this process holds, keeping their generation and their totals (see
   * {@link lazy}): the next {@link rows} reads them again.
   */
  release(): void {
    const c = this.cache;
    if (!c?.rows) return;
    this.cache = { gen: c.gen, rows: null, totals: c.totals ?? this.totals(c.rows), sorted: null };
  }

  /**
   * The cache when `rows` is its map. Its totals and sorted folders describe that map as it is
   * (only {@link writeRows} changes it, and keeps them in step), whatever another process wrote
   * since: no look at the generation, which would be a query for every hinted folder of a scan.
   */
  private cachedFor(rows: Map<string, Buffer>): NonNullable<SnapshotIndex['cache']> | null {
    return this.cache && this.cache.rows === rows ? this.cache : null;
  }

  /**
   * The counts of every row of `rows` (a map {@link rows} gave, by default the one it gives now)
   * summed: files, kept bytes, copied and pending files. Kept with this process's cached rows, so
   * a long-lived process sums them once and then only adds and takes away the rows it writes;
   * for rows not cached, summed anew. Callers only read the object.
   */
  totals(rows: Map<string, Buffer> = this.rows()): RowTotals {
    const c = this.cachedFor(rows);
    if (c?.totals) return c.totals;
    const t = noTotals();
    for (const buf of rows.values()) addRowTotals(t, buf);
    if (c) c.totals = t;
    return t;
  }

  /**
   * Writes rows and removes others (call inside a transaction). The cached map, when it is the
   * one `rows()` gave, is brought up to date here, so that the next `rows()` of this process
   * reads nothing. A write that throws (a full disk) leaves this process holding nothing: the
   * map and the totals it was changing in step would otherwise pass for the journal's (the
   * generation not yet moved) after the transaction rolled back.
   */
  writeRows(put: Map<string, Uint8Array>, del: Iterable<string>): void {
    try {
      const dels = Array.isArray(del) ? (del as string[]) : [...del];
      const image = this.imagePath ? this.imageMeta() : null;
      const before = image ? this.generation() : '';
      this.writeRowsHeld(put, dels);
      if (image) this.followImage(image, before, this.generation(), [...put.keys(), ...dels]);
    } catch (e) {
      this.cache = null;
      throw e;
    }
  }

  /** {@link writeRows}, the cache kept in step as it goes. */
  private writeRowsHeld(put: Map<string, Uint8Array>, del: Iterable<string>): void {
    const ins = statement(this.db, 'INSERT OR REPLACE INTO snapshot_rows (dir, data) VALUES (?, ?)');
    const rm = statement(this.db, 'DELETE FROM snapshot_rows WHERE dir = ?');
    const current = this.cache && this.cache.gen === this.generation() ? this.cache : null;
    const cached = current ? current.rows : null;
    const totals = current ? current.totals : null;
    const dels = Array.isArray(del) ? (del as string[]) : [...del];
    if (current && !cached && totals) {
      // Totals held without the rows: the rows replaced are read (a few, for a hinted scan's write) to take their counts away.
      const was = this.rowsOf(new Set([...put.keys(), ...dels]));
      for (const b of was.values()) addRowTotals(totals, b, -1);
      for (const b of put.values()) addRowTotals(totals, b);
      for (const d of dels) rm.run(d);
      for (const [d, b] of put) ins.run(d, b);
      this.cache = { gen: this.bump(), rows: null, totals, sorted: null };
      return;
    }
    // The sorted folders are kept in step a folder at a time for a few; past that, sorted anew when next asked for.
    let sorted = current && current.sorted && put.size + dels.length <= SORTED_EDITS_MAX ? current.sorted : null;
    for (const d of dels) {
      rm.run(d);
      const was = cached?.get(d);
      if (was && totals) addRowTotals(totals, was, -1);
      if (was && sorted) {
        const k = lowerBound(sorted, d);
        if (sorted[k] === d) sorted.splice(k, 1);
        else sorted = null;
      }
      cached?.delete(d);
    }
    for (const [d, b] of put) {
      ins.run(d, b);
      if (!cached) continue;
      const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
      const was = cached.get(d);
      if (totals) {
        if (was) addRowTotals(totals, was, -1);
        addRowTotals(totals, buf);
      }
      if (!was && sorted) sorted.splice(lowerBound(sorted, d), 0, d);
      cached.set(d, buf);
    }
    const gen = this.bump();
    this.cache = cached ? { gen, rows: cached, totals, sorted } : null;
  }

  /**
   * The folders of the rows of `rows` (a map {@link rows} gave) that lie under folder `dir`
   * (workspace-relative, not '': `dir/...` at any depth; not `dir` itself). Found by a binary
   * search in the folders sorted, kept with this process's cached rows: a watcher's hint naming
   * a folder costs the rows under it, not a pass over every row.
   */
  rowsUnder(rows: Map<string, Buffer>, dir: string): string[] {
    const c = this.cachedFor(rows);
    let sorted = c?.sorted ?? null;
    if (!sorted) {
      sorted = [...rows.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (c) c.sorted = sorted;
    }
    // Every folder that starts with `dir/` comes in one run of the sorted list, from where it would go.
    const prefix = `${dir}/`;
    const out: string[] = [];
    for (let k = lowerBound(sorted, prefix); k < sorted.length && sorted[k]!.startsWith(prefix); k++) out.push(sorted[k]!);
    return out;
  }

  /** The entry of workspace path `path`, or undefined when the index holds none: only its folder's row is read. */
  entry(path: string): IndexEntry | undefined {
    const [dir, name] = splitPath(path);
    const row = this.rowsOf([dir]).get(dir);
    const e = row ? decodeRow(row).find((x) => x.name === name) : undefined;
    return e ? toIndexEntry(e) : undefined;
  }

  /** Every entry, keyed by workspace-relative path. */
  load(): Map<string, IndexEntry> {
    return unpackIndex(this.rows());
  }

  /**
   * Writes entries that changed and removes paths that are gone (call inside a transaction).
   * Removing a folder removes what the index holds under it. See {@link updatePacked}.
   */
  update(upserts: Iterable<[string, IndexEntry]>, deletes: Iterable<string>): void {
    const packed: [string, PackedEntry][] = [];
    for (const [p, e] of upserts) packed.push([p, fromIndexEntry(splitPath(p)[1], e)]);
    this.updatePacked(packed, [...deletes]);
  }

  /**
   * {@link update} with entries already packed (`[workspace path, entry]`; the entry's `name` is
   * not read: the path's last segment is its name). Deletes apply first, then upserts, in order.
   * A folder entry gives the new folder a row (unknown stamp: the next scan lists it); a folder
   * removed, or replaced by a file or link, takes the rows under it along. Only the rows of the
   * folders touched are read (from this process's cache when current, else in one query) and
   * written; their untouched entries are copied as they are (see `patchRow`).
   */
  updatePacked(upserts: readonly (readonly [string, PackedEntry])[], deletes: readonly string[]): void {
    type Edit = RowEdit & { path: string };
    /** Folder → its edits, folders in the order first touched. */
    const edits = new Map<string, Edit[]>();
    const edit = (dir: string, e: Edit | null): void => {
      const l = edits.get(dir);
      if (!l) edits.set(dir, e ? [e] : []);
      else if (e) l.push(e);
    };
    // (Index loops and no destructuring: this runs once a command, before the JIT has warmed up.)
    for (let i = 0; i < deletes.length; i++) {
      const path = deletes[i]!;
      const k = path.lastIndexOf('/');
      edit(k < 0 ? '' : path.slice(0, k), { name: path.slice(k + 1), entry: null, path });
    }
    for (let i = 0; i < upserts.length; i++) {
      const path = upserts[i]![0];
      const entry = upserts[i]![1];
      const k = path.lastIndexOf('/');
      edit(k < 0 ? '' : path.slice(0, k), { name: path.slice(k + 1), entry, path });
      if (entry.type === 'dir') edit(path, null); // a new folder gets a row (listed by the next scan)
    }
    const have = this.rowsOf(edits.keys());
    const dropRows: string[] = [];
    const taken = (e: Edit) => dropRows.push(e.path);
    const patched = new Map<string, Buffer>();
    edits.forEach((list, dir) => {
      const buf = patchRow(have.get(dir) ?? null, list, taken);
      if (buf) patched.set(dir, buf);
    });
    const under = (d: string) => dropRows.some((r) => d === r || d.startsWith(`${r}/`));
    const del = dropRows.length > 0 ? (this.db.prepare('SELECT dir FROM snapshot_rows').pluck().all() as string[]).filter(under) : [];
    if (dropRows.length > 0) for (const d of [...patched.keys()]) if (under(d)) patched.delete(d);
    this.writeRows(patched, del);
  }

  /**
   * The rows of folders `dirs` (workspace-relative) that exist: this process's cached map when it
   * is current (it holds more; callers only read it), else just those, in one query.
   */
  private rowsOf(dirs: Iterable<string>): Map<string, Buffer> {
    if (this.cache?.rows && this.cache.gen === this.generation()) return this.cache.rows;
    const out = new Map<string, Buffer>();
    const list = [...dirs];
    if (list.length === 0) return out;
    const q = this.db.prepare('SELECT dir, data FROM snapshot_rows WHERE dir IN (SELECT value FROM json_each(?))').raw();
    for (const r of q.all(JSON.stringify(list)) as [string, Buffer][]) out.set(r[0], r[1]);
    return out;
  }

  /**
   * The packed entries the index holds for workspace paths `paths`, by path: only their folders'
   * rows are read (or this process's cached map, when current) and decoded.
   */
  packedAt(paths: Iterable<string>): Map<string, PackedEntry> {
    const byDir = new Map<string, Map<string, string>>();
    for (const p of paths) {
      const [dir, name] = splitPath(p);
      let names = byDir.get(dir);
      if (!names) byDir.set(dir, (names = new Map()));
      names.set(name, p);
    }
    const out = new Map<string, PackedEntry>();
    const rows = this.rowsOf(byDir.keys());
    for (const [dir, names] of byDir) {
      const row = rows.get(dir);
      if (!row) continue;
      for (const e of decodeRow(row)) {
        const p = names.get(e.name);
        if (p !== undefined) out.set(p, e);
      }
    }
    return out;
  }

  /** Forgets every entry (the workspace went over the limits). */
  clear(): void {
    this.db.prepare('DELETE FROM snapshot_rows').run();
    if (this.imagePath && this.imageMeta()) this.dropImage();
    this.bump();
    this.cache = null;
  }

  meta(): ScanMeta | null {
    const r = statement(this.db, "SELECT value FROM meta WHERE key = 'scan'").get() as { value: string } | undefined;
    return r ? (JSON.parse(r.value) as ScanMeta) : null;
  }

  setMeta(m: ScanMeta): void {
    statement(this.db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('scan', ?)").run(JSON.stringify(m));
  }

  /** Hashes of blobs the snapshot refers to (kept by the sweep: they are the "before" of the next command). */
  blobRefs(): string[] {
    const out: string[] = [];
    for (const buf of this.db.prepare('SELECT data FROM snapshot_rows').pluck().all() as Buffer[]) rowBlobRefs(buf, out);
    return out;
  }
}
