import { createRequire } from 'node:module';
import { join } from 'node:path';
import { processState } from '../core/proc.js';
import { logHook } from './log.js';
import { runDir } from './address.js';
import { HTTP_FP_VAR, httpPortFrom, parseReady, readyFile, startingFile } from './http-address.js';
import { spawnDaemon } from './spawn.js';

// `require`: the hook loads this on every event, and the ES module namespace of node:fs loads
// more than these few calls need.
const require = createRequire(import.meta.url);
const { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync } = require('node:fs') as typeof import('node:fs');

/** A hook does not start a daemon when another hook started one less than this long ago (ms): it is still loading. */
export const START_BACKOFF_MS = 10_000;

/** The modification time of `file` (ms), or -Infinity when it is missing. */
function mtimeOf(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -Infinity;
  }
}

/** Sets `file`'s times to now, making it (0600) if it is missing. */
function touch(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  const now = new Date();
  utimesSync(file, now, now);
}

/**
 * True while process `pid` runs: `kill -0` succeeds and, where /proc tells (Linux), it is not a
 * zombie (died, not reaped yet: `kill -0` still succeeds on it, but it serves nothing).
 */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return processState(pid) !== 'Z';
}

/**
 * Claims the start of a daemon for `port`: makes `$TAKEBACK_HOME/run/http-<port>.starting`
 * exclusively (0600), so that of hooks that found no daemon at once only one starts it. A stamp
 * that no longer stands ({@link staleStart}) is taken away and claimed again, once. True when
 * this process holds the claim. Throws what the file system throws but EEXIST.
 */
function claimStart(home: string, port: number): boolean {
  const stamp = startingFile(home, port);
  mkdirSync(runDir(home), { recursive: true, mode: 0o700 });
  for (let tries = 0; tries < 2; tries++) {
    try {
      closeSync(openSync(stamp, 'wx', 0o600));
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (!staleStart(home, port, mtimeOf(stamp))) return false;
    // Moved aside under a name of this process's own, then looked at again: another hook may
    // have claimed anew between the look above and the move, and its fresh stamp is put back.
    const aside = `${stamp}.${process.pid}`;
    try {
      renameSync(stamp, aside);
    } catch {
      continue; // moved by another hook meanwhile: whichever makes it anew holds the claim
    }
    const fresh = !staleStart(home, port, mtimeOf(aside));
    try {
      if (fresh) linkSync(aside, stamp);
    } catch {
      // a newer claim is there already
    }
    try {
      unlinkSync(aside);
    } catch {
      // gone
    }
    if (fresh) return false;
  }
  return false;
}

/**
 * True when a start stamped at `started` (ms) no longer stands: {@link START_BACKOFF_MS} or more
 * ago, or its daemon got as far as its ready file (and has died since, as nothing is ready).
 */
function staleStart(home: string, port: number, started: number): boolean {
  return Date.now() - started >= START_BACKOFF_MS || mtimeOf(readyFile(home, port)) >= started;
}

/** Past a token mismatch, it is logged again only after this long (ms). */
const MISMATCH_LOG_MS = 10 * 60 * 1000;

/**
 * The daemon `$TAKEBACK_HOME/run/http-<port>.pid` names (`<pid> <token fingerprint>`) when that
 * process is alive (not a zombie): its pid and fingerprint; else null.
 */
export function readyDaemon(home: string, port: number): { pid: number; fp: string } | null {
  try {
    const ready = parseReady(readFileSync(readyFile(home, port), 'utf8'));
    return ready && running(ready.pid) ? ready : null;
  } catch {
    return null;
  }
}

/**
 * Called by an in-process hook after it handled its event: when `env` carries
 * `TAKEBACK_HOOK_HTTP_PORT` (the hooks `init claude-code --http` writes) and no daemon is ready
 * on that port, starts `takeback hook-daemon` (`bin`: the takeback script) detached, with `env`
 * (a daemon that runs but does not take these hooks' token — `TAKEBACK_HOOK_HTTP_FP` — is logged,
 * at most every 10 minutes),
 * unless another hook did so in the last {@link START_BACKOFF_MS} and that daemon has not yet
 * written its ready file (it is still loading). Returns true when it started
 * one. Never throws: without a daemon the hooks keep running in-process.
 */
export function startHttpDaemonIfNeeded(home: string, bin: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  const port = httpPortFrom(env);
  if (port === null || !bin || process.platform === 'win32') return false;
  try {
    const ready = readyDaemon(home, port);
    if (ready !== null) {
      // A daemon runs but these hooks' token is not its own (hooks made for another home, or a
      // token made anew): they run in-process, every one, until `init --http` is run again.
      const fp = env[HTTP_FP_VAR];
      const stamp = join(runDir(home), `http-${port}.mismatch`);
      if (fp && fp !== ready.fp && Date.now() - mtimeOf(stamp) > MISMATCH_LOG_MS) {
        touch(stamp);
        logHook(home, `http hooks in ${process.cwd()} carry a token the capture daemon of this TAKEBACK_HOME does not take: they run in-process (slower); run \`takeback init claude-code --http\` again there`);
      }
      return false;
    }
    if (!claimStart(home, port)) return false;
    const started = spawnDaemon(bin, env);
    if (started && env.TAKEBACK_LOG_LEVEL === 'debug') logHook(home, `hook: started a capture daemon for http hooks on 127.0.0.1:${port}`);
    return started;
  } catch {
    return false;
  }
}
