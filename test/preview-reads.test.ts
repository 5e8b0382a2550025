// The reads a preview makes, made cheaper: a file descriptor read through a shared probe buffer,
// blobs read through a shared scratch buffer, and a preview that reads each current file once
// (its plan's read gives the diff its bytes). What they hand out must be whole, each caller's
// own (never the shared buffer), and the preview the same as reading every file again.
import fs from 'node:fs';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { openWorkspace } from '../server/core/open-workspace.js';
import { TakebackError } from '../server/core/errors.js';
import { readFd } from '../server/core/fsstate.js';
import { diskReader } from '../server/core/plan/plan.js';
import { BlobStore, sha256 } from '../server/core/store/blobs.js';
import { previewStep } from '../server/service/undo.js';
import { diskReaders } from '../server/core/plan/preview.js';
import { unitWorkspace } from './support/unit-workspace.js';
import { sandbox } from './support/takeback.js';

/** `n` bytes that do not compress (so that a blob of them is stored raw). */
function noise(n: number, seed: number): Buffer {
  const out = Buffer.alloc(n);
  let a = seed >>> 0;
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    out[i] = 32 + (a >>> 24) % 90;
  }
  return out;
}

/** Opens `file`, notes its size, lets `grow` change it, then reads it with that (stale) size. */
function readStale(file: string, grow: () => void): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    grow();
    return readFd(fd, size);
  } finally {
    fs.closeSync(fd);
  }
}

describe('readFd', () => {
  it('reads a file that grew after fstat to its end, a little or by far more than the probe; one that shrank to where it ends', () => {
    const sb = sandbox();
    const file = path.join(sb.base, 'f');
    const a = noise(1000, 1);
    const more = noise(10, 2);
    const lots = noise(300 * 1024, 3);
    fs.writeFileSync(file, a);
    const small = readStale(file, () => fs.appendFileSync(file, more));
    expect(small.equals(Buffer.concat([a, more]))).toBe(true);

    fs.writeFileSync(file, a);
    const big = readStale(file, () => fs.appendFileSync(file, lots));
    expect(big.equals(Buffer.concat([a, lots]))).toBe(true);
    // What the first read handed out is its own: the second read's probe did not overwrite it.
    expect(small.equals(Buffer.concat([a, more]))).toBe(true);

    fs.writeFileSync(file, Buffer.alloc(0));
    const fromEmpty = readStale(file, () => fs.appendFileSync(file, more));
    expect(fromEmpty.equals(more)).toBe(true);
    expect(small.equals(Buffer.concat([a, more]))).toBe(true);

    fs.writeFileSync(file, lots);
    const shrunk = readStale(file, () => fs.truncateSync(file, 5000));
    expect(shrunk.equals(lots.subarray(0, 5000))).toBe(true);

    fs.writeFileSync(file, a);
    expect(readStale(file, () => {}).equals(a)).toBe(true);
  });
});

