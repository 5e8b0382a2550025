// The native warm-scan check through io_uring (native/scan-check.c: each folder's own stat and
// its children's queued as statx requests on one ring) against the same check on threads and
// against the JavaScript one, on a real tree changed in every way the check must notice, with
// more rows than the ring has requests in flight and a folder of more entries than that; the rows
// handed over one buffer a folder, as the snapshot index holds them, or fed while the check runs
// (begun while the snapshot index loads its rows); and the snapshot index's rows loaded into a
// few shared blocks. Where io_uring cannot be had the check uses its threads, and this test
// checks the ring's absence only.
import fs from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openWorkspace } from '../server/core/open-workspace.js';
import { beginCheck, checkIndex } from '../server/core/scan/checker.js';
import { haveNativeCheck, nativeCheckRowList, nativeCheckRows, nativeEarlyCheck, nativeRowArena, ringWhen, type NativeCheckResult } from '../server/core/scan/native.js';
import { RACY_WINDOW_MS } from '../server/core/scan/scan.js';
import { decodeRow, encodeRow } from '../server/core/scan/packed.js';
import { checkAll, type CheckInput } from '../server/core/scan/stat-check.js';
import { inputOf, named, rowsOf } from './support/packed-rows.js';
import { filesOf, sandbox } from './support/takeback.js';

/**
 * Whether this machine should give the check a ring: Linux with io_uring allowed, and two CPUs
 * for two workers; null when that cannot be told (a kernel before 6.6 has no switch to read).
 */
function ringExpected(): boolean | null {
  if (process.platform !== 'linux' || os.availableParallelism() < 2) return false;
  try {
    return fs.readFileSync('/proc/sys/kernel/io_uring_disabled', 'utf8').trim() === '0';
  } catch {
    return null;
  }
}

/** `ring` (whether the check used one) is what this machine should give, where that can be told. */
function expectRing(ring: boolean, wanted: boolean): void {
  const can = ringExpected();
  if (can !== null) expect(ring).toBe(wanted && can);
}

/** `fn` with TAKEBACK_SCAN_RING set to `value` ('1': the ring where the machine has one; '0': threads). */
function withRing<T>(value: '0' | '1', fn: () => T): T {
  const was = process.env.TAKEBACK_SCAN_RING;
  process.env.TAKEBACK_SCAN_RING = value;
  try {
    return fn();
  } finally {
    if (was === undefined) delete process.env.TAKEBACK_SCAN_RING;
    else process.env.TAKEBACK_SCAN_RING = was;
  }
}

/** The native check of `input` on several threads (`paths` over every threshold), with the ring allowed or not. */
function native(input: CheckInput, ring: boolean): NativeCheckResult {
  const r = withRing(ring ? '1' : '0', () => nativeCheckRows(input, 100_000, 1));
  expect(r).not.toBeNull();
  return r!;
}

