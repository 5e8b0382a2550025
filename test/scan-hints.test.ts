// The warm scan's seam for a file watcher (scan/checker.ts, after git's fsmonitor): with hints it
// checks only the rows the hinted paths fall in; with none, or with hints from a watcher that was
// not watching before the last scan's racy line, it checks every row.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openWorkspace } from '../server/core/open-workspace.js';
import { hintedCheck, hintedRows } from '../server/core/scan/checker.js';
import { sandbox } from './support/takeback.js';

describe('change hints for the warm scan', () => {
  it('narrow the check to the rows of the hinted paths; none, or hints that begin after the racy line, check everything', () => {
    const sb = sandbox();
    sb.write('a/x.txt', 'x\n');
    sb.write('b/y.txt', 'y\n');
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const scan = (hints?: { paths: Set<string>; sinceMs: number }) => opened.journal.write(() => scanAndCommit(opened, undefined, hints));
      expect(scan().status).toBe('baseline');
      sb.write('a/x.txt', 'x changed\n');
      sb.write('b/y.txt', 'y changed\n');
      // A watcher watching all along says only a/x.txt moved: b is not looked at.
      expect(scan({ paths: new Set(['a/x.txt']), sinceMs: 0 }).changes.map((c) => c.path)).toEqual(['a/x.txt']);
      // No hints: every row, so b/y.txt now.
      expect(scan().changes.map((c) => c.path)).toEqual(['b/y.txt']);
      sb.write('a/x.txt', 'x again\n');
      sb.write('b/y.txt', 'y again\n');
      // A watcher that began after the last scan's racy line cannot vouch for it: every row.
      expect(scan({ paths: new Set(['a/x.txt']), sinceMs: Date.now() }).changes.map((c) => c.path)).toEqual(['a/x.txt', 'b/y.txt']);
    } finally {
      opened.journal.close();
    }
  });

  it('in a row reached through hinted paths inside it, only those entries are looked at (and the folder, which a name added or removed moves)', () => {
    const sb = sandbox();
    sb.write('a/x.txt', 'x\n');
    sb.write('a/y.txt', 'y\n');
    sb.write('a/z.txt', 'z\n');
    // The folder's own stat older than any racy line: it is listed again only when it moves.
    fs.utimesSync(`${sb.ws}/a`, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const scan = (hints?: { paths: Set<string>; sinceMs: number }) =>
        opened.journal
          .write(() => scanAndCommit(opened, undefined, hints))
          .changes.map((c) => `${c.path} ${!c.before ? 'created' : !c.after ? 'deleted' : 'modified'}`)
          .sort();
      expect(opened.journal.write(() => scanAndCommit(opened)).status).toBe('baseline');
      sb.write('a/x.txt', 'x changed\n');
      sb.write('a/y.txt', 'y changed\n');
      // The watcher names a/x.txt alone: a/y.txt, in the same folder, is not looked at.
      expect(scan({ paths: new Set(['a/x.txt']), sinceMs: 0 })).toEqual(['a/x.txt modified']);
      expect(scan()).toEqual(['a/y.txt modified']);
      // A file made and one removed, each hinted by its name: the folder's own stat moved, so it is listed again.
      sb.write('a/new.txt', 'new\n');
      fs.rmSync(`${sb.ws}/a/z.txt`);
      expect(scan({ paths: new Set(['a/new.txt', 'a/z.txt']), sinceMs: 0 })).toEqual(['a/new.txt created', 'a/z.txt deleted']);
      expect(scan()).toEqual([]);
    } finally {
      opened.journal.close();
    }
  });

  it('a hinted path names its nearest folder with a row; a hinted folder, every row under it too', () => {
    const rows = new Map(['', 'a', 'a/b', 'c'].map((d) => [d, new Uint8Array(0)]));
    expect(hintedRows(rows, 100, { paths: new Set(['a/b', 'c/new.txt', 'gone/z.txt']), sinceMs: 50 })?.sort()).toEqual(['', 'a', 'a/b', 'c']);
    expect(hintedRows(rows, 100, { paths: new Set(['top.txt']), sinceMs: 100 })).toEqual(['']);
    expect(hintedRows(rows, 100, { paths: new Set(['top.txt']), sinceMs: 101 })).toBeNull();
    expect(hintedRows(rows, 100)).toBeNull();
    expect(hintedRows(rows, 100, { paths: new Set(['a']), sinceMs: 50 })?.sort()).toEqual(['', 'a', 'a/b']);
    expect(hintedRows(rows, 100, { paths: new Set(['']), sinceMs: 50 })?.sort()).toEqual(['', 'a', 'a/b', 'c']);
    // The entries to look at in each row reached only through paths inside it; a hinted folder's
    // row and the rows under it, whole.
    const names = (paths: string[]) => Object.fromEntries([...hintedCheck(rows, 100, { paths: new Set(paths), sinceMs: 50 })!.names].map(([d, n]) => [d, [...n].sort()]));
    expect(names(['top.txt', 'a/x.txt', 'a/y.txt', 'c/new.txt', 'gone/z.txt'])).toEqual({ '': ['gone', 'top.txt'], a: ['x.txt', 'y.txt'], c: ['new.txt'] });
    expect(names(['a', 'a/x.txt', 'a/b/y.txt', 'c/w.txt'])).toEqual({ '': ['a'], c: ['w.txt'] });
    expect(names(['', 'c/w.txt'])).toEqual({});
  });

  it('the rows under a hinted folder, found in the folders kept sorted, are those a pass over every row finds, as folders come and go', () => {
    const sb = sandbox();
    for (const d of ['a', 'a/b', 'a/b/c', 'a-b', 'a.b', 'ab', 'é', 'z/y']) sb.write(`${d}/f.txt`, `${d}\n`);
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const snap = opened.journal.snapshot;
      const scan = () => opened.journal.write(() => scanAndCommit(opened));
      const same = (step: string) => {
        const rows = snap.rows();
        for (const f of [...rows.keys()].filter((k) => k !== '')) {
          const pass = [...rows.keys()].filter((k) => k.startsWith(`${f}/`)).sort();
          expect(snap.rowsUnder(rows, f).sort(), `${step}: under ${f}`).toEqual(pass);
          const hints = { paths: new Set([f]), sinceMs: 0 };
          expect(hintedRows(rows, 1, hints, (d) => snap.rowsUnder(rows, d))?.sort(), `${step}: hinted ${f}`).toEqual(hintedRows(rows, 1, hints)?.sort());
        }
      };
      scan();
      same('baseline');
      sb.write('a/b/new/deep/g.txt', 'new\n');
      sb.write('a-b/c/h.txt', 'h\n');
      scan();
      same('folders added');
      fs.rmSync(sb.abs('a/b'), { recursive: true });
      fs.renameSync(sb.abs('z'), sb.abs('a/z'));
      scan();
      same('a folder removed, one moved under another');
      for (let i = 0; i < 300; i++) sb.write(`many/m${i}/f.txt`, `${i}\n`); // past the edits kept in step: sorted anew
      scan();
      same('many folders at once');
      fs.rmSync(sb.abs('many/m7'), { recursive: true });
      scan();
      same('one of many removed');
    } finally {
      opened.journal.close();
    }
  });

  it('a folder replaced by another of the same name: hinted by its name alone, the rows under it are looked at again', () => {
    const sb = sandbox();
    sb.write('a/sub/old.txt', 'old\n');
    sb.write('a/top.txt', 'top\n');
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const scan = (hints?: { paths: Set<string>; sinceMs: number }) => opened.journal.write(() => scanAndCommit(opened, undefined, hints));
      expect(scan().status).toBe('baseline');
      // What a watcher hears of `mv a a.old && mkdir -p a/sub && …`: the two folders, not what is under them.
      sb.sh('mv a a.old && mkdir -p a/sub && printf new > a/sub/new.txt');
      const changes = scan({ paths: new Set(['a', 'a.old']), sinceMs: 0 }).changes.map((c) => c.path);
      expect(changes).toEqual(['a.old', 'a.old/sub', 'a.old/sub/old.txt', 'a.old/top.txt', 'a/sub/new.txt', 'a/sub/old.txt', 'a/top.txt']);
    } finally {
      opened.journal.close();
    }
  });
});

