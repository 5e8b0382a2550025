import { lstatSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';
import type { ChangeHints } from './checker.js';
import { HeardPaths, type FileWatcher } from './watcher.js';

/*
 * A workspace's watcher through Watchman (through `fb-watchman`, its client library), chosen where
 * the `watchman` service answers (see {@link watchmanVersion}); watcher.ts's @parcel/watcher one
 * otherwise. The same shape (FileWatcher) and the same rules, with one difference that is why it
 * is here: its sync has no batching. @parcel/watcher hands events over only after a spell of
 * quiet (50 ms, or at once after 500 ms), so a cookie written for a sync is heard that late; a
 * Watchman query syncs with Watchman's own cookie (`sync_timeout`) and answers with every path
 * that moved since the clock of the last one (`since`), in about a millisecond.
 *
 * - Trust starts when the first clock is had (`trustedSince`, taken after it answered): a scan
 *   compared with a snapshot taken before that point, or within the racy window after it, gets
 *   no hints.
 * - A query answered with `is_fresh_instance` (Watchman restarted, or it recrawled after
 *   inotify's queue overflowed), more paths than the bound of the paths heard, or a failed query
 *   or connection start the trust again from the answer: what was heard before is dropped and
 *   the next scans walk (a lost connection is made anew at the next sync).
 * - Watchman crawls a folder created or moved in itself, so its files are heard like any other;
 *   the folder's own path is heard too, and a hinted scan checks every row under it.
 * - Watchman keeps its sync cookies in the `.git`, `.hg` or `.svn` folder at the root it watches,
 *   else at that root itself: outside git (and in a git worktree, whose `.git` is a file) an
 *   empty `.watchman-cookie-<host>-<pid>-<n>` at the workspace root, made and removed within each
 *   sync, as takeback's own cookie is there with @parcel/watcher. Every scan skips such an empty
 *   file (scan/filter.ts, isWatchCookieFile); one with bytes is a person's file, scanned as any.
 *   Watchman reports no path at its cookie folder named with its own server's prefix, a person's
 *   file so named included, so where the cookies go at the workspace root the watcher lists the
 *   root at each sync and names every entry of a cookie's name, present then or at the listing
 *   before (a removal): a hinted scan looks at them as a walk would.
 * - The root watched is Watchman's project root (`watch-project`): a `.watchmanconfig` above the
 *   workspace makes that folder the root, shared with the person's own tools that watch it, and
 *   the queries name the workspace under it (`relative_root`); its cookies then lie outside the
 *   workspace.
 * - A root Watchman did not watch before is watched only while this watcher runs (`watch-del`
 *   at its close): nothing of takeback's is left in the user's Watchman.
 */

/** The environment variable that turns Watchman off (`0`): the watcher is @parcel/watcher's. */
export const WATCHMAN_VAR = 'TAKEBACK_WATCHMAN';

/** How long a sync waits for Watchman (ms) before the scan walks instead. */
const SYNC_TIMEOUT_MS = 2000;

/** How long {@link watchmanVersion} waits for Watchman to answer (ms). */
const PROBE_TIMEOUT_MS = 3000;

/** More paths heard than this between scans (the TAKEBACK_WATCH_MAX_PATHS of watcher.ts), and the next scans walk. */
const DEFAULT_MAX_PATHS = 100_000;

/** The folders at a watched root into which Watchman puts its cookies (the first there of them); without one, the root itself. */
const COOKIE_DIRS = ['.git', '.hg', '.svn'];

/** How Watchman's sync cookies are named (`<prefix><host>-<pid>-<n>`). */
const WATCHMAN_COOKIE_PREFIX = '.watchman-cookie-';

interface WatchmanFile {
  name: string;
  exists: boolean;
  type: string;
}
interface WatchmanClient {
  command(args: unknown[], done: (err: Error | null, resp: Record<string, unknown>) => void): void;
  on(event: 'error' | 'end', fn: (e?: Error) => void): void;
  removeListener(event: 'error' | 'end', fn: (e?: Error) => void): void;
  end(): void;
}
interface FbWatchman {
  Client: new (opts?: { watchmanBinaryPath?: string }) => WatchmanClient;
}

let lib: FbWatchman | null | undefined;

/** fb-watchman, loaded on first use; null where it cannot load. */
function loadLib(): FbWatchman | null {
  if (lib !== undefined) return lib;
  try {
    lib = createRequire(import.meta.url)('fb-watchman') as FbWatchman;
  } catch {
    lib = null;
  }
  return lib;
}

/** How long one command may take before it counts as failed (ms): past a sync's own timeout. */
const ASK_TIMEOUT_MS = SYNC_TIMEOUT_MS + 1000;

/**
 * One command to Watchman: its answer, or a rejection (an error answer, or none within
 * {@link ASK_TIMEOUT_MS}: a connection lost mid-command may never answer, and a hook must not
 * wait for it).
 */
function ask(client: WatchmanClient, args: unknown[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    // fb-watchman reports a connection that fails or ends as an event, never to the command's callback.
    const lost = (e?: Error) => settle(e ?? new Error('watchman: connection ended'));
    const settle = (err: Error | null, resp?: Record<string, unknown>) => {
      clearTimeout(timer);
      client.removeListener('error', lost);
      client.removeListener('end', lost);
      if (err) reject(err);
      else resolve(resp!);
    };
    const timer = setTimeout(() => settle(new Error(`watchman ${String(args[0])}: no answer`)), ASK_TIMEOUT_MS);
    client.on('error', lost);
    client.on('end', lost);
    client.command(args, (err, resp) => settle(err, resp));
  });
}

