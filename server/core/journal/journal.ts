import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { syncFile, syncFolder } from '../durable.js';
import { ROWS_IMAGE, SnapshotIndex } from '../scan/snapshot-index.js';
import { BlobStore } from '../store/blobs.js';
import { workspaceKey } from '../workspace.js';
import { Captures, STALE_CAPTURE_MS } from './captures.js';
import { openDb, writeTxn, type Db } from './db.js';
import { Drift } from './drift.js';
import { HolderWriter, holderFile, reserveHolder } from './holder.js';
import { OpLog } from './oplog.js';
import { Sets } from './sets.js';
import { reserveSpill } from './spill.js';
import { Turns } from './turns.js';
import { Txns } from './txns.js';
import { Unkept } from './unkept.js';

/** The journal folder of workspace `root` (a real path) under `home`: `$TAKEBACK_HOME/workspaces/<key>`. */
export function journalDirOf(home: string, root: string): string {
  return join(home, 'workspaces', workspaceKey(root));
}

/** How long (ms) a write of a hook waits for another process's lock before its event is queued in the spill instead. */
export const HOOK_BUSY_MS = 1000;

/**
 * How long (ms) a write of the sidecar waits for another process's lock before the editor is
 * answered that the journal is held (and a capture is queued in the spill): its writes hold the
 * editor's requests, and SQLite's wait blocks the whole process.
 */
export const SIDECAR_BUSY_MS = 2000;

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
  /** Set by {@link commitDurably} or a blob sync: the write transaction under way syncs the WAL after its commit. */
  private durableCommit = false;
  /** Changes that could not be kept as they happened (a full disk, a lock held too long). */
  readonly unkept: Unkept;
  /** True when the spill (spill.ts) held queued events when the journal was opened. */
  spilled = false;
  private readonly holder: HolderWriter;

  private constructor(
    readonly home: string,
    readonly root: string,
    readonly db: Db,
  ) {
    this.dir = journalDirOf(home, root);
    this.blobs = new BlobStore(home);
    this.turns = new Turns(db);
    this.oplog = new OpLog(db);
    this.sets = new Sets(db, this.oplog);
    this.captures = new Captures(db);
    this.snapshot = new SnapshotIndex(db, join(this.dir, ROWS_IMAGE));
    this.drift = new Drift(db);
    this.txns = new Txns(this.dir);
    this.unkept = new Unkept(db);
    this.holder = new HolderWriter(this.dir);
  }

  /**
   * Opens (creating if needed) the journal of workspace `root` (a real path) under `home`. A
   * journal made here has its folders made durable at once: a power cut never takes away a
   * journal that answered. `busyMs`: how long a write waits for another process's lock (see
   * `openDb`). The space of the spill and of the lock-holder record is set aside here when
   * missing (left for a later open when the disk is full).
   */
  static open(home: string, root: string, opts: { busyMs?: number } = {}): Journal {
    const madeHome = mkdirSync(home, { recursive: true, mode: 0o700 });
    const dir = journalDirOf(home, root);
    const madeDir = mkdirSync(dir, { recursive: true, mode: 0o700 });
    // The first folder made here (the home's, else the journal's own): from it down, all is new.
    const made = madeHome ?? madeDir;
    const db = openDb(join(dir, 'journal.db'), opts.busyMs);
    const j = new Journal(home, root, db);
    const info = join(dir, 'workspace.json');
    if (!existsSync(info)) writeFileSync(info, `${JSON.stringify({ root })}\n`, { mode: 0o600 });
    if (made !== undefined) {
      syncFile(info);
      for (let d = dir; d.length >= made.length; d = dirname(d)) syncFolder(d);
      syncFolder(dirname(made));
    }
    try {
      if (!existsSync(holderFile(dir))) reserveHolder(dir);
      j.spilled = reserveSpill(dir);
    } catch {
      // A full disk: the space is set aside at a later open.
    }
    return j;
  }

  /**
   * Runs `fn` as one write transaction (`BEGIN IMMEDIATE`): all of it lands, or none. Once it
   * has the lock, the outermost one records this process as the lock's holder (holder.ts).
   * Before it commits, the blobs it stored are made durable (BlobStore.sync), so that a row on
   * the disk never names a blob a power cut took away; when there were any, or `fn` called
   * {@link commitDurably}, the commit itself is made durable before `write` returns (the WAL
   * synced: SQLite's `synchronous = NORMAL` leaves the last commits to a later checkpoint).
   * `fixed`, for the outermost transaction: called once `fn` has returned, before the blobs'
   * syncs and the commit — where what the transaction read of the workspace is fixed and only its
   * writes to the disk are left (a capture daemon answers a command's begin there). The order of
   * the syncs and the commit is the same with it.
   */
  write<T>(fn: () => T, opts: { fixed?: () => void } = {}): T {
    const outer = !this.db.inTransaction;
    const r = writeTxn(this.db, () => {
      if (outer) this.holder.write();
      const out = fn();
      if (outer) opts.fixed?.();
      if (this.blobs.sync()) this.durableCommit = true;
      return out;
    });
    if (outer && this.durableCommit) {
      this.durableCommit = false;
      syncFile(`${this.db.name}-wal`);
    }
    return r;
  }

  /**
   * Asks that the write transaction under way be durable once it commits (see {@link write}):
   * for a step whose files are already written, or a capture a tool is about to write after.
   */
  commitDurably(): void {
    this.durableCommit = true;
  }

  /**
   * True when this journal holds something left open for good that capture/repair.ts closes: a
   * tool call begun over STALE_CAPTURE_MS before `now` (ms since the epoch) whose end never came,
   * or an agent's turn with nothing heard of it for as long. Two small queries; a reader asks it
   * before loading the repair (and the capture code it needs).
   */
  hasLostEnds(now = Date.now()): boolean {
    const before = now - STALE_CAPTURE_MS;
    return this.captures.hasStale(before) || this.turns.quietSince(before).length > 0;
  }

  /**
   * Runs `fn` with writes waiting at most `ms` for another process's lock, then as long as the
   * journal was opened to wait. For work that may wait for later (folding the spill in, rolling
   * back a leftover transaction) rather than stand behind a stuck writer.
   */
  withBusyTimeout<T>(ms: number, fn: () => T): T {
    const was = this.db.pragma('busy_timeout', { simple: true }) as number;
    this.db.pragma(`busy_timeout = ${Math.floor(ms)}`);
    try {
      return fn();
    } finally {
      this.db.pragma(`busy_timeout = ${was}`);
    }
  }

  /**
   * A number that changes whenever another connection (another process) commits to this
   * journal: SQLite's `PRAGMA data_version`. Used to notice changes to announce.
   */
  dataVersion(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }

  close(): void {
    this.holder.close();
    this.db.close();
  }
}
