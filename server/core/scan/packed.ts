import type { FileType, GapReason } from '../types.js';

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

/*
 * The snapshot index, packed: one row a folder, holding the folder's own stat (as it was when its
 * listing was read) and its visible children. A warm scan checks a row without making an object
 * per path: it reads names and numbers straight from the buffer. Times are `Stats.mtimeMs` /
 * `ctimeMs` as Node computes them (`sec * 1e3 + nsec / 1e6`), so a plain (non-BigInt) lstat
 * compares directly.
 *
 * Row layout (little-endian):
 *   u8 version (1) | u8 0 | u16 0 | f64 mtimeMs | f64 ctimeMs | f64 ino   (NaN: not known: list again)
 *   u32 entries | u32 files (not folders) | u32 copied (files without a git reference)
 *   | u32 pending (files the baseline has not kept yet: gap `baseline-incomplete`) | f64 kept bytes
 *   entries, each:
 *     u8 type (0 file, 1 symlink, 2 folder) | u8 flags | u8 gap | u8 0 | u32 mode
 *     f64 size | f64 mtimeMs | f64 ctimeMs | f64 ino
 *     u16 name length | name (UTF-8)
 *     [32 bytes sha256: flag 1] [20 or 32 bytes git object id: flag 2 / 4] [u32 length | link text: flag 8]
 */

/** One path of a folder's row, decoded. */
export interface PackedEntry {
  name: string;
  type: FileType;
  mode: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  sha256: string | null;
  /** The git blob whose bytes the file had when git's index last matched it (its copy is in git, not in the journal). */
  git: string | null;
  target: string | null;
  gap: GapReason | null;
}

