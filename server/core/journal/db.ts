import Database from 'better-sqlite3';
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrateToOpLog } from './migrate-oplog.js';

export type Db = Database.Database;

/**
 * The journal's tables. One SQLite database per workspace, in WAL mode, so that several
 * processes (parallel hooks, the CLI, the sidecar) write at once and a `kill -9` at any moment
 * leaves either the whole of a write or none of it.
 *
 * - `turns`: one row a turn.
 * - `sets`: one row a change set, never changed once recorded but by its expiry: `files` is a JSON
 *   array of its changes (see `types.ts`); `state` is `expired` for a tombstone (its copies are
 *   gone, its `sha256`s dropped), `applied` otherwise: the state it was recorded in, which an
 *   undo never changes. Whether a set is undone or partly undone now is derived from the
 *   operation log.
 * - `operations`: the operation log (`oplog.ts`): one row a capture, undo, redo or forced
 *   replacement, with its parent; `op_files` the (set, path) pairs each one moved; `op_paths`
 *   what an undo or redo found at each path and what it wrote.
 * - `set_files`: one row a path of a set, derived from the log: whether it is undone (`undone`:
 *   0 in place, 1 undone, 2 partly undone — some hunks, `undo --lines` —, 3 undone by a step
 *   that took only its last hunks, whose redo is that step's inverse), and the operation that
 *   last moved it; indexed by path for per-file questions (code lenses, conflicts).
 * - `captures`: tool calls begun and not yet ended (the file states kept at `begin`).
 * - `snapshot_rows`: the last look at the workspace for the command scan, packed one row a folder
 *   (`scan/snapshot-index.ts`, `scan/packed.ts`). For a large index, the same rows as of one
 *   generation are also in the rows image beside the database (`rows.image`, `scan/rows-image.ts`),
 *   with `snapshot_moved` naming the folders written since (made with the first image).
 * - `drift`: changes seen during a turn that no tool call claimed (first `before`, latest `after`),
 *   per turn and path.
 * - `unkept`: changes that could not be kept as they happened (a full disk, a lock held too
 *   long): when, why, what, and the tool call whose changes are named as gaps (`unkept.ts`).
 *
 * Undo/redo transactions under way are files beside the database (see `txns.ts`).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS turns (
  id TEXT PRIMARY KEY, seq INTEGER NOT NULL, agent TEXT, session TEXT, label TEXT,
  started_at INTEGER NOT NULL, ended_at INTEGER, agent_turn TEXT, end_lost INTEGER, prompt_key TEXT);
CREATE INDEX IF NOT EXISTS turns_open ON turns (ended_at, session);
CREATE TABLE IF NOT EXISTS sets (
  id INTEGER PRIMARY KEY AUTOINCREMENT, turn TEXT, source TEXT NOT NULL, created_at INTEGER NOT NULL,
  state TEXT NOT NULL, files TEXT NOT NULL, agent TEXT, session TEXT);
CREATE INDEX IF NOT EXISTS sets_turn ON sets (turn);
CREATE TABLE IF NOT EXISTS operations (
  id INTEGER PRIMARY KEY AUTOINCREMENT, parent INTEGER, kind TEXT NOT NULL, direction TEXT,
  forced INTEGER NOT NULL, time INTEGER NOT NULL, set_id INTEGER, inverts INTEGER, replaced INTEGER);
CREATE TABLE IF NOT EXISTS op_files (
  set_id INTEGER NOT NULL, op INTEGER NOT NULL, path TEXT NOT NULL,
  PRIMARY KEY (set_id, op, path)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS op_files_op ON op_files (op);
CREATE TABLE IF NOT EXISTS op_paths (
  op INTEGER NOT NULL, path TEXT NOT NULL, found TEXT NOT NULL, wrote TEXT NOT NULL,
  PRIMARY KEY (op, path)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS set_files (
  set_id INTEGER NOT NULL, path TEXT NOT NULL, gap INTEGER NOT NULL, undone INTEGER NOT NULL,
  last_op INTEGER NOT NULL, PRIMARY KEY (set_id, path)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS set_files_path ON set_files (path, set_id);
CREATE INDEX IF NOT EXISTS set_files_undone ON set_files (last_op) WHERE undone = 1;
CREATE INDEX IF NOT EXISTS set_files_hunks ON set_files (last_op) WHERE undone >= 2;
CREATE TABLE IF NOT EXISTS captures (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, turn TEXT, tool TEXT, command TEXT,
  started_at INTEGER NOT NULL, files TEXT NOT NULL, agent TEXT, session TEXT, pair TEXT);
CREATE TABLE IF NOT EXISTS snapshot_rows (dir TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS drift (
  turn TEXT NOT NULL, path TEXT NOT NULL, before TEXT NOT NULL, after TEXT NOT NULL,
  PRIMARY KEY (turn, path)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS unkept (
  id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, cause TEXT NOT NULL, what TEXT NOT NULL, capture TEXT);
CREATE INDEX IF NOT EXISTS unkept_capture ON unkept (capture);
`;

/** The schema's version (`PRAGMA user_version`); journals made before a change are brought up to it on open. */
export const SCHEMA_VERSION = 7;

