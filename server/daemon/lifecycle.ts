import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { connect, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flushHookLog, holdHookLog, logHook } from './log.js';
import { takebackHome } from '../core/home.js';
import { DEFAULT_IDLE_MS, earlyAnswers, FORWARDED_ENV, IDLE_VAR, MAX_SOCKET_PATH, daemonEnabled, runDir, socketPath, type ForwardRequest } from './address.js';
import { httpPortFrom, parseReady, readyFile, tokenFile } from './http-address.js';
import { httpToken, tokenFingerprint } from './http-token.js';
import { running } from './http-start.js';
import { createHttpHookServer } from './http.js';
import { acquireWorkspace, closeKeptWorkspaces, keepWorkspacesOpen, releaseWorkspace } from './kept-workspaces.js';
import { createCaptureServer, type AnswerPoint } from './server.js';
import { closeUnrecorded, markUnrecorded, unmarkUnrecorded } from './unrecorded.js';
import type { QueuedOp } from '../core/capture/queued.js';
import { BackgroundBaselines, baselinePace } from '../core/capture/baseline.js';
import { WorkspaceFeed } from '../core/capture/watch-feed.js';
import { leanRowsFor, racyLineOf, useLeanRows } from '../core/capture/scan-commit.js';

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

/**
 * How long a daemon that holds its socket waits for its http port while another process holds it
 * (ms): a daemon leaving (its code rebuilt, its socket taken over) still answers there for
 * {@link HTTP_GRACE_MS}, and the one taking over would otherwise serve without http hooks for its
 * whole life, every hook of theirs in-process.
 */
const PORT_WAIT_MS = HTTP_GRACE_MS + 3000;
/** How often the port is tried again meanwhile (ms). */
const PORT_RETRY_MS = 200;

/** How long after its http port opens the daemon writes its ready file (ms; see where it is written). */
const READY_AFTER_MS = 1500;

/**
 * The variable that sets {@link READY_AFTER_MS} (ms, a positive number) for one daemon: to hold a
 * new daemon between its port opening and its ready file, as a daemon under load can be held.
 */
export const READY_VAR = 'TAKEBACK_HOOK_DAEMON_READY_MS';

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
 * takeback script; `fixed`, when given, is called where the event's record has read what it must
 * see (for an event answered at `fixed`, see {@link EventGuess}); `prepared`, what the
 * {@link HookPreparer} did ahead for this event (none: the handler does it all).
 */
export type HookHandler<P = unknown> = (agent: string, text: string, bin: string | undefined, fixed?: () => void, prepared?: P | null) => boolean;

/**
 * Does ahead of the {@link HookHandler}, for an event that scans, what needs no watcher (cli/hook.ts
 * prepareHookText: the event read, its journal opened), while the watcher syncs for the event:
 * the handler then starts from there once the sync is done. Run in the event's folder, with its
 * variables. Null when there is nothing to do ahead. Must not throw.
 */
export type HookPreparer<P = unknown> = (agent: string, text: string) => P | null;

/** What the daemon is told of a hook event before it handles it (agents/registry.ts's eventPlan, through cli/hook.ts). */
export interface EventGuess {
  /** False only when it surely scans nothing that a watcher's hints would help (then no sync is waited for). */
  scans: boolean;
  /** When its hook may be answered (see AnswerPoint in agents/registry.ts). */
  answer: AnswerPoint;
  /** For an event answered before its record: its folder and what stands for it should the record be lost (unrecorded.ts). */
  lost?: { cwd: string; ops: QueuedOp[] };
}

/** Tells the daemon what it needs of a hook event (agent, the event's text) before handling it. Never throws. */
export type EventGuesser = (agent: string, text: string) => EventGuess;

/**
 * `TAKEBACK_FIRST_SNAPSHOT`: `child` has every first snapshot the daemon is asked for made by a
 * child process, `here` none; unset, a child makes it where git's index is at least
 * {@link CHILD_SNAPSHOT_INDEX_BYTES} (see CaptureDaemon.firstSnapshotElsewhere).
 */
export const FIRST_SNAPSHOT_VAR = 'TAKEBACK_FIRST_SNAPSHOT';

/**
 * The size of git's index (bytes; about 100 bytes a tracked file) from which a workspace's first
 * snapshot is made by a child: about 170,000 files, where the walk's peak memory (about 680 MB at a
 * million files) outweighs Node's start (about 100 ms) in a walk of a second or more.
 */
