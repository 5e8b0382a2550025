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
  const serveOnce = async () => {
    const child = spawn(process.execPath, [BIN, 'serve'], { cwd: path.join(base, 'ws'), env, stdio: ['pipe', 'pipe', 'pipe'] });
    await new Promise((r) => setTimeout(r, 1500));
    child.kill('SIGKILL');
  };
  await serveOnce();
  const stamp = path.join(home, 'gc.json');
  const deadline = Date.now() + 10_000;
  while (!fs.existsSync(stamp) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(fs.existsSync(stamp)).toBe(true);
  const first = fs.statSync(stamp).mtimeMs;
  // Not due again for 6 hours: a second sidecar leaves the stamp alone.
  await new Promise((r) => setTimeout(r, 2500)); // let the first sweep finish writing its report
  const settled = fs.statSync(stamp).mtimeMs;
  await serveOnce();
  expect(fs.statSync(stamp).mtimeMs).toBe(settled);
  expect(settled).toBeGreaterThanOrEqual(first);
  fs.rmSync(base, { recursive: true, force: true });
});
