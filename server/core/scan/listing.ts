import { nativeListDirs } from './native.js';

/*
 * A full walk's listings of many folders at once, from the native module (native/scan-list.c):
 * each folder's stat and each child's lstat, taken in C on several threads. The walk (scan.ts)
 * lists a level of folders in one call and reads each folder's record here; without the module
 * it lists each folder itself (readdir, then an lstat a child), to the same outcome.
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
 * One folder as the native listing saw it. `stat`: the folder's own, taken before its listing
 * (null: gone, or not a folder); `names`: its children as Node decodes the file system's bytes
 * (null: it could not be listed); `stats[k]`: the lstat of `names[k]` (null: gone since).
 */
export interface Listing {
  stat: ListedStat | null;
  names: string[] | null;
  stats: (ListedStat | null)[];
}

/** Folders listed in one native call, at most (a level of a million-file tree is cut into parts). */
export const LIST_BATCH = 2048;

const STAT_BYTES = 40;

function statAt(v: DataView, o: number): ListedStat | null {
  const mode = v.getFloat64(o, true);
  if (mode < 0) return null;
  return { mode, size: v.getFloat64(o + 8, true), ino: v.getFloat64(o + 16, true), mtimeMs: v.getFloat64(o + 24, true), ctimeMs: v.getFloat64(o + 32, true) };
}

/**
 * The listings of `dirs` (workspace-relative folders of `root`, at most {@link LIST_BATCH} is
 * best), in their order; an entry is undefined where the module left a folder to the caller (a
 * path too long for it). Null when there is no native listing: the caller lists each folder.
 */
export function listFolders(root: string, dirs: string[]): (Listing | undefined)[] | null {
  if (dirs.length === 0) return [];
  const buf = nativeListDirs(root, dirs);
  if (!buf) return null;
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: (Listing | undefined)[] = [];
  let o = 0;
  for (let i = 0; i < dirs.length; i++) {
    if (o + 4 > buf.length) return null;
    const end = o + v.getUint32(o, true);
    const status = buf[o + 4];
    if (status === 3) {
      out.push(undefined);
      o = end;
      continue;
    }
    const stat = status === 0 ? null : statAt(v, o + 8);
    if (status !== 2) {
      out.push({ stat, names: null, stats: [] });
      o = end;
      continue;
    }
    const count = v.getUint32(o + 8 + STAT_BYTES, true);
    const names: string[] = new Array(count);
    const stats: (ListedStat | null)[] = new Array(count);
    let p = o + 8 + STAT_BYTES + 4;
    for (let k = 0; k < count; k++) {
      stats[k] = statAt(v, p);
      const nl = v.getUint16(p + STAT_BYTES, true);
      names[k] = buf.toString('utf8', p + STAT_BYTES + 2, p + STAT_BYTES + 2 + nl);
      p += STAT_BYTES + 2 + nl;
    }
    if (p !== end) return null;
    out.push({ stat, names, stats });
    o = end;
  }
  return out;
}