/**
 * The version of the Watchman service this process would use (`watchman` on PATH, or the socket
 * `WATCHMAN_SOCK` names; the service is started when it is not running, as Watchman's own client
 * does), or null when there is none, it does not answer within {@link PROBE_TIMEOUT_MS}, or
 * `TAKEBACK_WATCHMAN=0`. Never rejects.
 */
export async function watchmanVersion(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const w = env[WATCHMAN_VAR] === '0' ? null : loadLib();
  if (!w) return null;
  const client = new w.Client();
  client.on('error', () => {});
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), PROBE_TIMEOUT_MS);
    });
    const r = await Promise.race([ask(client, ['version']), timeout]);
    return r && typeof r.version === 'string' ? r.version : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    client.end();
  }
}

function isDir(abs: string): boolean {
  try {
    return lstatSync(abs).isDirectory();
  } catch {
    return false;
  }
}

/** The names at folder `root` that begin as Watchman's cookies do (empty when it cannot be listed). Never throws. */
function cookieNamesIn(root: string): Set<string> {
  try {
    return new Set(readdirSync(root).filter((n) => n.startsWith(WATCHMAN_COOKIE_PREFIX)));
  } catch {
    return new Set();
  }
}

/**
 * One workspace watched through Watchman: the paths heard (workspace-relative, `/` separators)
 * with when a sync heard them (ms since the epoch), and since when it vouches for them. Start it
 * with {@link WatchmanWatcher.start}; it never throws.
 */
export class WatchmanWatcher implements FileWatcher {
  readonly kind = 'watchman';
  /** The paths heard, with when a sync last heard each. */
  private heard = new HeardPaths();
  /** From when the watcher vouches for {@link heard} (ms since the epoch); Infinity while it cannot. */
  private trustedSince = Infinity;
  private client: WatchmanClient | null = null;
  /** The clock of the last answer: the next query asks for what moved since. */
  private clock: string | null = null;
  /** The root Watchman watches (the workspace or a folder above it) and the workspace under it. */
  private watchRoot: string | null = null;
  private relativeRoot: string | null = null;
  /** Whether this watcher asked Watchman to watch {@link watchRoot} (and takes the watch away at close). */
  private ownWatch = false;
  private closed = false;
  private connecting = false;
  private readonly maxPaths: number;
  /** The ignored paths, relative to the workspace. */
  private readonly ignoreRel: string[];
  /**
   * Whether Watchman's cookies may go at the workspace root (no `.git`, `.hg` nor `.svn` folder
   * there), and the root's names of a cookie's form at the last listing (see the module's comment).
   */
  private readonly cookiesAtRoot: boolean;
  private rootCookies = new Set<string>();

  private constructor(
    readonly root: string,
    ignore: string[],
    env: NodeJS.ProcessEnv,
  ) {
    this.maxPaths = Number(env.TAKEBACK_WATCH_MAX_PATHS) > 0 ? Number(env.TAKEBACK_WATCH_MAX_PATHS) : DEFAULT_MAX_PATHS;
    this.ignoreRel = ignore.map((p) => relative(root, p).split(sep).join('/')).filter((r) => r !== '' && !r.startsWith('../'));
    this.cookiesAtRoot = !COOKIE_DIRS.some((d) => isDir(join(root, d)));
  }

  /**
   * Starts watching `root` (the watch is asked for in the background): null when `root` is not a
   * folder or fb-watchman cannot load. `ignore`: absolute paths under the root left out (the
   * journal's home when it lies inside).
   */
  static start(root: string, opts: { ignore?: string[]; env?: NodeJS.ProcessEnv } = {}): WatchmanWatcher | null {
    if (!isDir(root) || !loadLib()) return null;
    const w = new WatchmanWatcher(root, opts.ignore ?? [], opts.env ?? process.env);
    void w.connect();
    return w;
  }

  /** True once the first clock was had and nothing has made the watcher lose track since. */
  get trusted(): boolean {
    return this.trustedSince !== Infinity;
  }

