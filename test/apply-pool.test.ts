// The file-level steps of a big undo or redo (core/plan/jobs.ts): small files are written in place
// and temporary files made on the main thread, in order, and the temporary files renamed into
// place on a worker thread, several at once. The same
// guarantees hold as one at a time: never through a link, a failed step leaves no temporary
// file, a failure stops new steps, and the apply puts back whatever was already written.
import fs from 'node:fs';
import path from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FINISHED, fitsInPlace, mayFreeInode, PREPARED, STATUS } from '../server/core/plan/job-steps.js';
import { closePool, runJobs, startPool, type FileJob } from '../server/core/plan/jobs.js';
import { chmodJob, closeContext, removeJob, writeContext, writeJob, type WriteContext } from '../server/core/plan/safe-fs.js';
import type { FileState } from '../server/core/types.js';
import { REPO_ROOT, sandbox, sleep, tree, type Sandbox } from './support/takeback.js';

/** The folders of one step under `root`, let go when the test finishes. */
function stepContext(root: string): WriteContext {
  const ctx = writeContext(root);
  onTestFinished(() => closeContext(ctx));
  return ctx;
}
const isTemp = (rel: string) => /(^|\/)\.[^/]*\.takeback-[^/]*$/.test(rel);
/** `job` made to go by a temporary file and a rename even where it could be written in place. */
const byRename = (job: FileJob): FileJob => (job.kind === 'write' ? { ...job, inPlaceMax: 0 } : job);
const file = (content: string, mode = 0o644): FileState => ({ exists: true, type: 'file', sha256: 'x'.repeat(64), size: content.length, mode });

/** Every job of a step that changes `n` files, 3 links, 3 modes and removes 4 paths (one a folder that is not empty). */
function mixedStep(sb: Sandbox, n: number): FileJob[] {
  const root = sb.ws;
  const ctx = stepContext(root);
  for (let i = 0; i < n; i++) sb.write(`d${i % 4}/f${i}.txt`, `old ${i}\n`);
  for (let i = 0; i < 3; i++) sb.write(`m/mode${i}.txt`, `mode ${i}\n`);
  for (let i = 0; i < 3; i++) sb.write(`gone/g${i}.txt`, `gone ${i}\n`);
  sb.write('full/keep.txt', 'keep\n');
  const jobs: FileJob[] = [];
  // Every other file is written in place (on this thread, as its first stage), the rest by rename.
  for (let i = 0; i < n; i++) {
    const job = writeJob(root, ctx, `d${i % 4}/f${i}.txt`, file(`new ${i}\n`, 0o640), Buffer.from(`new ${i}\n`), 'tpool', true);
    jobs.push(i % 2 === 0 ? job : byRename(job));
  }
  for (let i = 0; i < 3; i++) jobs.push(writeJob(root, ctx, `d0/link${i}`, { exists: true, type: 'symlink', target: `f${i}.txt`, mode: 0o777 }, null, 'tpool', true));
  for (let i = 0; i < 3; i++) jobs.push(chmodJob(root, ctx, `m/mode${i}.txt`, 0o600));
  for (let i = 0; i < 3; i++) jobs.push(removeJob(root, `gone/g${i}.txt`, ctx));
  jobs.push(removeJob(root, 'full', ctx));
  return jobs;
}

