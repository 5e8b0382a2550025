// Real full disks for the tests: a small tmpfs mounted on a fresh folder (root only on Linux; CI
// runs as root, so there the tests that need one run, and a machine that cannot mount fails them
// under CI's variables rather than skip them).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, onTestFinished } from 'vitest';

/** CI sets these: there a test that cannot run is a failure, never a skip. */
export const REQUIRED = ['TAKEBACK_REQUIRE_NATIVE', 'TAKEBACK_REQUIRE_EDITORS', 'TAKEBACK_REQUIRE_AGENTS'].some((v) => process.env[v] === '1');

/** True when this process can mount a tmpfs (root on Linux). */
export function canMount(): boolean {
  return process.platform === 'linux' && process.getuid?.() === 0;
}

/**
 * A tmpfs of `kib` KiB mounted on a fresh folder, unmounted (and the folder removed) when the
 * test ends. `fill()` takes every free block with a file; `free()` removes it.
 */
export function smallDisk(kib: number): { dir: string; fill(): void; free(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-full-'));
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${kib}k,mode=0700`, 'tmpfs', dir], { encoding: 'utf8' });
  if (m.status !== 0) throw new Error(`mount tmpfs: ${m.stderr}`);
  onTestFinished(() => {
    spawnSync('umount', ['-l', dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const filler = path.join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = fs.openSync(filler, 'w');
      const block = Buffer.alloc(4096, 1);
      try {
        for (;;) fs.writeSync(fd, block);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      } finally {
        fs.closeSync(fd);
      }
      expect(fs.statfsSync(dir).bavail).toBe(0);
    },
    free() {
      fs.rmSync(filler);
    },
  };
}
