// Teaching the snapshot index new states without decoding it: a folder's packed row is edited at
// byte level (`patchRow`), and must come out exactly as `encodeRow` of the edited entries would
// (same bytes: same order, same header counts). `SnapshotIndex.update` keeps its rules (a folder
// entry gives the new folder a row; a folder removed or replaced by a file takes the rows under
// it along), and `syncIndex` skips what the scan skips and leaves nothing for the next scan to
// report. Real temporary workspaces, real scans.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { syncIndex } from '../server/core/capture/index-sync.js';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openWorkspace, type Workspace } from '../server/core/open-workspace.js';
import { readState } from '../server/core/fsstate.js';
import { ScanFilter } from '../server/core/scan/filter.js';
import {
  decodeRow,
  encodeRow,
  fromIndexEntry,
  patchRow,
  rowCounts,
  rowStamp,
  splitPath,
  UNKNOWN_STAMP,
  type DirStamp,
  type PackedEntry,
  type RowCounts,
  type RowEdit,
} from '../server/core/scan/packed.js';
import type { IndexEntry } from '../server/core/scan/snapshot-index.js';
import { sandbox } from './support/takeback.js';

const SHA = (c: string) => c.repeat(64);
const GIT20 = (c: string) => c.repeat(40);
const GIT32 = (c: string) => c.repeat(64);

function entry(name: string, over: Partial<PackedEntry> = {}): PackedEntry {
  return { name, type: 'file', mode: 0o644, size: 10, mtimeMs: 1_700_000_000_123.456, ctimeMs: 1_700_000_000_789.25, ino: 4242, sha256: SHA('a'), git: null, target: null, gap: null, ...over };
}

const STAMP: DirStamp = { mtimeMs: 1_690_000_000_001.5, ctimeMs: 1_690_000_000_002.75, ino: 99 };

/** What the edits give, the slow way: the row decoded into a Map, edited, encoded again. */
function expected(row: Buffer | null, edits: readonly RowEdit[]): { buf: Buffer | null; taken: number[] } {
  const m = new Map((row ? decodeRow(row) : []).map((e) => [e.name, e]));
  let changed = row === null;
  const taken: number[] = [];
  edits.forEach((ed, i) => {
    const was = m.get(ed.name);
    if (ed.entry === null) {
      if (was?.type === 'dir') taken.push(i);
      if (m.delete(ed.name)) changed = true;
      return;
    }
    m.set(ed.name, { ...ed.entry, name: ed.name });
    changed = true;
    if (was?.type === 'dir' && ed.entry.type !== 'dir') taken.push(i);
  });
  return { buf: changed ? encodeRow(row ? rowStamp(row) : UNKNOWN_STAMP, [...m.values()]) : null, taken };
}

function patched(row: Buffer | null, edits: readonly RowEdit[]): { buf: Buffer | null; taken: number[] } {
  const taken: number[] = [];
  const buf = patchRow(row, edits, (e) => taken.push(edits.indexOf(e)));
  return { buf, taken };
}

function countsOf(entries: PackedEntry[]): RowCounts {
  const c = { entries: entries.length, files: 0, copied: 0, pending: 0, keptBytes: 0 };
  for (const e of entries) {
    if (e.type !== 'dir') c.files++;
    if (e.gap === 'baseline-incomplete') c.pending++;
    if (e.type !== 'dir' && !e.git) c.copied++;
    if (e.type === 'file' && e.sha256) c.keptBytes += e.size;
  }
  return c;
}

const set = (name: string, over: Partial<PackedEntry> = {}): RowEdit => ({ name, entry: entry('ignored', over) });
const del = (name: string): RowEdit => ({ name, entry: null });

