// The capture daemon (`takeback hook-daemon`) of a sandbox, for the tests that start one or wait
// for the one a hook starts: where its socket is, whether it answers, and a daemon of the test's.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { until } from './procs.js';
import { tbSpawn, type Sandbox } from './takeback.js';

/** The daemon's socket file under the sandbox's home (`run/*.sock`), or null when there is none. */
export function socketFile(sb: Sandbox): string | null {
  try {
    const dir = path.join(sb.home, 'run');
    const name = fs.readdirSync(dir).find((n) => n.endsWith('.sock'));
    return name ? path.join(dir, name) : null;
  } catch {
    return null;
  }
}

/** Whether something accepts a connection on socket `file` (never rejects). */
export function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(file);
    s.on('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/**
 * Starts `takeback hook-daemon` for the sandbox (with `env` over its own) and waits, up to a
 * minute, until it answers. Killed when the test ends.
 */
export async function startDaemon(sb: Sandbox, env: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
  const child = tbSpawn(['hook-daemon'], { cwd: sb.ws, env: { ...sb.env, ...env } });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await until(
    'the daemon to answer',
    async () => {
      const f = socketFile(sb);
      return f !== null && (await answers(f));
    },
    60_000,
  );
  return child;
}
