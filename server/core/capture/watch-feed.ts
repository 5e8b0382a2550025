import { realpathSync } from 'node:fs';
import { useQuietSnapshots } from './command.js';
import { useChangeHints } from './scan-commit.js';
import { workspaceRootOf } from '../open-workspace.js';
import { WorkspaceWatcher, WorkspaceWatchers, type FileWatcher } from '../scan/watcher.js';
import { WatchmanWatcher, watchmanVersion } from '../scan/watchman.js';
import { switchedOff } from '../switch.js';

/*
 * The file watchers of a long-lived process (the capture daemon, the sidecar), one per workspace
 * it serves (core/scan/watcher.ts): the first operation on a workspace starts its watcher, and each
 * later one first syncs with it, so that the scans it runs check only what the watcher heard. A
 * scan gets hints only inside {@link WorkspaceFeed.scope}, from a watcher synced for that very
 * operation; any other scan walks.
 *
 * A sync is waited for only when it is worth it. An event that scans nothing (the caller says so)
 * starts the watcher without waiting. And for each workspace the feed keeps running figures
 * (exponential averages, ms) of its walks and of its hinted scans, each without what it read
 * of what changed (read either way, see ScanTimer), and of its syncs: when a walk has
 * cost less than a sync and a hinted scan together, the operation walks without waiting (a walk
 * is always right), which on a small tree is cheaper than @parcel/watcher's batching. The
 * figures start unknown, and unknown means sync: the first scans of a new watcher walk anyway
 * (it is not trusted yet), which gives the walk its figure. While the walk is chosen the sync and
 * the hinted scan are not measured, so one sync slowed by a passing load would keep a workspace
 * walking for good: every so many walks chosen in a row, an operation syncs anyway, to measure
 * again (see {@link walkInstead}). An operation nobody waits for (an event answered as it is
 * claimed) syncs where the walk would be chosen, until another operation waits behind it: the
 * wait costs no work, and its hints spare the next operation the files it read.
 *
 * The watcher is Watchman's (scan/watchman.ts) where the Watchman service answers when the
 * first workspace is watched, in git or not: its sync costs about a millisecond against
 * @parcel/watcher's batching, and its tree of paths lives in Watchman's process, not in ours.
 * Outside git both put a cookie at the workspace root for a moment, of a name every scan skips
 * when empty. @parcel/watcher's (scan/watcher.ts) otherwise.
 */

/**
 * The environment variable that, set to `always`, makes every event that scans wait for the sync
 * whatever a walk would cost (the tests of the hints on small trees, and benches of the sync).
 */
export const WATCH_SYNC_VAR = 'TAKEBACK_WATCH_SYNC';

/**
 * The environment variable that, set to `0` (or `false`, `off`, `no`) where a long-lived process
 * starts, has it watch nothing: every scan walks, as git without fsmonitor does. For a file system
 * whose changes no watcher hears (a network mount, a folder shared into a virtual machine), or
 * where inotify's watches are better left to other tools. The process still keeps its journals
 * and their snapshot rows open between operations.
 */
export const WATCH_VAR = 'TAKEBACK_WATCH';

/** False when {@link WATCH_VAR} turns the watcher off in `env`. */
export function watchEnabled(env: NodeJS.ProcessEnv): boolean {
  return !switchedOff(env[WATCH_VAR]);
}

/** The weight of the newest figure in a running average. */
const NEWEST_WEIGHT = 0.5;

/** Walks chosen in a row before the first sync made anyway to measure the sync again. */
export const WALKS_BEFORE_RESYNC = 8;

/** The most walks chosen in a row between two syncs made to measure again. */
export const MOST_WALKS_BEFORE_RESYNC = 256;

/**
 * While the walk is chosen over one kind of sync: how many walks were chosen in a row since the
 * last sync of that kind (`walked`), and how many may be before the next (`between`).
 */
export interface WalkRun {
  walked: number;
  between: number;
}

/**
 * A workspace's running figures (ms), undefined until first measured; and, for each kind of sync
 * while the walk is chosen over it (`quick`: one the watcher hears at once; `batched`: one that
 * waits for the watcher's batch), the run of walks since the last sync of that kind. Each kind
 * keeps its own run: the sync made to measure again after a run of walks must be of the kind
 * whose figure chose them, or a figure measured once under a passing load (the first quick sync of
 * a new watcher, say) would never be measured again while the other kind's syncs take every turn.
 */
