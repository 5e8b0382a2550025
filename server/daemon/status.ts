import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDir, socketPath } from './address.js';

/** What `doctor` says of the capture daemon under a home. */
export interface DaemonStatus {
  /** This install's daemon socket is there (a daemon runs, or one was killed and left it). */
  socket: boolean;
  /** The ports with a ready file (`run/http-<port>.pid`), and whether the process it names is alive. */
  http: { port: number; pid: number; alive: boolean }[];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The capture daemon's state under `home` (see {@link DaemonStatus}), read from `$TAKEBACK_HOME/run/`. Never throws. */
export function daemonStatus(home: string): DaemonStatus {
  let names: string[] = [];
  try {
    names = readdirSync(runDir(home));
  } catch {
    return { socket: false, http: [] };
  }
  const http: DaemonStatus['http'] = [];
  for (const n of names) {
    const m = /^http-(\d+)\.pid$/.exec(n);
    if (!m) continue;
    let pid = NaN;
    try {
      pid = Number(readFileSync(join(runDir(home), n), 'utf8').trim().split(' ')[0]);
    } catch {
      continue;
    }
    if (Number.isInteger(pid) && pid > 0) http.push({ port: Number(m[1]), pid, alive: alive(pid) });
  }
  const sock = socketPath(home);
  return { socket: names.includes(sock.slice(runDir(home).length + 1)), http };
}