describe('patchRow', () => {
  const row = encodeRow(STAMP, [
    entry('a.ts', { size: 100 }),
    entry('bb.ts', { sha256: null, git: GIT20('1'), size: 7 }),
    entry('link', { type: 'symlink', sha256: null, target: '../somewhere/else', size: 0 }),
    entry('sub', { type: 'dir', sha256: null, size: 0, mode: 0o755 }),
    entry('big.bin', { sha256: null, gap: 'too-large', size: 5_000_000_000 }),
    entry('héllo wörld.md', { size: 3 }),
    entry('sha256-git.ts', { git: GIT32('2'), size: 11 }),
    entry('zz', { size: 1 }),
    entry('pending.txt', { sha256: null, gap: 'baseline-incomplete', size: 40 }),
  ]);

  const cases: [string, RowEdit[]][] = [
    ['replaces an entry in place', [set('a.ts', { size: 5, sha256: SHA('b'), mtimeMs: 1.5 })]],
    ['replaces with a longer entry (a git reference, a link target)', [set('zz', { git: GIT20('3') }), set('a.ts', { type: 'symlink', sha256: null, target: 'a much longer link target than before', size: 0 })]],
    ['replaces a git-referenced file by a kept one', [set('bb.ts', { size: 70 })]],
    ['removes entries', [del('bb.ts'), del('zz')]],
    ['removes the first and the last', [del('a.ts'), del('zz')]],
    ['adds names of other lengths', [set('a.tsx'), set('a'), set('a-much-longer-name-than-any-other.ts', { size: 123 })]],
    ['a removed entry set again goes last', [del('a.ts'), set('a.ts', { size: 1 })]],
    ['an added entry set twice keeps its place', [set('new1'), set('new2'), set('new1', { size: 2 })]],
    ['an added entry removed then set goes last', [set('new1'), set('new2'), del('new1'), set('new1')]],
    ['a folder replaced by a file', [set('sub', { size: 4 })]],
    ['a folder removed', [del('sub')]],
    ['a folder set again as a folder', [set('sub', { type: 'dir', sha256: null, size: 0, mode: 0o700 })]],
    ['a file replaced by a folder, then by a file', [set('a.ts', { type: 'dir', sha256: null, size: 0 }), set('a.ts')]],
    ['a non-ASCII name', [set('héllo wörld.md', { size: 33 }), set('日本語.txt', { size: 9 })]],
    ['a link retargeted', [set('link', { type: 'symlink', sha256: null, target: 'x', size: 0 })]],
    ['a name with a lone surrogate is new', [set('bad\uD800name'), set('zz', { size: 2 })]],
    ['a kept file becomes a gap', [set('a.ts', { sha256: null, gap: 'secret', size: 100 })]],
    ['a file the baseline had not kept is kept', [set('pending.txt', { size: 40 })]],
    ['a file the baseline had not kept goes, another comes', [del('pending.txt'), set('later.txt', { sha256: null, gap: 'baseline-incomplete' })]],
    ['nothing to remove', [del('not-there')]],
    ['no edits', []],
    ['many edits (found by decoded name)', [...'abcdefghij'.split('').map((c) => set(`${c}.new`)), set('zz', { size: 5 }), del('a.ts'), del('sub'), set('link', { size: 1 })]],
  ];

  for (const [what, edits] of cases) {
    it(what, () => {
      const want = expected(row, edits);
      const got = patched(row, edits);
      expect(got.taken).toEqual(want.taken);
      if (want.buf === null) {
        expect(got.buf).toBeNull();
        return;
      }
      expect(got.buf).not.toBeNull();
      expect(got.buf!.toString('hex')).toBe(want.buf.toString('hex'));
      const entries = decodeRow(got.buf!);
      expect(rowCounts(got.buf!)).toEqual(countsOf(entries));
      expect(rowStamp(got.buf!)).toEqual(STAMP);
    });
  }

  it('gives a folder with no row a new row (unknown stamp), even with no edit', () => {
    for (const edits of [[], [set('x'), set('y', { type: 'dir', sha256: null, size: 0 })], [del('x')]]) {
      const got = patchRow(null, edits)!;
      expect(got.toString('hex')).toBe(expected(null, edits).buf!.toString('hex'));
      expect(Number.isNaN(rowStamp(got).mtimeMs)).toBe(true);
    }
  });

  it('matches the Map-and-encode result on random rows and edit sequences', () => {
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const names = ['a', 'b.ts', 'ccc', 'dddd.js', 'é', 'folder', 'x'.repeat(40), 'n1', 'n2', 'n3', 'ü.md', 'z'];
    const randomEntry = (name: string): PackedEntry => {
      const kind = rnd(6);
      if (kind === 0) return entry(name, { type: 'dir', sha256: null, size: 0, mode: 0o755 });
      if (kind === 1) return entry(name, { type: 'symlink', sha256: null, target: 't'.repeat(rnd(30)), size: 0 });
      if (kind === 2) return entry(name, { sha256: null, git: rnd(2) ? GIT20('c') : GIT32('d'), size: rnd(1000) });
      if (kind === 3) return entry(name, { sha256: null, gap: rnd(2) ? 'too-large' : 'baseline-incomplete', size: rnd(1e9) });
      return entry(name, { size: rnd(100000), sha256: SHA(String(rnd(10))), ino: rnd(1e6), mtimeMs: rnd(1e12) + 0.5 });
    };
    for (let round = 0; round < 400; round++) {
      const present = names.filter(() => rnd(2) === 0);
      const row = rnd(10) === 0 ? null : encodeRow({ mtimeMs: rnd(1e12), ctimeMs: rnd(1e12), ino: rnd(1e6) }, present.map(randomEntry));
      const edits: RowEdit[] = [];
      const n = rnd(14);
      for (let i = 0; i < n; i++) {
        const name = names[rnd(names.length)]!;
        edits.push(rnd(3) === 0 ? del(name) : { name, entry: randomEntry('unused') });
      }
      const want = expected(row, edits);
      const got = patched(row, edits);
      expect(got.taken, `round ${round}`).toEqual(want.taken);
      expect(got.buf?.toString('hex'), `round ${round}`).toBe(want.buf?.toString('hex'));
      if (got.buf) expect(rowCounts(got.buf)).toEqual(countsOf(decodeRow(got.buf)));
    }
  });
});

