import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SnapshotIndex } from '../scan/snapshot-index.js';
import { BlobStore } from '../store/blobs.js';
import { workspaceKey } from '../workspace.js';
import { Captures } from './captures.js';
import { openDb, writeTxn, type Db } from './db.js';
import { Drift } from './drift.js';
import { OpLog } from './oplog.js';
import { Sets } from './sets.js';
import { Turns } from './turns.js';
import { Txns } from './txns.js';

/**
 * The change journal of one workspace: `$TAKEBACK_HOME/workspaces/<key>/journal.db`, plus the
 * blob store shared by every workspace at `$TAKEBACK_HOME/blobs`. Folders 0700, files 0600.
 */
export class Journal {
  readonly dir: string;
  readonly blobs: BlobStore;
  readonly turns: Turns;
  readonly sets: Sets;
  /** The history: every capture, undo, redo and forced replacement, in order. */
  readonly oplog: OpLog;
  readonly captures: Captures;
  readonly snapshot: SnapshotIndex;
  readonly drift: Drift;
  readonly txns: Txns;

  private constructor(
    readonly home: string,
    readonly root: string,
    readonly db: Db,
  ) {
    this.dir = join(home, 'workspaces', workspaceKey(root));
    this.blobs = new BlobStore(home);
    this.turns = new Turns(db);
    this.oplog = new OpLog(db);
    this.sets = new Sets(db, this.oplog);
    this.captures = new Captures(db);
    this.snapshot = new SnapshotIndex(db);
    this.drift = new Drift(db);
    this.txns = new Txns(this.dir);
  }

  /** Opens (creating if needed) the journal of workspace `root` (a real path) under `home`. */
  static open(home: string, root: string): Journal {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const dir = join(home, 'workspaces', workspaceKey(root));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const db = openDb(join(dir, 'journal.db'));
    const j = new Journal(home, root, db);
    const info = join(dir, 'workspace.json');
    if (!existsSync(info)) writeFileSync(info, `${JSON.stringify({ root })}\n`, { mode: 0o600 });
    return j;
  }

  /** Runs `fn` as one write transaction (`BEGIN IMMEDIATE`): all of it lands, or none. */
  write<T>(fn: () => T): T {
    return writeTxn(this.db, fn);
  }

  /**
   * A number that changes whenever another connection (another process) commits to this
   * journal: SQLite's `PRAGMA data_version`. Used to notice changes to announce.
   */
  dataVersion(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }

  close(): void {
    this.db.close();
  }
}
