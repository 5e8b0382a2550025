import { createRequire } from 'node:module';

// `require`, and only when called: most hooks never start a daemon, and node:child_process's ES
// module namespace would load on every one.
const require = createRequire(import.meta.url);

/**
 * Starts `takeback hook-daemon` (`bin`: the takeback script) in a process of its own that
 * outlives this one (detached, no stdio, in `/`), with `env`. Returns true when it was started;
 * failing to start changes nothing (hooks keep running in-process). Never throws.
 */
export function spawnDaemon(bin: string, env: NodeJS.ProcessEnv): boolean {
  try {
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    const child = spawn(process.execPath, [bin, 'hook-daemon'], { detached: true, stdio: 'ignore', env, cwd: '/' });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