/** `SnapshotIndex.update` as it was: every touched row decoded, edited as a Map, encoded again. */
function expectedUpdate(rows: Map<string, Buffer>, upserts: [string, IndexEntry][], deletes: string[]): Map<string, string> {
  const out = new Map([...rows].map(([d, b]) => [d, b.toString('hex')]));
  const touched = new Map<string, { stamp: DirStamp; entries: Map<string, PackedEntry>; changed: boolean }>();
  const rowOf = (dir: string) => {
    let r = touched.get(dir);
    if (!r) {
      const buf = rows.get(dir);
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
    if (e.type === 'dir') rowOf(p);
    if (was?.type === 'dir' && e.type !== 'dir') dropRows.push(p);
  }
  const under = (d: string) => dropRows.some((r) => d === r || d.startsWith(`${r}/`));
  for (const d of [...out.keys()]) if (under(d)) out.delete(d);
  for (const [dir, row] of touched) if (row.changed && !under(dir)) out.set(dir, encodeRow(row.stamp, [...row.entries.values()]).toString('hex'));
  return out;
}

const hexRows = (e: Workspace) => new Map([...e.journal.snapshot.rows()].map(([d, b]) => [d, b.toString('hex')]));

describe('SnapshotIndex.update', () => {
  it('writes exactly what decoding, editing and encoding every touched row would', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    sb.write('src/one.ts', 'one\n');
    sb.write('src/two.ts', 'two\n');
    sb.write('src/deep/x.ts', 'x\n');
    sb.write('src/deep/er/y.ts', 'y\n');
    sb.write('gone/g.txt', 'g\n');
    sb.write('gone/sub/h.txt', 'h\n');
    fs.symlinkSync('a.txt', sb.abs('link'));
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      opened.journal.write(() => scanAndCommit(opened));
      const file = (size: number, sha: string): IndexEntry => ({ type: 'file', size, mtime: '1700000000123456789', ctime: '1700000000987654321', ino: '777', mode: 0o644, sha256: SHA(sha), target: null, gap: null });
      const dir: IndexEntry = { type: 'dir', size: 0, mtime: '1', ctime: '2', ino: '3', mode: 0o755, sha256: null, target: null, gap: null };
      const upserts: [string, IndexEntry][] = [
        ['a.txt', file(3, 'b')], // replaced
        ['src/a-longer-new-name.ts', file(30, 'c')], // added
        ['src/deep', file(5, 'd')], // a folder replaced by a file: its rows go
        ['newdir', dir], // a new folder: a row of its own
        ['link', { type: 'symlink', size: 0, mtime: '5', ctime: '6', ino: '7', mode: 0o777, sha256: null, target: 'src/one.ts', gap: null }],
        ['src/two.ts', { ...file(4, 'e'), git: GIT20('f'), sha256: null }],
      ];
      const deletes = ['src/one.ts', 'gone', 'nothing/here.txt'];
      const before = new Map(opened.journal.snapshot.rows());
      const want = expectedUpdate(before, upserts, deletes);
      opened.journal.write(() => opened.journal.snapshot.update(upserts, deletes));
      const got = hexRows(opened);
      expect(new Map([...got].sort())).toEqual(new Map([...want].sort()));
      // The rules, spelled out.
      expect(got.has('src/deep')).toBe(false);
      expect(got.has('src/deep/er')).toBe(false);
      expect(got.has('gone')).toBe(false);
      expect(got.has('gone/sub')).toBe(false);
      expect(decodeRow(opened.journal.snapshot.rows().get('newdir')!)).toEqual([]);
      expect(Number.isNaN(rowStamp(opened.journal.snapshot.rows().get('newdir')!).mtimeMs)).toBe(true);
      expect(decodeRow(opened.journal.snapshot.rows().get('src')!).map((e) => e.name)).toEqual(['deep', 'two.ts', 'a-longer-new-name.ts']);
      // A second opening (another process) reads the same rows from the journal.
      const other = openWorkspace({ workspace: sb.ws, env: sb.env });
      try {
        expect(hexRows(other)).toEqual(got);
      } finally {
        other.journal.close();
      }
    } finally {
      opened.journal.close();
    }
  });

  it('reads the rows from the journal when its cache is stale (another process wrote)', () => {
    const sb = sandbox();
    sb.write('d/a.txt', 'a\n');
    sb.write('d/b.txt', 'b\n');
    const sidecar = openWorkspace({ workspace: sb.ws, env: sb.env });
    const cli = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      sidecar.journal.write(() => scanAndCommit(sidecar));
      sidecar.journal.snapshot.rows(); // cached
      const e: IndexEntry = { type: 'file', size: 2, mtime: '10', ctime: '20', ino: '30', mode: 0o644, sha256: SHA('9'), target: null, gap: null };
      cli.journal.write(() => cli.journal.snapshot.update([['d/a.txt', e]], []));
      sidecar.journal.write(() => sidecar.journal.snapshot.update([['d/c.txt', e]], ['d/b.txt']));
      expect(decodeRow(cli.journal.snapshot.rows().get('d')!).map((x) => [x.name, x.ino])).toEqual([
        ['a.txt', 30],
        ['c.txt', 30],
      ]);
    } finally {
      sidecar.journal.close();
      cli.journal.close();
    }
  });
});

