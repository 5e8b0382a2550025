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
 * - `sets`: one row a change set; `files` and `history` are JSON arrays (see `types.ts`).
 * - `captures`: tool calls begun and not yet ended (the file states kept at `begin`).
 * - `snapshot_rows`: the last look at the workspace for the command scan, packed one row a folder
 *   (`snapshot-index.ts`, `scan/packed.ts`).
 * - `drift`: changes seen during a turn that no tool call claimed (first `before`, latest `after`).
 *
 * Undo/redo transactions under way are files beside the database (see `txns.ts`).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS turns (
  id TEXT PRIMARY KEY, seq INTEGER NOT NULL, agent TEXT, session TEXT, label TEXT,
  started_at INTEGER NOT NULL, ended_at INTEGER);
CREATE INDEX IF NOT EXISTS turns_open ON turns (ended_at, session);
CREATE TABLE IF NOT EXISTS sets (
  id INTEGER PRIMARY KEY AUTOINCREMENT, turn TEXT, source TEXT NOT NULL, created_at INTEGER NOT NULL,
  state TEXT NOT NULL, files TEXT NOT NULL, history TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sets_turn ON sets (turn);
CREATE TABLE IF NOT EXISTS captures (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, turn TEXT, tool TEXT, command TEXT,
  started_at INTEGER NOT NULL, files TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot_rows (dir TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS drift (
  path TEXT PRIMARY KEY, turn TEXT NOT NULL, before TEXT NOT NULL, after TEXT NOT NULL) WITHOUT ROWID;
`;

/** Opens (creating 0600 if needed) the database at `file` and brings its schema up to date. */
export function openDb(file: string): Db {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Create the file 0600 before SQLite does: its -wal and -shm files copy the main file's mode.
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
  const db = new Database(file, { timeout: 30_000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);
  return db;
}

/** Runs `fn` in a write transaction taken at once (`BEGIN IMMEDIATE`), so that read-then-write is safe across processes. */
export function writeTxn<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}