export const CHILD_SNAPSHOT_INDEX_BYTES = 16 * 1048576;

/**
 * `TAKEBACK_LEAN_FILES`: from how many files in a workspace's last snapshot a daemon that watches
 * it holds none of its rows (default {@link LEAN_FILES}; see {@link leanFiles}).
 */
export const LEAN_FILES_VAR = 'TAKEBACK_LEAN_FILES';

/**
 * From this many files in a watched workspace's snapshot, the daemon holds none of its rows
 * between events (scan-commit.ts `useLeanRows`): a hinted scan reads the rows of the folders it
 * looks at, and an event whose scan would walk (the watcher not yet vouching for the snapshot,
 * or out of step) is handled by a child, as a first snapshot is. About as many files as
 * {@link CHILD_SNAPSHOT_INDEX_BYTES}: a million-file workspace's rows are about 100 MB, more than
 * the rest of the daemon, and @parcel/watcher holds about 300 MB of its own for it.
 */
export const LEAN_FILES = 150_000;

/** The files from which a watched workspace's rows are not held ({@link LEAN_FILES_VAR}, a positive number; else {@link LEAN_FILES}). */
export function leanFiles(env: NodeJS.ProcessEnv): number {
  const n = Number(env[LEAN_FILES_VAR]);
  return Number.isFinite(n) && n > 0 ? n : LEAN_FILES;
}

/** How long a workspace seen with its rows held skips the look for a child's work (ms; see CaptureDaemon.snapshotSeen). */
const SMALL_SEEN_MS = 60_000;

/** The size of `<root>/.git/index` in bytes, 0 when there is none (no git, or a worktree's `.git` file). */
function gitIndexBytes(root: string): number {
  try {
    return statSync(join(root, '.git', 'index')).size;
  } catch {
    return 0;
  }
}

/** Where the daemon stands between events (never a workspace: it would keep it busy). */
const REST_DIR = '/';

/**
 * `takeback hook-daemon` (hidden): serves hook events for the TAKEBACK_HOME of `env` on
 * `$TAKEBACK_HOME/run/capture-<version>-<install hash>.sock` (folder 0700, socket 0600) until
 * idle for `$TAKEBACK_HOOK_DAEMON_IDLE_MS` (default 30 minutes), and resolves to 0 then (and at
 * once when another daemon already serves there, when `TAKEBACK_HOOK_DAEMON=0` turns it off and no
 * `TAKEBACK_HOOK_HTTP_PORT` is set, or when the socket cannot be made: a hook then runs
 * in-process). With `TAKEBACK_HOOK_HTTP_PORT=<port>` it also serves http hooks on
 * 127.0.0.1:<port> and keeps `$TAKEBACK_HOME/run/http-<port>.pid` (its pid) while it does;
 * when that port cannot be had (another process holds it past {@link PORT_WAIT_MS}), the failure
 * is logged and (with `TAKEBACK_HOOK_DAEMON=0`) it leaves. Each event goes to `handle` (agent,
 * the event's text as the agent wrote it, `bin`), the hook's own handler, which never throws;
 * `bin` is the takeback script (for the retention sweep a session's start may launch). Failures
 * are logged to hook.log, never thrown.
 */
