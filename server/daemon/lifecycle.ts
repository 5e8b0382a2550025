import { chmodSync, mkdirSync, statSync, unlinkSync } from 'node:fs';
import { connect, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { logHook } from '../agents/log.js';
import { takebackHome } from '../core/home.js';
import { handleHookText } from '../cli/hook.js';
import { DEFAULT_IDLE_MS, FORWARDED_ENV, IDLE_VAR, MAX_SOCKET_PATH, daemonEnabled, runDir, socketPath, type ForwardRequest } from './address.js';
import { createCaptureServer } from './server.js';

/*
 * `takeback hook-daemon`: the capture daemon's life. Started detached by a hook that found none
 * (server/cli/forward.ts); one per TAKEBACK_HOME and install (its socket is the lock: a second
 * one finds it answering and leaves); exits after a while without events, when its socket is
 * taken away or replaced, when its own code is rebuilt, and on SIGTERM/SIGINT/SIGHUP.
 */

/** Binds `server` to `path`; resolves the error, or null once listening. */
function listen(server: Server, path: string): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const onError = (e: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      resolve(e);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(null);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(path);
  });
}

/** True when something answers on the socket at `path` (another daemon). */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.on('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/**
 * Takes the socket at `path`: binds it, or, when the file is there but nothing answers (a daemon
 * was killed), removes it and binds again. False when another daemon answers there, or binding
 * fails.
 */
async function bind(server: Server, path: string): Promise<boolean> {
  let e = await listen(server, path);
  if (e?.code === 'EADDRINUSE') {
    if (await answers(path)) return false;
    try {
      unlinkSync(path);
    } catch {
      // Gone meanwhile: bind again all the same.
    }
    e = await listen(server, path);
  }
  return e === null;
}

function inode(path: string): number | null {
  try {
    return statSync(path).ino;
  } catch {
    return null;
  }
}

function mtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
}

/**
 * Runs `fn` with `process.env` as the hook process had it for the variables the daemon is given
 * (those matching FORWARDED_ENV: set to `vars`' values, removed when `vars` lacks them), then
 * puts them back. The hook code reads `process.env` (and passes it to `git`), so it sees what an
 * in-process hook would.
 */
function withEnv<T>(vars: Record<string, string>, fn: () => T): T {
  const saved = new Map<string, string | undefined>();
  for (const k of Object.keys(process.env)) {
    if (FORWARDED_ENV.test(k) && !(k in vars)) {
      saved.set(k, process.env[k]);
      delete process.env[k];
    }
  }
  for (const [k, v] of Object.entries(vars)) {
    if (!FORWARDED_ENV.test(k)) continue;
    saved.set(k, process.env[k]);
    process.env[k] = v;
  }
  try {
    return fn();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Where the daemon stands between events (never a workspace: it would keep it busy). */
const REST_DIR = '/';

/**
 * `takeback hook-daemon` (hidden): serves hook events for the TAKEBACK_HOME of `env` on
 * `$TAKEBACK_HOME/run/capture-<version>-<install hash>.sock` (folder 0700, socket 0600) until
 * idle for `$TAKEBACK_HOOK_DAEMON_IDLE_MS` (default 30 minutes), and resolves to 0 then (and at
 * once when another daemon already serves there, when `TAKEBACK_HOOK_DAEMON` is not `1`, or when the
 * socket cannot be made: a hook then runs in-process). `bin` is the takeback script (for the
 * retention sweep a session's start may launch). Failures are logged to hook.log, never thrown.
 */
export async function runDaemon(opts: { env?: NodeJS.ProcessEnv; bin?: string } = {}): Promise<number> {
  const env = opts.env ?? process.env;
  const bin = opts.bin ?? process.argv[1];
  if (!daemonEnabled(env) || process.platform === 'win32') return 0;
  const home = takebackHome(env);
  const path = socketPath(home);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) return 0;
  const idleMs = Number(env[IDLE_VAR]) > 0 ? Number(env[IDLE_VAR]) : DEFAULT_IDLE_MS;
  // This daemon's own code: rebuilt (a new install in place, `npm run build`), it stops serving.
  const self = fileURLToPath(import.meta.url);
  const built = mtime(self);
  try {
    mkdirSync(runDir(home), { recursive: true, mode: 0o700 });
    chmodSync(runDir(home), 0o700);
    process.umask(0o077);
    process.chdir(REST_DIR);
  } catch {
    return 0;
  }

  let stopping = false;
  let last = Date.now();
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));

  const capture = createCaptureServer({
    prepare(req: ForwardRequest) {
      if (stopping) return 'stopping';
      if (mtime(self) !== built) {
        shutdown();
        return 'rebuilt';
      }
      if (req.env.TAKEBACK_HOME !== home) return 'another TAKEBACK_HOME';
      try {
        process.chdir(req.cwd);
      } catch {
        return 'no such folder';
      }
      return null;
    },
    handle(req: ForwardRequest) {
      try {
        return withEnv(req.env, () => handleHookText(req.agent, req.text, bin));
      } finally {
        try {
          process.chdir(REST_DIR);
        } catch {
          // stays where it was
        }
      }
    },
    touch() {
      last = Date.now();
    },
  });
  const { server } = capture;
  let watch: NodeJS.Timeout | undefined;

  if (!(await bind(server, path))) {
    server.close();
    return 0;
  }
  server.on('error', (e) => {
    logHook(home, `hook daemon: ${e.stack ?? String(e)}`);
    shutdown();
  });
  const mine = inode(path);
  try {
    chmodSync(path, 0o600);
  } catch {
    // The folder is 0700 already.
  }

  /** Removes the socket file if it is still this daemon's (not one a newer daemon bound since). */
  function removeSocket(): void {
    if (mine === null || inode(path) !== mine) return;
    try {
      unlinkSync(path);
    } catch {
      // gone already
    }
  }

  function shutdown(): void {
    if (stopping) return;
    stopping = true;
    clearInterval(watch);
    // Taken away first, so that new hooks find no socket (and run in-process) at once.
    removeSocket();
    server.close(() => stop());
    // Events already queued are still served; then the last connection closes and so does the server.
  }

  watch = setInterval(
    () => {
      // The socket removed or replaced (TAKEBACK_HOME deleted, another daemon after a race), idle too long, or rebuilt.
      if (inode(path) !== mine || (capture.pending() === 0 && Date.now() - last >= idleMs) || mtime(self) !== built) shutdown();
    },
    Math.max(50, Math.min(1000, idleMs / 4)),
  );
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, shutdown);
  process.on('uncaughtException', (e) => {
    logHook(home, `hook daemon failed: ${e.stack ?? String(e)}`);
    removeSocket();
    process.exit(1);
  });

  await stopped;
  // Anything left holding the event loop (a scan's worker) does not keep a stopped daemon alive.
  setTimeout(() => process.exit(0), 2000).unref();
  return 0;
}
