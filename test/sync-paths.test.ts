// The durability syncs of a batch (server/core/durable.ts, native/sync-paths.c): all issued at
// once from the native module's threads, each path synced as one by one would (a file's bytes,
// a folder's entries; a link never synced through, a FIFO never waited on), and a blob this
// process made durable not synced again when found again as the same file, while one replaced
// since is. Where the native module is not built (no compiler) the native checks say so and the
// batch is synced one by one.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncAll } from '../server/core/durable.js';
import { nativeSyncFs, nativeSyncPaths } from '../server/core/scan/native.js';
import { BlobStore } from '../server/core/store/blobs.js';
import { buildRecorder, readTrace, recorderEnv } from './support/powercut.js';
import { settled, startDaemon } from './support/daemon.js';
import { hookAsync, REPO_ROOT, sandbox, sha256 } from './support/takeback.js';

const MODULE = path.join(REPO_ROOT, 'native', 'build', 'Release', 'takeback_native.node');
const built = fs.existsSync(MODULE);

let scratch: string;
beforeAll(() => {
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-sync-paths-')));
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** A folder under the scratch with `n` files, a link to the first, a FIFO and a missing name. */
function batch(name: string, n: number): { dir: string; files: string[]; link: string; fifo: string; missing: string } {
  const dir = path.join(scratch, name);
  fs.mkdirSync(dir);
  const files = Array.from({ length: n }, (_, i) => {
    const f = path.join(dir, `f${i}`);
    fs.writeFileSync(f, `bytes ${i}\n`);
    return f;
  });
  const link = path.join(dir, 'link');
  fs.symlinkSync(files[0]!, link);
  const fifo = path.join(dir, 'fifo');
  expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
  return { dir, files, link, fifo, missing: path.join(dir, 'missing') };
}

describe.runIf(built)('native syncs of a batch', () => {
  it('syncs every file and folder, and counts a link, a FIFO and a missing path as not synced without blocking', () => {
    const b = batch('counts', 6);
    expect(nativeSyncPaths(b.files, [b.dir, scratch])).toBe(0);
    expect(nativeSyncPaths([...b.files, b.link, b.fifo, b.missing], [b.dir, b.files[0]!])).toBe(4);
    expect(syncAll(b.files, [b.dir], b.dir)).toBe(true);
    expect(syncAll([...b.files, b.missing], [b.dir], b.dir)).toBe(false);
    expect(nativeSyncFs(b.dir)).toBe(true);
    expect(nativeSyncFs(b.missing)).toBe(false);
  });

  it('each path of the batch has its own fsync or fdatasync, seen by the power-cut recorder', () => {
    const b = batch('traced', 12);
    const log = path.join(scratch, 'traced.log');
    const so = buildRecorder(scratch);
    const script = `const m = require(${JSON.stringify(MODULE)}); const r = m.syncPaths(${JSON.stringify([...b.files, b.link])}, ${JSON.stringify([b.dir])}, 8); process.stdout.write(Array.from(r).join(''));`;
    const r = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ...recorderEnv(so, scratch, log) }, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${'1'.repeat(12)}0` + '1');
    const synced = readTrace(log).filter((e) => e.op === 'S').map((e) => e.a);
    for (const f of [...b.files, b.dir]) expect(synced).toContain(f);
    expect(synced.filter((p) => p === b.files[0])).toHaveLength(1); // not again through the link
  });
});

describe('a blob found again', () => {
  it('is not synced again when this process made that very file durable, and is when it was replaced since', () => {
    const store = new BlobStore(path.join(scratch, 'home'));
    const bytes = Buffer.from('a blob found again\n');
    const hash = store.put(bytes);
    expect(store.unsyncedFiles).toBe(1);
    expect(store.sync()).toBe(true);
    store.put(bytes);
    expect(store.unsyncedFiles).toBe(0); // the same inode, born when it was synced: durable already
    expect(store.sync()).toBe(true); // yet named: the commit naming it is made durable
    expect(store.sync()).toBe(false);

    // Swept and stored again by another process (a new file at the same path, never synced by
    // this one): a row about to name it needs it synced.
    const file = store.pathOf(hash);
    const copy = `${file}.copy`;
    fs.copyFileSync(file, copy);
    fs.renameSync(copy, file);
    store.put(bytes);
    expect(store.unsyncedFiles).toBe(1);
    expect(store.sync()).toBe(true);
    store.put(bytes);
    expect(store.unsyncedFiles).toBe(0);

    // Another store of this process finds it durable too (the files are the process's, not a store's).
    const other = new BlobStore(path.join(scratch, 'home'));
    other.put(bytes);
    expect(other.unsyncedFiles).toBe(0);
    expect(other.sync()).toBe(true);
  });

  it('is synced when this process never synced it (stored by another process)', () => {
    const home = path.join(scratch, 'home-other');
    const first = new BlobStore(home);
    const bytes = Buffer.from('stored elsewhere\n');
    const hash = first.put(bytes);
    first.handOver(); // given to another thread's store, which syncs it: this one never did
    const file = first.pathOf(hash);
    const copy = `${file}.copy`;
    fs.copyFileSync(file, copy);
    fs.renameSync(copy, file);
    const store = new BlobStore(home);
    store.put(bytes);
    expect(store.unsyncedFiles).toBe(1);
    expect(store.sync()).toBe(true);
  });
});

describe('a Bash call through the capture daemon', () => {
  it('a capture naming only blobs known durable has its commit synced, not the blobs again', async () => {
    const so = buildRecorder(scratch);
    const sb = sandbox({ git: true, env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '20000', TAKEBACK_LOG_LEVEL: 'debug' } });
    const log = path.join(scratch, 'daemon.log');
    const session = 'da3m0n00-0000-4000-8000-00000000sync';
    const ev = (name: string, extra: object = {}) => ({ session_id: session, cwd: sb.ws, hook_event_name: name, ...extra });
    const hook = (event: object) => hookAsync(event, { cwd: sb.ws, env: sb.env });
    sb.write('f.txt', 'the bytes before\n');
    await startDaemon(sb, recorderEnv(so, sb.home, log));
    await hook(ev('SessionStart', { source: 'startup' }));
    await hook(ev('UserPromptSubmit', { prompt: 'run twice' }));
    const bash = (id: string) => ({ tool_name: 'Bash', tool_use_id: id, tool_input: { command: 'edit f.txt' } });
    await hook(ev('PreToolUse', bash('toolu_s1')));
    sb.write('f.txt', 'the bytes after\n');
    await hook(ev('PostToolUse', { ...bash('toolu_s1'), tool_response: {} }));
    await hook(ev('PreToolUse', bash('toolu_s2')));
    sb.write('f.txt', 'the bytes before\n'); // the person's doing between calls: bytes the daemon kept already
    const from = readTrace(log).length;
    const r = await hook(ev('PostToolUse', { ...bash('toolu_s2'), tool_response: {} }));
    expect(r.code).toBe(0);
    // A command's end is answered as it is claimed: its record comes after.
    await settled(sb);
    const during = readTrace(log).slice(from).filter((e) => e.op === 'S').map((e) => e.a);
    const before = path.join(sb.home, 'blobs', sha256('the bytes before\n').slice(0, 2), sha256('the bytes before\n').slice(2));
    expect(fs.existsSync(before)).toBe(true);
    expect(during).not.toContain(before); // durable already: not synced again
    expect(during.some((p) => p.endsWith('journal.db-wal'))).toBe(true); // the commit naming it is
    await hook(ev('Stop'));
  });
});