export async function runDaemon<P>(opts: { handle: HookHandler<P>; prepare?: HookPreparer<P>; plan?: EventGuesser; env?: NodeJS.ProcessEnv; bin?: string }): Promise<number> {
  const env = opts.env ?? process.env;
  const httpPort = httpPortFrom(env);
  if ((!daemonEnabled(env) && httpPort === null) || process.platform === 'win32') return 0;
  const home = takebackHome(env);
  const path = socketPath(home);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) return 0;
  const idleMs = Number(env[IDLE_VAR]) > 0 ? Number(env[IDLE_VAR]) : DEFAULT_IDLE_MS;
  if (!settle(home)) return 0;
  // Journals stay open between events (their connections, their snapshot rows in memory).
  keepWorkspacesOpen(8);
  // And each workspace whose events it serves is watched, its scans fed what moved.
  const feed = new WorkspaceFeed(home, 8, (m) => logHook(home, m), env);
  // A large workspace it watches: its rows are not held, its walks made by a child (CaptureDaemon.elsewhere).
  const lean = leanFiles(env);
  useLeanRows((root, meta) => meta.files >= lean && feed.watching(root));
  // A large workspace outside git gets its baseline's bytes kept between events, never on a hook's time.
  const baselines = new BackgroundBaselines((root, e) => acquireWorkspace({ workspace: root, env: e }), releaseWorkspace, (m) => logHook(home, m), baselinePace(env));
  const readyAfterMs = Number(env[READY_VAR]) > 0 ? Number(env[READY_VAR]) : READY_AFTER_MS;
  const daemon = new CaptureDaemon({ feed, baselines, home, path, idleMs, httpPort, readyAfterMs, alsoSocket: daemonEnabled(env), handle: opts.handle, prepare: opts.prepare, plan: opts.plan, bin: opts.bin ?? process.argv[1] });
  if (!(await daemon.start())) return 0;
  await daemon.stopped;
  baselines.close();
  useLeanRows(null);
  feed.close();
  closeKeptWorkspaces();
  closeUnrecorded(home);
  // Anything left holding the event loop (a scan's worker) does not keep a stopped daemon alive.
  setTimeout(() => process.exit(0), 2000).unref();
  return 0;
}

/** Makes the daemon's folder (0700) and files private (umask 077), and rests it in {@link REST_DIR}. False when it cannot. */
function settle(home: string): boolean {
  try {
    mkdirSync(runDir(home), { recursive: true, mode: 0o700 });
    chmodSync(runDir(home), 0o700);
    process.umask(0o077);
    process.chdir(REST_DIR);
    return true;
  } catch {
    return false;
  }
}

/** What a {@link CaptureDaemon} serves: see {@link runDaemon}. */
interface DaemonOptions<P> {
  home: string;
  /** Its socket. */
  path: string;
  /** How long it stays without an event (ms). */
  idleMs: number;
  /** The loopback port of Claude Code's http hooks, or null. */
  httpPort: number | null;
  /** How long after its port opens it writes its ready file (ms). */
  readyAfterMs: number;
  /** Whether it serves its socket for its own sake (unless `TAKEBACK_HOOK_DAEMON=0`), not only beside the http hooks. */
  alsoSocket: boolean;
  handle: HookHandler<P>;
  /** Run for an event that scans while the watcher syncs for it; its result goes to `handle`. */
  prepare: HookPreparer<P> | undefined;
  /** What an event needs (whether it may scan, when it is answered); without it, every event may scan and is answered once recorded. */
  plan: EventGuesser | undefined;
  bin: string | undefined;
  /** The watchers of the workspaces it serves. */
  feed: WorkspaceFeed;
  /** The baselines it keeps in the background: it is not idle while one is left. */
  baselines: BackgroundBaselines;
}

/**
 * One capture daemon's life: its socket and, with a port, its http hooks and their ready file;
 * the watch that ends it (idle, its socket or ready file taken away, its code rebuilt); and its
 * shutdown, which takes its files away first so that hooks run in-process at once.
 */
class CaptureDaemon<P> {
  /** Resolves once the daemon has stopped taking events and its servers have closed. */
  readonly stopped: Promise<void>;
  private stop: () => void = () => {};
  private stopping = false;
  private last = Date.now();
  /** This daemon's own code: rebuilt (a new install in place, `npm run build`), it stops serving. */
  private readonly self = fileURLToPath(import.meta.url);
  private readonly built = mtime(this.self);
  private readonly capture: ReturnType<typeof createCaptureServer>;
  private readonly ready: string | null;
  /**
   * The event folders whose workspace was seen with a snapshot whose rows the daemon holds (small,
   * or not watched), and when (ms, monotonic): for {@link SMALL_SEEN_MS} their events need no
   * child, so they skip its look (a journal acquired, its meta read). Looked at again after, as a
   * workspace may grow past {@link LEAN_FILES}; and never taken for small while its baseline is
   * kept in the background or it is over the limits, states that pass. By folder alone: every
   * event this daemon takes is of its own home (`prepare` refuses the others).
   */
  private readonly snapshotSeen = new Map<string, number>();
  /** What the watcher's sync before each event came to (see WorkspaceFeed.sync). */
  private readonly synced = new WeakMap<ForwardRequest, string>();
  /** What the preparer did for each event while the watcher synced (see HookPreparer). */
  private readonly prepared = new WeakMap<ForwardRequest, P | null>();
  /** The inode of the socket this daemon bound, null before. */
  private mine: number | null = null;
  private watch: NodeJS.Timeout | undefined;
  private http: HttpServer | null = null;
  private httpOpen = false;
  private readyTimer: NodeJS.Timeout | undefined;
  private readyWritten = false;