describe('the native warm-scan check through io_uring', () => {
  it('goes through the ring only when the setting asks for it (TAKEBACK_SCAN_RING=1)', () => {
    expect([ringWhen('1'), ringWhen('0'), ringWhen(undefined), ringWhen('yes'), ringWhen('')]).toEqual([true, false, false, false, false]);
  });

  it.runIf(haveNativeCheck())('finds what the threads and the JavaScript check find, past the ring’s requests in flight and in a folder larger than them', () => {
    const sb = sandbox();
    for (let d = 0; d < 300; d++) for (let f = 0; f < 3; f++) sb.write(`d${d}/f${f}.txt`, `${d} ${f}\n`);
    for (let f = 0; f < 700; f++) sb.write(`big/f${f}.txt`, `big ${f}\n`);
    sb.write('run.sh', '#!/bin/sh\n', 0o755);
    fs.symlinkSync('run.sh', sb.abs('link'));
    fs.writeFileSync(Buffer.concat([Buffer.from(`${sb.abs('d10')}/`), Buffer.from([0x6f, 0xff, 0xfe])]), 'not UTF-8\n');
    const rows = rowsOf(sb.ws);
    const racy = Date.now() + 10_000;
    const still = inputOf(sb.ws, rows, racy);
    const quiet = native(still, true);
    expectRing(quiet.ring, true);
    // The name not UTF-8 is packed decoded, which names no file: looked at again by every check.
    expect(named(still.dirs, quiet)).toEqual(named(still.dirs, checkAll(still)));
    expect(named(still.dirs, quiet).suspects).toEqual([expect.stringMatching(/^d10#\d+$/)]);

    const bigIndex = (name: string) => decodeRow(rows.get('big')!).findIndex((e) => e.name === name);
    fs.appendFileSync(sb.abs('d1/f0.txt'), 'more\n'); // content
    fs.chmodSync(sb.abs('run.sh'), 0o644); // mode
    fs.rmSync(sb.abs('d2/f1.txt')); // removed: its folder moved
    sb.write('d4/new.txt', 'new\n'); // added
    fs.rmSync(sb.abs('d5'), { recursive: true });
    fs.writeFileSync(sb.abs('d5'), 'a file where a folder was\n');
    fs.rmSync(sb.abs('d6'), { recursive: true });
    fs.symlinkSync('d7', sb.abs('d6')); // a link where a folder was: it cannot be opened as one
    fs.rmSync(sb.abs('d8'), { recursive: true }); // gone: its row's folder cannot be opened
    fs.rmSync(sb.abs('link'));
    fs.writeFileSync(sb.abs('link'), 'a file where a link was\n');
    fs.writeFileSync(sb.abs('big/f500.txt'), 'BIG 500\n'); // same size, in the row of 700
    fs.utimesSync(sb.abs('big/f650.txt'), new Date(), new Date(racy + 3_600_000)); // racy
    const moved = inputOf(sb.ws, rows, racy);
    const js = named(moved.dirs, checkAll(moved));
    expect(js.dirty).toEqual(['', 'd2', 'd4', 'd5', 'd6', 'd8']);
    expect(js.suspects).toEqual(expect.arrayContaining([`big#${bigIndex('f500.txt')}`, `big#${bigIndex('f650.txt')}`, 'd1#0']));
    const byRing = native(moved, true);
    const byThreads = native(moved, false);
    expectRing(byRing.ring, true);
    expect(byThreads.ring).toBe(false);
    expect(named(moved.dirs, byRing)).toEqual(js);
    expect(named(moved.dirs, byThreads)).toEqual(js);

    // Rows a check cannot trust: one cut short (listed again, never read past its end; the
    // JavaScript check would throw), one naming a file with a NUL (looked at again, never stated).
    const damaged = new Map(rows);
    const d9 = rows.get('d9')!;
    damaged.set('d9', d9.subarray(0, d9.length - 3));
    const d11 = fs.lstatSync(sb.abs('d11'));
    const f = fs.lstatSync(sb.abs('d11/f0.txt'));
    const nul = { name: 'f0.txt\0zzz', type: 'file' as const, mode: f.mode & 0o7777, size: f.size, mtimeMs: f.mtimeMs, ctimeMs: f.ctimeMs, ino: f.ino, sha256: null, git: null, target: null, gap: null };
    damaged.set('d11', encodeRow({ mtimeMs: d11.mtimeMs, ctimeMs: d11.ctimeMs, ino: d11.ino }, [nul]));
    const bad = inputOf(sb.ws, damaged, racy);
    const badRing = named(bad.dirs, native(bad, true));
    expect(badRing).toEqual(named(bad.dirs, native(bad, false)));
    expect(badRing.dirty).toEqual(['', 'd2', 'd4', 'd5', 'd6', 'd8', 'd9']);
    expect(badRing.suspects).toContain('d11#0');
    expect(badRing.suspects.some((s) => s.startsWith('d9#'))).toBe(false);
  });

  it.runIf(haveNativeCheck())('takes the rows one buffer a folder, as the snapshot index holds them, with the verdicts of one buffer of every row', () => {
    const sb = sandbox();
    for (let d = 0; d < 20; d++) for (let f = 0; f < 5; f++) sb.write(`d${d}/f${f}.txt`, `${d} ${f}\n`);
    const rows = rowsOf(sb.ws);
    fs.appendFileSync(sb.abs('d3/f2.txt'), 'more\n');
    sb.write('d7/new.txt', 'new\n');
    const racy = Date.now() + 10_000;
    const input = inputOf(sb.ws, rows, racy);
    const dirs = [...rows.keys()];
    const list = dirs.map((d) => rows.get(d)!);
    for (const ring of ['1', '0'] as const) {
      const one = withRing(ring, () => nativeCheckRows(input, 100_000, 1));
      const each = withRing(ring, () => nativeCheckRowList(sb.ws, dirs, list, racy, 100_000, 1));
      expect(each, `ring ${ring}`).not.toBeNull();
      expect(named(dirs, each!)).toEqual(named(dirs, one!));
      expect(named(dirs, each!)).toEqual({ dirty: ['d7'], suspects: ['d3#2'] });
    }
    // Not a row for each folder, or a row that is no buffer: an error the caller falls back from.
    expect(nativeCheckRowList(sb.ws, dirs, list.slice(1), racy, 100_000, 1)).toBeNull();
    expect(nativeCheckRowList(sb.ws, dirs, [...list.slice(1), 'x' as unknown as Uint8Array], racy, 100_000, 1)).toBeNull();
  });

  it.runIf(haveNativeCheck())('checks rows fed while it runs as it checks them handed over at once', () => {
    const sb = sandbox();
    for (let d = 0; d < 40; d++) for (let f = 0; f < 8; f++) sb.write(`d${d}/f${f}.txt`, `${d} ${f}\n`);
    const rows = rowsOf(sb.ws);
    fs.appendFileSync(sb.abs('d3/f2.txt'), 'more\n');
    sb.write('d17/new.txt', 'new\n');
    fs.rmSync(sb.abs('d30'), { recursive: true });
    const racy = Date.now() + 10_000;
    const dirs = [...rows.keys()];
    const list = dirs.map((d) => rows.get(d)!);
    for (const ring of ['1', '0'] as const) {
      const all = withRing(ring, () => nativeCheckRows(inputOf(sb.ws, rows, racy), 100_000, 1))!;
      const early = withRing(ring, () => nativeEarlyCheck(sb.ws, racy, 100_000, 1));
      expect(early, `ring ${ring}`).not.toBeNull();
      // In three parts, the first of one row: the check waits for the rest as it goes.
      for (const [from, to] of [[0, 1], [1, 25], [25, dirs.length]] as const) expect(early!.feed(dirs.slice(from, to), list.slice(from, to))).toBe(true);
      const r = early!.finish();
      expect(r).not.toBeNull();
      expectRing(r!.ring, ring === '1');
      expect(named(dirs, r!)).toEqual(named(dirs, all));
      expect(named(dirs, r!).dirty).toEqual(['', 'd17', 'd30']);
      expect(named(dirs, r!).suspects).toEqual(['d3#2']);
      // Once: nothing more is taken, nothing given again.
      expect(early!.feed(dirs.slice(0, 1), list.slice(0, 1))).toBe(false);
      expect(early!.finish()).toBeNull();
    }
    // A check given up unfed, and one fed no row at all: no verdicts, no thread left waiting.
    const none = nativeEarlyCheck(sb.ws, racy, 100_000, 1)!;
    expect(none.finish()).toEqual({ dirty: [], suspects: [], ring: expect.any(Boolean) });
  });

  it.runIf(haveNativeCheck())('a scan’s check begun while the snapshot index loads its rows is taken by checkIndex with the verdicts of a check made after', () => {
    const sb = sandbox();
    const past = new Date(Date.now() - 60_000);
    for (let d = 0; d < 300; d++) {
      for (let f = 0; f < 3; f++) {
        sb.write(`d${d}/f${f}.txt`, `${d} ${f}\n`);
        fs.utimesSync(sb.abs(`d${d}/f${f}.txt`), past, past);
      }
      fs.utimesSync(sb.abs(`d${d}`), past, past);
    }
    fs.utimesSync(sb.ws, past, past);
    // Made a minute before the baseline: nothing is racy for the scan after it.
    const first = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      first.journal.write(() => scanAndCommit(first));
    } finally {
      first.journal.close();
    }
    fs.appendFileSync(sb.abs('d7/f1.txt'), 'more\n');
    sb.write('d250/new.txt', 'new\n');
    fs.rmSync(sb.abs('d99'), { recursive: true });
    const ws = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      ws.journal.write(() => {
        const meta = ws.journal.snapshot.meta()!;
        const racyMs = Number(BigInt(meta.startedNs) / 1_000_000n) - RACY_WINDOW_MS;
        // The file count a large index would have: the check is begun (below 20,000 it is not).
        expect(beginCheck(ws.root, racyMs, meta.files)).toBeNull();
        const feed = beginCheck(ws.root, racyMs, 20_000);
        expect(feed).not.toBeNull();
        const rows = ws.journal.snapshot.rows(feed!);
        const taken = checkIndex({ root: ws.root, rows, racyMs });
        expect(taken.begun).toBe(true);
        const fresh = checkIndex({ root: ws.root, rows: new Map(rows), racyMs });
        expect(fresh.begun).toBe(false);
        expect(named(taken.dirs, taken.result)).toEqual(named(fresh.dirs, fresh.result));
        const f1 = decodeRow(rows.get('d7')!).findIndex((e) => e.name === 'f1.txt');
        expect(named(taken.dirs, taken.result)).toEqual({ dirty: ['', 'd250', 'd99'], suspects: [`d7#${f1}`] });
        feed!.cancel(); // taken already: nothing to give up
        // Not for another racy line, nor when the rows did not load (this process's cache was current).
        const other = beginCheck(ws.root, racyMs, 20_000)!;
        expect(ws.journal.snapshot.rows(other)).toBe(rows);
        expect(checkIndex({ root: ws.root, rows, racyMs }).begun).toBe(false);
        ws.journal.snapshot.writeRows(new Map(), []); // a new generation: the next rows() loads
        const loaded = ws.journal.snapshot.rows(beginCheck(ws.root, racyMs, 20_000)!);
        const elsewhere = checkIndex({ root: ws.root, rows: loaded, racyMs: racyMs - 1 });
        expect(elsewhere.begun).toBe(false);
        expect(named(elsewhere.dirs, elsewhere.result)).toEqual(named(fresh.dirs, fresh.result));
      });
    } finally {
      ws.journal.close();
    }
  });

  it.runIf(haveNativeCheck())('a command’s bracket through the CLI on 20,200 files (the check begun while the rows load) records exactly what the command changed', () => {
    // A git work tree, its files committed: outside git, 20,200 files are past the command scan's limit.
    const sb = sandbox({ git: true });
    const past = new Date(Date.now() - 60_000);
    for (let d = 0; d < 1010; d++) {
      fs.mkdirSync(sb.abs(`p${d % 10}/d${d}`), { recursive: true });
      for (let f = 0; f < 20; f++) fs.writeFileSync(sb.abs(`p${d % 10}/d${d}/f${f}.txt`), `${d} ${f}\n`);
    }
    // Made a minute before the baseline, nothing is racy for the scans after it; committed after
    // that, git's index vouches for every file (none is copied into the journal).
    for (let d = 0; d < 1010; d++) {
      for (let f = 0; f < 20; f++) fs.utimesSync(sb.abs(`p${d % 10}/d${d}/f${f}.txt`), past, past);
      fs.utimesSync(sb.abs(`p${d % 10}/d${d}`), past, past);
    }
    // No automatic gc: past 6,700 loose objects git would start one in the background, still writing at cleanup.
    sb.sh('git config gc.auto 0 && git config maintenance.auto false && git add -A && git -c user.name=t -c user.email=t@example.invalid commit -q -m init');
    sb.tb(['capture', 'begin', '--id', 'base']);
    expect(sb.json(['capture', 'end', '--id', 'base']).set).toBeNull();
    for (const ring of ['1', '0'] as const) {
      const env = { ...sb.env, TAKEBACK_SCAN_RING: ring };
      const k = ring === '1' ? 1 : 2;
      sb.tb(['capture', 'begin', '--id', `c${k}`], { env });
      const at = (d: number, name: string) => `p${d % 10}/d${d}/${name}`;
      fs.appendFileSync(sb.abs(at(13 * k, 'f7.txt')), 'more\n');
      fs.rmSync(sb.abs(at(25 * k, 'f0.txt')));
      fs.writeFileSync(sb.abs(at(99 * k, 'new.txt')), 'new\n');
      fs.chmodSync(sb.abs(at(100 * k, 'f19.txt')), 0o600);
      const set = sb.json(['capture', 'end', '--id', `c${k}`], { env }).set;
      expect(filesOf(set), `ring ${ring}`).toEqual({
        [at(13 * k, 'f7.txt')]: 'modified',
        [at(25 * k, 'f0.txt')]: 'deleted',
        [at(99 * k, 'new.txt')]: 'created',
        [at(100 * k, 'f19.txt')]: 'mode',
      });
    }
    // 20,200 files made, committed and scanned five times: well over a minute on a loaded machine.
  }, 300_000);

  it('loads the snapshot index’s rows into a few shared blocks, each row’s bytes as the journal holds them', () => {
    const sb = sandbox();
    for (let d = 0; d < 200; d++) sb.write(`d${d}/f.txt`, `${d}\n`);
    // A folder whose row is larger than an eighth of a block keeps a buffer of its own.
    for (let f = 0; f < 2000; f++) sb.write(`wide/a-long-name-for-a-file-${f}.txt`, `${f}\n`);
    const first = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      first.journal.write(() => scanAndCommit(first));
    } finally {
      first.journal.close();
    }
    const ws = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const rows = ws.journal.snapshot.rows();
      const stored = new Map(ws.journal.db.prepare('SELECT dir, data FROM snapshot_rows').raw().all() as [string, Buffer][]);
      expect([...rows.keys()].sort()).toEqual([...stored.keys()].sort());
      for (const [dir, data] of stored) expect(Buffer.compare(rows.get(dir)!, data), dir).toBe(0);
      const blocks = new Set([...rows.values()].map((b) => b.buffer));
      expect(rows.size).toBe(202);
      expect(blocks.size).toBeLessThanOrEqual(3);
      // The scan over them sees nothing moved.
      expect(ws.journal.write(() => scanAndCommit(ws)).changes).toEqual([]);
    } finally {
      ws.journal.close();
    }
    // The block memory itself: 2 MiB pages' worth, writable, where the module is built.
    if (haveNativeCheck()) {
      const arena = nativeRowArena(5);
      expect(arena?.length).toBe(2 << 20);
      arena!.fill(7, 0, 16);
      expect(arena![15]).toBe(7);
    }
  });
});