/** The stat of a folder when its listing was read (NaN fields: not known). */
export interface DirStamp {
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

/** Counts kept per row, summed for the limits without decoding entries. */
export interface RowCounts {
  entries: number;
  files: number;
  copied: number;
  /** Files whose bytes the baseline made in the background has not kept yet (gap `baseline-incomplete`). */
  pending: number;
  keptBytes: number;
}

/** Files, kept bytes, copied files and pending files summed over rows (for the limits and the meta). */
export interface RowTotals {
  files: number;
  bytes: number;
  copied: number;
  pending: number;
}

/** Totals of no rows. */
export function noTotals(): RowTotals {
  return { files: 0, bytes: 0, copied: 0, pending: 0 };
}

/** Adds (`sign` 1) or takes away (`sign` -1) the counts in row `buf`'s header to `t`, in place; returns `t`. */
export function addRowTotals(t: RowTotals, buf: Uint8Array, sign: 1 | -1 = 1): RowTotals {
  const c = rowCounts(buf);
  t.files += sign * c.files;
  t.bytes += sign * c.keptBytes;
  t.copied += sign * c.copied;
  t.pending += sign * c.pending;
  return t;
}

export const UNKNOWN_STAMP: DirStamp = Object.freeze({ mtimeMs: NaN, ctimeMs: NaN, ino: NaN });

/**
 * The stamp of a folder that could never be listed (no permission): its row holds no children,
 * and what was in it is not known. Listed again at every scan, like {@link UNKNOWN_STAMP}; when a
 * listing succeeds, what it finds is not taken for created (its state before is unknown).
 */
export const UNLISTED_STAMP: DirStamp = Object.freeze({ mtimeMs: NaN, ctimeMs: NaN, ino: -1 });

/** True when `stamp` is {@link UNLISTED_STAMP}: the folder's contents are not known. */
export function isUnlisted(stamp: DirStamp): boolean {
  return stamp.ino === -1 && Number.isNaN(stamp.mtimeMs);
}

const TYPES: FileType[] = ['file', 'symlink', 'dir'];
const TYPE_CODE: Record<FileType, number> = { file: 0, symlink: 1, dir: 2 };
const GAPS: (GapReason | null)[] = [null, 'too-large', 'secret', 'symlink-target', 'excluded', 'outside-workspace', 'workspace-too-large', 'unreadable', 'not-kept', 'name-not-utf8', 'baseline-incomplete'];
const GAP_CODE = new Map(GAPS.map((g, i) => [g, i]));
const PENDING_CODE = GAP_CODE.get('baseline-incomplete')!;

const F_SHA = 1;
const F_GIT20 = 2;
const F_GIT32 = 4;
const F_TARGET = 8;

export const HEADER_BYTES = 56;
const ENTRY_FIXED = 40;

/** Whether an entry counts against `maxWorkspaceFiles`: a file or link whose bytes are not in git. */
export function isCopied(e: { type: FileType; git: string | null }): boolean {
  return e.type !== 'dir' && !e.git;
}

/** An entry with its name and link text as UTF-8: what writing it takes. */
interface EntryBytes {
  e: PackedEntry;
  name: Buffer;
  target: Buffer | null;
}

function entryBytes(e: PackedEntry, name: string | Buffer): EntryBytes {
  return { e, name: typeof name === 'string' ? Buffer.from(name, 'utf8') : name, target: e.target !== null ? Buffer.from(e.target, 'utf8') : null };
}

/** The bytes an entry takes in a row. */
function entryLength(x: EntryBytes): number {
  return ENTRY_FIXED + 2 + x.name.length + (x.e.sha256 ? 32 : 0) + (x.e.git ? x.e.git.length / 2 : 0) + (x.target ? 4 + x.target.length : 0);
}

/**
 * Writes the fixed part of entry `e` at offset `o` of view `v` — type, flags (`extraFlags` and
 * those `e` itself sets), gap, mode, size, times, inode — and its name's length in bytes
 * `nameLen`; returns the offset where the name goes.
 */
function writeFixed(v: DataView, o: number, e: PackedEntry, extraFlags: number, nameLen: number): number {
  v.setUint8(o, TYPE_CODE[e.type]);
  v.setUint8(o + 1, (e.sha256 ? F_SHA : 0) | (e.git ? (e.git.length === 40 ? F_GIT20 : F_GIT32) : 0) | extraFlags);
  v.setUint8(o + 2, GAP_CODE.get(e.gap) ?? 0);
  v.setUint32(o + 4, e.mode, true);
  v.setFloat64(o + 8, e.size, true);
  v.setFloat64(o + 16, e.mtimeMs, true);
  v.setFloat64(o + 24, e.ctimeMs, true);
  v.setFloat64(o + 32, e.ino, true);
  v.setUint16(o + 40, nameLen, true);
  return o + ENTRY_FIXED + 2;
}

/** Writes an entry at offset `o` of `buf` (`v`: a view of it); returns the offset after it. */
function writeEntry(buf: Buffer, v: DataView, o: number, x: EntryBytes): number {
  const { e, name, target } = x;
  o = writeFixed(v, o, e, target ? F_TARGET : 0, name.length);
  buf.set(name, o);
  o += name.length;
  if (e.sha256) o += buf.write(e.sha256, o, 'hex');
  if (e.git) o += buf.write(e.git, o, 'hex');
  if (target) {
    v.setUint32(o, target.length, true);
    buf.set(target, o + 4);
    o += 4 + target.length;
  }
  return o;
}

/** Writes a row's header: version, the folder's stamp (`stamp`, or the stamp bytes of row `stamp` as they are) and counts. */
function writeHeader(buf: Buffer, v: DataView, stamp: DirStamp | Uint8Array, c: RowCounts): void {
  v.setUint8(0, 1);
  if (stamp instanceof Uint8Array) {
    buf.set(new Uint8Array(stamp.buffer, stamp.byteOffset + 8, 24), 8);
  } else {
    v.setFloat64(8, stamp.mtimeMs, true);
    v.setFloat64(16, stamp.ctimeMs, true);
    v.setFloat64(24, stamp.ino, true);
  }
  v.setUint32(32, c.entries, true);
  v.setUint32(36, c.files, true);
  v.setUint32(40, c.copied, true);
  v.setUint32(44, c.pending, true);
  v.setFloat64(48, c.keptBytes, true);
}

/** Adds an entry to a row's counts. */
function count(c: RowCounts, e: PackedEntry): void {
  c.entries++;
  if (e.type !== 'dir') c.files++;
  if (isCopied(e)) c.copied++;
  if (e.gap === 'baseline-incomplete') c.pending++;
  if (e.type === 'file' && e.sha256) c.keptBytes += e.size;
}

/**
 * Packs a folder's row. The names are measured and written in place (no buffer a name: a first
 * scan packs every path of the workspace); an entry with a link target goes through
 * {@link writeEntry}.
 */
export function encodeRow(stamp: DirStamp, entries: readonly PackedEntry[]): Buffer {
  let len = HEADER_BYTES;
  const nameLens = new Int32Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const n = Buffer.byteLength(e.name, 'utf8');
    nameLens[i] = n;
    len += ENTRY_FIXED + 2 + n + (e.sha256 ? 32 : 0) + (e.git ? e.git.length / 2 : 0) + (e.target !== null ? 4 + Buffer.byteLength(e.target, 'utf8') : 0);
  }
  const buf = Buffer.alloc(len);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const c: RowCounts = { entries: 0, files: 0, copied: 0, pending: 0, keptBytes: 0 };
  let o = HEADER_BYTES;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    count(c, e);
    if (e.target !== null) {
      o = writeEntry(buf, v, o, entryBytes(e, e.name));
      continue;
    }
    o = writeFixed(v, o, e, 0, nameLens[i]!);
    o += buf.write(e.name, o, 'utf8');
    if (e.sha256) o += buf.write(e.sha256, o, 'hex');
    if (e.git) o += buf.write(e.git, o, 'hex');
  }
  writeHeader(buf, v, stamp, c);
  return buf;
}

