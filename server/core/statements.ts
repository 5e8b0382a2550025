import type Database from 'better-sqlite3';

/** Each connection's statements compiled by {@link statement}, by SQL text. */
const compiled = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * `db.prepare(sql)`, compiled once per connection and kept: for the statements every hook event
 * runs (a long-lived process, the capture daemon or the sidecar, runs the same few for each, and
 * compiling one costs about 20 µs here). Only for `sql` written in the code (the kept set is as
 * small as that). A mode set on it (`pluck`, `raw`, `expand`) stays for the next caller of the
 * same `sql`: one that wants it sets it at every use (the operation log's `pluck()`), and `bind`
 * is never used on it. Throws what `prepare` throws (SQL the schema does not have).
 */
export function statement(db: Database.Database, sql: string): Database.Statement {
  let kept = compiled.get(db);
  if (!kept) compiled.set(db, (kept = new Map()));
  let st = kept.get(sql);
  if (!st) kept.set(sql, (st = db.prepare(sql)));
  return st;
}
