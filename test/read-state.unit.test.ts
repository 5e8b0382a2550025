// readState with the caller's own look (`seen`): a path the scan saw as a regular file is opened
// at once, and whatever is there by then — a FIFO, a link, a folder, nothing — is told as it is,
// never followed, never waited on. Real files in a temporary folder.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readState } from '../server/core/fsstate.js';

function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-read-state-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const LIMIT = { maxFileBytes: 1 << 20 };

describe('readState given the caller\'s look', () => {
  it('reads a regular file as without it: the same state, bytes and stat', () => {
    const dir = tmp();
    const f = path.join(dir, 'f.bin');
    fs.writeFileSync(f, Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0x0d, 0x0a, 0xff]), { mode: 0o755 });
    const seen = fs.lstatSync(f);
    const quick = readState(f, { ...LIMIT, seen });
    const plain = readState(f, LIMIT);
    expect(quick.state).toEqual(plain.state);
    expect(quick.state).toMatchObject({ exists: true, type: 'file', size: 7, mode: 0o755 });
    expect(quick.bytes).toEqual(plain.bytes);
    expect(quick.stat?.ino).toBe(seen.ino);
  });

  it('tells what replaced the file since the look: a FIFO (not waited on), a link (not followed), a folder, nothing', () => {
    const dir = tmp();
    const f = path.join(dir, 'f');
    fs.writeFileSync(f, 'was a file\n');
    const seen = fs.lstatSync(f);
    const target = path.join(dir, 'target');
    fs.writeFileSync(target, 'behind the link\n');

    fs.rmSync(f);
    expect(spawnSync('mkfifo', [f]).status).toBe(0);
    expect(readState(f, { ...LIMIT, seen })).toMatchObject({ state: { exists: true, type: 'file', sha256: null }, gap: 'unreadable' });

    fs.rmSync(f);
    fs.symlinkSync(target, f);
    expect(readState(f, { ...LIMIT, seen }).state).toEqual({ exists: true, type: 'symlink', target, mode: fs.lstatSync(f).mode & 0o7777 });

    fs.rmSync(f);
    fs.mkdirSync(f, { mode: 0o750 });
    expect(readState(f, { ...LIMIT, seen }).state).toEqual({ exists: true, type: 'dir', mode: fs.lstatSync(f).mode & 0o7777 });

    fs.rmdirSync(f);
    expect(readState(f, { ...LIMIT, seen }).state).toEqual({ exists: false });
  });

  it('keeps the limit and the secret rule whatever the look said', () => {
    const dir = tmp();
    const f = path.join(dir, 'big');
    fs.writeFileSync(f, 'x'.repeat(100));
    const seen = { mode: fs.lstatSync(f).mode, size: 10 }; // seen small, now over the limit
    expect(readState(f, { maxFileBytes: 50, seen })).toMatchObject({ state: { sha256: null, size: 100 }, gap: 'too-large' });
    expect(readState(f, { ...LIMIT, secret: true, seen: fs.lstatSync(f) })).toMatchObject({ state: { sha256: null }, gap: 'secret' });
  });
});
