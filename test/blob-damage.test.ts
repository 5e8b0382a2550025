// A blob in the store that is not a regular file — a link to a FIFO or to /dev/zero, a FIFO in
// its place — is refused as damaged when an undo needs it: a clear error at once, before
// anything is written, never a hang or a read without end.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sandbox, sha256 } from './support/takeback.js';

const CASES: [string, (blob: string, base: string) => void][] = [
  ['a link to a FIFO', (blob, base) => {
    const fifo = path.join(base, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    fs.symlinkSync(fifo, blob);
  }],
  ['a link to /dev/zero', (blob) => fs.symlinkSync('/dev/zero', blob)],
  ['a FIFO', (blob) => expect(spawnSync('mkfifo', [blob]).status).toBe(0)],
];

describe('a blob that is not a regular file', () => {
  for (const [name, replace] of CASES) {
    it(`${name} in place of the blob an undo needs: refused as damaged at once, nothing written`, () => {
      const sb = sandbox();
      sb.write('a.txt', 'v1\n');
      sb.write('b.txt', 'b1\n');
      expect(sb.tb(['run', '--', 'true']).code).toBe(0);
      expect(sb.tb(['run', '--', 'sh', '-c', 'printf "v2\\n" > a.txt && printf "b2\\n" > b.txt']).code).toBe(0);
      const id = sb.json(['list']).sets[0].id as string;
      const h = sha256('v1\n');
      const blob = path.join(sb.home, 'blobs', h.slice(0, 2), h.slice(2));
      fs.rmSync(blob);
      replace(blob, sb.base);
      const t0 = Date.now();
      // SIGKILL at the time limit: a process blocked in open() on a FIFO does not act on SIGTERM.
      const r = spawnSync(process.execPath, [BIN, 'undo', id], { cwd: sb.ws, env: sb.env, encoding: 'utf8', timeout: 15_000, killSignal: 'SIGKILL' });
      expect(r.signal, 'undo was killed at the time limit').toBeNull();
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(r.status).toBe(5);
      expect(r.stderr).toMatch(/kept copy [0-9a-f]{12}… is damaged/);
      expect(sb.read('a.txt').toString()).toBe('v2\n');
      expect(sb.read('b.txt').toString()).toBe('b2\n');
      // Storing the same bytes again puts a regular file in its place.
      sb.write('c.txt', 'v1\n');
      expect(sb.tb(['run', '--', 'true']).code).toBe(0);
      expect(fs.lstatSync(blob).isFile()).toBe(true);
      expect(fs.readFileSync(blob).toString()).toBe('v1\n');
    });
  }
});
