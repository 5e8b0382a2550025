// A running sidecar starts the retention rules (expiry and the blob sweep) at start and every
// 6 hours, in idle slices of its own (test/gc-slices.test.ts): `$TAKEBACK_HOME/gc.json` records the sweep.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';

const BIN = path.join(import.meta.dirname, '..', 'bin', 'takeback.js');

it('takeback serve starts a sweep when one is due, and not again while it is not', async () => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-sidecar-gc-')));
  const home = path.join(base, 'home');
  fs.mkdirSync(path.join(base, 'ws', '.git'), { recursive: true });
  const env = { ...process.env, TAKEBACK_HOME: home };
  const stamp = path.join(home, 'gc.json');
  const finished = () => {
    try {
      return typeof JSON.parse(fs.readFileSync(stamp, 'utf8')).finished === 'number';
    } catch {
      return false; // not written yet
    }
  };
  /** Runs `takeback serve` until `done` resolves, then kills it. */
  const serveUntil = async (done: () => Promise<unknown>) => {
    const child = spawn(process.execPath, [BIN, 'serve'], { cwd: path.join(base, 'ws'), env, stdio: ['pipe', 'pipe', 'pipe'] });
    await done();
    child.kill('SIGKILL');
  };
  // The first sidecar runs until its sweep has written its report (the stamp's `finished`);
  // `first` is the stamp's mtime when it is first seen (the claim, or already the report).
  let first: number | undefined;
  await serveUntil(async () => {
    for (const deadline = Date.now() + 30_000; !finished() && Date.now() < deadline; ) {
      if (first === undefined && fs.existsSync(stamp)) first = fs.statSync(stamp).mtimeMs;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (first === undefined && fs.existsSync(stamp)) first = fs.statSync(stamp).mtimeMs;
  });
  expect(fs.existsSync(stamp)).toBe(true);
  expect(finished()).toBe(true);
  // Not due again for 6 hours: a second sidecar, given 1.5 s, leaves the stamp alone.
  const settled = fs.statSync(stamp).mtimeMs;
  await serveUntil(() => new Promise((r) => setTimeout(r, 1500)));
  expect(fs.statSync(stamp).mtimeMs).toBe(settled);
  expect(settled).toBeGreaterThanOrEqual(first!);
  fs.rmSync(base, { recursive: true, force: true });
});