describe('a file rewritten in place deep inside a skipped folder', () => {
  it('is named by the watcher’s hints: one excluded gap on the skipped folder, however many paths were heard; without hints it is not seen; .git never', () => {
    const sb = sandbox({ git: true });
    sb.write('src/a.txt', 'a\n');
    sb.write('node_modules/a/b/c/d.js', 'one\n');
    sb.write('node_modules/a/b/c/e.js', 'one\n');
    sb.write('vendor/x.js', 'x\n');
    sb.write('.gitignore', 'vendor/\n');
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const scan = (hints?: { paths: Set<string>; sinceMs: number }) =>
        opened.journal.write(() => scanAndCommit(opened, undefined, hints)).changes.map((c) => [c.path, c.after?.gap ?? null]);
      expect(opened.journal.write(() => scanAndCommit(opened)).status).toBe('baseline');
      // Same size, in place, four levels down: no folder's stat or stamp moves.
      const stamp = ['node_modules', 'node_modules/a', 'node_modules/a/b', 'node_modules/a/b/c'].map((d) => fs.lstatSync(sb.abs(d)).mtimeMs);
      sb.write('node_modules/a/b/c/d.js', 'two\n');
      sb.write('node_modules/a/b/c/e.js', 'two\n');
      sb.write('vendor/x.js', 'y\n');
      expect(['node_modules', 'node_modules/a', 'node_modules/a/b', 'node_modules/a/b/c'].map((d) => fs.lstatSync(sb.abs(d)).mtimeMs)).toEqual(stamp);
      const heard = new Set(['node_modules/a/b/c/d.js', 'node_modules/a/b/c/e.js', 'vendor/x.js', '.git/index']);
      expect(scan({ paths: heard, sinceMs: 0 })).toEqual([
        ['node_modules', 'excluded'],
        ['vendor', 'excluded'],
      ]);
      // Nothing heard since: nothing named again.
      expect(scan({ paths: new Set(), sinceMs: 0 })).toEqual([]);
      // Without a watcher the rewrite is not seen (the documented limit).
      sb.write('node_modules/a/b/c/d.js', 'three\n');
      expect(scan()).toEqual([]);
    } finally {
      opened.journal.close();
    }
  });
});

