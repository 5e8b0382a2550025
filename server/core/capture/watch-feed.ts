import { realpathSync } from 'node:fs';
import { useChangeHints } from './scan-commit.js';
import { workspaceRootOf } from '../open-workspace.js';
import { WorkspaceWatchers } from '../scan/watcher.js';

/*
 * The file watchers of a long-lived process (the capture daemon, the sidecar), one per workspace
 * it serves (core/scan/watcher.ts): the first operation on a workspace starts its watcher, and each
 * later one first syncs with it, so that the scans it runs check only what the watcher heard. A
 * scan gets hints only inside {@link WorkspaceFeed.scope}, from a watcher synced for that very
 * operation; any other scan walks.
 */

/** The watchers of one process and the hint source its scans ask. */
export class WorkspaceFeed {
  private readonly watchers: WorkspaceWatchers;
  /** The workspace whose watcher was synced for the operation about to run, or null. */
  private ready: string | null = null;
  /** The workspace whose scans get hints now (inside {@link scope}), or null. */
  private synced: string | null = null;
  /** The home as given, and its real path (to tell whether it lies inside a workspace). */
  private readonly home: string;
  private readonly realHome: string;

  /**
   * Watches up to `max` workspaces whose journals are under the TAKEBACK_HOME `home`, and becomes
   * this process's hint source (see useChangeHints). `log`, when given, hears each scan given
   * hints (with `TAKEBACK_LOG_LEVEL=debug` at the time).
   */
  constructor(home: string, max: number, private readonly log?: (message: string) => void) {
    this.watchers = new WorkspaceWatchers(max);
    let real = home;
    try {
      real = realpathSync(home);
    } catch {
      // not made yet: compared as given
    }
    this.home = home;
    this.realHome = real;
    useChangeHints((root, racyMs) => {
      if (root !== this.synced) return undefined;
      const hints = this.watchers.get(root)?.hints(racyMs);
      if (hints && this.log && process.env.TAKEBACK_LOG_LEVEL === 'debug') this.log(`watch: hints for ${root} (${hints.paths.size} paths)`);
      return hints;
    });
  }

  /**
   * Before an operation on the workspace of `cwd`: starts its watcher if there is none, else
   * waits until it has heard every change made so far (see WorkspaceWatcher.sync); the next
   * {@link scope} then gives its scans hints. Never rejects; a workspace that cannot be watched
   * is left to the walk.
   */
  async sync(cwd: string): Promise<void> {
    this.ready = null;
    try {
      const root = workspaceRootOf(this.home, { cwd });
      const inside = this.realHome === root || this.realHome.startsWith(`${root}/`);
      // A watcher started now cannot vouch for this operation yet: its sync says so.
      const w = this.watchers.watch(root, { ignore: inside ? [this.realHome] : [] });
      const ok = w ? await w.sync() : false;
      this.ready = ok ? root : null;
    } catch {
      this.ready = null;
    }
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
    this.watchers.closeAll();
  }
}
