// Packed snapshot rows of a real tree, as the scan writes them, for the tests of the warm-scan
// check: each folder's row with every entry's stat as it is now, laid out for the check.
import fs from 'node:fs';
import path from 'node:path';
import { addRowTotals, encodeRow, noTotals, type DirStamp, type PackedEntry, type RowTotals } from '../../server/core/scan/packed.js';
import type { Workspace } from '../../server/core/open-workspace.js';
import type { CheckInput, CheckResult } from '../../server/core/scan/stat-check.js';

const TYPE = (st: fs.Stats): PackedEntry['type'] => (st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'file');

/** Packed rows of every folder under `root` as they are now (each entry's stat; hashes and git ids made up, as flags to parse past). */
export function rowsOf(root: string): Map<string, Buffer> {
  const rows = new Map<string, Buffer>();
  const walk = (rel: string) => {
    const abs = rel ? path.join(root, rel) : root;
    const st = fs.lstatSync(abs);
    const stamp: DirStamp = { mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino };
    const entries: PackedEntry[] = [];
    // By the names' bytes: a name that is not UTF-8 is packed decoded (U+FFFD), as the scan packs it.
    for (const raw of fs.readdirSync(abs, { encoding: 'buffer' }).sort(Buffer.compare)) {
      const name = raw.toString('utf8');
      const s = fs.lstatSync(Buffer.concat([Buffer.from(`${abs}/`), raw]));
      const type = TYPE(s);
      const n = entries.length;
      entries.push({
        name,
        type,
        mode: s.mode & 0o7777,
        size: type === 'dir' ? 0 : s.size,
        mtimeMs: s.mtimeMs,
        ctimeMs: s.ctimeMs,
        ino: s.ino,
        sha256: type === 'file' && n % 2 === 0 ? 'ab'.repeat(32) : null,
        git: type === 'file' && n % 3 === 0 ? (n % 2 ? 'cd'.repeat(20) : 'ef'.repeat(32)) : null,
        target: type === 'symlink' ? fs.readlinkSync(path.join(abs, name)) : null,
        gap: null,
      });
      if (type === 'dir') walk(rel ? `${rel}/${name}` : name);
    }
    rows.set(rel, encodeRow(stamp, entries));
  };
  walk('');
  return rows;
}

/** `rows` laid out in one buffer for the check, with racy line `racyMs`. */
export function inputOf(root: string, rows: Map<string, Uint8Array>, racyMs: number): CheckInput {
  const dirs = [...rows.keys()];
  const offsets = new Int32Array(dirs.length + 1);
  let total = 0;
  dirs.forEach((d, i) => {
    offsets[i] = total;
    total += rows.get(d)!.length;
  });
  offsets[dirs.length] = total;
  const data = new Uint8Array(total);
  dirs.forEach((d, i) => data.set(rows.get(d)!, offsets[i]!));
  return { root, dirs, data, offsets, racyMs };
}

/** A result as sorted folder names and `folder#entry-index` pairs, comparable across checks. */
export function named(dirs: readonly string[], r: CheckResult): { dirty: string[]; suspects: string[] } {
  const suspects: string[] = [];
  for (let k = 0; k < r.suspects.length; k += 2) suspects.push(`${dirs[r.suspects[k]!]}#${r.suspects[k + 1]}`);
  return { dirty: r.dirty.map((i) => dirs[i]!).sort(), suspects: suspects.sort() };
}

/** The counts of every row `ws`'s snapshot holds, summed from the rows read anew from its journal. */
export function freshSum(ws: Workspace): RowTotals {
  const t = noTotals();
  for (const buf of ws.journal.db.prepare('SELECT data FROM snapshot_rows').pluck().all() as Buffer[]) addRowTotals(t, buf);
  return t;
}

/** A small deterministic generator of numbers in [0, 1) (the same run for the same seed). */
export function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}