/** The offset just after the entry of a row that starts at offset `o` of `buf` (its fixed part, name, hash, git id and link text). */
export function entryEnd(buf: Uint8Array, o: number): number {
  const flags = buf[o + 1]!;
  let end = o + ENTRY_FIXED + 2 + (buf[o + 40]! | (buf[o + 41]! << 8));
  if (flags & F_SHA) end += 32;
  if (flags & F_GIT20) end += 20;
  else if (flags & F_GIT32) end += 32;
  if (flags & F_TARGET) end += 4 + (buf[end]! | (buf[end + 1]! << 8) | (buf[end + 2]! << 16)) + buf[end + 3]! * 0x1000000;
  return end;
}

/** A name with a lone UTF-16 surrogate: no name decoded from a row can equal it. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Past this many names edited in one row, {@link patchRow} finds them by decoding the row's names instead of comparing bytes. */
const COMPARE_MAX = 8;

/** One edit of a folder's row: entry `name` set to `entry` (whose own `name` is not read), or removed (`entry` null). */
export interface RowEdit {
  name: string;
  entry: PackedEntry | null;
}

/** The course of one name through a row's edits. */
interface Slot {
  name: string;
  /** The name as UTF-8. */
  bytes: Buffer;
  /** The offset of its entry in the original row and the offset after it (-1: the row had none). */
  at: number;
  end: number;
  /** The original entry is still there (in its place), holding `put` when set again. */
  kept: boolean;
  put: EntryBytes | null;
  /** Its entry among those added after the original ones, and when it was added there. */
  added: EntryBytes | null;
  seq: number;
}

/** The type a slot's name has now in a row (`v`: a view of the original row). */
function slotType(s: Slot, v: DataView | null): FileType | null {
  if (s.added) return s.added.e.type;
  if (!s.kept) return null;
  return s.put ? s.put.e.type : (TYPES[v!.getUint8(s.at)] ?? null);
}

/**
 * Applies `edits` to a folder's row (null: a folder with no row yet, which gets the unknown stamp:
 * listed by the next scan), in order, at byte level: the entries not edited are copied as they
 * are, never decoded, and the header's counts are adjusted by the entries taken out and put in.
 * The result is exactly `encodeRow` of the row's stamp and entries edited as a `Map` keyed by
 * name would be: a replaced entry keeps its place; a new entry, or one removed and then set
 * again, goes last, in the order set. `taken` hears each edit that takes a folder entry away (it
 * removes it, or sets a file or link in its place) at the time of the edit. Returns the new row,
 * or null when the row was there and no edit changed it (a removal of a name it does not hold).
 */
