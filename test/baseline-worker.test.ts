// A background baseline's bytes read on a worker thread (scan/pending-worker.ts, started by
// capture/baseline.ts through scan/pending-reader.ts) keep exactly what the slices on the journal's
// own thread keep: one real tree (bytes of every kind, modes, links, odd names, a secret, a file
// past the size limit) baselined into two journal homes, one each way, gives the same snapshot
// rows, the same counts and the same blob files. A file that moves while its batch is on the
// worker is left pending, never kept with the bytes it had.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { baselineRequest, keepBaselineRead, keepBaselineSlice } from '../server/core/capture/baseline.js';
import { scanAndCommit, useBackgroundBaseline } from '../server/core/capture/scan-commit.js';
import { openWorkspace, type Workspace } from '../server/core/open-workspace.js';
import { decodeRow } from '../server/core/scan/packed.js';
import { PendingReader } from '../server/core/scan/pending-reader.js';

const HOUR_AGO = new Date(Date.now() - 3600_000);
const ALL = { files: 1e9, bytes: Infinity, ms: Infinity };
const dirs: string[] = [];
const opened: Workspace[] = [];
const readers: PendingReader[] = [];
afterEach(() => {
  for (const r of readers.splice(0)) r.close();
  for (const ws of opened.splice(0)) ws.journal.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
useBackgroundBaseline(() => {});

function tmp(prefix: string): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  dirs.push(d);
  return d;
}

/** A tree of every kind the baseline meets, every entry dated an hour back (none racy). */
function tree(): string {
  const root = tmp('tb-bw-ws-');
  const put = (rel: string, data: string | Buffer, mode = 0o644) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), data);
    fs.chmodSync(path.join(root, rel), mode);
  };
  let seed = 7;
  const noise = (n: number) => Buffer.from(Array.from({ length: n }, () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff));
  for (let i = 0; i < 40; i++) put(`src/m${i}.ts`, `export const m${i} = ${i};\n`.repeat(i * 2));
  put('empty', '');
  put('bin/run.sh', '#!/bin/sh\necho hi\n', 0o755);
  put('private.txt', 'mine\n', 0o600);
  put('big-text.txt', 'the same line again and again\n'.repeat(2000));
  put('noise.bin', noise(20_000));
  put('name with spaces.txt', 'spaces\n');
  put('-leading-dash', 'dash\n');
  put('unicodé/ファイル.txt', 'unicode\n');
  put('line\nbreak.txt', 'newline in the name\n');
  put('hash#and%percent', 'odd\n');
  put('too-large.bin', noise(200_000));
  put('keys/id_rsa.txt', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n');
  put('same-a.txt', 'twin\n');
  put('same-b.txt', 'twin\n');
  fs.symlinkSync('src/m1.ts', path.join(root, 'link-to-m1'));
  fs.symlinkSync('/nowhere/at/all', path.join(root, 'dangling'));
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      fs.lutimesSync(p, HOUR_AGO, HOUR_AGO);
    }
  };
  walk(root);
  return root;
}

function open(root: string): Workspace {
  const home = tmp('tb-bw-home-');
  const ws = openWorkspace({ workspace: root, env: { PATH: process.env.PATH, TAKEBACK_HOME: home, TAKEBACK_MAX_WORKSPACE_FILES: '5', TAKEBACK_MAX_FILE_BYTES: '100000' } });
  opened.push(ws);
  expect(ws.journal.write(() => scanAndCommit(ws)).status).toBe('baseline');
  expect(ws.journal.snapshot.meta()!.pending).toBeGreaterThan(50);
  return ws;
}

