// Undo and redo write a small file over the one there in place (same inode, no temporary file
// and rename: bench/RESULTS.md says why), and everything else by rename. These tests pin which
// goes which way, that bytes, modes and other links come out right either way, and that a write
// in place cut short part-way is put back with the rest of its step.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sandbox } from './support/takeback.js';

const ino = (p: string) => fs.lstatSync(p).ino;
const isTemp = (rel: string) => /(^|\/)\.[^/]*\.takeback-[^/]*$/.test(rel);

describe('writing back in place', () => {
  it('a small file is written over in place (same inode), a large one replaced by rename; bytes and modes exact both ways', () => {
    const sb = sandbox();
    const small = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('first\r\nsecond\r\n'), Buffer.from([0xff, 0xfe, 0x00])]);
    const large = randomBytes(300 * 1024); // over the 256 KiB of a write in place
    sb.write('small.txt', small);
    sb.write('large.bin', large);
    sb.write('tool.sh', '#!/bin/sh\necho hi\n', 0o755);
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "more\\n" >> small.txt; printf x >> large.bin; chmod 644 tool.sh; printf "echo more\\n" >> tool.sh']).code).toBe(0);
    const after = sb.tree();
    const inodes = { small: ino(sb.abs('small.txt')), large: ino(sb.abs('large.bin')), tool: ino(sb.abs('tool.sh')) };

    expect(sb.json(['undo', '1']).written).toBe(true);
    expect(sb.read('small.txt').equals(small)).toBe(true); // shorter than what was there: truncated
    expect(sb.read('large.bin').equals(large)).toBe(true);
    expect(fs.statSync(sb.abs('tool.sh')).mode & 0o7777).toBe(0o755);
    expect(ino(sb.abs('small.txt'))).toBe(inodes.small);
    expect(ino(sb.abs('tool.sh'))).toBe(inodes.tool);
    expect(ino(sb.abs('large.bin'))).not.toBe(inodes.large);

    expect(sb.json(['redo', '1']).written).toBe(true);
    expect(sb.tree()).toEqual(after); // longer again: written past the old end
    expect(ino(sb.abs('small.txt'))).toBe(inodes.small);
    expect(Object.keys(sb.tree()).filter(isTemp)).toEqual([]);
  });

  it('a file with another hard link is replaced, never written through: the other link keeps its bytes', () => {
    const sb = sandbox();
    sb.write('linked.txt', 'original\n');
    const outside = path.join(sb.base, 'outside.txt');
    fs.linkSync(sb.abs('linked.txt'), outside);
    // The command writes through the file itself (both names see it: that is the command's doing).
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "agent\\n" > linked.txt']).code).toBe(0);
    expect(fs.readFileSync(outside, 'utf8')).toBe('agent\n');
    expect(sb.json(['undo', '1']).written).toBe(true);
    expect(sb.read('linked.txt').toString()).toBe('original\n');
    expect(fs.readFileSync(outside, 'utf8')).toBe('agent\n');
    expect(ino(sb.abs('linked.txt'))).not.toBe(ino(outside));
  });

  it('a link where a file was is replaced, not written through', () => {
    const sb = sandbox();
    sb.write('f.txt', 'kept\n');
    const target = path.join(sb.base, 'target.txt');
    fs.writeFileSync(target, 'not yours\n');
    expect(sb.tb(['run', '--', 'sh', '-c', `rm f.txt && ln -s ${target} f.txt`]).code).toBe(0);
    expect(sb.json(['undo', '1']).written).toBe(true);
    expect(fs.lstatSync(sb.abs('f.txt')).isFile()).toBe(true);
    expect(sb.read('f.txt').toString()).toBe('kept\n');
    expect(fs.readFileSync(target, 'utf8')).toBe('not yours\n');
  });

  it('a write in place that fails part-way (a file size limit) is put back with every other file of the step', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a before\n');
    // 200 KiB: written in place, and longer than the limit below (the journal stays well under it).
    const big = Buffer.from(randomBytes(150 * 1024).toString('base64'));
    sb.write('z.txt', big);
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "a after\\n" > a.txt; printf "short\\n" > z.txt']).code).toBe(0);
    const before = sb.tree();
    const zIno = ino(sb.abs('z.txt'));
    // `ulimit -f 120`: writes past 120 KiB fail with EFBIG. a.txt is written first (paths in
    // order), then z.txt gets 120 KiB in and fails.
    const r = spawnSync('bash', ['-c', `ulimit -f 120; exec "${process.execPath}" "${BIN}" undo 1`], { cwd: sb.ws, env: sb.env, encoding: 'utf8' });
    expect(r.signal).toBeNull();
    expect(r.status, r.stderr).not.toBe(0);
    expect(r.stderr).toMatch(/undo failed, nothing was changed: z\.txt: EFBIG/);
    expect(sb.tree()).toEqual(before);
    expect(ino(sb.abs('z.txt'))).toBe(zIno);
    expect(sb.json(['show', '1']).state).toBe('applied');
    expect(fs.readdirSync(sb.journalDir()).filter((n) => n.startsWith('txn-'))).toEqual([]);
    // Without the limit it goes through, in place.
    expect(sb.json(['undo', '1']).written).toBe(true);
    expect(sb.read('z.txt').equals(big)).toBe(true);
    expect(sb.read('a.txt').toString()).toBe('a before\n');
    expect(ino(sb.abs('z.txt'))).toBe(zIno);
  });
});