  constructor(private readonly o: DaemonOptions<P>) {
    this.stopped = new Promise<void>((resolve) => (this.stop = resolve));
    this.ready = o.httpPort === null ? null : readyFile(o.home, o.httpPort);
    // Each event's guess, made once when it is claimed.
    const guesses = new WeakMap<ForwardRequest, EventGuess>();
    const guess = (req: ForwardRequest): EventGuess => {
      let g = guesses.get(req);
      if (!g) {
        g = o.plan ? o.plan(req.agent, req.text) : { scans: true, answer: 'recorded' };
        guesses.set(req, g);
      }
      return g;
    };
    // When an event is answered: its guess's point, or once recorded where early answers are off.
    const answerAt = (req: ForwardRequest): AnswerPoint => (earlyAnswers(req.env) ? guess(req).answer : 'recorded');
    this.capture = createCaptureServer({
      prepare: (req: ForwardRequest) => {
        if (this.stopping) return 'stopping';
        if (this.rebuilt()) {
          this.shutdown('its code was rebuilt');
          return 'rebuilt';
        }
        if (req.env.TAKEBACK_HOME !== o.home) return 'another TAKEBACK_HOME';
        try {
          process.chdir(req.cwd);
        } catch {
          return 'no such folder';
        }
        // What is said about the event until its answer goes out in one append just before it (`beforeAnswer`).
        holdHookLog();
        return null;
      },
      answerAt,
      answering: (req: ForwardRequest) => {
        const lost = guess(req).lost;
        if (!lost) return false;
        if (req.env.TAKEBACK_LOG_LEVEL === 'debug') logHook(o.home, `event: answered before its record (${guess(req).answer})`);
        return markUnrecorded(o.home, lost.cwd, lost.ops, (m) => logHook(o.home, m));
      },
      recorded: () => unmarkUnrecorded(o.home),
      before: async (req: ForwardRequest, next: AbortSignal) => {
        const debug = req.env.TAKEBACK_LOG_LEVEL === 'debug';
        const started = debug ? performance.now() : 0;
        // An event answered as it is claimed keeps no agent waiting: it syncs whatever a walk would
        // cost (a sync that waits out @parcel/watcher's batch costs no work, and its hints spare the
        // next event the files this one reads), unless another event comes to wait behind it.
        const patient = answerAt(req) === 'claimed';
        const syncing = o.feed.sync(req.cwd, guess(req).scans, patient ? next : undefined);
        // While the sync is under way (its cookie or query sent, its answer not heard yet), an
        // event that scans is read and its journal opened: after the sync, only its actions are left.
        const prepare = o.prepare;
        if (prepare && guess(req).scans) this.prepared.set(req, withEnv(req.env, () => prepare(req.agent, req.text)));
        const done = await syncing;
        this.synced.set(req, done);
        if (debug) {
          // With the figures the choice was made by (a walk when it cost less than a sync and a hinted scan).
          const f = o.feed.lastFigures;
          const ms = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(1));
          logHook(o.home, `watch: ${done} before the event (${(performance.now() - started).toFixed(1)} ms; walk ${ms(f.walkMs)}, sync ${ms(f.syncMs)}${f.quickSyncMs === undefined ? '' : `, quick sync ${ms(f.quickSyncMs)}`}, hinted ${ms(f.hintedMs)})`);
        }
      },
      handle: (req: ForwardRequest, answer: () => void) => {
        const started = req.env.TAKEBACK_LOG_LEVEL === 'debug' ? performance.now() : 0;
        try {
          if (this.elsewhere(req)) return true;
          return withEnv(req.env, () => o.feed.scope(() => o.handle(req.agent, req.text, o.bin, answer, this.prepared.get(req))));
        } finally {
          if (started) logHook(o.home, `event: handled in ${(performance.now() - started).toFixed(1)} ms`);
          try {
            process.chdir(REST_DIR);
          } catch {
            // stays where it was
          }
        }
      },
      touch: () => {
        this.last = Date.now();
      },
      beforeAnswer: flushHookLog,
    });
  }

  /**
   * An event handled by a child of the daemon: the hook run in-process (`node <bin> hook <agent>`
   * with TAKEBACK_HOOK_DAEMON=0, the event on its stdin, in the event's folder and with its
   * variables), which the daemon waits for. Two kinds. The first snapshot of a large workspace
   * (git's index of at least {@link CHILD_SNAPSHOT_INDEX_BYTES}; or any, with
   * TAKEBACK_FIRST_SNAPSHOT=child): that walk (every path's row and rule verdict, git's index) is
   * the daemon's peak memory otherwise; the watcher was started by `before`, so it hears every
   * change after the child's walk. And an event that may scan a workspace whose rows the daemon
   * does not hold (a watched one of {@link LEAN_FILES} files or more: scan-commit.ts
   * `useLeanRows`) while the watcher cannot vouch for its snapshot (not yet trusted for it, out
   * of step, or a walk chosen): the walk would load every row. True when a child handled it (it
   * exits 0 whatever happened, having logged any failure); false, and the daemon handles the
   * event itself, in every other case or when no child could be run.
   */
  private elsewhere(req: ForwardRequest): boolean {
    const { bin, home, feed } = this.o;
    const asked = req.env[FIRST_SNAPSHOT_VAR] ?? process.env[FIRST_SNAPSHOT_VAR];
    // Not gated on the daemon's guess of what scans (`scans`) for a first snapshot: a session's
    // start makes it, yet no watcher's hints could help it, so that guess says it scans nothing.
    if (!bin || asked === 'here') return false;
    const seen = this.snapshotSeen.get(req.cwd);
    if (asked !== 'child' && seen !== undefined && performance.now() - seen < SMALL_SEEN_MS) return false;
    const done = this.synced.get(req);
    const why = withEnv(req.env, (): 'first snapshot' | 'walk' | null => {
      try {
        const ws = acquireWorkspace({ cwd: req.cwd });
        try {
          const meta = ws.journal.snapshot.meta();
          // No snapshot yet: a child makes the first where git's index says the workspace is large.
          if (meta === null) return asked === 'child' || gitIndexBytes(ws.root) >= CHILD_SNAPSHOT_INDEX_BYTES ? 'first snapshot' : null;
          if (!leanRowsFor(ws.root, meta)) {
            // Small, or its rows held (not watched): the next events of this folder skip this look
            // for a while (once the watcher is chosen, which says whether it is watched). A journal
            // wiped since only makes the daemon take that first snapshot itself.
            if (asked !== 'child' && feed.watcher !== null && meta.status === 'ok' && !meta.pending) this.snapshotSeen.set(req.cwd, performance.now());
            else this.snapshotSeen.delete(req.cwd);
            return null;
          }
          const walks = done === 'unsynced' || done === 'walk' || (done === 'synced' && !feed.wouldHint(ws.root, racyLineOf(meta)));
          return walks ? 'walk' : null;
        } finally {
          releaseWorkspace(ws);
        }
      } catch {
        // Not a workspace, or a journal that cannot be opened: the hook says why.
        return null;
      }
    });
    if (why === null) return false;
    const started = performance.now();
    const r = spawnSync(process.execPath, [bin, 'hook', req.agent], { cwd: req.cwd, env: { ...process.env, ...req.env, TAKEBACK_HOOK_DAEMON: '0' }, input: req.text, stdio: ['pipe', 'ignore', 'ignore'] });
    if (r.error || r.status !== 0) {
      logHook(home, `hook daemon: the ${why}'s child failed (${r.error?.message ?? (r.signal ? `signal ${r.signal}` : `exit ${r.status}`)}): handled here`);
      return false;
    }
    if (req.env.TAKEBACK_LOG_LEVEL === 'debug') logHook(home, `hook daemon: ${why === 'walk' ? 'a walk' : why} made by a child (pid ${r.pid}) in ${(performance.now() - started).toFixed(1)} ms`);
    return true;
  }

  private rebuilt(): boolean {
    return mtime(this.self) !== this.built;
  }

  /**
   * Takes the socket, then the http port when there is one, and starts the watch and the signal
   * handlers. False when there is nothing to serve: another daemon has the socket, or the http
   * port cannot be had by a daemon started for the http hooks alone.
   */
  async start(): Promise<boolean> {
    const { home, path } = this.o;
    const { server } = this.capture;
    if (!(await bind(server, path))) {
      server.close();
      return false;
    }
    server.on('error', (e) => {
      logHook(home, `hook daemon: ${e.stack ?? String(e)}`);
      this.shutdown('its socket failed');
    });
    this.mine = inode(path);
    try {
      chmodSync(path, 0o600);
    } catch {
      // The folder is 0700 already.
    }
    if (this.o.httpPort !== null) {
      await this.serveHttp(this.o.httpPort);
      // Started for the http hooks alone, and unable to serve them: nothing to stay for.
      if (!this.http && !this.o.alsoSocket) {
        this.removeSocket();
        server.close();
        return false;
      }
    }
    this.watch = setInterval(() => this.check(), Math.max(50, Math.min(1000, this.o.idleMs / 4)));
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => this.shutdown(sig));
    process.on('uncaughtException', (e) => {
      logHook(home, `hook daemon failed: ${e.stack ?? String(e)}`);
      this.removeSocket();
      this.removeReady();
      process.exit(1);
    });
    return true;
  }

  /** Serves Claude Code's http hooks on 127.0.0.1:`port`; `http` stays null when that cannot be done (logged). */
  private async serveHttp(port: number): Promise<void> {
    const { home } = this.o;
    try {
      const token = httpToken(home);
      let lastRefusalLog = 0;
      const http = createHttpHookServer({
        port,
        token,
        handlers: {
          refused(status, why) {
            // Logged at most once a minute: a wrong token means hooks set up for another home.
            if (Date.now() - lastRefusalLog < 60_000) return;
            lastRefusalLog = Date.now();
            logHook(home, `hook daemon: refused an http request (${status} ${why})${status === 401 ? `: hooks made by \`init --http\` for another TAKEBACK_HOME, or before ${tokenFile(home)} was made anew; run \`takeback init claude-code --http\` again there (meanwhile they run in-process)` : ''}`);
          },
          handle: (agent, text) => {
            // Claude Code's events name their folder (`cwd`), which the hook goes by: the daemon
            // stays where it rests, and the body is parsed once, by the hook.
            this.o.handle(agent, text, this.o.bin);
            this.last = Date.now();
            if (this.rebuilt()) this.shutdown('its code was rebuilt');
          },
          touch: () => {
            this.last = Date.now();
          },
        },
      });
      this.http = http;
      // A ready file left by a daemon that died (killed, or a zombie its parent never reaped,
      // which `kill -0` still finds) goes before the port opens: a command hook that found it
      // naming a live pid while this port answered would stand down for an event whose POST was
      // refused a moment before, and nobody would record it.
      this.removeStaleReady();
      let e = await listenHttp(http, port);
      const deadline = Date.now() + PORT_WAIT_MS;
      if (e?.code === 'EADDRINUSE' && process.env.TAKEBACK_LOG_LEVEL === 'debug') logHook(home, `hook daemon ${process.pid}: 127.0.0.1:${port} is taken; waiting up to ${PORT_WAIT_MS} ms for it`);
      // Only while this daemon still holds the socket: one that lost it leaves.
      while (e?.code === 'EADDRINUSE' && Date.now() < deadline && inode(this.o.path) === this.mine) {
        await new Promise((resolve) => setTimeout(resolve, PORT_RETRY_MS));
        e = await listenHttp(http, port);
      }
      if (e) {
        logHook(home, `hook daemon: cannot take http hooks on 127.0.0.1:${port} (${e.code ?? e.message}); the hooks run in-process`);
        this.http = null;
        return;
      }
      this.httpOpen = true;
      // This daemon holds the port now, so a ready file naming any other process is stale (a pid
      // reused since its daemon died, which kill -0 takes for alive).
      this.removeReadyOfOthers();
      http.on('error', (err) => logHook(home, `hook daemon (http): ${err.stack ?? String(err)}`));
      // The ready file (which tells the command hooks beside the http ones to stand down) only
      // some time after listening: Claude Code sends an event to both at once, and an http
      // request made just before the port opened was refused. A command hook that finds the
      // file knows the daemon was listening well before its event was sent; one that does not
      // records the event itself (handled twice meanwhile, which Claude Code's ids make harmless).
      const fingerprint = tokenFingerprint(token);
      const ready = this.ready!;
      this.readyTimer = setTimeout(() => {
        if (this.stopping) return;
        writeFileSync(ready, `${process.pid} ${fingerprint}\n`, { mode: 0o600 });
        this.readyWritten = true;
      }, this.o.readyAfterMs);
    } catch (e) {
      logHook(home, `hook daemon: http hooks not served: ${(e as Error).stack ?? String(e)}`);
      this.http = null;
    }
  }

  /** The watch: stops the daemon when its socket was removed or replaced (TAKEBACK_HOME deleted, another daemon after a race), when idle too long (no event, no baseline being kept), or rebuilt. */
  private check(): void {
    // A baseline being kept is work of the daemon's own: the idle time counts from its end, not
    // from the last event (a baseline longer than the idle time, in a quiet session, would
    // otherwise stop the daemon the moment it completed, and its watcher and rows with it).
    if (this.o.baselines.busy()) this.last = Date.now();
    if (inode(this.o.path) !== this.mine) this.shutdown('its socket was removed or replaced');
    else if (this.capture.pending() === 0 && Date.now() - this.last >= this.o.idleMs) this.shutdown('idle');
    else if (this.rebuilt()) this.shutdown('its code was rebuilt');
    // The ready file taken away (TAKEBACK_HOME deleted) or taken over: this daemon's http hooks are no longer trusted to be served.
    else if (this.httpOpen && this.readyWritten && !this.readyIsMine()) this.shutdown('its ready file was removed or replaced');
  }

  /** Removes the ready file if it is still this daemon's. */
  private removeReady(): void {
    if (!this.ready) return;
    try {
      if (this.readyIsMine()) unlinkSync(this.ready);
    } catch {
      // gone already
    }
  }

  /** Removes the ready file when the process it names is not running (a dead daemon's, or a zombie's). */
  private removeStaleReady(): void {
    try {
      const ready = parseReady(readFileSync(this.ready!, 'utf8'));
      if (ready && running(ready.pid)) return;
      unlinkSync(this.ready!);
    } catch {
      // none
    }
  }

  /** Removes the ready file when it names another process than this one. */
  private removeReadyOfOthers(): void {
    try {
      if (parseReady(readFileSync(this.ready!, 'utf8'))?.pid !== process.pid) unlinkSync(this.ready!);
    } catch {
      // none
    }
  }

  /** True while the ready file names this daemon. */
  private readyIsMine(): boolean {
    try {
      return parseReady(readFileSync(this.ready!, 'utf8'))?.pid === process.pid;
    } catch {
      return false;
    }
  }

  /** Removes the socket file if it is still this daemon's (not one a newer daemon bound since). */
  private removeSocket(): void {
    if (this.mine === null || inode(this.o.path) !== this.mine) return;
    try {
      unlinkSync(this.o.path);
    } catch {
      // gone already
    }
  }

  /** Stops taking events (`why`: logged when the daemon serves http hooks, whose users otherwise see no sign of it). */
  private shutdown(why: string): void {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.readyTimer);
    // Always said: a daemon that leaves early (its socket replaced, its code rebuilt) is otherwise
    // seen only as hooks gone slow. Its socket or ready file gone may be its home being removed:
    // then said only into a log still there, so that no folder is made again inside that home.
    const homeGoing = why.includes('removed');
    logHook(this.o.home, `hook daemon ${process.pid}: leaving (${why})${this.httpOpen ? '; http hooks run in-process until a hook starts another' : ''}`, { existingOnly: homeGoing });
    clearInterval(this.watch);
    // Taken away first, so that new hooks find no socket and no ready file (and run in-process) at once.
    this.removeSocket();
    this.removeReady();
    let open = this.httpOpen ? 2 : 1;
    const closed = () => {
      if (--open === 0) this.stop();
    };
    // Events already queued are still served, and the records of those answered early finished;
    // then the last connection closes and so does the server.
    this.capture.server.close(() => this.capture.whenIdle(closed));
    if (this.httpOpen && this.http) {
      const h = this.http;
      setTimeout(() => {
        h.close(closed);
        h.closeIdleConnections();
      }, HTTP_GRACE_MS);
    }
  }
}