export function patchRow<E extends RowEdit>(row: Uint8Array | null, edits: readonly E[], taken?: (edit: E) => void): Buffer | null {
  const src = row === null ? null : Buffer.isBuffer(row) ? row : Buffer.from(row.buffer, row.byteOffset, row.byteLength);
  const v = src ? new DataView(src.buffer, src.byteOffset, src.byteLength) : null;
  // The names edited (a slot each), found in the original row in one walk.
  const slots: Slot[] = [];
  const slotOf = edits.length > COMPARE_MAX ? new Map<string, Slot>() : null;
  const byEdit: Slot[] = new Array(edits.length);
  for (let i = 0; i < edits.length; i++) {
    const name = edits[i]!.name;
    let s: Slot | undefined;
    if (slotOf) s = slotOf.get(name);
    else for (let k = 0; k < slots.length && !s; k++) if (slots[k]!.name === name) s = slots[k];
    if (!s) {
      s = { name, bytes: Buffer.from(name, 'utf8'), at: -1, end: -1, kept: false, put: null, added: null, seq: 0 };
      slots.push(s);
      slotOf?.set(name, s);
    }
    byEdit[i] = s;
  }
  if (src && v) {
    const n = v.getUint32(32, true);
    // A name with a lone surrogate matches no name in a row (its UTF-8 would match U+FFFD's).
    let left = 0;
    for (let k = 0; k < slots.length; k++) {
      if (LONE_SURROGATE.test(slots[k]!.name)) slots[k]!.at = -2;
      else left++;
    }
    let o = HEADER_BYTES;
    for (let i = 0; i < n && left > 0; i++) {
      // The entry's span: its fixed part, name, hash, git id and link text.
      const flags = src[o + 1]!;
      const len = src[o + 40]! | (src[o + 41]! << 8);
      let end = o + ENTRY_FIXED + 2 + len;
      if (flags & F_SHA) end += 32;
      if (flags & (F_GIT20 | F_GIT32)) end += flags & F_GIT20 ? 20 : 32;
      if (flags & F_TARGET) end += 4 + v.getUint32(end, true);
      let s: Slot | undefined;
      if (slotOf) {
        s = slotOf.get(src.toString('utf8', o + ENTRY_FIXED + 2, o + ENTRY_FIXED + 2 + len));
      } else {
        for (let k = 0; k < slots.length && !s; k++) {
          const x = slots[k]!;
          if (x.at === -1 && x.bytes.length === len && sameBytes(src, o + ENTRY_FIXED + 2, x.bytes)) s = x;
        }
      }
      if (s && s.at === -1) {
        s.at = o;
        s.end = end;
        s.kept = true;
        left--;
      }
      o = end;
    }
  }
  // The edits, in order.
  let changed = row === null;
  let seq = 0;
  for (let i = 0; i < edits.length; i++) {
    const ed = edits[i]!;
    const s = byEdit[i]!;
    const was = slotType(s, v);
    if (ed.entry === null) {
      if (was === 'dir') taken?.(ed);
      if (s.added) s.added = null;
      else if (s.kept) s.kept = false;
      else continue;
      changed = true;
      continue;
    }
    const x = entryBytes(ed.entry, s.bytes);
    if (s.added) s.added = x;
    else if (s.kept) s.put = x;
    else {
      s.added = x;
      s.seq = seq++;
    }
    changed = true;
    if (was === 'dir' && ed.entry.type !== 'dir') taken?.(ed);
  }
  if (!changed) return null;
  // The new row: the original's bytes less the entries taken out, plus those put in.
  const out: Slot[] = [];
  const added: Slot[] = [];
  for (let k = 0; k < slots.length; k++) {
    const s = slots[k]!;
    if (s.at >= 0 && (!s.kept || s.put)) out.push(s);
    if (s.added) added.push(s);
  }
  if (out.length > 1) out.sort((a, b) => a.at - b.at);
  if (added.length > 1) added.sort((a, b) => a.seq - b.seq);
  const c: RowCounts = v ? rowCounts(v) : { entries: 0, files: 0, copied: 0, pending: 0, keptBytes: 0 };
  let len = src ? src.length : HEADER_BYTES;
  for (let k = 0; k < out.length; k++) {
    const s = out[k]!;
    len -= s.end - s.at;
    const type = v!.getUint8(s.at);
    const flags = v!.getUint8(s.at + 1);
    c.entries--;
    if (type !== TYPE_CODE.dir) {
      c.files--;
      if (!(flags & (F_GIT20 | F_GIT32))) c.copied--;
    }
    if (v!.getUint8(s.at + 2) === PENDING_CODE) c.pending--;
    if (type === TYPE_CODE.file && flags & F_SHA) c.keptBytes -= v!.getFloat64(s.at + 8, true);
    if (s.kept) {
      len += entryLength(s.put!);
      count(c, s.put!.e);
    }
  }
  for (let k = 0; k < added.length; k++) {
    len += entryLength(added[k]!.added!);
    count(c, added[k]!.added!.e);
  }
  // Its own memory, as `encodeRow`'s (a slice of Node's shared pool would keep the whole pool alive in the rows cache).
  const buf = Buffer.alloc(len);
  const w = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let p = HEADER_BYTES;
  let from = HEADER_BYTES; // the original's bytes not yet copied start here
  for (let k = 0; k < out.length; k++) {
    const s = out[k]!;
    p = copyBytes(src!, from, s.at, buf, p);
    if (s.kept) p = writeEntry(buf, w, p, s.put!);
    from = s.end;
  }
  if (src) p = copyBytes(src, from, src.length, buf, p);
  for (let k = 0; k < added.length; k++) p = writeEntry(buf, w, p, added[k]!.added!);
  writeHeader(buf, w, src ?? UNKNOWN_STAMP, c);
  return buf;
}

