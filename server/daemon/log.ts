import { createRequire } from 'node:module';
import { join } from 'node:path';

// `require`, not `import`, for node:fs: the hook's forwarding client logs through this too, and
// importing node:fs as an ES module loads fs/promises and the file streams (see core/package-info.ts).
const { closeSync, constants, fstatSync, mkdirSync, openSync, renameSync, writeSync } = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

/** Past this size (bytes) the hook log is rotated to `hook.log.1`. */
const MAX_LOG_BYTES = 1024 * 1024;

/** Lines {@link logHook} holds back while {@link holdHookLog} is in force: by home, whole lines in the order said. */
let held: Map<string, string[]> | null = null;

/**
 * Until the next {@link flushHookLog}, {@link logHook} keeps its lines in memory rather than write
 * each (an open, write and close): for the capture daemon until it answers the event in hand, so
 * that its debug lines cost the agent's path one append, written just before the answer (a hook
 * that has returned finds in the log all the daemon said before answering it). A line keeps the
 * time it was said at. What a process killed meanwhile held is lost with it.
 */
export function holdHookLog(): void {
  held ??= new Map();
}

/** Writes the lines held since {@link holdHookLog} (one append a log) and stops holding. Never throws. */
export function flushHookLog(): void {
  const h = held;
  held = null;
  if (h) for (const [home, lines] of h) writeLog(home, lines.join(''));
}

/**
 * Appends one line to `$TAKEBACK_HOME/logs/hook.log` (0600), or keeps it until
 * {@link flushHookLog} while {@link holdHookLog} is in force. Never throws: a logging failure
 * must never break the agent's tool call it is logging. With `existingOnly`, the line goes only
 * into a log that is there already (at once, never held), and nothing is created: for what a
 * process says as it leaves because its TAKEBACK_HOME is being taken away, where making the log
 * again would put a folder back into a home that is being removed.
 */
export function logHook(home: string, message: string, opts: { existingOnly?: boolean } = {}): void {
  const line = `${new Date().toISOString()} [${process.pid}] ${message}\n`;
  if (opts.existingOnly) {
    try {
      appendLine(join(home, 'logs', 'hook.log'), line, constants.O_NOFOLLOW);
    } catch {
      // No log there (the home going away): nothing said.
    }
    return;
  }
  if (held) {
    const lines = held.get(home);
    if (lines) lines.push(line);
    else held.set(home, [line]);
    return;
  }
  writeLog(home, line);
}

/** Appends `text` (whole lines) to the hook log under `home`, rotating it past {@link MAX_LOG_BYTES} and making its folder where missing. Never throws. */
function writeLog(home: string, text: string): void {
  const dir = join(home, 'logs');
  const file = join(dir, 'hook.log');
  try {
    try {
      if (appendLine(file, text, constants.O_CREAT, MAX_LOG_BYTES)) return;
      renameSync(file, `${file}.1`);
    } catch {
      // No folder yet (or the rotation lost a race with another process's): made, and tried once more.
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    }
    appendLine(file, text, constants.O_CREAT, MAX_LOG_BYTES);
  } catch {
    // Nowhere to log: stay silent rather than stand in the agent's way.
  }
}

/**
 * Appends `text` (whole lines) to `file`, opened for appending with `flags` besides (a file made
 * is 0600): one open, write and close, and an `fstat` when `maxBytes` is given. False, and nothing
 * written, when the file is past `maxBytes`. Throws what the open throws.
 */
function appendLine(file: string, text: string, flags: number, maxBytes?: number): boolean {
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | flags, 0o600);
  try {
    if (maxBytes !== undefined && fstatSync(fd).size > maxBytes) return false;
    writeSync(fd, text);
    return true;
  } finally {
    closeSync(fd);
  }
}
