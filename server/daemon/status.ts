import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { earlyAnswers, runDir, socketPath } from './address.js';
import { parseReady } from './http-address.js';
import { running } from './http-start.js';

/** What `doctor` says of the capture daemon under a home. */
export interface DaemonStatus {
  /** This install's daemon socket is there (a daemon runs, or one was killed and left it). */
  socket: boolean;
  /** The ports with a ready file (`run/http-<port>.pid`), and whether the process it names is alive. */
  http: { port: number; pid: number; alive: boolean }[];
  /**
   * Whether the daemon answers the hooks of this environment before their record is done where
   * the rule allows (a command's begin once its "before" is read, a command's end and a turn's end
   * at once); false with `TAKEBACK_HOOK_EARLY=0`: once recorded.
   */
  early: boolean;
}

/** The capture daemon's state under `home` (see {@link DaemonStatus}), read from `$TAKEBACK_HOME/run/` and `env`. Never throws. */
export function daemonStatus(home: string, env: NodeJS.ProcessEnv = process.env): DaemonStatus {
  const early = earlyAnswers(env);
  let names: string[] = [];
  try {
    names = readdirSync(runDir(home));
  } catch {
    return { socket: false, http: [], early };
  }
  const http: DaemonStatus['http'] = [];
  for (const n of names) {
    const m = /^http-(\d+)\.pid$/.exec(n);
    if (!m) continue;
    let ready = null;
    try {
      ready = parseReady(readFileSync(join(runDir(home), n), 'utf8'));
    } catch {
      continue;
    }
    if (ready) http.push({ port: Number(m[1]), pid: ready.pid, alive: running(ready.pid) });
  }
  return { socket: names.includes(basename(socketPath(home))), http, early };
}