export interface Figures {
  walkMs?: number;
  hintedMs?: number;
  syncMs?: number;
  /** The syncs made while the watcher said it would hear the cookie at once (see FileWatcher.syncBatched). */
  quickSyncMs?: number;
  runs?: { quick?: WalkRun; batched?: WalkRun };
}

function average(old: number | undefined, ms: number): number {
  return old === undefined ? ms : old + NEWEST_WEIGHT * (ms - old);
}

/**
 * Whether the next operation on a workspace with figures `f` walks instead of syncing (updates
 * `f`'s run of walks for that kind of sync): when its walk has cost less than a sync (`quick`: one
 * the watcher hears at once, `quickSyncMs`; else `syncMs`) and a hinted scan together, except that
 * after {@link WALKS_BEFORE_RESYNC} walks in a row one operation syncs, to measure the sync and the
 * hinted scan again. Each such sync after which the walk is still the cheaper makes the next one
 * come twice as late (up to {@link MOST_WALKS_BEFORE_RESYNC} walks): a workspace that is truly
 * cheaper to walk pays a sync now and then, one whose sync was measured under a passing load is
 * back to syncing after a few operations. The runs of the two kinds are counted apart (see
 * {@link Figures}).
 */
export function walkInstead(f: Figures, quick = false): boolean {
  const syncMs = quick ? f.quickSyncMs : f.syncMs;
  const kind = quick ? 'quick' : 'batched';
  const runs = (f.runs ??= {});
  const cheaper = f.walkMs !== undefined && syncMs !== undefined && f.walkMs < syncMs + (f.hintedMs ?? 0);
  if (!cheaper) {
    delete runs[kind];
    return false;
  }
  const run = (runs[kind] ??= { walked: 0, between: WALKS_BEFORE_RESYNC });
  if (run.walked < run.between) {
    run.walked++;
    return true;
  }
  run.walked = 0;
  run.between = Math.min(2 * run.between, MOST_WALKS_BEFORE_RESYNC);
  return false;
}

/** What `p` resolves to, or null once `signal` is aborted first. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise<T | null>((resolve) => {
    const stop = () => resolve(null);
    signal.addEventListener('abort', stop, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', stop);
        resolve(v);
      },
      () => {
        signal.removeEventListener('abort', stop);
        resolve(null);
      },
    );
  });
}

/** Which watcher a process's feed uses: `watchman` (with the service's version), `parcel`, or `none` ({@link WATCH_VAR}: every scan walks). */
export interface WatcherChoice {
  kind: 'watchman' | 'parcel' | 'none';
  version?: string;
}

/**
 * The watcher a feed in this process would use: none where {@link WATCH_VAR} turns it off;
 * Watchman's where the service answers (see watchmanVersion; `TAKEBACK_WATCHMAN=0` turns it
 * off), else @parcel/watcher's. Never rejects.
 */
export async function chooseWatcher(env: NodeJS.ProcessEnv = process.env): Promise<WatcherChoice> {
  if (!watchEnabled(env)) return { kind: 'none' };
  const version = await watchmanVersion(env);
  return version ? { kind: 'watchman', version } : { kind: 'parcel' };
}

/** The watchers of one process and the hint source its scans ask. */
export class WorkspaceFeed {
  private readonly watchers: WorkspaceWatchers;
  /** Which watcher serves, once chosen (at the first sync). */
  private choice: Promise<WatcherChoice> | null = null;
  private chosen: WatcherChoice | null = null;
  private readonly figures = new Map<string, Figures>();
  /** The workspace whose watcher was synced for the operation about to run, or null. */
  private ready: string | null = null;
  /** How many syncs were started: the number of the latest. */
  private syncs = 0;
  /** The running figures the last {@link sync} chose by (ms), for the log; empty before. */
  lastFigures: Readonly<Figures> = {};
  /** The workspace whose scans get hints now (inside {@link scope}), or null. */
  private synced: string | null = null;
  /**
   * Per workspace root, the watcher that gave the last hints and the generation of the snapshot
   * the scan given them wrote (null until it wrote one).
   */
  private readonly lastTake = new Map<string, { watcher: FileWatcher | null; gen: string | null }>();
  /** The home as given, and its real path (to tell whether it lies inside a workspace). */
  private readonly home: string;
  private readonly realHome: string;