/** Copies `src[from..to)` into `dst` at `at`; returns the offset after. */
function copyBytes(src: Buffer, from: number, to: number, dst: Buffer, at: number): number {
  if (to > from) dst.set(new Uint8Array(src.buffer, src.byteOffset + from, to - from), at);
  return at + to - from;
}

/** True when `buf` holds the bytes of `want` at offset `o`. */
function sameBytes(buf: Uint8Array, o: number, want: Uint8Array): boolean {
  for (let i = 0; i < want.length; i++) if (buf[o + i] !== want[i]) return false;
  return true;
}

/** The folder stat a row was listed with. */
export function rowStamp(buf: Uint8Array): DirStamp {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  return { mtimeMs: v.getFloat64(8, true), ctimeMs: v.getFloat64(16, true), ino: v.getFloat64(24, true) };
}

/** The counts a row carries in its header. */
export function rowCounts(buf: Uint8Array | DataView): RowCounts {
  // A Buffer (as the index's rows are) is read in place: no view made for each of 50,000 rows.
  if (Buffer.isBuffer(buf)) return { entries: buf.readUInt32LE(32), files: buf.readUInt32LE(36), copied: buf.readUInt32LE(40), pending: buf.readUInt32LE(44), keptBytes: buf.readDoubleLE(48) };
  const v = buf instanceof DataView ? buf : new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  return { entries: v.getUint32(32, true), files: v.getUint32(36, true), copied: v.getUint32(40, true), pending: v.getUint32(44, true), keptBytes: v.getFloat64(48, true) };
}

/** Every entry of a row, decoded. */
export function decodeRow(buf: Uint8Array): PackedEntry[] {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = v.getUint32(32, true);
  const out: PackedEntry[] = new Array(n);
  let o = HEADER_BYTES;
  for (let i = 0; i < n; i++) {
    const flags = v.getUint8(o + 1);
    const nameLen = v.getUint16(o + 40, true);
    const e: PackedEntry = {
      name: '',
      type: TYPES[v.getUint8(o)]!,
      mode: v.getUint32(o + 4, true),
      size: v.getFloat64(o + 8, true),
      mtimeMs: v.getFloat64(o + 16, true),
      ctimeMs: v.getFloat64(o + 24, true),
      ino: v.getFloat64(o + 32, true),
      sha256: null,
      git: null,
      target: null,
      gap: GAPS[v.getUint8(o + 2)] ?? null,
    };
    o += ENTRY_FIXED + 2;
    e.name = b.toString('utf8', o, o + nameLen);
    o += nameLen;
    if (flags & F_SHA) {
      e.sha256 = b.toString('hex', o, o + 32);
      o += 32;
    }
    if (flags & (F_GIT20 | F_GIT32)) {
      const gl = flags & F_GIT20 ? 20 : 32;
      e.git = b.toString('hex', o, o + gl);
      o += gl;
    }
    if (flags & F_TARGET) {
      const tl = v.getUint32(o, true);
      e.target = b.toString('utf8', o + 4, o + 4 + tl);
      o += 4 + tl;
    }
    out[i] = e;
  }
  return out;
}

/**
 * Row `buf` cut down to the entries named in `names` and those with a gap (a name that is not
 * UTF-8 cannot be named; gaps are few): its header as it is, with the entry count of the cut.
 * `index[k]` is the position in `buf` of the cut's entry `k`. Null when the cut would keep every
 * entry (the row itself serves).
 */
