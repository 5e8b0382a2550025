import type Database from 'better-sqlite3';

/** Each connection's statements compiled by {@link statement}, by SQL text. */
const compiled = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * `db.prepare(sql)`, compiled once per connection and kept: for the statements every hook event
 * runs (a long-lived process, the capture daemon or the sidecar, runs the same few for each, and
 * compiling one costs about 20 µs here). Only for `sql` written in the code (the kept set is as
 * small as that), and only used as it comes: a mode set on it (`pluck`, `raw`, `expand`, `bind`)
 * would stay for the next caller, so such statements are prepared where they are used. Throws
 * what `prepare` throws (SQL the schema does not have).
 */
export function statement(db: Database.Database, sql: string): Database.Statement {
  let kept = compiled.get(db);
  if (!kept) compiled.set(db, (kept = new Map()));
  let st = kept.get(sql);
  if (!st) kept.set(sql, (st = db.prepare(sql)));
  return st;
}