  /** Connects, watches the root and takes the first clock; trust starts at its answer. */
  private async connect(): Promise<void> {
    const w = loadLib();
    if (!w || this.closed || this.connecting) return;
    this.connecting = true;
    const client = new w.Client();
    this.client = client;
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      this.trustedSince = Infinity;
      this.heard.clear();
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      const before = (await ask(client, ['watch-list'])).roots;
      const wp = await ask(client, ['watch-project', this.root]);
      this.watchRoot = String(wp.watch);
      this.relativeRoot = typeof wp.relative_path === 'string' ? wp.relative_path : null;
      this.ownWatch = !(Array.isArray(before) && before.includes(this.watchRoot));
      const c = await ask(client, ['clock', this.watchRoot, { sync_timeout: SYNC_TIMEOUT_MS }]);
      if (this.client !== client) return;
      this.clock = String(c.clock);
      this.heard.clear();
      this.trustedSince = Date.now();
      this.rootCookies = this.cookiesAtRoot ? cookieNamesIn(this.root) : new Set();
    } catch {
      // Watchman gone or refusing the root: every scan walks until a sync connects again.
      lost();
      client.end();
    } finally {
      this.connecting = false;
      // Closed while connecting: taken down now that the connection is settled.
      if (this.closed) this.close();
    }
  }

  /** What a query leaves out: git's own folder and the ignored paths. */
  private expression(): unknown[] {
    const out: unknown[] = [['dirname', '.git'], ['name', '.git', 'wholename']];
    for (const r of this.ignoreRel) out.push(['dirname', r], ['name', r, 'wholename']);
    return ['not', ['anyof', ...out]];
  }

  /**
   * Asks Watchman, synced with the workspace (its `sync_timeout`), for every path that moved
   * since the last answer, and keeps them as heard now. Resolves true when the watcher vouches
   * for them, false when it cannot (not trusted, not connected: a connection is started for the
   * next sync; a failed query; fresh instance). Never rejects.
   */
  async sync(): Promise<boolean> {
    if (this.closed) return false;
    const client = this.client;
    if (!client) {
      void this.connect();
      return false;
    }
    if (!this.trusted || !this.clock || !this.watchRoot) return false;
    try {
      const q: Record<string, unknown> = { since: this.clock, fields: ['name', 'exists', 'type'], expression: this.expression(), sync_timeout: SYNC_TIMEOUT_MS };
      if (this.relativeRoot) q.relative_root = this.relativeRoot;
      const r = await ask(client, ['query', this.watchRoot, q]);
      if (this.client !== client || this.closed) return false;
      const now = Date.now();
      this.clock = String(r.clock);
      const files = (r.files as WatchmanFile[] | undefined) ?? [];
      if (r.is_fresh_instance === true || this.heard.size + files.length > this.maxPaths) {
        // Watchman cannot say what moved since the last clock (or it is too much): trust starts now.
        this.heard.clear();
        this.trustedSince = now;
        if (this.cookiesAtRoot) this.rootCookies = cookieNamesIn(this.root);
        return true;
      }
      for (const f of files) this.heard.add(f.name, now);
      if (this.cookiesAtRoot) {
        // Listed after the synced answer: a name made before this sync is there, and one gone since the last listing is named too.
        const listed = cookieNamesIn(this.root);
        for (const n of this.rootCookies) this.heard.add(n, now);
        for (const n of listed) this.heard.add(n, now);
        this.rootCookies = listed;
      }
      return true;
    } catch {
      this.heard.clear();
      this.trustedSince = Infinity;
      this.client = null;
      client.end();
      return false;
    }
  }

  /** As WorkspaceWatcher.hints: the paths heard since `racyMs` (or since the last take), or undefined while the watcher cannot vouch for that snapshot. */
  hints(racyMs: number, sinceTaken = false): ChangeHints | undefined {
    if (!this.vouches(racyMs)) return undefined;
    return { paths: this.heard.take(racyMs, sinceTaken, new Set<string>()), sinceMs: this.trustedSince };
  }

  vouches(racyMs: number): boolean {
    return this.trusted && this.trustedSince <= racyMs;
  }

  quiet(racyMs: number): boolean {
    return this.vouches(racyMs) && this.heard.quiet;
  }

  /** Stops watching: the connection is ended, and a watch this watcher asked for is taken away (in the background). */
  close(): void {
    this.closed = true;
    this.trustedSince = Infinity;
    this.heard.clear();
    const client = this.client;
    if (!client || this.connecting) return;
    this.client = null;
    if (this.ownWatch && this.watchRoot) {
      const root = this.watchRoot;
      ask(client, ['watch-del', root]).then(
        () => client.end(),
        () => client.end(),
      );
    } else client.end();
  }
}