export function subRow(buf: Uint8Array, names: ReadonlySet<string>): { row: Uint8Array; index: number[] } | null {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = b.readUInt32LE(32);
  const spans: number[] = [];
  const index: number[] = [];
  let size = HEADER_BYTES;
  let o = HEADER_BYTES;
  for (let i = 0; i < n; i++) {
    const end = entryEnd(buf, o);
    const nameAt = o + ENTRY_FIXED + 2;
    if (buf[o + 2] !== 0 || names.has(b.toString('utf8', nameAt, nameAt + b.readUInt16LE(o + 40)))) {
      spans.push(o, end);
      index.push(i);
      size += end - o;
    }
    o = end;
  }
  if (index.length === n) return null;
  const row = new Uint8Array(size);
  row.set(buf.subarray(0, HEADER_BYTES));
  new DataView(row.buffer).setUint32(32, index.length, true);
  let at = HEADER_BYTES;
  for (let k = 0; k < spans.length; k += 2) {
    row.set(buf.subarray(spans[k]!, spans[k + 1]!), at);
    at += spans[k + 1]! - spans[k]!;
  }
  return { row, index };
}

/** Hashes of the kept blobs a row refers to (for the sweep), without decoding the rest. */
export function rowBlobRefs(buf: Uint8Array, out: string[]): void {
  for (const e of decodeRow(buf)) if (e.sha256) out.push(e.sha256);
}

/** Nanoseconds since the epoch (a decimal string, as `IndexEntry` keeps them) as Node's `*Ms` value. */
export function nsToMs(ns: string): number {
  if (/^\d{1,30}$/.test(ns)) {
    const sec = ns.length > 9 ? Number(ns.slice(0, -9)) : 0;
    return sec * 1000 + Number(ns.slice(-9)) / 1e6;
  }
  try {
    const b = BigInt(ns);
    let sec = b / 1_000_000_000n;
    let nsec = b % 1_000_000_000n;
    if (nsec < 0n) {
      sec -= 1n;
      nsec += 1_000_000_000n;
    }
    return Number(sec) * 1000 + Number(nsec) / 1e6;
  } catch {
    return NaN;
  }
}

/** Node's `*Ms` value as nanoseconds since the epoch (within a microsecond of the real value). */
export function msToNs(ms: number): string {
  if (!Number.isFinite(ms)) return '0';
  let sec = Math.floor(ms / 1000);
  let nsec = Math.round((ms - sec * 1000) * 1e6);
  if (nsec >= 1e9) {
    sec += 1;
    nsec -= 1e9;
  }
  return String(BigInt(sec) * 1_000_000_000n + BigInt(nsec));
}

/** A packed entry as the index's public shape. */
export function toIndexEntry(e: PackedEntry): IndexEntry {
  const out: IndexEntry = {
    type: e.type,
    size: e.size,
    mtime: msToNs(e.mtimeMs),
    ctime: msToNs(e.ctimeMs),
    ino: String(e.ino),
    mode: e.mode,
    sha256: e.sha256,
    target: e.target,
    gap: e.gap,
  };
  if (e.git) out.git = e.git;
  return out;
}

/** An index entry packed under `name`. */
export function fromIndexEntry(name: string, e: IndexEntry): PackedEntry {
  return {
    name,
    type: e.type,
    mode: e.mode,
    size: e.type === 'dir' ? 0 : e.size,
    mtimeMs: nsToMs(e.mtime),
    ctimeMs: nsToMs(e.ctime),
    ino: Number(e.ino),
    sha256: e.sha256,
    git: e.git ?? null,
    target: e.target,
    gap: e.gap,
  };
}

/** The folder part of a workspace path ('' for the root) and its last segment. */
export function splitPath(path: string): [string, string] {
  const i = path.lastIndexOf('/');
  return i < 0 ? ['', path] : [path.slice(0, i), path.slice(i + 1)];
}

/** Every entry of `rows`, keyed by workspace path. */
export function unpackIndex(rows: Map<string, Uint8Array>): Map<string, IndexEntry> {
  const out = new Map<string, IndexEntry>();
  for (const [dir, buf] of rows) {
    for (const e of decodeRow(buf)) out.set(dir === '' ? e.name : `${dir}/${e.name}`, toIndexEntry(e));
  }
  return out;
}