describe('BlobStore.get', () => {
  it('hands out each blob whole and as its own buffer: raw, compressed, empty, past the scratch buffer, or raw beginning with the magic', () => {
    const sb = sandbox();
    const store = new BlobStore(sb.home);
    const blobs = [
      Buffer.from('small text\n'),
      Buffer.alloc(0),
      Buffer.from('line of text that repeats\n'.repeat(2000)), // compressed
      noise(200 * 1024, 4), // raw, over the scratch buffer
      Buffer.from('a compressible line\n'.repeat(20_000)), // compressed, raw length over the scratch buffer
      Buffer.concat([Buffer.from('TBZ1'), noise(100, 5)]), // raw, looks compressed
    ];
    const hashes = blobs.map((b) => store.put(b));
    expect(fs.statSync(store.pathOf(hashes[2]!)).size).toBeLessThan(blobs[2]!.length);
    const got = hashes.map((h) => store.get(h));
    // Read all before checking any: a buffer shared between reads would show the last one's bytes.
    got.forEach((g, i) => expect(g.equals(blobs[i]!), `blob ${i}`).toBe(true));
    const again = store.get(hashes[0]!);
    again.fill(0);
    expect(store.get(hashes[0]!).equals(blobs[0]!)).toBe(true);
    expect(got[0]!.equals(blobs[0]!)).toBe(true);
  });

  it('names a damaged or missing blob as a capture gap, whatever its size, and an invalid name too', () => {
    const sb = sandbox();
    const store = new BlobStore(sb.home);
    const small = Buffer.from('kept bytes\n');
    const large = noise(150 * 1024, 6);
    for (const bytes of [small, large]) {
      const h = store.put(bytes);
      const file = store.pathOf(h);
      const damaged = Buffer.from(bytes);
      const mid = damaged.length >> 1;
      damaged[mid] = damaged[mid]! ^ 1;
      fs.chmodSync(file, 0o600);
      fs.writeFileSync(file, damaged);
      expect(() => store.get(h)).toThrow(/damaged/);
      // Cut short: the first read cannot tell, the hash can.
      fs.writeFileSync(file, bytes.subarray(0, bytes.length - 1));
      expect(() => store.get(h)).toThrow(/damaged/);
      fs.unlinkSync(file);
      expect(() => store.get(h)).toThrow(/missing/);
    }
    // A compressed blob whose deflated bytes inflate to other bytes.
    const text = Buffer.from('some text that compresses well\n'.repeat(500));
    const h = store.put(text);
    const z = deflateRawSync(Buffer.from('other text that compresses well\n'.repeat(500)), { level: 1 });
    const header = Buffer.alloc(20);
    header.write('TBZ1', 0, 'latin1');
    header.writeBigUInt64LE(BigInt(text.length), 4);
    header.writeBigUInt64LE(BigInt(z.length), 12);
    fs.writeFileSync(store.pathOf(h), Buffer.concat([header, z]));
    expect(() => store.get(h)).toThrow(/damaged/);
    let err: unknown;
    try {
      store.get('not-a-hash');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TakebackError);
    expect((err as TakebackError).code).toBe('capture-gap');
    expect(sha256(Buffer.from('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('a preview reads each current file once', () => {
  it('gives what reading every file again gives: text, CRLF, BOM, binary, large, too large for a diff, copies, mode only, deleted, created, a secret, a later edit', () => {
    const sb = sandbox();
    const big = (tag: string) => Array.from({ length: 4000 }, (_, i) => `${tag} line ${i}\n`).join('');
    sb.write('a.txt', 'one\ntwo\nthree\n');
    sb.write('crlf.txt', 'one\r\ntwo\r\nthree\r\n');
    sb.write('bom.txt', '\ufeffone\ntwo\n');
    sb.write('bin.dat', Buffer.from([1, 0, 2, 3]));
    sb.write('big.txt', big('old'));
    sb.write('copy1.txt', 'same\nbefore\n');
    sb.write('copy2.txt', 'same\nbefore\n');
    sb.write('mode.sh', 'echo hi\n', 0o644);
    sb.write('gone.txt', 'was here\n');
    sb.write('server.key', 'KEY 1\n');
    sb.write('later.txt', 'first\n');
    sb.write('huge.txt', 'h'.repeat(1100 * 1024));
    fs.writeFileSync(path.join(sb.base, 'big-new.txt'), big('new'));
    sb.tb(['run', '--', 'sh', '-c', [
      "printf 'one\\n2\\nthree\\n' > a.txt",
      "printf 'one\\r\\n2\\r\\nthree' > crlf.txt",
      "printf '\\357\\273\\277one\\nTWO\\n' > bom.txt",
      "printf '\\001\\000\\005' > bin.dat",
      `cp ${JSON.stringify(path.join(sb.base, 'big-new.txt'))} big.txt`,
      "printf 'same\\nafter 1\\n' > copy1.txt",
      "printf 'same\\nafter 2\\n' > copy2.txt",
      'chmod 755 mode.sh',
      'rm gone.txt',
      "printf 'new\\n' > new.txt",
      "printf 'KEY 2\\n' > server.key",
      "printf 'second\\n' > later.txt",
      'printf x >> huge.txt',
    ].join(' && ')]);
    sb.write('later.txt', 'third\n');
    const id = sb.json(['list']).sets[0].id as string;

    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const shared = previewStep(opened, { ids: [id] }, 'undo');
      expect(shared).toEqual(previewStep(opened, { ids: [id] }, 'undo', { state: diskReader(opened) }));
      const byPath = new Map(shared.files.map((f) => [f.path, f]));
      expect(byPath.get('a.txt')!.diff).toBe('--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-2\n+two\n three\n');
      expect(byPath.get('crlf.txt')!.diff).toContain('-2\r\n-three\n\\ No newline at end of file\n+two\r\n+three\r\n');
      expect(byPath.get('bom.txt')!.diff).toContain('-TWO\n+two\n');
      expect(byPath.get('bin.dat')!.note).toBe('binary files differ');
      expect(byPath.get('big.txt')!.diff).toContain('-new line 3999\n');
      expect(byPath.get('big.txt')!.diff).toContain('+old line 0\n');
      expect(byPath.get('copy1.txt')!.diff).toContain('-after 1\n+before\n');
      expect(byPath.get('copy2.txt')!.diff).toContain('-after 2\n+before\n');
      expect(byPath.get('mode.sh')).toMatchObject({ action: 'restore-mode', note: 'mode 0755 → 0644', diff: null });
      expect(byPath.get('gone.txt')).toMatchObject({ action: 'bring-back', diff: '--- /dev/null\n+++ b/gone.txt\n@@ -0,0 +1,1 @@\n+was here\n' });
      expect(byPath.get('new.txt')).toMatchObject({ action: 'remove', diff: '--- a/new.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-new\n' });
      expect(byPath.get('huge.txt')).toMatchObject({ action: 'put-back', note: 'too large to show a diff', diff: null });
      expect(byPath.get('server.key')!.gap?.reason).toBe('secret');
      expect(byPath.get('later.txt')).toMatchObject({ conflict: { reason: 'changed-since' }, diff: '--- a/later.txt\n+++ b/later.txt\n@@ -1,1 +1,1 @@\n-third\n+first\n' });
    } finally {
      opened.journal.close();
    }

    // server.key (a secret) is left as it is: not a success.
    expect(sb.tb(['undo', id, '--force']).code).toBe(6);
    const again = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const redo = previewStep(again, { last: true }, 'redo');
      expect(redo.files.length).toBeGreaterThan(10);
      expect(redo).toEqual(previewStep(again, { last: true }, 'redo', { state: diskReader(again) }));
    } finally {
      again.journal.close();
    }
  });
});

describe('a preview of a merge reads the file once', () => {
  it('the plan\'s merge takes the bytes the plan read (the file gone from the disk since), and the diff takes them after it', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'one\ntwo\nthree\nfour\n');
    ws.tool(['f.txt'], () => ws.write('f.txt', 'one\nAGENT\nthree\nfour\n'));
    const now = Buffer.from('one\nAGENT\nthree\nfour mine\n');
    ws.write('f.txt', now);
    const readers = diskReaders(ws);
    const state = readers.state('f.txt', ws.abs('f.txt'));
    fs.rmSync(ws.abs('f.txt'));
    expect(readers.merge('f.txt', ws.abs('f.txt'), state)?.equals(now)).toBe(true);
    const bytes = readers.bytes('f.txt', ws.abs('f.txt'));
    expect(Buffer.isBuffer(bytes) && bytes.equals(now)).toBe(true);
  });
});
