import { chmodSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { connect, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { logHook } from './log.js';
import { takebackHome } from '../core/home.js';
import { DEFAULT_IDLE_MS, FORWARDED_ENV, IDLE_VAR, MAX_SOCKET_PATH, daemonEnabled, runDir, socketPath, type ForwardRequest } from './address.js';
import { httpPortFrom, parseReady, readyFile, tokenFile } from './http-address.js';
import { httpToken, tokenFingerprint } from './http-token.js';
import { createHttpHookServer } from './http.js';
import { closeKeptEngines, keepEnginesOpen } from './engines.js';
import { createCaptureServer } from './server.js';

/*
 * `takeback hook-daemon`: the capture daemon's life. Started detached by a hook that found none
 * (server/cli/forward.ts, or an in-process hook with TAKEBACK_HOOK_HTTP_PORT set); one per
 * TAKEBACK_HOME and install (its socket is the lock: a second one finds it answering and
 * leaves); exits after a while without events, when its socket is taken away or replaced, when
 * its own code is rebuilt, and on SIGTERM/SIGINT/SIGHUP. With TAKEBACK_HOOK_HTTP_PORT it also
 * takes Claude Code's http hooks on 127.0.0.1 (http.ts, http-address.ts).
 */

/**
 * After it takes its ready file away, the daemon still takes http events this long (ms): a hook
 * whose command half read the file just before still has its http half answered. The event may
 * then be handled twice (here and by a hook that found no ready file): a second begin of a tool
 * call keeps the same "before", a second end finds nothing open — nothing is lost or doubled.
 */
const HTTP_GRACE_MS = 2000;

/** How long after its http port opens the daemon writes its ready file (ms; see where it is written). */
const READY_AFTER_MS = 1500;

/** Listens on 127.0.0.1:`port`; resolves the error, or null once listening. */
function listenHttp(server: HttpServer, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    server.once('error', resolve);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', resolve);
      resolve(null);
    });
  });
}

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

/**
 * Handles one hook event of `agent`, given as the text the agent wrote, as an in-process hook
 * would (cli/hook.ts): never throws; true when handled or rightly ignored. `bin` is the
 * takeback script.
 */
export type HookHandler = (agent: string, text: string, bin: string | undefined) => boolean;

/** Where the daemon stands between events (never a workspace: it would keep it busy). */
const REST_DIR = '/';

/**
 * `takeback hook-daemon` (hidden): serves hook events for the TAKEBACK_HOME of `env` on
 * `$TAKEBACK_HOME/run/capture-<version>-<install hash>.sock` (folder 0700, socket 0600) until
 * idle for `$TAKEBACK_HOOK_DAEMON_IDLE_MS` (default 30 minutes), and resolves to 0 then (and at
 * once when another daemon already serves there, when neither `TAKEBACK_HOOK_DAEMON=1` nor
 * `TAKEBACK_HOOK_HTTP_PORT` is set, or when the socket cannot be made: a hook then runs
 * in-process). With `TAKEBACK_HOOK_HTTP_PORT=<port>` it also serves http hooks on
 * 127.0.0.1:<port> and keeps `$TAKEBACK_HOME/run/http-<port>.pid` (its pid) while it does;
 * when that port cannot be had, the failure is logged and (without `TAKEBACK_HOOK_DAEMON=1`) it
 * leaves. Each event goes to `handle` (agent, the event's text as the agent wrote it, `bin`), the
 * hook's own handler, which never throws; `bin` is the takeback script (for the retention sweep
 * a session's start may launch). Failures are logged to hook.log, never thrown.
 */
