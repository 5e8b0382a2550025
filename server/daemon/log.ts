import { createRequire } from 'node:module';
import { join } from 'node:path';

// `require`, not `import`, for node:fs: the hook's forwarding client logs through this too, and
// importing node:fs as an ES module loads fs/promises and the file streams (see core/package-info.ts).
const { appendFileSync, closeSync, constants, mkdirSync, openSync, renameSync, statSync, writeSync } = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

/** Past this size (bytes) the hook log is rotated to `hook.log.1`. */
const MAX_LOG_BYTES = 1024 * 1024;

/**
 * Appends one line to `$TAKEBACK_HOME/logs/hook.log` (0600). Never throws: a logging failure
 * must never break the agent's tool call it is logging. With `existingOnly`, the line goes only
 * into a log that is there already, and nothing is created: for what a process says as it leaves
 * because its TAKEBACK_HOME is being taken away, where making the log again would put a folder
 * back into a home that is being removed.
 */
export function logHook(home: string, message: string, opts: { existingOnly?: boolean } = {}): void {
  const line = `${new Date().toISOString()} [${process.pid}] ${message}\n`;
  if (opts.existingOnly) {
    try {
      const fd = openSync(join(home, 'logs', 'hook.log'), constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
      try {
        writeSync(fd, line);
      } finally {
        closeSync(fd);
      }
    } catch {
      // No log there (the home going away): nothing said.
    }
    return;
  }
  try {
    const dir = join(home, 'logs');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, 'hook.log');
    try {
      if (statSync(file).size > MAX_LOG_BYTES) renameSync(file, `${file}.1`);
    } catch {
      // no log yet
    }
    appendFileSync(file, line, { mode: 0o600 });
  } catch {
    // Nowhere to log: stay silent rather than stand in the agent's way.
  }
}
