// The native warm-scan check (native/scan-check.c) against the JavaScript one (checkRows in
// server/core/scan/stat-check.ts), on the same packed rows of a real tree changed in every way
// the check must notice: both name the same rows dirty and the same entries suspect, on one
// thread and on several. `npm ci` builds the module; where it is not built (no compiler) the
// scan uses the JavaScript check, and this test says so and checks nothing native.
import fs from 'node:fs';
import path from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { decodeRow, encodeRow, UNKNOWN_STAMP, type DirStamp, type PackedEntry } from '../server/core/scan/packed.js';
import { haveNativeCheck, nativeCheckRows } from '../server/core/scan/native.js';
import { checkAll, StatWorker, type CheckInput, type CheckResult } from '../server/core/scan/stat-check.js';
import { REPO_ROOT, sandbox } from './support/takeback.js';

const TYPE = (st: fs.Stats): PackedEntry['type'] => (st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'file');

/** Packed rows of every folder under `root` as they are now (each entry's stat; hashes and git ids made up, as flags to parse past). */
function rowsOf(root: string): Map<string, Buffer> {
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

function inputOf(root: string, rows: Map<string, Buffer>, racyMs: number): CheckInput {
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

/** A result as sorted folder names and `folder/entry-index` pairs, comparable across checks. */
function named(input: CheckInput, r: CheckResult): { dirty: string[]; suspects: string[] } {
  const suspects: string[] = [];
  for (let k = 0; k < r.suspects.length; k += 2) suspects.push(`${input.dirs[r.suspects[k]!]}#${r.suspects[k + 1]}`);
  return { dirty: r.dirty.map((i) => input.dirs[i]!).sort(), suspects: suspects.sort() };
}

describe('the native warm-scan check', () => {
  it.runIf(haveNativeCheck())('finds what the JavaScript check finds, on one thread and on several', () => {
    const sb = sandbox();
    for (let d = 0; d < 12; d++) {
      for (let f = 0; f < 15; f++) sb.write(`d${d}/sub${f % 3}/f${f}.txt`, `file ${d} ${f}\n`.repeat(1 + f));
    }
    sb.write('é ü/naïve ☃.txt', 'unicode\n');
    sb.write('run.sh', '#!/bin/sh\n', 0o755);
    fs.symlinkSync('run.sh', sb.abs('link'));
    sb.write('d0/empty', '');
    const before = rowsOf(sb.ws);
    // Past the racy line: every entry was modified before it.
    const racy = Date.now() + 10_000;
    const still = inputOf(sb.ws, before, racy);
    expect(named(still, checkAll(still))).toEqual({ dirty: [], suspects: [] });
    expect(named(still, nativeCheckRows(still, 1000, 1)!)).toEqual({ dirty: [], suspects: [] });

    // Every kind of move: content (size and time), mode, type (file to link, link to file),
    // removed, added (the folder's own stat moves), a folder replaced, a same-size rewrite.
    fs.appendFileSync(sb.abs('d1/sub0/f0.txt'), 'more\n');
    fs.chmodSync(sb.abs('run.sh'), 0o644);
    fs.rmSync(sb.abs('d2/sub1/f1.txt'));
    fs.symlinkSync('f4.txt', sb.abs('d2/sub1/f1.txt'));
    fs.rmSync(sb.abs('link'));
    fs.writeFileSync(sb.abs('link'), 'now a file\n');
    fs.rmSync(sb.abs('d3/sub2/f2.txt'));
    sb.write('d4/sub0/new.txt', 'new\n');
    fs.rmSync(sb.abs('d5/sub1'), { recursive: true });
    fs.writeFileSync(sb.abs('d5/sub1'), 'a file where a folder was\n');
    const same = sb.abs('d6/sub0/f3.txt');
    const old = fs.statSync(same);
    fs.writeFileSync(same, fs.readFileSync(same).toString().toUpperCase());
    fs.utimesSync(same, old.atime, new Date(old.mtimeMs + 5));
    fs.writeFileSync(sb.abs('é ü/naïve ☃.txt'), 'changed\n');
    const moved = inputOf(sb.ws, before, racy);
    const js = named(moved, checkAll(moved));
    expect(js.dirty.length).toBeGreaterThan(0);
    expect(js.suspects.length).toBeGreaterThan(0);
    for (const threads of [1, 2, 7]) {
      // `paths` over the threshold so that the threads are used.
      const r = nativeCheckRows(moved, 10_000, threads === 1 ? Number.POSITIVE_INFINITY : 1);
      expect(r, `threads ${threads}`).not.toBeNull();
      expect(named(moved, r!)).toEqual(js);
    }
    // Racy entries (modified at or after the racy line) are looked at again, as in JavaScript:
    // a file whose stat is the row's, its time past the line (its folder's before it).
    fs.utimesSync(sb.abs('d7/sub1/f4.txt'), new Date(), new Date(Date.now() + 3_600_000));
    const future = inputOf(sb.ws, rowsOf(sb.ws), Date.now() + 10_000);
    expect(named(future, checkAll(future))).toEqual({ dirty: [], suspects: [expect.stringMatching(/^d7\/sub1#\d+$/)] });
    expect(named(future, nativeCheckRows(future, 10_000, 1)!)).toEqual(named(future, checkAll(future)));
    const early = inputOf(sb.ws, rowsOf(sb.ws), 0);
    expect(named(early, nativeCheckRows(early, 10_000, 1)!)).toEqual(named(early, checkAll(early)));
    expect(named(early, checkAll(early)).dirty.length).toBe(early.dirs.length);
  });

  it.runIf(haveNativeCheck())('stating each folder’s children by name through the folder opened once: the same verdicts on odd names, links, modes, a folder it may search but not list, removed and added files', () => {
    const sb = sandbox();
    const odd = Buffer.from([0x6f, 0x64, 0x64, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]); // not UTF-8
    for (let d = 0; d < 4; d++) for (let f = 0; f < 6; f++) sb.write(`d${d}/f${f}.txt`, `${d} ${f}\n`);
    fs.writeFileSync(Buffer.concat([Buffer.from(`${sb.abs('d0')}/`), odd]), 'odd name\n');
    sb.write('d1/é.txt', 'é\n');
    fs.symlinkSync('f0.txt', sb.abs('d1/link'));
    fs.symlinkSync('d2', sb.abs('dirlink'));
    sb.write('locked/inner.txt', 'inner\n', 0o600);
    sb.write('d3/run.sh', '#!/bin/sh\n', 0o755);
    const rows = rowsOf(sb.ws);
    // A row for the link to a folder, as if a folder had stood there: a link is no folder.
    rows.set('dirlink', rows.get('d2')!);
    // Searchable, not listable: its row made before, given the folder's stat after the mode change.
    fs.chmodSync(sb.abs('locked'), 0o311);
    const ls = fs.lstatSync(sb.abs('locked'));
    rows.set('locked', encodeRow({ mtimeMs: ls.mtimeMs, ctimeMs: ls.ctimeMs, ino: ls.ino }, decodeRow(rows.get('locked')!)));
    try {
      const racy = Date.now() + 10_000;
      const still = inputOf(sb.ws, rows, racy);
      const jsStill = named(still, checkAll(still));
      expect(jsStill.dirty).toEqual(['dirlink']);
      expect(named(still, nativeCheckRows(still, 1000, 1)!)).toEqual(jsStill);
      // The odd name's entry holds its name decoded (U+FFFD), which names no file: both look
      // again; and at the root's entry of the folder whose mode changed.
      expect(jsStill.suspects).toEqual([expect.stringMatching(/^#\d+$/), expect.stringMatching(/^d0#\d+$/)]);

      fs.appendFileSync(sb.abs('locked/inner.txt'), 'more\n');
      fs.chmodSync(sb.abs('d3/run.sh'), 0o644);
      fs.rmSync(sb.abs('d1/link'));
      fs.writeFileSync(sb.abs('d1/link'), 'a file where a link was\n');
      fs.rmSync(sb.abs('d2/f3.txt'));
      fs.rmSync(sb.abs('d3'), { recursive: true });
      sb.write('d1/new.txt', 'new\n');
      const moved = inputOf(sb.ws, rows, racy);
      const js = named(moved, checkAll(moved));
      expect(js.dirty).toEqual(['', 'd1', 'd2', 'd3', 'dirlink']); // the root lost d3
      expect(js.suspects).toEqual(expect.arrayContaining([expect.stringMatching(/^locked#0$/)]));
      for (const threads of [1, 3]) expect(named(moved, nativeCheckRows(moved, 10_000, threads === 1 ? Number.POSITIVE_INFINITY : 1)!), `threads ${threads}`).toEqual(js);
    } finally {
      fs.chmodSync(sb.abs('locked'), 0o755);
    }
  });

  it('the JavaScript fallback on two threads (the stat worker) finds what it finds on one', () => {
    const sb = sandbox();
    for (let d = 0; d < 30; d++) for (let f = 0; f < 10; f++) sb.write(`d${d}/f${f}.txt`, `${d} ${f}\n`);
    const rows = rowsOf(sb.ws);
    fs.appendFileSync(sb.abs('d3/f3.txt'), 'more\n');
    fs.rmSync(sb.abs('d9/f0.txt'));
    sb.write('d20/new.txt', 'new\n');
    const input = inputOf(sb.ws, rows, Date.now() + 10_000);
    const worker = StatWorker.start();
    expect(worker).not.toBeNull();
    try {
      const two = named(input, worker!.run(input));
      expect(two).toEqual(named(input, checkAll(input)));
      expect(two.dirty).toEqual(['d20', 'd9']);
      expect(two.suspects).toEqual(['d3#3']); // d9's entries wait for its listing
    } finally {
      worker!.close();
    }
  });

  it('the stat worker bundled for the command line (dist/server/cli/stat-worker.bundle.cjs) checks every row it is left, as this thread would', () => {
    const sb = sandbox();
    for (let d = 0; d < 5; d++) for (let f = 0; f < 4; f++) sb.write(`d${d}/f${f}.txt`, `${d} ${f}\n`);
    const rows = rowsOf(sb.ws);
    fs.appendFileSync(sb.abs('d1/f2.txt'), 'more\n');
    sb.write('d4/new.txt', 'new\n');
    const input = inputOf(sb.ws, rows, Date.now() + 10_000);
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(path.join(REPO_ROOT, 'dist', 'server', 'cli', 'stat-worker.bundle.cjs'), { workerData: { port: port2 }, transferList: [port2] });
    try {
      // Nothing taken by this thread: the worker checks every row.
      const state = new Int32Array(new SharedArrayBuffer(12));
      port1.postMessage({ state: state.buffer, input });
      expect(Atomics.wait(state, 2, 0, 20_000)).not.toBe('timed-out');
      const msg = receiveMessageOnPort(port1)?.message as CheckResult & { error?: string };
      expect(msg.error).toBeUndefined();
      expect(named(input, msg)).toEqual(named(input, checkAll(input)));
      expect(named(input, msg)).toEqual({ dirty: ['d4'], suspects: ['d1#2'] });
    } finally {
      port1.close();
      void worker.terminate();
    }
  });

  it.runIf(haveNativeCheck())('a row it cannot parse is listed again, never read past its end', () => {
    const sb = sandbox();
    sb.write('a/x.txt', 'x\n');
    const rows = rowsOf(sb.ws);
    const good = rows.get('a')!;
    rows.set('a', good.subarray(0, good.length - 3)); // the last entry cut short
    rows.set('', encodeRow(UNKNOWN_STAMP, [])); // a folder whose stat is not known
    const input = inputOf(sb.ws, rows, Date.now() + 10_000);
    expect(named(input, nativeCheckRows(input, 10, 1)!).dirty).toEqual(['', 'a']);
    // A name holding a NUL (a damaged row: no file has one) is never taken for the name before it.
    const st = fs.lstatSync(sb.abs('a/x.txt'));
    const nul = { name: 'x.txt\0zzz', type: 'file' as const, mode: st.mode & 0o7777, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: null, git: null, target: null, gap: null };
    const dir = fs.lstatSync(sb.abs('a'));
    const named2 = inputOf(sb.ws, new Map([['a', encodeRow({ mtimeMs: dir.mtimeMs, ctimeMs: dir.ctimeMs, ino: dir.ino }, [nul])]]), Date.now() + 10_000);
    expect(named(named2, checkAll(named2))).toEqual({ dirty: [], suspects: ['a#0'] });
    expect(named(named2, nativeCheckRows(named2, 10, 1)!)).toEqual({ dirty: [], suspects: ['a#0'] });
    // Bad arguments are an error the caller falls back from (null), not a crash.
    expect(nativeCheckRows({ ...input, offsets: new Int32Array(1) }, 10, 1)).toBeNull();
  });

  it('is used when built, and TAKEBACK_NATIVE=0 or a missing build leaves the JavaScript check', () => {
    const built = fs.existsSync(path.join(import.meta.dirname, '..', 'native', 'build', 'Release', 'takeback_native.node'));
    // CI's machine has a compiler (.ci/run sets TAKEBACK_REQUIRE_NATIVE): there the build must have happened.
    if (process.env.TAKEBACK_REQUIRE_NATIVE === '1') expect(built, 'npm ci did not build native/ (scripts/build-native.mjs)').toBe(true);
    expect(haveNativeCheck()).toBe(built && process.env.TAKEBACK_NATIVE !== '0');
    // doctor says which check the scans use.
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    expect(sb.json(['doctor']).scanCheck).toBe(built ? 'native' : 'javascript');
    expect(sb.json(['doctor'], { env: { ...sb.env, TAKEBACK_NATIVE: '0' } }).scanCheck).toBe('javascript');
    if (!built) console.warn('native/build not there: the native check was not built here (npm ci builds it when it can)');
  });
});