export async function runDaemon(opts: { handle: HookHandler; env?: NodeJS.ProcessEnv; bin?: string }): Promise<number> {
  const env = opts.env ?? process.env;
  const bin = opts.bin ?? process.argv[1];
  const handleHookText = opts.handle;
  const httpPort = httpPortFrom(env);
  if ((!daemonEnabled(env) && httpPort === null) || process.platform === 'win32') return 0;
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

  // Journals stay open between events (their connections, their snapshot rows in memory).
  keepEnginesOpen(8);
  let stopping = false;
  let last = Date.now();
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));

  const capture = createCaptureServer({
    prepare(req: ForwardRequest) {
      if (stopping) return 'stopping';
      if (mtime(self) !== built) {
        shutdown('its code was rebuilt');
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
  let http: HttpServer | null = null;
  let httpOpen = false;
  let readyTimer: NodeJS.Timeout | undefined;
  let readyWritten = false;
  const ready = httpPort === null ? null : readyFile(home, httpPort);

  if (!(await bind(server, path))) {
    server.close();
    return 0;
  }
  server.on('error', (e) => {
    logHook(home, `hook daemon: ${e.stack ?? String(e)}`);
    shutdown('its socket failed');
  });
  const mine = inode(path);
  try {
    chmodSync(path, 0o600);
  } catch {
    // The folder is 0700 already.
  }

  if (httpPort !== null && ready !== null) {
    try {
      const token = httpToken(home);
      let lastRefusalLog = 0;
      http = createHttpHookServer({
        port: httpPort,
        token,
        handlers: {
          refused(status, why) {
            // Logged at most once a minute: a wrong token means hooks set up for another home.
            if (Date.now() - lastRefusalLog < 60_000) return;
            lastRefusalLog = Date.now();
            logHook(home, `hook daemon: refused an http request (${status} ${why})${status === 401 ? `: hooks made by \`init --http\` for another TAKEBACK_HOME, or before ${tokenFile(home)} was made anew; run \`takeback init claude-code --http\` again there (meanwhile they run in-process)` : ''}`);
          },
          handle(agent, text) {
            // Claude Code's events name their folder (`cwd`), which the hook goes by: the daemon
            // stays where it rests, and the body is parsed once, by the hook.
            handleHookText(agent, text, bin);
            last = Date.now();
            if (mtime(self) !== built) shutdown('its code was rebuilt');
          },
          touch() {
            last = Date.now();
          },
        },
      });
      const e = await listenHttp(http, httpPort);
      if (e) {
        logHook(home, `hook daemon: cannot take http hooks on 127.0.0.1:${httpPort} (${e.code ?? e.message}); the hooks run in-process`);
        http = null;
      } else {
        httpOpen = true;
        http.on('error', (err) => logHook(home, `hook daemon (http): ${err.stack ?? String(err)}`));
        // The ready file (which tells the command hooks beside the http ones to stand down) only
        // some time after listening: Claude Code sends an event to both at once, and an http
        // request made just before the port opened was refused. A command hook that finds the
        // file knows the daemon was listening well before its event was sent; one that does not
        // records the event itself (handled twice meanwhile, which Claude Code's ids make harmless).
        const fingerprint = tokenFingerprint(token);
        readyTimer = setTimeout(() => {
          if (stopping) return;
          writeFileSync(ready, `${process.pid} ${fingerprint}\n`, { mode: 0o600 });
          readyWritten = true;
        }, READY_AFTER_MS);
      }
    } catch (e) {
      logHook(home, `hook daemon: http hooks not served: ${(e as Error).stack ?? String(e)}`);
      http = null;
    }
    // Started for the http hooks alone, and unable to serve them: nothing to stay for.
    if (!http && !daemonEnabled(env)) {
      removeSocket();
      server.close();
      return 0;
    }
  }

  /** Removes the ready file if it is still this daemon's. */
  function removeReady(): void {
    if (!ready) return;
    try {
      if (readyIsMine()) unlinkSync(ready);
    } catch {
      // gone already
    }
  }

  /** True while the ready file names this daemon. */
  function readyIsMine(): boolean {
    try {
      return parseReady(readFileSync(ready!, 'utf8'))?.pid === process.pid;
    } catch {
      return false;
    }
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

  /** Stops taking events (`why`: logged when the daemon serves http hooks, whose users otherwise see no sign of it). */
  function shutdown(why: string): void {
    if (stopping) return;
    stopping = true;
    clearTimeout(readyTimer);
    if (httpOpen) logHook(home, `hook daemon ${process.pid}: leaving (${why}); http hooks run in-process until a hook starts another`);
    clearInterval(watch);
    // Taken away first, so that new hooks find no socket and no ready file (and run in-process) at once.
    removeSocket();
    removeReady();
    let open = httpOpen ? 2 : 1;
    const closed = () => {
      if (--open === 0) stop();
    };
    server.close(closed);
    // Events already queued are still served; then the last connection closes and so does the server.
    if (httpOpen && http) {
      const h = http;
      setTimeout(() => {
        h.close(closed);
        h.closeIdleConnections();
      }, HTTP_GRACE_MS);
    }
  }

  watch = setInterval(
    () => {
      // The socket removed or replaced (TAKEBACK_HOME deleted, another daemon after a race), idle too long, or rebuilt.
      if (inode(path) !== mine) shutdown('its socket was removed or replaced');
      else if (capture.pending() === 0 && Date.now() - last >= idleMs) shutdown('idle');
      else if (mtime(self) !== built) shutdown('its code was rebuilt');
      // The ready file taken away (TAKEBACK_HOME deleted) or taken over: this daemon's http hooks are no longer trusted to be served.
      else if (httpOpen && readyWritten && !readyIsMine()) shutdown('its ready file was removed or replaced');
    },
    Math.max(50, Math.min(1000, idleMs / 4)),
  );
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => shutdown(sig));
  process.on('uncaughtException', (e) => {
    logHook(home, `hook daemon failed: ${e.stack ?? String(e)}`);
    removeSocket();
    removeReady();
    process.exit(1);
  });

  await stopped;
  closeKeptEngines();
  // Anything left holding the event loop (a scan's worker) does not keep a stopped daemon alive.
  setTimeout(() => process.exit(0), 2000).unref();
  return 0;
}
