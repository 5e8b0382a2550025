import { createRequire } from 'node:module';
import { join } from 'node:path';

// `require`, not `import`, for node:fs: the hook's forwarding client logs through this too, and
// importing node:fs as an ES module loads fs/promises and the file streams (see core/package-info.ts).
const { appendFileSync, mkdirSync, renameSync, statSync } = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

/** Past this size (bytes) the hook log is rotated to `hook.log.1`. */
const MAX_LOG_BYTES = 1024 * 1024;

/**
 * Appends one line to `$TAKEBACK_HOME/logs/hook.log` (0600). Never throws: a logging failure
 * must never break the agent's tool call it is logging.
 */
export function logHook(home: string, message: string): void {
  try {
    const dir = join(home, 'logs');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, 'hook.log');
    try {
      if (statSync(file).size > MAX_LOG_BYTES) renameSync(file, `${file}.1`);
    } catch {
      // no log yet
    }
    appendFileSync(file, `${new Date().toISOString()} [${process.pid}] ${message}\n`, { mode: 0o600 });
  } catch {
    // Nowhere to log: stay silent rather than stand in the agent's way.
  }
}
