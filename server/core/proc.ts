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
