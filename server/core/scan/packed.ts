import type { IndexEntry } from '../journal/snapshot-index.js';
import type { FileType, GapReason } from '../types.js';

/*
 * The snapshot index, packed: one row a folder, holding the folder's own stat (as it was when its
 * listing was read) and its visible children. A warm scan checks a row without making an object
 * per path: it reads names and numbers straight from the buffer. Times are `Stats.mtimeMs` /
 * `ctimeMs` as Node computes them (`sec * 1e3 + nsec / 1e6`), so a plain (non-BigInt) lstat
 * compares directly.
 *
 * Row layout (little-endian):
 *   u8 version (1) | u8 0 | u16 0 | f64 mtimeMs | f64 ctimeMs | f64 ino   (NaN: not known: list again)
 *   u32 entries | u32 files (not folders) | u32 copied (files without a git reference) | u32 0 | f64 kept bytes
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
  keptBytes: number;
}

export const UNKNOWN_STAMP: DirStamp = Object.freeze({ mtimeMs: NaN, ctimeMs: NaN, ino: NaN });

const TYPES: FileType[] = ['file', 'symlink', 'dir'];
const TYPE_CODE: Record<FileType, number> = { file: 0, symlink: 1, dir: 2 };
const GAPS: (GapReason | null)[] = [null, 'too-large', 'secret', 'symlink-target', 'excluded', 'outside-workspace', 'workspace-too-large', 'unreadable'];
const GAP_CODE = new Map(GAPS.map((g, i) => [g, i]));

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

/** Packs a folder's row. */
export function encodeRow(stamp: DirStamp, entries: readonly PackedEntry[]): Buffer {
  let len = HEADER_BYTES;
  const names: Buffer[] = [];
  const targets: (Buffer | null)[] = [];
  for (const e of entries) {
    const n = Buffer.from(e.name, 'utf8');
    names.push(n);
    const t = e.target !== null ? Buffer.from(e.target, 'utf8') : null;
    targets.push(t);
    len += ENTRY_FIXED + 2 + n.length + (e.sha256 ? 32 : 0) + (e.git ? e.git.length / 2 : 0) + (t ? 4 + t.length : 0);
  }
  const buf = Buffer.alloc(len);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  v.setUint8(0, 1);
  v.setFloat64(8, stamp.mtimeMs, true);
  v.setFloat64(16, stamp.ctimeMs, true);
  v.setFloat64(24, stamp.ino, true);
  let files = 0;
  let copied = 0;
  let kept = 0;
  let o = HEADER_BYTES;
  entries.forEach((e, i) => {
    if (e.type !== 'dir') files++;
    if (isCopied(e)) copied++;
    if (e.type === 'file' && e.sha256) kept += e.size;
    const name = names[i]!;
    const target = targets[i]!;
    const flags = (e.sha256 ? F_SHA : 0) | (e.git ? (e.git.length === 40 ? F_GIT20 : F_GIT32) : 0) | (target ? F_TARGET : 0);
    v.setUint8(o, TYPE_CODE[e.type]);
    v.setUint8(o + 1, flags);
    v.setUint8(o + 2, GAP_CODE.get(e.gap) ?? 0);
    v.setUint32(o + 4, e.mode, true);
    v.setFloat64(o + 8, e.size, true);
    v.setFloat64(o + 16, e.mtimeMs, true);
    v.setFloat64(o + 24, e.ctimeMs, true);
    v.setFloat64(o + 32, e.ino, true);
    v.setUint16(o + 40, name.length, true);
    o += ENTRY_FIXED + 2;
    name.copy(buf, o);
    o += name.length;
    if (e.sha256) o += buf.write(e.sha256, o, 'hex');
    if (e.git) o += buf.write(e.git, o, 'hex');
    if (target) {
      v.setUint32(o, target.length, true);
      target.copy(buf, o + 4);
      o += 4 + target.length;
    }
  });
  v.setUint32(32, entries.length, true);
  v.setUint32(36, files, true);
  v.setUint32(40, copied, true);
  v.setFloat64(48, kept, true);
  return buf;
}

/** The folder stat a row was listed with. */
export function rowStamp(buf: Uint8Array): DirStamp {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  return { mtimeMs: v.getFloat64(8, true), ctimeMs: v.getFloat64(16, true), ino: v.getFloat64(24, true) };
}

/** The counts a row carries in its header. */
export function rowCounts(buf: Uint8Array): RowCounts {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  return { entries: v.getUint32(32, true), files: v.getUint32(36, true), copied: v.getUint32(40, true), keptBytes: v.getFloat64(48, true) };
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
