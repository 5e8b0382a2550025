// A long-lived process that watches a large workspace holds none of its snapshot's rows between
// scans (scan-commit.ts useLeanRows): a scan given hints reads the rows of the folders it looks
// at (SnapshotIndex.lazy, LazyRows), the totals of every row are kept without the rows, and the
// rows a walk loads are let go once written. Its scans must find what a process holding the rows
// finds, write the same meta, and keep the totals equal to a fresh sum, through any run of
// edits, adds, removals and folder moves.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { scanAndCommit, useLeanRows } from '../server/core/capture/scan-commit.js';
import { openWorkspace, type Workspace } from '../server/core/open-workspace.js';
import { hintedRows } from '../server/core/scan/checker.js';
import { freshSum, rng } from './support/packed-rows.js';
import { sandbox, type Sandbox } from './support/takeback.js';

afterEach(() => useLeanRows(null));

describe('a workspace scanned without holding its rows', () => {
  it('finds what a process holding them finds, writes the same meta, and keeps the totals, through edits, adds, removals and folder moves', () => {
    // Two twin workspaces, the same steps in each: one scanned lean, one holding its rows.
    const lean = sandbox();
    const held = sandbox();
    const both = (fn: (sb: Sandbox) => void) => [lean, held].forEach(fn);
    both((sb) => {
      for (let d = 0; d < 6; d++) for (let f = 0; f < 5; f++) sb.write(`d${d}/sub/f${f}.txt`, `file ${d} ${f}\n`);
      sb.write('top.txt', 'top\n');
    });
    const wl = openWorkspace({ workspace: lean.ws, env: lean.env });
    const wh = openWorkspace({ workspace: held.ws, env: held.env });
    useLeanRows((root) => root === wl.root);
    const scan = (w: Workspace, hints?: { paths: Set<string>; sinceMs: number }) => w.journal.write(() => scanAndCommit(w, undefined, hints));
    const seen = (o: ReturnType<typeof scanAndCommit>) => ({ changes: o.changes.map((c) => [c.path, c.before?.type ?? null, c.after?.type ?? null, c.after?.sha256 ?? null]), files: o.meta.files, bytes: o.meta.bytes, copied: o.meta.copied ?? 0 });
    try {
      expect(scan(wl).status).toBe('baseline');
      expect(scan(wh).status).toBe('baseline');
      const rand = rng(21);
      const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
      const files = (sb: Sandbox) => fs.readdirSync(sb.ws, { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('.txt') && !p.startsWith('.')).sort();
      const dirs = (sb: Sandbox) => fs.readdirSync(sb.ws, { encoding: 'utf8' }).filter((p) => /^(d\d+|moved\d+|fresh\d+)$/.test(p)).sort();
      let made = 0;
      let hinted = 0;
      for (let step = 0; step < 48; step++) {
        const kind = step % 7;
        // The paths a watcher would hear: each path written, made or removed, and a folder moved by both names.
        const heard = new Set<string>();
        if (kind === 0) {
          const f = pick(files(lean));
          const text = `edited ${step} ${'x'.repeat(Math.floor(rand() * 200))}\n`;
          both((sb) => sb.write(f, text));
          heard.add(f);
        } else if (kind === 1) {
          const f = `${pick(dirs(lean))}/new${made++}.txt`;
          both((sb) => sb.write(f, `new ${step}\n`));
          heard.add(f);
        } else if (kind === 2) {
          const f = pick(files(lean));
          both((sb) => fs.rmSync(sb.abs(f)));
          heard.add(f);
        } else if (kind === 3) {
          const d = pick(dirs(lean));
          const to = `moved${made++}`;
          both((sb) => fs.renameSync(sb.abs(d), sb.abs(to)));
          heard.add(d).add(to);
        } else if (kind === 4) {
          const f = `fresh${made++}/a/b/c.txt`;
          both((sb) => sb.write(f, `deep ${step}\n`));
          heard.add(f.split('/')[0]!).add(f);
        } else if (kind === 5 && dirs(lean).length > 2) {
          const d = pick(dirs(lean));
          both((sb) => fs.rmSync(sb.abs(d), { recursive: true }));
          heard.add(d);
        } else {
          // A step with no hints: a walk, whose rows are let go after.
          const f = pick(files(lean));
          both((sb) => sb.write(f, `walked ${step}\n`));
        }
        const hints = heard.size > 0 ? { paths: heard, sinceMs: 0 } : undefined;
        if (hints) hinted++;
        const a = scan(wl, hints);
        const b = scan(wh, hints);
        expect(seen(a), `step ${step}`).toEqual(seen(b));
        expect(seen(a).changes.length, `step ${step}: something moved`).toBeGreaterThan(0);
        // The rows a scan loads (a walk) are let go once written; the process that is not lean keeps them.
        expect(wl.journal.snapshot.holdsRows, `step ${step}`).toBe(false);
        expect(wh.journal.snapshot.holdsRows, `step ${step}`).toBe(true);
        expect(wl.journal.snapshot.lazy().totals, `step ${step}`).toEqual(freshSum(wl));
        expect(a.meta.files, `step ${step}`).toBe(freshSum(wl).files);
      }
      expect(hinted).toBeGreaterThan(30);
      // Another process's write: the totals held are summed anew, and agree.
      lean.write('top.txt', 'top, by another process\n');
      const cli = openWorkspace({ workspace: lean.ws, env: lean.env });
      try {
        useLeanRows(null);
        expect(scan(cli).changes.map((c) => c.path)).toEqual(['top.txt']);
      } finally {
        cli.journal.close();
        useLeanRows((root) => root === wl.root);
      }
      lean.write('after.txt', 'after\n');
      expect(scan(wl, { paths: new Set(['after.txt']), sinceMs: 0 }).changes.map((c) => c.path)).toEqual(['after.txt']);
      expect(wl.journal.snapshot.lazy().totals).toEqual(freshSum(wl));
      // A write rolled back leaves no totals that count it.
      lean.write('rolled.txt', 'rolled back\n');
      expect(() =>
        wl.journal.write(() => {
          scanAndCommit(wl, undefined, { paths: new Set(['rolled.txt']), sinceMs: 0 });
          throw new Error('rolled back');
        }),
      ).toThrow('rolled back');
      expect(wl.journal.snapshot.lazy().totals).toEqual(freshSum(wl));
      expect(scan(wl, { paths: new Set(['rolled.txt']), sinceMs: 0 }).changes.map((c) => c.path)).toEqual(['rolled.txt']);
      expect(wl.journal.snapshot.lazy().totals).toEqual(freshSum(wl));
      expect(wl.journal.snapshot.holdsRows).toBe(false);
    } finally {
      wl.journal.close();
      wh.journal.close();
    }
  });

  it('a write of the rows that fails midway (a full disk) leaves no held totals nor held rows that count it, lean or not', () => {
    for (const lean of [true, false]) {
      const sb = sandbox();
      for (let i = 0; i < 5; i++) sb.write(`d${i}/f.txt`, `file ${i}\n`);
      const w = openWorkspace({ workspace: sb.ws, env: sb.env });
      useLeanRows(lean ? () => true : null);
      const scan = (paths?: string[]) => w.journal.write(() => scanAndCommit(w, undefined, paths ? { paths: new Set(paths), sinceMs: 0 } : undefined));
      try {
        scan();
        sb.write('d0/f.txt', 'edited\n');
        scan(['d0/f.txt']);
        expect(w.journal.snapshot.holdsRows).toBe(!lean);
        // The row of a new folder cannot be written (SQLite's answer to a full disk, as a trigger).
        w.journal.db.exec("CREATE TRIGGER full_disk BEFORE INSERT ON snapshot_rows WHEN NEW.dir = 'boom' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;");
        for (let i = 0; i < 5; i++) sb.write(`boom/${i}.txt`, `${i}\n`);
        sb.write('d1/f.txt', 'edited too\n');
        expect(() => scan(['boom', 'd1/f.txt'])).toThrow('database or disk is full');
        w.journal.db.exec('DROP TRIGGER full_disk');
        fs.rmSync(sb.abs('boom'), { recursive: true });
        // Nothing of the failed write is taken for the journal's: d1's edit is still found, boom never was.
        const out = scan(['boom', 'd1/f.txt']);
        expect(out.changes.map((c) => c.path), `lean ${lean}`).toEqual(['d1/f.txt']);
        expect(out.meta.files, `lean ${lean}`).toBe(5);
        expect(w.journal.snapshot.lazy().totals, `lean ${lean}`).toEqual(freshSum(w));
      } finally {
        w.journal.close();
      }
    }
  });

  it('reads a folder at a time: the rows under a folder are those of a pass over every row, odd names too', () => {
    const sb = sandbox();
    for (const d of ['a', 'a/b', 'a/b/c', 'a-b', 'a.b', 'a0', 'ab', 'é', 'a/é', 'z/y', 'a b']) sb.write(`${d}/f.txt`, `${d}\n`);
    const w = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      w.journal.write(() => scanAndCommit(w));
      const all = w.journal.snapshot.rows();
      w.journal.snapshot.release();
      expect(w.journal.snapshot.holdsRows).toBe(false);
      const { rows, totals, under } = w.journal.snapshot.lazy();
      expect(w.journal.snapshot.holdsRows).toBe(false);
      expect(totals).toEqual(freshSum(w));
      expect(rows.size).toBe(all.size);
      expect([...rows.keys()].sort()).toEqual([...all.keys()].sort());
      for (const [dir, buf] of all) {
        expect(rows.has(dir)).toBe(true);
        expect(Buffer.compare(rows.get(dir)!, buf), dir).toBe(0);
        if (dir === '') continue;
        expect(under(dir).sort(), `under ${dir}`).toEqual([...all.keys()].filter((k) => k.startsWith(`${dir}/`)).sort());
        const hints = { paths: new Set([dir]), sinceMs: 0 };
        expect(hintedRows(rows, 1, hints, under)?.sort(), `hinted ${dir}`).toEqual(hintedRows(all, 1, hints)?.sort());
      }
      expect(rows.has('nowhere')).toBe(false);
      expect(rows.get('nowhere')).toBeUndefined();
      expect(under('nowhere')).toEqual([]);
      // An entry is read from its folder's row alone.
      expect(w.journal.snapshot.entry('a/é/f.txt')?.type).toBe('file');
      expect(w.journal.snapshot.holdsRows).toBe(false);
    } finally {
      w.journal.close();
    }
  });
});
