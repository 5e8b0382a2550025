import Database from 'better-sqlite3';
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

export type Db = Database.Database;

/**
 * The journal's tables. One SQLite database per workspace, in WAL mode, so that several
 * processes (parallel hooks, the CLI, the sidecar) write at once and a `kill -9` at any moment
 * leaves either the whole of a write or none of it.
 *
 * - `turns`: one row a turn.
 * - `sets`: one row a change set; `files` and `history` are JSON arrays (see `types.ts`);
 *   `undo_seq` numbers the undo step that last took files of the set back (one number for every
 *   set a step undid together: `redo --last` redoes them together), null when none has.
 * - `captures`: tool calls begun and not yet ended (the file states kept at `begin`).
 * - `snapshot_rows`: the last look at the workspace for the command scan, packed one row a folder
 *   (`snapshot-index.ts`, `scan/packed.ts`).
 * - `drift`: changes seen during a turn that no tool call claimed (first `before`, latest `after`),
 *   per turn and path.
 *
 * Undo/redo transactions under way are files beside the database (see `txns.ts`).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS turns (
  id TEXT PRIMARY KEY, seq INTEGER NOT NULL, agent TEXT, session TEXT, label TEXT,
  started_at INTEGER NOT NULL, ended_at INTEGER, agent_turn TEXT);
CREATE INDEX IF NOT EXISTS turns_open ON turns (ended_at, session);
CREATE TABLE IF NOT EXISTS sets (
  id INTEGER PRIMARY KEY AUTOINCREMENT, turn TEXT, source TEXT NOT NULL, created_at INTEGER NOT NULL,
  state TEXT NOT NULL, files TEXT NOT NULL, history TEXT NOT NULL, agent TEXT, session TEXT,
  undo_seq INTEGER);
CREATE INDEX IF NOT EXISTS sets_turn ON sets (turn);
CREATE TABLE IF NOT EXISTS captures (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, turn TEXT, tool TEXT, command TEXT,
  started_at INTEGER NOT NULL, files TEXT NOT NULL, agent TEXT, session TEXT, pair TEXT);
CREATE TABLE IF NOT EXISTS snapshot_rows (dir TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS drift (
  turn TEXT NOT NULL, path TEXT NOT NULL, before TEXT NOT NULL, after TEXT NOT NULL,
  PRIMARY KEY (turn, path)) WITHOUT ROWID;
`;

/** Indexes on columns added by a migration: made after it (an older journal has no such column before). */
const INDEXES = `CREATE INDEX IF NOT EXISTS sets_undo_seq ON sets (undo_seq);`;

/** The schema's version (`PRAGMA user_version`); journals made before a change are brought up to it on open. */
export const SCHEMA_VERSION = 3;

/**
 * Numbers the undo steps of sets undone before the journal numbered them (`undo_seq` null):
 * the sets one step undid share the time of that step's `undone` history entry, so sets are
 * grouped by the time of their last one (their creation time when none is recorded) and the
 * groups numbered in time order, after any step already numbered.
 */
function backfillUndoSeq(db: Db): void {
  const rows = db
    .prepare("SELECT id, created_at, history FROM sets WHERE state IN ('undone', 'partial') AND undo_seq IS NULL ORDER BY id")
    .all() as { id: number; created_at: number; history: string }[];
  if (rows.length === 0) return;
  const byTime = new Map<number, number[]>();
  for (const r of rows) {
    let time = r.created_at;
    try {
      const history = JSON.parse(r.history) as { action?: string; time?: number }[];
      const last = history.filter((h) => h.action === 'undone' && typeof h.time === 'number').at(-1);
      if (last) time = last.time!;
    } catch {
      // A history that does not parse: the set's creation time.
    }
    const ids = byTime.get(time);
    if (ids) ids.push(r.id);
    else byTime.set(time, [r.id]);
  }
  let seq = (db.prepare('SELECT COALESCE(MAX(undo_seq), 0) FROM sets').pluck().get() as number) + 1;
  const upd = db.prepare('UPDATE sets SET undo_seq = ? WHERE id = ?');
  for (const time of [...byTime.keys()].sort((a, b) => a - b)) {
    for (const id of byTime.get(time)!) upd.run(seq, id);
    seq++;
  }
}

/**
 * Brings a journal of an older schema up to {@link SCHEMA_VERSION}, in one transaction.
 * Version 2 (2026-11): every turn, set and capture names its agent and session; turns keep the
 * agent's own turn id; drift is kept per turn (two agents' turns may be open at once).
 * Version 3: sets record which undo step took them back (`undo_seq`), so that `redo --last`
 * redoes a whole step (a turn, several ids) at once; sets already undone are numbered from their
 * history ({@link backfillUndoSeq}).
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
    if (from < 3) {
      // Also when a takeback of version 2 opened (and set back) a journal of version 3: only the
      // sets it undid lack a number.
      if (!columns('sets').has('undo_seq')) db.exec('ALTER TABLE sets ADD COLUMN undo_seq INTEGER');
      backfillUndoSeq(db);
    }
    db.exec(INDEXES);
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

/** Opens (creating 0600 if needed) the database at `file` and brings its schema up to date. */
export function openDb(file: string): Db {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Create the file 0600 before SQLite does: its -wal and -shm files copy the main file's mode.
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
  const db = new Database(file, { timeout: 30_000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version === SCHEMA_VERSION) return db;
  const fresh = !db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sets'").get();
  db.exec(SCHEMA);
  if (fresh) {
    db.exec(INDEXES);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  } else migrate(db, version);
  return db;
}

/** Runs `fn` in a write transaction taken at once (`BEGIN IMMEDIATE`), so that read-then-write is safe across processes. */
export function writeTxn<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}