/**
 * Brings a journal of an older schema up to {@link SCHEMA_VERSION}, in one transaction.
 * Version 2 (2026-11): every turn, set and capture names its agent and session; turns keep the
 * agent's own turn id; drift is kept per turn (two agents' turns may be open at once).
 * Version 3: sets recorded which undo step took them back (`undo_seq`).
 * Version 4: the history is an operation log; each set's JSON `history`, its `undo_seq` and its
 * files' `undone` flags become operation rows and `set_files` ({@link migrateToOpLog}).
 * Version 5: the `unkept` table (made by the schema's `CREATE TABLE IF NOT EXISTS`).
 * Version 6: a turn closed at a later start, its end never heard, says so (`turns.end_lost`).
 * Version 7: a turn begun by a prompt the agent gave no id keeps the prompt's key
 * (`turns.prompt_key`): the same event handled a second time begins no second turn.
 */
function migrate(db: Db, from: number): void {
  const columns = (table: string) => new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
  writeTxn(db, () => {
    if (from < 2) {
      const add = (table: string, col: string) => {
        if (!columns(table).has(col)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${col} TEXT`);
      };
      add('turns', 'agent_turn');
      add('sets', 'agent');
      add('sets', 'session');
      add('captures', 'agent');
      add('captures', 'session');
      add('captures', 'pair');
      // A set's agent and session are its turn's, where it has one.
      db.exec('UPDATE sets SET agent = (SELECT agent FROM turns WHERE turns.id = sets.turn), session = (SELECT session FROM turns WHERE turns.id = sets.turn) WHERE agent IS NULL');
      if (columns('drift').has('path') && !(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'drift'").get() as { sql: string }).sql.includes('PRIMARY KEY (turn, path)')) {
        db.exec(`ALTER TABLE drift RENAME TO drift_v1;
          CREATE TABLE drift (turn TEXT NOT NULL, path TEXT NOT NULL, before TEXT NOT NULL, after TEXT NOT NULL, PRIMARY KEY (turn, path)) WITHOUT ROWID;
          INSERT INTO drift SELECT turn, path, before, after FROM drift_v1;
          DROP TABLE drift_v1;`);
      }
    }
    if (from < 4 && columns('sets').has('history')) {
      migrateToOpLog(db);
      db.exec('DROP INDEX IF EXISTS sets_undo_seq');
      db.exec('ALTER TABLE sets DROP COLUMN history');
      if (columns('sets').has('undo_seq')) db.exec('ALTER TABLE sets DROP COLUMN undo_seq');
    }
    if (from < 6 && !columns('turns').has('end_lost')) db.exec('ALTER TABLE turns ADD COLUMN end_lost INTEGER');
    if (from < 7 && !columns('turns').has('prompt_key')) db.exec('ALTER TABLE turns ADD COLUMN prompt_key TEXT');
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
}

/**
 * True when the journal database `file` holds a turn, a change set or a capture (it was used to
 * record, not only looked at); false when it holds none or cannot be read. Opens it read-only.
 */
export function journalHasRecords(file: string): boolean {
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 2000 });
    const row = db.prepare('SELECT EXISTS (SELECT 1 FROM turns) OR EXISTS (SELECT 1 FROM sets) OR EXISTS (SELECT 1 FROM captures) AS any').get() as { any: number };
    return row.any === 1;
  } catch {
    return false;
  } finally {
    db?.close();
  }
}

/** How long (ms) a connection waits for another process's write lock before SQLite gives up with `SQLITE_BUSY`, unless told otherwise. */
export const BUSY_MS = 30_000;

/**
 * Opens (creating 0600 if needed) the database at `file` and brings its schema up to date.
 * `busyMs` is how long a write waits for another process's lock ({@link BUSY_MS} by default;
 * a hook waits about a second, then queues its event instead).
 */
export function openDb(file: string, busyMs = BUSY_MS): Db {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Create the file 0600 before SQLite does: its -wal and -shm files copy the main file's mode.
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
  const db = new Database(file, { timeout: busyMs });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version === SCHEMA_VERSION) return db;
  const fresh = !db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sets'").get();
  db.exec(SCHEMA);
  if (fresh) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  else migrate(db, version);
  return db;
}

/** Runs `fn` in a write transaction taken at once (`BEGIN IMMEDIATE`), so that read-then-write is safe across processes. */
export function writeTxn<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}