describe('syncIndex', () => {
  it('skips exactly what the scan filter skips', () => {
    const sb = sandbox({ git: true });
    sb.write('.gitignore', '*.log\nbuild-out/\n/top-only.txt\n');
    sb.write('a/.gitignore', '*.tmp\n!keep.log\n');
    sb.write('a/b/.gitignore', '!*.tmp\nsecret/\n');
    fs.appendFileSync(sb.abs('.git/info/exclude'), 'local.txt\n');
    const paths = [
      'x.txt', 'x.log', 'top-only.txt', 'a/top-only.txt', 'local.txt', 'a/local.txt', 'a/keep.log', 'a/k.tmp', 'a/b/k.tmp', 'a/b/c/k.tmp',
      'a/b/secret', 'a/b/secret/s.txt', 'build-out', 'build-out/o.txt', 'a/build-out/o.txt', 'node_modules/p/i.js', 'a/node_modules',
      'dist/x.js', 'keep/dist/y.js', '.git/config', 'a/b/c/d/e/f.txt', 'a/x.log/inner.txt', 'a//b.txt', '../up.txt', 'a/../b.txt', '',
    ];
    /** The rules applied segment by segment, each folder's from the root down (what the scan's listing does). */
    const bySegments = (filter: ScanFilter, rel: string, isDir: boolean): boolean => {
      const segs = rel.split('/');
      const parents: string[] = [''];
      for (let i = 0; i < segs.length; i++) {
        const sub = segs.slice(0, i + 1).join('/');
        if (filter.isExcluded(segs[i]!, sub)) return true;
        if (filter.ignoredBy(sub, i === segs.length - 1 ? isDir : true, parents.slice())) return true;
        parents.push(sub);
      }
      return false;
    };
    for (const isDir of [false, true]) {
      const reference = new ScanFilter(sb.ws, ['.git', 'node_modules', 'dist'], ['keep/dist']);
      const filter = { skips: (p: string, d: boolean) => bySegments(reference, p, d) };
      const cache = new ScanFilter(sb.ws, ['.git', 'node_modules', 'dist'], ['keep/dist']);
      // A path no scan could list may throw (the rules refuse it): then both throw.
      const outcome = (f: () => boolean) => {
        try {
          return f();
        } catch (e) {
          return (e as Error).message;
        }
      };
      for (const p of paths) expect(outcome(() => cache.skips(p, isDir)), `${p} ${isDir}`).toBe(outcome(() => filter.skips(p, isDir)));
    }
  });

  it('teaches the index the new states: the next scan reports nothing', () => {
    const sb = sandbox();
    for (let d = 0; d < 6; d++) for (let f = 0; f < 5; f++) sb.write(`pkg/m${d}/f${f}.ts`, `export const v = ${d * 10 + f};\n`);
    sb.write('pkg/m0/.gitignore', '*.gen\n');
    sb.write('top.txt', 'top\n');
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      opened.journal.write(() => scanAndCommit(opened));
      // Another writer (an undo, a file tool) changes files, makes and removes some, and says what it did.
      const changed: string[] = [];
      for (let d = 0; d < 6; d++) {
        sb.write(`pkg/m${d}/f1.ts`, `export const v = 'changed ${d}';\n`);
        changed.push(`pkg/m${d}/f1.ts`);
      }
      sb.write('pkg/m2/a-new-file-with-a-long-name.ts', 'new\n');
      sb.write('pkg/m0/x.gen', 'ignored\n');
      fs.rmSync(sb.abs('pkg/m3/f4.ts'));
      fs.rmSync(sb.abs('pkg/m5'), { recursive: true });
      fs.mkdirSync(sb.abs('pkg/fresh'));
      fs.rmSync(sb.abs('top.txt'));
      fs.symlinkSync('pkg/m0/f0.ts', sb.abs('top.txt'));
      changed.push('pkg/m2/a-new-file-with-a-long-name.ts', 'pkg/m0/x.gen', 'pkg/m3/f4.ts', 'pkg/m5', 'pkg/m5/f0.ts', 'pkg/fresh', 'top.txt');
      const states = changed.map((p) => ({ path: p, state: readState(sb.abs(p), { blobs: opened.journal.blobs, maxFileBytes: opened.config.maxFileBytes }).state }));
      opened.journal.write(() => syncIndex(opened, states));
      const rows = opened.journal.snapshot.rows();
      expect(rows.has('pkg/m5')).toBe(false);
      expect(rows.has('pkg/fresh')).toBe(true);
      expect(decodeRow(rows.get('pkg/m0')!).some((e) => e.name === 'x.gen')).toBe(false);
      const link = decodeRow(rows.get('')!).find((e) => e.name === 'top.txt')!;
      expect(link.type).toBe('symlink');
      expect(link.target).toBe('pkg/m0/f0.ts');
      const f1 = decodeRow(rows.get('pkg/m1')!).find((e) => e.name === 'f1.ts')!;
      const st = fs.lstatSync(sb.abs('pkg/m1/f1.ts'));
      expect([f1.mtimeMs, f1.ctimeMs, f1.ino, f1.size]).toEqual([st.mtimeMs, st.ctimeMs, st.ino, st.size]);
      for (const [, buf] of rows) expect(rowCounts(buf)).toEqual(countsOf(decodeRow(buf)));
      const next = opened.journal.write(() => scanAndCommit(opened));
      expect(next.changes.map((c) => c.path)).toEqual([]);
    } finally {
      opened.journal.close();
    }
  });
});
