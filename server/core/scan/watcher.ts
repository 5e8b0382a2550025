import { closeSync, lstatSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';
import type { ChangeHints } from './checker.js';
import { WATCH_COOKIE_PREFIX, isWatchCookie, isWatchCookieFile } from './filter.js';
import { subscribeWatch, type Parcel, type ParcelEvent, type ParcelSubscription } from './watch-subscribe.js';

/*
 * A file watcher for a long-lived process (the capture daemon), after git's fsmonitor: it hears
 * what moved in a workspace from inotify (through @parcel/watcher, the library VS Code uses) and
 * hands a warm scan the paths to look at (ChangeHints) instead of a stat of every path. The walk
 * stays the rule whenever the watcher cannot vouch for what it heard:
 *
 * - Trust starts when the subscription is in place (`trustedSince`): a scan compared with a
 *   snapshot taken before that point, or within the racy window after it, gets no hints.
 * - A subscription that fails (a folder removed or swapped for a link while the library lists the
 *   tree before it watches) is tried again after {@link RESUBSCRIBE_FIRST_MS}, twice as long after
 *   each failure in a row, at most {@link RESUBSCRIBE_MAX_MS}; not when inotify's watches ran out.
 * - An error from the watcher (inotify's queue overflowed, a folder could not be watched), more
 *   paths than {@link WATCH_MAX_PATHS}, or more moved folders than {@link MAX_STALE_DIRS} start the
 *   trust again from that moment: what was heard before is dropped, and the next scans walk.
 * - Events arrive on their own schedule, so before a scan uses them the watcher syncs: it writes a
 *   cookie file and waits for inotify to report it (events come in order, so everything before
 *   the cookie has been heard), then removes it. The cookie goes into `.git/` when the workspace
 *   has a `.git` folder of its own; else at the workspace root, an empty file named after
 *   {@link WATCH_COOKIE_PREFIX}, which every scan skips (isWatchCookieFile: a person's file of
 *   that name with bytes in it is scanned) and the watcher never counts as heard (the cookie must
 *   lie inside the watched tree for inotify to report it, as Watchman's do). No cookie is written
 *   once the folder at the root's path is no longer the one watched (a link put in its place).
 *   A cookie left by a watcher killed mid-sync is removed when the next watcher of the root starts.
 * - A folder created or moved in is watched only from when the watcher sees it (a file made in it
 *   at once, or its subfolders after a move, may go unheard), so such a folder is named in every
 *   later set of hints: the scan then checks every row under it, as a walk would.
 */

/** More paths heard than this between scans, and the watcher gives up on them: the next scans walk. */
const DEFAULT_MAX_PATHS = 100_000;

/**
 * @parcel/watcher hands over what inotify reported at once when it handed nothing over for this
 * long (ms; its MAX_WAIT_TIME, one clock for every watcher of the process), else only once no
 * event came for 50 ms: a sync then waits that batch out. A little more here for the clocks'
 * difference and the hand-over itself.
 */
const PARCEL_QUIET_MS = 600;

/** When this process's @parcel/watcher last handed over events (performance.now(), ms), to any watcher. */
let parcelDeliveredMs = -Infinity;

/** The environment variable that bounds the paths heard between scans (a daemon's memory); default 100,000. */
export const WATCH_MAX_PATHS = 'TAKEBACK_WATCH_MAX_PATHS';

/** Folders created or moved in that are named in every set of hints: past this many, the watcher subscribes anew. */
const MAX_STALE_DIRS = 32;

/** How long a sync waits for its cookie (ms) before the scan walks instead. */
const SYNC_TIMEOUT_MS = 2000;

/** How long after a failed subscription the watcher tries again (ms), at first; doubled each failure in a row. */
const RESUBSCRIBE_FIRST_MS = 1000;

/** The longest wait between subscriptions that fail in a row (ms): each one lists the whole tree. */
const RESUBSCRIBE_MAX_MS = 5 * 60 * 1000;

/**
 * True when a subscription that failed with `err` may succeed if tried again: a folder removed or
 * swapped for a link while the library listed the tree or watched it (a build at work, a branch
 * switched). Not when inotify's watches ran out (the machine's limit: every try would list the
 * tree for nothing).
 */
function worthRetrying(err: unknown): boolean {
  return !/No space left on device|ENOSPC/.test(err instanceof Error ? err.message : String(err));
}

/**
 * The backend asked of @parcel/watcher: inotify on Linux, which the cookie sync above relies on
 * (events in order). Left to choose, it takes Watchman wherever a `watchman` program is on PATH,
 * and its Watchman backend deadlocks once the watched root is deleted (its error path waits for a
 * lock its own thread holds): the process can then never exit, not even by process.exit.
 * Elsewhere its own choice (FSEvents on macOS).
 */
const BACKEND: { backend?: 'inotify' } = process.platform === 'linux' ? { backend: 'inotify' } : {};

/** The folders of git's own that take most of its writes: not watched (the cookies go in `.git/` itself). */
const GIT_NOISE = ['objects', 'logs', 'refs', 'lfs', 'modules', 'worktrees'];

/**
 * What a long-lived process asks of a workspace's watcher, whichever library hears the changes
 * (this file's @parcel/watcher one, or watchman.ts's Watchman one).
 */
export interface FileWatcher {
  /** Which library hears the changes. */
  readonly kind: 'parcel' | 'watchman';
  /** The workspace root (a real path). */
  readonly root: string;
  /** True once the watcher vouches for what it hears (see the module's comment). */
  readonly trusted: boolean;
  /** Resolves true once every change made before the call has been heard, false when it cannot vouch. Never rejects. */
  sync(): Promise<boolean>;
  /**
   * For a watcher whose library batches what it hears: true when a sync now would wait for a
   * batch to close, false when its cookie would be heard at once. Absent: no such difference.
   */
  syncBatched?(): boolean;
  /**
   * The paths a scan whose snapshot's racy line is `racyMs` (ms since the epoch) must look at, or
   * undefined: walk. `sinceTaken`: that snapshot was written by the scan that took this watcher's
   * last hints, so only what was heard since that take is named (see {@link HeardPaths.take}).
   */
  hints(racyMs: number, sinceTaken?: boolean): ChangeHints | undefined;
  /** Whether {@link hints} would name what moved since a snapshot whose racy line is `racyMs` (ms since the epoch), taking nothing. */
  vouches(racyMs: number): boolean;
  /**
   * Whether {@link hints} with `sinceTaken` would name nothing for a snapshot whose racy line is
   * `racyMs`: the watcher vouches for it and has heard nothing since its last hints were taken.
   * Takes nothing.
   */
  quiet(racyMs: number): boolean;
  /** Stops watching. */
  close(): void;
}

/** Starts a watcher of `root` (null: it cannot be watched); `ignore` and `env` as {@link WorkspaceWatcher.start} takes them. */
export type StartWatcher = (root: string, opts: { ignore?: string[]; env?: NodeJS.ProcessEnv }) => FileWatcher | null;

/**
 * The paths a watcher heard (workspace-relative): when each was last heard (ms since the epoch),
 * and which were heard since the last set of hints was taken ({@link take}).
 */
export class HeardPaths {
  private readonly at = new Map<string, number>();
  private fresh = new Set<string>();

  /** How many paths are held. */
  get size(): number {
    return this.at.size;
  }

  /** `path` heard at `ms`. */
  add(path: string, ms: number): void {
    this.at.set(path, ms);
    this.fresh.add(path);
  }

  /** Whether no path was heard since the last {@link take}. */
  get quiet(): boolean {
    return this.fresh.size === 0;
  }

  /** Forgets every path (the watcher lost track of them). */
  clear(): void {
    this.at.clear();
    this.fresh.clear();
  }

  /**
   * Adds to `paths`, and returns it, the paths a scan must look at, and starts a new take. The
   * scan compares with a snapshot whose racy line is `racyMs`: without `sinceTaken`, every path
   * heard at or after that line. With `sinceTaken` (that snapshot was written by the scan that
   * took the last hints), only the paths heard since that take: that scan looked at every path
   * heard before it (those it was given, and before them those its own snapshot's scan looked
   * at), so a path it read and never heard again is as it read it, racy or not. Either way the
   * paths heard before `racyMs` are forgotten (the snapshot holds them).
   */
  take(racyMs: number, sinceTaken: boolean, paths: Set<string>): Set<string> {
    for (const [p, t] of this.at) {
      if (t < racyMs) this.at.delete(p);
      else if (!sinceTaken) paths.add(p);
    }
    if (sinceTaken) for (const p of this.fresh) paths.add(p);
    this.fresh = new Set();
    return paths;
  }
}

let parcel: Parcel | null | undefined;

/** @parcel/watcher, loaded on first use (only long-lived processes watch); null where it cannot load. */
function loadParcel(): Parcel | null {
  if (parcel !== undefined) return parcel;
  try {
    parcel = createRequire(import.meta.url)('@parcel/watcher') as Parcel;
  } catch {
    parcel = null;
  }
  return parcel;
}

function isDir(abs: string): boolean {
  try {
    return lstatSync(abs).isDirectory();
  } catch {
    return false;
  }
}

/** A folder's identity, `dev:ino` (null when `abs` is not a folder itself: gone, or a link). */
function folderId(abs: string): string | null {
  try {
    const st = lstatSync(abs);
    return st.isDirectory() ? `${st.dev}:${st.ino}` : null;
  } catch {
    return null;
  }
}

/** True when process `pid` runs on this machine (one that is not ours to signal runs too). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes from folder `root` the cookies left by watchers killed mid-sync: empty regular files of
 * a cookie's name ({@link isWatchCookieFile}) whose process (the pid in the name) is gone. The
 * scans skip them, but nothing else would ever take them out of the person's workspace. A cookie
 * of a process still running is left to it; so is a file of that name with bytes in it. Never throws.
 */
function removeLeftCookies(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    // Watchman's own cookies are its to remove.
    if (!name.startsWith(WATCH_COOKIE_PREFIX) || !isWatchCookie(name) || !isWatchCookieFile(root, name)) continue;
    if (processAlive(Number(name.slice(WATCH_COOKIE_PREFIX.length).split('-')[0]))) continue;
    try {
      unlinkSync(join(root, name));
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
}

/** True when `abs` is still the folder `id` ({@link folderId}) names, not a link nor another folder. */
function sameFolder(abs: string, id: string | null): boolean {
  return id !== null && folderId(abs) === id;
}

/**
 * One workspace watched: the paths heard (workspace-relative, `/` separators) with when they were
 * last heard (ms since the epoch), the folders named in every set of hints, and since when it
 * vouches for them. Start it with {@link WorkspaceWatcher.start}; it never throws.
 */
export class WorkspaceWatcher implements FileWatcher {
  readonly kind = 'parcel';
  /** The paths heard. */
  private heard = new HeardPaths();
  /** Folders created or moved in since the subscription (see the module's comment). */
  private stale = new Set<string>();
  /** From when the watcher vouches for {@link heard} (ms since the epoch); Infinity while it cannot. */
  private trustedSince = Infinity;
  private sub: ParcelSubscription | null = null;
  private closed = false;
  /** The next subscription's try after a failed one, and how long the one after it waits (ms). */
  private retry: NodeJS.Timeout | null = null;
  private retryMs = RESUBSCRIBE_FIRST_MS;
  private cookies = new Map<string, () => void>();
  /** The cookies this watcher made at the root whose removal it has not heard yet (absolute paths). */
  private made = new Set<string>();
  private seq = 0;
  private readonly gitDir: string;
  /** Where the cookies go: `.git/` when the workspace has that folder, else the root. */
  private readonly cookieDir: string;
  /** {@link cookieDir}'s identity when the watcher started ({@link folderId}). */
  private readonly cookieDirId: string | null;
  private readonly maxPaths: number;

  private constructor(
    /** The workspace root (a real path). */
    readonly root: string,
    /** Paths under the root never to watch (absolute: a TAKEBACK_HOME inside the workspace). */
    private readonly ignore: string[],
    env: NodeJS.ProcessEnv,
  ) {
    this.gitDir = join(root, '.git');
    this.cookieDir = isDir(this.gitDir) ? this.gitDir : root;
    this.cookieDirId = folderId(this.cookieDir);
    this.maxPaths = Number(env[WATCH_MAX_PATHS]) > 0 ? Number(env[WATCH_MAX_PATHS]) : DEFAULT_MAX_PATHS;
  }

  /**
   * Starts watching `root` (its subscription is made in the background): null when `root` is not
   * a folder, or @parcel/watcher cannot load here. `ignore`: absolute paths under the root left
   * out (the journal's home when it lies inside).
   */
  static start(root: string, opts: { ignore?: string[]; env?: NodeJS.ProcessEnv } = {}): WorkspaceWatcher | null {
    if (!isDir(root) || !loadParcel()) return null;
    const w = new WorkspaceWatcher(root, opts.ignore ?? [], opts.env ?? process.env);
    if (w.cookieDir === root) removeLeftCookies(root);
    w.subscribe();
    return w;
  }

  /** True once the subscription is in place and nothing has made it lose track since. */
  get trusted(): boolean {
    return this.trustedSince !== Infinity;
  }

  private subscribe(): void {
    const p = loadParcel();
    if (!p || this.closed) return;
    const ignore = [...(this.cookieDir === this.gitDir ? GIT_NOISE.map((d) => join(this.gitDir, d)) : []), ...this.ignore];
    subscribeWatch(p, this.root, (err, events) => this.onEvents(err, events), { ignore, ...BACKEND }).then(
      (sub) => {
        if (this.closed) {
          void sub.unsubscribe().catch(() => {});
          return;
        }
        this.sub = sub;
        this.retryMs = RESUBSCRIBE_FIRST_MS;
        this.trustedSince = Date.now();
      },
      (err: unknown) => {
        // Cannot watch now: every scan walks. A folder gone or swapped while the library listed
        // the tree is tried again, later and later; no inotify watches left, or the root gone, is not.
        this.sub = null;
        if (this.closed || !worthRetrying(err) || !isDir(this.root)) return;
        this.retry = setTimeout(() => {
          this.retry = null;
          this.subscribe();
        }, this.retryMs);
        this.retry.unref();
        this.retryMs = Math.min(this.retryMs * 2, RESUBSCRIBE_MAX_MS);
      },
    );
  }

  /** Forgets what was heard; trust starts again now (or, `restart`, once a new subscription is in place). */
  private loseTrack(restart: boolean): void {
    this.heard.clear();
    this.stale.clear();
    // A cookie's removal unheard by now may come later: heard then, it only hints the root.
    this.made.clear();
    if (!restart) {
      this.trustedSince = Date.now();
      return;
    }
    this.trustedSince = Infinity;
    const old = this.sub;
    this.sub = null;
    void (old ? old.unsubscribe().catch(() => {}) : Promise.resolve()).then(() => this.subscribe());
  }

  /** True when @parcel/watcher handed over events within {@link PARCEL_QUIET_MS}: a cookie written now waits for its batch. */
  syncBatched(): boolean {
    return performance.now() - parcelDeliveredMs < PARCEL_QUIET_MS;
  }

  private onEvents(err: Error | null, events: ParcelEvent[]): void {
    parcelDeliveredMs = performance.now();
    if (this.closed) return;
    if (err) {
      this.loseTrack(false);
      return;
    }
    const now = Date.now();
    for (const ev of events) {
      const rel = relative(this.root, ev.path).split(sep).join('/');
      // This watcher's own cookies, and git's own files, are never heard (the scans skip them). A
      // file merely named like a cookie (a person's, another process's cookie) is heard as any
      // other: the scan then tells a cookie from a person's file (isWatchCookieFile).
      if (this.made.has(ev.path)) {
        const done = this.cookies.get(ev.path);
        if (done && ev.type !== 'delete') done();
        if (ev.type === 'delete') this.made.delete(ev.path);
        continue;
      }
      if (rel === '.git' || rel.startsWith('.git/')) {
        const done = this.cookies.get(ev.path);
        if (done && ev.type !== 'delete') done();
        continue;
      }
      if (rel.startsWith('../')) continue;
      this.heard.add(rel, now);
      if (ev.type === 'create' && isDir(ev.path)) this.stale.add(rel);
    }
    if (this.stale.size > MAX_STALE_DIRS) this.loseTrack(true);
    else if (this.heard.size > this.maxPaths) this.loseTrack(false);
  }

  /**
   * Waits until every event of a change made before this call has been heard: writes a cookie
   * file (into `.git/`, or at the root: see the module's comment) and resolves true when the watcher reports it, false when it cannot vouch
   * (not trusted, no cookie can be written, or none heard within {@link SYNC_TIMEOUT_MS}).
   * Never rejects.
   */
  sync(): Promise<boolean> {
    if (!this.trusted || this.closed) return Promise.resolve(false);
    // The folder watched must still be the one at the root's path: one swapped for a link (to
    // outside the workspace) or another folder would take a cookie that was never the
    // workspace's, and no event of it would come.
    if (!sameFolder(this.cookieDir, this.cookieDirId)) return Promise.resolve(false);
    const cookie = join(this.cookieDir, `${WATCH_COOKIE_PREFIX}${process.pid}-${++this.seq}`);
    const atRoot = this.cookieDir === this.root;
    return new Promise<boolean>((resolve) => {
      let made = false;
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        this.cookies.delete(cookie);
        // Only a cookie this call made is removed: a file already at that name (a person's, a
        // link) is left as it is.
        if (made) {
          try {
            unlinkSync(cookie);
          } catch {
            // gone
          }
        }
        resolve(ok && this.trusted);
      };
      const timer = setTimeout(() => finish(false), SYNC_TIMEOUT_MS);
      this.cookies.set(cookie, () => finish(true));
      try {
        if (atRoot) this.made.add(cookie);
        // 'wx' (O_CREAT | O_EXCL) follows no link at the cookie's own name.
        closeSync(openSync(cookie, 'wx', 0o600));
        made = true;
      } catch {
        this.made.delete(cookie);
        finish(false);
      }
    });
  }

  /**
   * The hints for a scan whose last snapshot's racy line is `racyMs` (ms since the epoch: that
   * scan's start less the racy window): the paths heard since then (or, `sinceTaken`, since the
   * last hints were taken: see {@link HeardPaths.take}) and every folder created or moved in since
   * the subscription. Undefined while the watcher cannot vouch for that snapshot: the scan walks.
   */
  hints(racyMs: number, sinceTaken = false): ChangeHints | undefined {
    if (!this.vouches(racyMs)) return undefined;
    return { paths: this.heard.take(racyMs, sinceTaken, new Set<string>(this.stale)), sinceMs: this.trustedSince };
  }

  vouches(racyMs: number): boolean {
    return this.trusted && this.trustedSince <= racyMs;
  }

  /** The folders made or moved in since the subscription are named by every set of hints: none may be held. */
  quiet(racyMs: number): boolean {
    return this.vouches(racyMs) && this.stale.size === 0 && this.heard.quiet;
  }

  /** Stops watching (the subscription is taken down in the background). */
  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.trustedSince = Infinity;
    this.heard.clear();
    for (const done of [...this.cookies.values()]) done();
    const sub = this.sub;
    this.sub = null;
    if (sub) void sub.unsubscribe().catch(() => {});
  }
}

