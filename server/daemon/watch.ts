import { realpathSync } from 'node:fs';
import { useChangeHints } from '../core/capture/scan-commit.js';
import { workspaceRootOf } from '../core/engine.js';
import { WorkspaceWatchers } from '../core/scan/watcher.js';
import { logHook } from './log.js';

/*
 * The capture daemon's file watchers (core/scan/watcher.ts), one per workspace it serves: the
 * first event of a workspace starts its watcher, and each later event first syncs with it, so
 * that the scans the event runs check only what the watcher heard. A scan gets hints only from a
 * watcher synced for this very event; any other scan walks.
 */

/** The watchers of one daemon and the hint source its scans ask. */
export class WorkspaceFeed {
  private readonly watchers: WorkspaceWatchers;
  /** The workspace whose watcher was synced for the event in hand, or null. */
  private synced: string | null = null;
  /** The home as given, and its real path (to tell whether it lies inside a workspace). */
  private readonly home: string;
  private readonly realHome: string;

  /** Watches up to `max` workspaces of the TAKEBACK_HOME `home`, and becomes this process's hint source. */
  constructor(home: string, max: number) {
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
      if (hints && process.env.TAKEBACK_LOG_LEVEL === 'debug') logHook(home, `watch: hints for ${root} (${hints.paths.size} paths)`);
      return hints;
    });
  }

  /**
   * Before an event whose hook ran in `cwd`: starts the watcher of its workspace if there is
   * none, else waits until it has heard every change made so far (see WorkspaceWatcher.sync).
   * Never rejects; a workspace that cannot be watched is left to the walk.
   */
  async before(cwd: string): Promise<void> {
    this.synced = null;
    try {
      const root = workspaceRootOf(this.home, { cwd });
      const inside = this.realHome === root || this.realHome.startsWith(`${root}/`);
      // A watcher started now cannot vouch for this event yet: its sync says so.
      const w = this.watchers.watch(root, { ignore: inside ? [this.realHome] : [] });
      if (w && (await w.sync())) this.synced = root;
    } catch {
      this.synced = null;
    }
  }

  /** After the event: no scan gets hints until the next {@link before}. */
  after(): void {
    this.synced = null;
  }

  /** Stops every watcher, and the process's scans walk again. */
  close(): void {
    useChangeHints(null);
    this.watchers.closeAll();
  }
}
