import { createRequire } from 'node:module';
import { join } from 'node:path';

// `require`, not `import`, for node:fs: the hook's forwarding client logs through this too, and
// importing node:fs as an ES module loads fs/promises and the file streams (see core/package-info.ts).
const { closeSync, constants, fstatSync, mkdirSync, openSync, renameSync, writeSync } = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

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
  const dir = join(home, 'logs');
  const file = join(dir, 'hook.log');
  // One open, fstat, write and close a line while the log is there and small: a daemon with debug
  // logging writes several lines an event, each on the agent's path.
  const append = (): boolean => {
    const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
    try {
      if (fstatSync(fd).size > MAX_LOG_BYTES) return false;
      writeSync(fd, line);
      return true;
    } finally {
      closeSync(fd);
    }
  };
  try {
    try {
      if (append()) return;
      renameSync(file, `${file}.1`);
    } catch {
      // No folder yet (or the rotation lost a race with another process's): made, and tried once more.
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    }
    append();
  } catch {
    // Nowhere to log: stay silent rather than stand in the agent's way.
  }
}