describe('the write pool (temporary files made here, renamed into place on a worker thread, several at once)', () => {
  it('writes files and links, sets modes and removes paths exactly as this thread does, leaving no temporary file', () => {
    const inWorker = sandbox();
    const here = sandbox();
    // Through one worker started ahead, in two batches (writes, then the rest), as an undo does.
    const pool = startPool();
    expect(pool).not.toBeNull();
    const jobs = mixedStep(inWorker, 60);
    const writes = jobs.filter((j) => j.kind === 'write');
    let a;
    try {
      a = [...runJobs(writes, { pool, mainFinishes: false }), ...runJobs(jobs.filter((j) => j.kind !== 'write'), { pool, minForPool: 1, mainFinishes: false })];
    } finally {
      closePool(pool!);
    }
    const b = runJobs(mixedStep(here, 60), { minForPool: Number.POSITIVE_INFINITY });
    for (const outcomes of [a, b]) {
      expect(outcomes.filter((o) => o.status !== 'done')).toEqual([]);
      expect(outcomes.flatMap((o) => (o.status === 'done' && o.note ? [o.note] : []))).toEqual(['full: folder not empty, left in place']);
    }
    expect(inWorker.tree()).toEqual(here.tree());
    const t = inWorker.tree();
    expect(Object.keys(t).filter(isTemp)).toEqual([]);
    expect(inWorker.read('d1/f5.txt').toString()).toBe('new 5\n');
    expect(t['d1/f5.txt']).toMatchObject({ mode: 0o640 });
    expect(t['d0/link1']).toEqual({ type: 'symlink', target: 'f1.txt' });
    expect(t['m/mode2.txt']).toMatchObject({ mode: 0o600 });
    expect(inWorker.exists('gone/g0.txt')).toBe(false);
  });

  it('the in-place rule is one for planned files and for jobs: both sizes at most the limit, 0 never; a removal, a link or a big write may free an inode', () => {
    expect([fitsInPlace(10, 10), fitsInPlace(11, 10), fitsInPlace(0, 0), fitsInPlace(5, 10, 10), fitsInPlace(5, 10, 11)]).toEqual([true, false, false, true, false]);
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    const ctx = stepContext(sb.ws);
    const small = writeJob(sb.ws, ctx, 'a.txt', file('a\n'), Buffer.from('a\n'), 'trule', true);
    const link = writeJob(sb.ws, ctx, 'l', { exists: true, type: 'symlink', target: 'a.txt', mode: 0o777 }, null, 'trule', true);
    expect([small, byRename(small), link, removeJob(sb.ws, 'a.txt', ctx), chmodJob(sb.ws, ctx, 'a.txt', 0o600)].map(mayFreeInode)).toEqual([false, true, true, true, false]);
  });

  it('the worker bundled for the command line (dist/server/cli/write-worker.bundle.cjs, which the bundles start) renames what this thread prepared', async () => {
    const sb = sandbox();
    for (let i = 0; i < 6; i++) sb.write(`f${i}.txt`, `old ${i}\n`);
    const ctx = stepContext(sb.ws);
    const jobs = Array.from({ length: 6 }, (_, i) => byRename(writeJob(sb.ws, ctx, `f${i}.txt`, file(`new ${i}\n`), Buffer.from(`new ${i}\n`), 'tbundle', true)));
    // The first stages, as runJobs makes them on this thread: each temporary file, then its mark.
    const shared = new SharedArrayBuffer(4 * (STATUS + jobs.length));
    const s = new Int32Array(shared);
    jobs.forEach((j, i) => {
      if (j.kind === 'write') fs.writeFileSync(j.tmp, j.bytes!);
      s[STATUS + i] = PREPARED;
    });
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(path.join(REPO_ROOT, 'dist', 'server', 'cli', 'write-worker.bundle.cjs'), { workerData: { port: port2, lanes: 2 }, transferList: [port2] });
    const failed: unknown[] = [];
    worker.on('error', (e) => failed.push(e));
    try {
      port1.postMessage({ batch: 1, jobs, shared });
      for (let t = 0; Atomics.load(s, FINISHED) < jobs.length && failed.length === 0 && t < 200; t++) await sleep(50);
    } finally {
      port1.close();
      await worker.terminate();
    }
    expect(failed).toEqual([]);
    expect(Atomics.load(s, FINISHED)).toBe(jobs.length);
    for (let i = 0; i < 6; i++) expect(sb.read(`f${i}.txt`).toString()).toBe(`new ${i}\n`);
    expect(Object.keys(sb.tree()).filter(isTemp)).toEqual([]);
  });

  it('a folder swapped for a link: refused before a temporary file is made there, nothing written outside, nothing started after, and what was not finished is left as it was', () => {
    const sb = sandbox();
    const root = sb.ws;
    const ctx = stepContext(root);
    for (let i = 0; i < 40; i++) sb.write(`${i < 20 ? 'a' : 'd'}/f${i}.txt`, `old ${i}\n`);
    const jobs = Array.from({ length: 40 }, (_, i) => byRename(writeJob(root, ctx, `${i < 20 ? 'a' : 'd'}/f${i}.txt`, file(`new ${i}\n`), Buffer.from(`new ${i}\n`), 'tswap', true)));
    // After the folders were walked (the jobs are made), d is moved aside and a link to a look-alike outside takes its place.
    const outside = path.join(sb.base, 'outside');
    fs.mkdirSync(outside);
    for (let i = 20; i < 40; i++) fs.writeFileSync(path.join(outside, `f${i}.txt`), `old ${i}\n`);
    fs.renameSync(sb.abs('d'), sb.abs('d-moved'));
    fs.symlinkSync(outside, sb.abs('d'));
    const before = tree(outside);
    const out = runJobs(jobs, { minForPool: 1, mainFinishes: false, lanes: 4 });
    expect(tree(outside)).toEqual(before);
    expect(out[20]).toMatchObject({ status: 'failed', error: { code: 'outside-workspace', message: 'refusing to write d/f20.txt: its folder moved' } });
    expect(out.slice(21).every((o) => o.status === 'not-run')).toBe(true);
    // Those before it were renamed into place, or (not finished when the failure stopped the batch) left as they were.
    for (let i = 0; i < 20; i++) {
      expect(['done', 'not-run']).toContain(out[i]!.status);
      expect(sb.read(`a/f${i}.txt`).toString()).toBe(out[i]!.status === 'done' ? `new ${i}\n` : `old ${i}\n`);
    }
    expect(fs.readFileSync(sb.abs('d-moved/f25.txt'), 'utf8')).toBe('old 25\n');
    expect(Object.keys(sb.tree()).filter(isTemp)).toEqual([]);
  });

  it('a rename that fails in the worker removes its temporary file, and those made for jobs not finished', () => {
    const sb = sandbox();
    const root = sb.ws;
    const ctx = stepContext(root);
    for (let i = 0; i < 8; i++) sb.write(i === 3 ? 'p/f3.txt/inside.txt' : `p/f${i}.txt`, i === 3 ? 'the user made f3.txt a folder\n' : `old ${i}\n`);
    const jobs = Array.from({ length: 8 }, (_, i) => byRename(writeJob(root, ctx, `p/f${i}.txt`, file(`new ${i}\n`), Buffer.from(`new ${i}\n`), 'tfail', true)));
    const out = runJobs(jobs, { minForPool: 1, mainFinishes: false, lanes: 1 });
    expect(out.map((o) => o.status)).toEqual(['done', 'done', 'done', 'failed', 'not-run', 'not-run', 'not-run', 'not-run']);
    expect(out[3]).toMatchObject({ error: { code: 'outside-workspace', message: 'refusing to write p/f3.txt: a folder that is not empty is in the way' } });
    expect(Object.keys(sb.tree()).filter(isTemp)).toEqual([]);
    expect(sb.read('p/f4.txt').toString()).toBe('old 4\n');
  });

  it('an undo of many files that fails part-way puts back every file already written, and leaves nothing behind', () => {
    const sb = sandbox();
    const N = 80;
    for (let i = 0; i < N; i++) sb.write(`p${i % 6}/f${i}.txt`, `before ${i}\n`);
    sb.write('p0/gone.txt', 'removed by the command\n');
    expect(sb.tb(['run', '--', 'sh', '-c', "for f in p*/f*.txt; do printf 'after\\n' >> $f; done && rm p0/gone.txt && printf n > p1/made.txt"]).code).toBe(0);
    // The user then makes one of the files a folder with something in it: the forced undo must stop there.
    fs.rmSync(sb.abs('p3/f45.txt'));
    sb.write('p3/f45.txt/mine.txt', 'mine\n');
    const before = sb.tree();
    const r = sb.tb(['undo', '1', '--force']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/nothing was changed: refusing to write p3\/f45\.txt: a folder that is not empty is in the way/);
    expect(sb.tree()).toEqual(before);
    expect(sb.json(['show', '1']).state).toBe('applied');
    expect(fs.readdirSync(sb.journalDir()).filter((n) => n.startsWith('txn-'))).toEqual([]);
    // Without the folder in the way it goes through, and comes back.
    fs.rmSync(sb.abs('p3/f45.txt'), { recursive: true });
    sb.write('p3/f45.txt', 'before 45\nafter\n');
    sb.json(['undo', '1']);
    expect(sb.read('p5/f11.txt').toString()).toBe('before 11\n');
    expect(sb.read('p0/gone.txt').toString()).toBe('removed by the command\n');
    expect(sb.exists('p1/made.txt')).toBe(false);
    sb.json(['redo', '1']);
    const { 'p3/f45.txt/mine.txt': _mine, ...after } = before;
    expect(sb.tree()).toEqual({ ...after, 'p3/f45.txt': expect.objectContaining({ type: 'file' }) });
    expect(Object.keys(sb.tree()).filter(isTemp)).toEqual([]);
  });
});