/**
 * The watchers of a long-lived process, one per workspace root, at most `max` (the least
 * recently used one is closed first).
 */
export class WorkspaceWatchers {
  private readonly byRoot = new Map<string, FileWatcher | null>();

  /** `start` makes each watcher (default: @parcel/watcher's, {@link WorkspaceWatcher.start}). */
  constructor(
    private readonly max = 8,
    private readonly start: StartWatcher = (root, opts) => WorkspaceWatcher.start(root, opts),
  ) {}

  /**
   * The watcher of `root`, started when there is none (null: that workspace cannot be watched,
   * see {@link WorkspaceWatcher.start}); `ignore` and `env` as there.
   */
  watch(root: string, opts: { ignore?: string[]; env?: NodeJS.ProcessEnv } = {}): FileWatcher | null {
    let w = this.byRoot.get(root);
    if (w === undefined) {
      w = this.start(root, opts);
      while (this.byRoot.size >= this.max) {
        const [oldest, ow] = this.byRoot.entries().next().value as [string, FileWatcher | null];
        this.byRoot.delete(oldest);
        ow?.close();
      }
    } else this.byRoot.delete(root);
    this.byRoot.set(root, w);
    return w;
  }

  /** The watcher of `root` when one runs (not started here). */
  get(root: string): FileWatcher | null {
    return this.byRoot.get(root) ?? null;
  }

  /** Stops every watcher. */
  closeAll(): void {
    for (const w of this.byRoot.values()) w?.close();
    this.byRoot.clear();
  }
}
