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
  const dir = join(home, 'logs');
  const file = join(dir, 'hook.log');
  if (opts.existingOnly) {
    try {
      appendLine(file, line, constants.O_NOFOLLOW);
    } catch {
      // No log there (the home going away): nothing said.
    }
    return;
  }
  try {
    try {
      if (appendLine(file, line, constants.O_CREAT, MAX_LOG_BYTES)) return;
      renameSync(file, `${file}.1`);
    } catch {
      // No folder yet (or the rotation lost a race with another process's): made, and tried once more.
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    }
    appendLine(file, line, constants.O_CREAT, MAX_LOG_BYTES);
  } catch {
    // Nowhere to log: stay silent rather than stand in the agent's way.
  }
}

/**
 * Appends `line` to `file`, opened for appending with `flags` besides (a file made is 0600): one
 * open, write and close, and an `fstat` when `maxBytes` is given (a daemon with debug logging
 * writes several lines an event, each on the agent's path). False, and nothing written, when the
 * file is past `maxBytes`. Throws what the open throws.
 */
function appendLine(file: string, line: string, flags: number, maxBytes?: number): boolean {
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | flags, 0o600);
  try {
    if (maxBytes !== undefined && fstatSync(fd).size > maxBytes) return false;
    writeSync(fd, line);
    return true;
  } finally {
    closeSync(fd);
  }
}