  /**
   * Watches up to `max` workspaces whose journals are under the TAKEBACK_HOME `home`, and becomes
   * this process's hint source (see useChangeHints). `log`, when given, hears each scan given
   * hints (with `TAKEBACK_LOG_LEVEL=debug` at the time).
   */
  constructor(
    home: string,
    max: number,
    private readonly log?: (message: string) => void,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.watchers = new WorkspaceWatchers(max, (root, opts) => (this.chosen?.kind === 'watchman' ? (WatchmanWatcher.start(root, opts) ?? WorkspaceWatcher.start(root, opts)) : WorkspaceWatcher.start(root, opts)));
    let real = home;
    try {
      real = realpathSync(home);
    } catch {
      // not made yet: compared as given
    }
    this.home = home;
    this.realHome = real;
    useChangeHints((root, racyMs, gen) => {
      if (root !== this.synced) return undefined;
      const w = this.watchers.get(root);
      // The last hints of this watcher went to the scan that wrote the snapshot compared with now:
      // only what was heard since is named (see HeardPaths.take).
      const last = this.lastTake.get(root);
      const sinceTaken = gen !== null && last?.gen === gen && last.watcher === w;
      this.lastTake.set(root, { watcher: w ?? null, gen: null });
      const hints = w?.hints(racyMs, sinceTaken);
      // Named by the workspace's own watcher: where fb-watchman cannot load, a process that chose Watchman watches with @parcel/watcher.
      if (hints && this.log && process.env.TAKEBACK_LOG_LEVEL === 'debug') this.log(`watch: hints for ${root} (${hints.paths.size} paths, ${w?.kind})`);
      return hints;
    }, (root, ms, hinted) => {
      const f = this.figuresOf(root);
      if (hinted) f.hintedMs = average(f.hintedMs, ms);
      else f.walkMs = average(f.walkMs, ms);
    }, (root, gen) => {
      const last = this.lastTake.get(root);
      if (last && last.gen === null) last.gen = gen;
    });
    useQuietSnapshots((root, gen, racyMs) => {
      const by = root === this.synced ? this.quietBy(root, gen, racyMs) : null;
      if (by && this.log && process.env.TAKEBACK_LOG_LEVEL === 'debug') this.log(`watch: hints for ${root} (none since its snapshot: a command begun on it without a scan, ${by})`);
      return by !== null;
    });
  }

  private figuresOf(root: string): Figures {
    let f = this.figures.get(root);
    if (!f) this.figures.set(root, (f = {}));
    return f;
  }

  /** The watcher that serves this feed's workspaces (chosen at the first sync, so null before). */
  get watcher(): WatcherChoice | null {
    return this.chosen;
  }

  /** The running figures of the workspace at `root` (ms; see the module's comment), for the log and tests. */
  figuresFor(root: string): Readonly<Figures> {
    return { ...this.figures.get(root) };
  }