/** Every row of the snapshot, decoded, by folder. */
function rows(ws: Workspace): Record<string, unknown> {
  return Object.fromEntries([...ws.journal.snapshot.rows()].map(([d, b]) => [d, decodeRow(b)]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
}

/** Every blob file of the home: path under blobs/ → its bytes (hex). */
function blobFiles(ws: Workspace): Record<string, string> {
  const out: Record<string, string> = {};
  const dir = ws.journal.blobs.dir;
  for (const sub of fs.readdirSync(dir)) for (const f of fs.readdirSync(path.join(dir, sub))) out[`${sub}/${f}`] = fs.readFileSync(path.join(dir, sub, f)).toString('hex');
  return out;
}

async function onWorker(ws: Workspace, reader: PendingReader, files: number): Promise<number> {
  let slices = 0;
  for (;;) {
    const req = baselineRequest(ws, files, Infinity);
    if (!req) return slices;
    const answer = await reader.read(req);
    expect(answer?.error).toBeUndefined();
    keepBaselineRead(ws, req.items, answer!);
    slices++;
  }
}

describe('a background baseline read on a worker thread', () => {
  it('keeps what the slices on the journal’s thread keep: rows, counts and blob files alike', async () => {
    const root = tree();
    const here = open(root);
    while (keepBaselineSlice(here, { ...ALL, files: 7 })) {
      // slice after slice, as the old way went
    }
    const there = open(root);
    const reader = PendingReader.start()!;
    readers.push(reader);
    // Batches of 7 files: a batch ends mid-folder, and folders are split between batches.
    expect(await onWorker(there, reader, 7)).toBeGreaterThan(5);
    expect(reader.failed).toBe(false);
    const { startedNs: _a, ...metaHere } = here.journal.snapshot.meta()!;
    const { startedNs: _b, ...metaThere } = there.journal.snapshot.meta()!;
    expect(metaThere).toEqual(metaHere);
    expect(metaThere.pending).toBeUndefined();
    expect(rows(there)).toEqual(rows(here));
    expect(blobFiles(there)).toEqual(blobFiles(here));
    // What was kept is the files' bytes; the secret and the file past the limit are named, not kept.
    const top = new Map(decodeRow(there.journal.snapshot.rows().get('')!).map((e) => [e.name, e]));
    expect(there.journal.blobs.get(top.get('noise.bin')!.sha256!).equals(fs.readFileSync(path.join(root, 'noise.bin')))).toBe(true);
    expect([top.get('too-large.bin')!.sha256, top.get('too-large.bin')!.gap]).toEqual([null, 'too-large']);
    expect([top.get('bin/run.sh'), decodeRow(there.journal.snapshot.rows().get('bin')!)[0]!.mode]).toEqual([undefined, 0o755]);
    expect(top.get('private.txt')!.mode).toBe(0o600);
    expect(there.journal.blobs.get(top.get('big-text.txt')!.sha256!).equals(fs.readFileSync(path.join(root, 'big-text.txt')))).toBe(true);
    expect(there.journal.blobs.get(top.get('line\nbreak.txt')!.sha256!).toString()).toBe('newline in the name\n');
    expect([top.get('bin')!.type, top.get('link-to-m1')!.target, top.get('dangling')!.target]).toEqual(['dir', 'src/m1.ts', '/nowhere/at/all']);
    const keys = decodeRow(there.journal.snapshot.rows().get('keys')!);
    expect(keys.map((e) => [e.name, e.sha256, e.gap])).toEqual([['id_rsa.txt', null, 'secret']]);
    // Nothing moved: the next scan of either finds nothing.
    expect(there.journal.write(() => scanAndCommit(there)).changes).toEqual([]);
  }, 60_000);

  it('a file changed while its batch is on the worker is left pending, and the next scan names the gap', async () => {
    const root = tree();
    const ws = open(root);
    const reader = PendingReader.start()!;
    readers.push(reader);
    const req = baselineRequest(ws, 1e9, Infinity)!;
    const answer = (await reader.read(req))!;
    // After the worker read it, before its read is written: a scan records the change.
    fs.appendFileSync(path.join(root, 'src/m3.ts'), 'more\n');
    fs.utimesSync(path.join(root, 'src/m3.ts'), HOUR_AGO, new Date(Date.now() - 1800_000));
    const scan = ws.journal.write(() => scanAndCommit(ws));
    expect(scan.changes.map((c) => [c.path, c.before?.gap ?? null])).toEqual([['src/m3.ts', 'baseline-incomplete']]);
    const r = keepBaselineRead(ws, req.items, answer)!;
    expect(r.left).toBe(0);
    // The entry the scan wrote stands: the new bytes, not those the worker read before.
    const m3 = decodeRow(ws.journal.snapshot.rows().get('src')!).find((e) => e.name === 'm3.ts')!;
    expect(ws.journal.blobs.get(m3.sha256!).equals(fs.readFileSync(path.join(root, 'src/m3.ts')))).toBe(true);
    expect(ws.journal.snapshot.meta()!.pending).toBeUndefined();
  }, 60_000);

  it('a file racy by its entry is never handed to the worker: batches of one go past it, and it is left to the next scan', async () => {
    const root = tree();
    // Written just now: within the racy window of the scan about to be taken.
    fs.writeFileSync(path.join(root, '-leading-dash'), 'fresh\n');
    const ws = open(root);
    const reader = PendingReader.start()!;
    readers.push(reader);
    expect(await onWorker(ws, reader, 1)).toBeGreaterThan(50);
    expect(ws.journal.snapshot.meta()!.pending).toBe(1);
    const top = decodeRow(ws.journal.snapshot.rows().get('')!).find((e) => e.name === '-leading-dash')!;
    expect(top.gap).toBe('baseline-incomplete');
    // The next scan reads it (racy) and keeps it: the baseline is complete.
    ws.journal.write(() => scanAndCommit(ws));
    expect(ws.journal.snapshot.meta()!.pending).toBeUndefined();
  }, 60_000);
});