describe('a folder moved in', () => {
  it('brings its files as created, however old their inodes are', () => {
    const sb = sandbox();
    sb.write('dir/sub/deep.txt', 'deep\n');
    sb.write('dir/top.txt', 'top\n');
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const scan = () => opened.journal.write(() => scanAndCommit(opened));
      expect(scan().status).toBe('baseline');
      // The last scan as if it had begun more than the racy window after the files were made (their
      // inodes then older than its racy line), and before the move (which changes the moved folder's inode).
      const made = Math.max(...['dir', 'dir/sub', 'dir/sub/deep.txt', 'dir/top.txt'].map((p) => fs.lstatSync(sb.abs(p)).ctimeMs));
      opened.journal.write(() => {
        const meta = opened.journal.snapshot.meta()!;
        opened.journal.snapshot.setMeta({ ...meta, startedNs: String(BigInt(Math.ceil((made + 2000.5) * 1000)) * 1000n) });
      });
      sb.sh('mv dir moved');
      expect(scan().changes.map((c) => [c.path, c.before ? (c.after ? 'modified' : 'deleted') : 'created'])).toEqual([
        ['dir', 'deleted'],
        ['dir/sub', 'deleted'],
        ['dir/sub/deep.txt', 'deleted'],
        ['dir/top.txt', 'deleted'],
        ['moved', 'created'],
        ['moved/sub', 'created'],
        ['moved/sub/deep.txt', 'created'],
        ['moved/top.txt', 'created'],
      ]);
    } finally {
      opened.journal.close();
    }
  });
});
