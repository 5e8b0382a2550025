import { endianness } from 'node:os';
import { nativeListRows, nativeNameTable } from './native.js';
import { HEADER_BYTES, entryEnd } from './packed.js';
import { S_IFDIR, S_IFREG } from './lstat.js';

/*
 * A full walk's listings of many folders at once, from the native module (native/scan-list.c):
 * each folder's stat and its children as the folder's row keeps them (each child's lstat, and
 * git's blob for a regular file git's index vouches for), taken in C on several threads. The walk
 * (scan.ts) lists a level of folders in one call; a first scan keeps most rows as they come
 * ({@link ListedRow}), and any other folder is read back here as names and stats
 * ({@link decodeListing}). Without the module the walk lists each folder itself (readdir, then an
 * lstat a child), to the same outcome.
 */

/** What the scan keeps of a path's stat (`mode` with its file type bits; times in ms, as Node's `*Ms`). */
export interface ListedStat {
  mode: number;
  size: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
}

/**
 * One folder as the native listing handed it back. `stat`: the folder's own, taken before its
 * listing (null: gone, or not a folder); `rules`: a child is named `.gitignore`; `row`: the
 * folder's row as packed.ts lays it out, one entry a child that could be stated, in the byte order
 * of the names (null: it could not be listed). An entry whose byte 3 (its mark) is not 0 is one
 * the row cannot keep as it is (a link, a file git's index does not vouch for, a name Node cannot
 * spell): 0x80 | its file type (`mode >> 12`). `row` is a view of the listing's buffer.
 */
export interface ListedRow {
  stat: ListedStat | null;
  rules: boolean;
  row: Buffer | null;
  /** The id of each entry's name in the walk's {@link ListedNames}, in the row's order (null: no row). */
  ids: Uint32Array | null;
}

/**
 * The names one walk's native listings have met, by id (native/scan-list.c's name table): each
 * decoded once, as Node decodes the file system's bytes, however many folders hold it. Null when
 * the module cannot make the table.
 */
export class ListedNames {
  /** The names by id. */
  readonly names: string[] = [];
  private constructor(readonly table: object) {}

  static make(): ListedNames | null {
    const table = nativeNameTable();
    return table ? new ListedNames(table) : null;
  }
}

/**
 * One folder's children as the walk looks at them one by one: `names` as Node decodes the file
 * system's bytes (null: it could not be listed), `stats[k]` the lstat of `names[k]`, `oids[k]`
 * the git blob git's index vouches for it by (null: none; the whole array null when git's index
 * was not asked). A child gone between the listing and its lstat is not there.
 */
export interface Listing {
  stat: ListedStat | null;
  names: string[] | null;
  stats: (ListedStat | null)[];
  oids: (string | null)[] | null;
}

/** Folders listed in one native call, at most (a level of a million-file tree is cut into parts). */
export const LIST_BATCH = 2048;

const STAT_BYTES = 40;
const RECORD_HEAD = 8 + STAT_BYTES + 4;
/** Name ids are read in place where the machine's order is the buffer's (little-endian). */
const LITTLE_ENDIAN = endianness() === 'LE';

function statAt(v: DataView, o: number): ListedStat | null {
  const mode = v.getFloat64(o, true);
  if (mode < 0) return null;
  return { mode, size: v.getFloat64(o + 8, true), ino: v.getFloat64(o + 16, true), mtimeMs: v.getFloat64(o + 24, true), ctimeMs: v.getFloat64(o + 32, true) };
}

/**
 * The listings of `dirs` (workspace-relative folders of `root`, at most {@link LIST_BATCH} is
 * best), in their order, each regular file matched against git's index `table` (a
 * `readGitTable`'s; null: none), the names new to `names` added to it; an entry is undefined
 * where the module left a folder to the caller (a path too long for it). Null when there is no
 * native listing: the caller lists each folder.
 */
export function listFolders(root: string, dirs: string[], table: object | null, names: ListedNames): (ListedRow | undefined)[] | null {
  if (dirs.length === 0) return [];
  const buf = nativeListRows(root, dirs, table, names.table);
  if (!buf || buf.length < 8) return null;
  // The names met first: the table gave them the ids after those it had.
  const added = buf.readUInt32LE(0);
  const recordsEnd = buf.readUInt32LE(4);
  for (let k = 0, p = recordsEnd; k < added; k++) {
    const len = buf.readUInt16LE(p);
    names.names.push(buf.toString('utf8', p + 2, p + 2 + len));
    p += 2 + len;
  }
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: (ListedRow | undefined)[] = new Array(dirs.length);
  let o = 8;
  for (let i = 0; i < dirs.length; i++) {
    if (o + RECORD_HEAD > recordsEnd) return null;
    const end = o + v.getUint32(o, true);
    if (end > recordsEnd) return null;
    const status = buf[o + 4];
    if (status === 3) {
      out[i] = undefined;
    } else {
      const rowEnd = o + RECORD_HEAD + v.getUint32(o + 8 + STAT_BYTES, true);
      const row = status === 2 ? buf.subarray(o + RECORD_HEAD, rowEnd) : null;
      let ids: Uint32Array | null = null;
      if (row) {
        if (row.length < HEADER_BYTES) return null;
        const count = row.readUInt32LE(32);
        const at = (rowEnd + 3) & ~3;
        if (at + 4 * count !== end) return null;
        if (LITTLE_ENDIAN && (buf.byteOffset + at) % 4 === 0) {
          ids = new Uint32Array(buf.buffer, buf.byteOffset + at, count);
        } else {
          ids = new Uint32Array(count);
          for (let k = 0; k < count; k++) ids[k] = buf.readUInt32LE(at + 4 * k);
        }
      }
      out[i] = { stat: status === 0 ? null : statAt(v, o + 8), rules: (buf[o + 5]! & 1) !== 0, row, ids };
    }
    o = end;
  }
  return o === recordsEnd ? out : null;
}

/**
 * The children of a listed folder `l` one by one (see {@link Listing}), named from the walk's
 * `names`; `git`: its row was matched against git's index.
 */
export function decodeListing(l: ListedRow, git: boolean, listed: ListedNames): Listing {
  const row = l.row;
  if (!row || !l.ids) return { stat: l.stat, names: null, stats: [], oids: null };
  const v = new DataView(row.buffer, row.byteOffset, row.byteLength);
  const count = v.getUint32(32, true);
  const names: string[] = new Array(count);
  for (let k = 0; k < count; k++) names[k] = listed.names[l.ids[k]!]!;
  const stats: ListedStat[] = new Array(count);
  const oids: (string | null)[] | null = git ? new Array(count) : null;
  let o = HEADER_BYTES;
  for (let k = 0; k < count; k++) {
    const type = row[o]!;
    const mark = row[o + 3]!;
    const perm = v.getUint32(o + 4, true);
    const nameLen = v.getUint16(o + 40, true);
    const end = entryEnd(row, o);
    stats[k] = {
      mode: (mark !== 0 ? (mark & 0xf) << 12 : type === 2 ? S_IFDIR : S_IFREG) | perm,
      size: v.getFloat64(o + 8, true),
      mtimeMs: v.getFloat64(o + 16, true),
      ctimeMs: v.getFloat64(o + 24, true),
      ino: v.getFloat64(o + 32, true),
    };
    if (oids) oids[k] = end > o + 42 + nameLen ? row.toString('hex', o + 42 + nameLen, end) : null;
    o = end;
  }
  return { stat: l.stat, names, stats, oids };
}