  /**
   * Before an operation on the workspace of `cwd`: starts its watcher if there is none, else
   * (when the operation `scans` and the sync is worth it, see the module's comment) waits until
   * it has heard every change made so far (see FileWatcher.sync); the next {@link scope} then
   * gives its scans hints. Never rejects; a workspace that cannot be watched is left to the walk.
   * Resolves to what was done: `synced` (hints given), `walk` (no sync: a walk costs less),
   * `unsynced` (the watcher could not vouch: not trusted yet, or its sync failed), `none`
   * (nothing scans), `unwatched` (the watcher is off, see {@link WATCH_VAR}, or the workspace
   * cannot be watched). `patient`, for an operation nobody waits for: where the figures
   * would walk it syncs all the same, and stops waiting (`walk`) once the signal is aborted.
   */
  async sync(cwd: string, scans = true, patient?: AbortSignal): Promise<'synced' | 'walk' | 'unsynced' | 'none' | 'unwatched'> {
    this.ready = null;
    this.lastFigures = {};
    // Only the latest sync readies the hints: one still in flight from an event dropped before it
    // was handled started before the changes the next event must see.
    const mine = ++this.syncs;
    try {
      if (!this.choice) {
        this.choice = chooseWatcher(this.env).then((c) => {
          this.chosen = c;
          if (this.log && this.env.TAKEBACK_LOG_LEVEL === 'debug') this.log(c.kind === 'none' ? `watch: no watcher (${WATCH_VAR}=${this.env[WATCH_VAR]}): every scan walks` : `watch: the watcher is ${c.kind === 'watchman' ? `Watchman ${c.version}` : '@parcel/watcher'}`);
          return c;
        });
      }
      // Once chosen, no await before the cookie is written: the sync starts as the event is claimed.
      if ((this.chosen ?? (await this.choice)).kind === 'none') return 'unwatched';
      const root = workspaceRootOf(this.home, { cwd });
      const inside = this.realHome === root || this.realHome.startsWith(`${root}/`);
      // A watcher started now cannot vouch for this operation yet: its sync says so.
      const w = this.watchers.watch(root, { ignore: inside ? [this.realHome] : [] });
      if (!w) return 'unwatched';
      if (!scans) return 'none';
      const f = this.figuresOf(root);
      this.lastFigures = { ...f };
      const always = this.env[WATCH_SYNC_VAR] === 'always';
      // A watcher that batches what it hears says when a sync now would wait for its batch: such
      // syncs and the others have figures of their own.
      const quick = w.syncBatched ? !w.syncBatched() : false;
      // Where the walk costs less, an operation nobody waits for syncs all the same, until another waits behind it.
      const walk = !always && walkInstead(f, quick);
      if (walk && (!patient || patient.aborted)) return 'walk';
      const started = performance.now();
      const ok = walk ? await untilAborted(w.sync(), patient!) : await w.sync();
      if (ok === null) return 'walk';
      if (ok && quick) f.quickSyncMs = average(f.quickSyncMs, performance.now() - started);
      else if (ok) f.syncMs = average(f.syncMs, performance.now() - started);
      if (mine !== this.syncs) return 'unsynced';
      this.ready = ok ? root : null;
      return ok ? 'synced' : 'unsynced';
    } catch {
      if (mine === this.syncs) this.ready = null;
      return 'unsynced';
    }
  }

  /** Whether a watcher of this feed watches the workspace at `root` (started, and able to). */
  watching(root: string): boolean {
    return this.chosen !== null && this.chosen.kind !== 'none' && this.watchers.get(root) !== null;
  }

  /**
   * Whether the scans of the operation about to run on the workspace at `root` would be given
   * hints for a snapshot whose racy line is `racyMs` (ms since the epoch): its watcher was synced
   * for that operation and vouches for that snapshot. Takes nothing.
   */
  wouldHint(root: string, racyMs: number): boolean {
    return this.ready === root && (this.watchers.get(root)?.vouches(racyMs) ?? false);
  }

  /**
   * Which watcher (its library) says nothing moved in the workspace at `root` since its snapshot of
   * generation `gen` (racy line `racyMs`, ms since the epoch): that snapshot was written by the
   * scan given the watcher's last hints, and the watcher vouches for it and has heard nothing
   * since. Null when none can say so. Takes nothing.
   */
  private quietBy(root: string, gen: string, racyMs: number): FileWatcher['kind'] | null {
    if (gen === '') return null;
    const w = this.watchers.get(root);
    const last = this.lastTake.get(root);
    return w && last !== undefined && last.watcher === w && last.gen === gen && w.quiet(racyMs) ? w.kind : null;
  }

  /** Runs `fn` (synchronous: the operation) with its scans given the hints of the last {@link sync}, which is used up. */
  scope<T>(fn: () => T): T {
    this.synced = this.ready;
    this.ready = null;
    try {
      return fn();
    } finally {
      this.synced = null;
    }
  }

  /** Stops every watcher, and the process's scans walk again. */
  close(): void {
    useChangeHints(null);
    useQuietSnapshots(null);
    this.watchers.closeAll();
  }
}
