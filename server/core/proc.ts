import { readFileSync } from 'node:fs';

/*
 * What the system says of another process, for the journal's lock holder, the spill's writers
 * and the daemons: whether it exists, and its state.
 */

/** True while process `pid` exists (`kill -0`; one of another user, which refuses it, counts). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Process `pid`'s state letter from `/proc/<pid>/stat` ("pid (comm) S …", the letter after the
 * last `)`): `R`, `S`, `T` stopped, `t` traced, `Z` a zombie…; null where /proc does not tell
 * (not Linux, or the process is gone).
 */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const at = stat.lastIndexOf(')') + 2;
    return stat.slice(at, at + 1) || null;
  } catch {
    return null;
  }
}

/**
 * When process `pid` started (the clock ticks since boot of `/proc/<pid>/stat`'s 22nd field), to
 * tell it from a later process given the same pid; null where /proc does not tell.
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * True while the process that was `pid` when it started at `start` (see {@link processStart};
 * null: not known) is alive: it exists, is not a zombie (killed, not yet reaped) and, where /proc
 * tells, started then.
 */
export function processAlive(pid: number, start: string | null): boolean {
  if (!processExists(pid)) return false;
  const state = processState(pid);
  if (state === 'Z' || state === 'X') return false;
  if (start === null || state === null) return true;
  return processStart(pid) === start;
}
