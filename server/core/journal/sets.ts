import { TakebackError, checkId } from '../errors.js';
import type { ChangeSet, ChangeSource, FileChange, HistoryEntry, SetState } from '../types.js';
import type Database from 'better-sqlite3';
import type { Db } from './db.js';
import { OpLog } from './oplog.js';

interface SetRow {
  id: number;
  turn: string | null;
  source: string;
  created_at: number;
  state: string;
  files: string;
  agent: string | null;
  session: string | null;
  /** JSON array of `[path, undone, last_op]` of the paths not in place now, whole or in part (`set_files`, see db.ts). */
  undone: string;
  /**
   * JSON array of `[op, direction, time, forced, paths]`, one per undo, redo or replace that moved
   * paths of the set (`op_files`): `paths` the paths it moved when they are fewer than the set's
   * files, else null.
   */
  moves: string;
}

/**
 * The columns every read of sets takes: the row, the paths not in place now and the moves of its
 * history, each from an index seek by set id (`set_files`, `op_files`). The moves come one row an
 * operation, naming its paths only when it moved some of the set's files: a set of 500 files
 * undone and redone ten times reads ten rows, not 5,000 (a read costs what the history holds
 * in steps, not in paths).
 */
const COLUMNS = `s.id, s.turn, s.source, s.created_at, s.state, s.files, s.agent, s.session,
  (SELECT json_group_array(json_array(f.path, f.undone, f.last_op)) FROM set_files f WHERE f.set_id = s.id AND f.undone != 0) AS undone,
  (SELECT json_group_array(json_array(g.op, g.direction, g.time, g.forced, json(g.paths))) FROM (
    SELECT m.op, o.direction, o.time, o.forced, CASE WHEN COUNT(*) < json_array_length(s.files) THEN json_group_array(m.path) END AS paths
    FROM op_files m JOIN operations o ON o.id = m.op WHERE m.set_id = s.id GROUP BY m.op) g) AS moves`;

/** True when a live set has a path undone now, whole or in part. */
const HAS_UNDONE = 'EXISTS (SELECT 1 FROM set_files f WHERE f.set_id = s.id AND f.undone != 0)';
/** True when a live set has a path that can move and is in place now, whole or in part. */
const HAS_IN_PLACE = 'EXISTS (SELECT 1 FROM set_files f WHERE f.set_id = s.id AND f.undone IN (0, 2) AND f.gap = 0)';

/**
 * True when a set row `s` is an agent's change: neither takeback's own bookkeeping (what a forced
 * undo or redo wrote over, kept as a set), nor a save of the person's (source `person`), nor the
 * person's own `takeback run` (a command of the command line, `cli`, outside any turn and no
 * agent's tool call). `--last` names only these (see {@link isAgentsChange}).
 */
const AGENTS_CHANGE = `(json_extract(s.source, '$.kind') NOT IN ('replaced', 'person')
  AND NOT (s.turn IS NULL AND s.agent IS 'cli' AND json_extract(s.source, '$.kind') = 'command' AND json_extract(s.source, '$.toolCallId') IS NULL))`;

/** {@link AGENTS_CHANGE} for a set as read: false for takeback's bookkeeping, the person's saves and the person's own `takeback run`. */
export function isAgentsChange(set: ChangeSet): boolean {
  if (set.source.kind === 'replaced' || set.source.kind === 'person') return false;
  return !(set.turn === null && set.agent === 'cli' && set.source.kind === 'command' && set.source.toolCallId === undefined);
}

/** Each state as a condition on a set row `s` (see {@link toSet} for the rule). */
const STATE_SQL: Record<SetState, string> = {
  expired: "s.state = 'expired'",
  applied: `(s.state != 'expired' AND NOT ${HAS_UNDONE})`,
  partial: `(s.state != 'expired' AND ${HAS_UNDONE} AND ${HAS_IN_PLACE})`,
  undone: `(s.state != 'expired' AND ${HAS_UNDONE} AND NOT ${HAS_IN_PLACE})`,
};

/**
 * One undo step as the journal remembers it, for `redo --last`: the sets it took back that still
 * have files undone.
 */
export interface UndoStep {
  /** The step's operation (its id in the log): later steps have larger ones. */
  seq: number;
  /** Its sets that still have undone files, oldest first. */
  sets: ChangeSet[];
}

/**
 * A set row as the engine's `ChangeSet`. Its state: `expired` for a tombstone; else, counting the
 * files a capture gap does not keep from moving, `undone` when all of them are undone, `applied`
 * when none is, `partial` otherwise (a file partly undone, by hunks, makes it `partial` too). Its history: `applied` at its creation, then one entry per
 * undo or redo that moved files of it, with their paths when not all of the set's.
 */
function toSet(r: SetRow): ChangeSet {
  const files = JSON.parse(r.files) as FileChange[];
  const marks = new Map((JSON.parse(r.undone) as [string, number, number][]).map(([path, mark, op]) => [path, { mark, op }]));
  const moves = JSON.parse(r.moves) as [number, 'undo' | 'redo', number, number, string[] | null][];
  const undos = new Set(moves.filter((m) => m[1] === 'undo').map((m) => m[0]));
  for (const f of files) {
    const m = marks.get(f.path);
    if (!m) continue;
    if (m.mark === 2) f.partial = true;
    else f.undone = true;
    // Left partly undone by an undo (by hunks), or undone by one that took its last hunks: a redo is that undo's inverse.
    if (m.mark === 3 || (m.mark === 2 && undos.has(m.op))) f.undoneBy = m.op;
  }
  let state: SetState = 'expired';
  if (r.state !== 'expired') {
    const movable = files.filter((f) => !f.gap);
    const n = movable.filter((f) => f.undone).length;
    state = movable.some((f) => f.partial) ? 'partial' : n === 0 ? 'applied' : n === movable.length ? 'undone' : 'partial';
  }
  const history: HistoryEntry[] = [{ action: 'applied', time: r.created_at }];
  moves.sort((a, b) => a[0] - b[0]);
  for (const [, direction, time, forced, paths] of moves) {
    const entry: HistoryEntry = { action: direction === 'undo' ? 'undone' : 'redone', time };
    if (forced) entry.forced = true;
    // In JavaScript's order of strings (UTF-16 code units), not SQLite's (UTF-8 bytes).
    if (paths) entry.paths = paths.sort((a, b) => (a < b ? -1 : 1));
    history.push(entry);
  }
  return {
    id: String(r.id),
    turn: r.turn,
    agent: r.agent,
    session: r.session,
    source: JSON.parse(r.source) as ChangeSource,
    time: r.created_at,
    state,
    files,
    history,
  };
}

/**
 * Change sets: each written whole in one transaction with the operation that records it, so a
 * killed process leaves all of a set or none. A set's row never changes but by its expiry; its
 * state comes from the operation log ({@link OpLog}, `set_files`).
 */
export class Sets {
  /** The insert of a set, compiled once per connection. */
  private insert: Database.Statement | null = null;
  /** The per-path queries a listing runs once a path (thousands of times), compiled once per connection. */
  private readonly perPath = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Db,
    private readonly log: OpLog = new OpLog(db),
  ) {}

  /**
   * Records a change set with the operation that captured it. `agent` and `session` default to
   * the turn's. With `replace`, it is what a forced step wrote over: recorded by a `replace`
   * operation that takes it back at once (state `undone`). Returns it, or `null` when `files` is
   * empty (nothing to keep). Call inside a transaction when it goes with other writes.
   */
  add(opts: { turn: string | null; agent?: string | null; session?: string | null; source: ChangeSource; files: FileChange[]; now?: number; replace?: boolean }): ChangeSet | null {
    if (opts.files.length === 0) return null;
    const now = opts.now ?? Date.now();
    const files = [...opts.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    let agent = opts.agent ?? null;
    let session = opts.session ?? null;
    if (opts.turn && (agent === null || session === null)) {
      const t = this.db.prepare('SELECT agent, session FROM turns WHERE id = ?').get(opts.turn) as { agent: string | null; session: string | null } | undefined;
      agent ??= t?.agent ?? null;
      session ??= t?.session ?? null;
    }
    this.insert ??= this.db.prepare("INSERT INTO sets (turn, agent, session, source, created_at, state, files) VALUES (?, ?, ?, ?, ?, 'applied', ?)");
    const insert = this.insert;
    return this.db.transaction((): ChangeSet => {
      const info = insert.run(opts.turn, agent, session, JSON.stringify(opts.source), now, JSON.stringify(files));
      const id = Number(info.lastInsertRowid);
      this.log.recordSet(id, files, now, opts.replace ?? false);
      const history: HistoryEntry[] = [{ action: 'applied', time: now }];
      if (opts.replace) {
        for (const f of files) f.undone = true;
        history.push({ action: 'undone', time: now, forced: true });
      }
      return { id: String(id), turn: opts.turn, agent, session, source: opts.source, time: now, state: opts.replace ? 'undone' : 'applied', files, history };
    })();
  }

  /** The agents that recorded sets here (expired ones too), sorted. */
  agents(): string[] {
    return this.db.prepare('SELECT DISTINCT agent FROM sets WHERE agent IS NOT NULL ORDER BY agent').pluck().all() as string[];
  }

  /** The set `id`. Throws `invalid-id`, `not-found`, or `expired` (its copies are gone; a tombstone remains). */
  get(id: string): ChangeSet {
    checkId(id, 'change set id');
    const row = /^\d+$/.test(id) ? (this.db.prepare(`SELECT ${COLUMNS} FROM sets s WHERE s.id = ?`).get(Number(id)) as SetRow | undefined) : undefined;
    if (!row) throw new TakebackError('not-found', `no change set ${id}`, { id });
    const set = toSet(row);
    if (set.state === 'expired') throw new TakebackError('expired', `change set ${id} has expired: its copies are gone`, { id });
    return set;
  }

  /** True when a set of turn `turn` (null: of no turn) was recorded for the agent's tool call `toolCallId`. */
  hasToolCall(turn: string | null, toolCallId: string): boolean {
    return this.db.prepare("SELECT 1 FROM sets WHERE turn IS ? AND json_extract(source, '$.toolCallId') = ? LIMIT 1").get(turn, toolCallId) !== undefined;
  }

  /** Sets of turn `turn`, or all sets; oldest first. Includes expired tombstones. */
  list(opts: { turn?: string } = {}): ChangeSet[] {
    const rows = (
      opts.turn !== undefined
        ? this.db.prepare(`SELECT ${COLUMNS} FROM sets s WHERE s.turn = ? ORDER BY s.id`).all(opts.turn)
        : this.db.prepare(`SELECT ${COLUMNS} FROM sets s ORDER BY s.id`).all()
    ) as SetRow[];
    return rows.map(toSet);
  }

  /**
   * The sets of turns `turns` and the sets outside any turn recorded at or after `since`, oldest
   * first; expired tombstones too unless `live`. Reads only those rows (`list` of a long journal).
   */
  recent(turns: string[], since: number, opts: { live?: boolean } = {}): ChangeSet[] {
    const live = opts.live ? " AND s.state != 'expired'" : '';
    const rows = this.db
      .prepare(
        `SELECT ${COLUMNS} FROM sets s WHERE (s.turn IN (SELECT value FROM json_each(?)) OR (s.turn IS NULL AND s.created_at >= ?))${live} ORDER BY s.id`,
      )
      .all(JSON.stringify(turns), since) as SetRow[];
    return rows.map(toSet);
  }

  /** Sets with ids from `from` to `to` (inclusive), oldest first. */
  range(from: number, to: number): ChangeSet[] {
    return (this.db.prepare(`SELECT ${COLUMNS} FROM sets s WHERE s.id BETWEEN ? AND ? ORDER BY s.id`).all(from, to) as SetRow[]).map(toSet);
  }

  /** Sets in one of `states`, oldest first. */
  inState(...states: SetState[]): ChangeSet[] {
    const where = states.map((st) => STATE_SQL[st]).join(' OR ');
    return (this.db.prepare(`SELECT ${COLUMNS} FROM sets s WHERE ${where} ORDER BY s.id`).all() as SetRow[]).map(toSet);
  }

  /** How many sets are in each state. */
  counts(): Record<SetState, number> {
    const out = { applied: 0, undone: 0, partial: 0, expired: 0 } as Record<SetState, number>;
    for (const st of Object.keys(out) as SetState[]) out[st] = this.db.prepare(`SELECT count(*) FROM sets s WHERE ${STATE_SQL[st]}`).pluck().get() as number;
    return out;
  }

  /**
   * The newest live set with a file that can move (no capture gap) and is in place now (undone:
   * taken back now), among `paths` when given, that is an agent's ({@link isAgentsChange});
   * null when there is none. A file partly undone counts both ways. From `set_files`, and the
   * source of the sets it passes.
   */
  newestMovable(undone: boolean, paths?: string[]): ChangeSet | null {
    const only = paths?.length ? ' AND f.path IN (SELECT value FROM json_each(?))' : '';
    const args: unknown[] = [undone ? 1 : 0, undone ? 3 : 0, ...(paths?.length ? [JSON.stringify(paths)] : [])];
    const id = this.db
      .prepare(`SELECT f.set_id FROM set_files f JOIN sets s ON s.id = f.set_id WHERE f.undone IN (?, ?, 2) AND f.gap = 0${only} AND s.state != 'expired' AND ${AGENTS_CHANGE} ORDER BY f.set_id DESC LIMIT 1`)
      .pluck()
      .get(...args) as number | undefined;
    return id === undefined ? null : this.get(String(id));
  }

  /**
   * The live sets newer than set `after` (an id; 0: every one) that are an agent's
   * ({@link isAgentsChange}) with a file that can move (no capture gap), among `paths` when given,
   * whose flag says taken back whole; newest first, at most `max`. These are the sets an undo
   * `--last` asks the disk about: an editor's own undo of an undo, saved, puts one back in place
   * with no step to clear its flag. From `set_files`, and the source of the sets it passes.
   */
  undoneSince(after: number, max: number, paths?: string[]): ChangeSet[] {
    const only = paths?.length ? ' AND f.path IN (SELECT value FROM json_each(?))' : '';
    const args: unknown[] = [after, ...(paths?.length ? [JSON.stringify(paths)] : []), max];
    const ids = this.db
      .prepare(`SELECT DISTINCT f.set_id FROM set_files f JOIN sets s ON s.id = f.set_id WHERE f.set_id > ? AND f.undone IN (1, 3) AND f.gap = 0${only} AND s.state != 'expired' AND ${AGENTS_CHANGE} ORDER BY f.set_id DESC LIMIT ?`)
      .pluck()
      .all(...args) as number[];
    return ids.map((id) => this.get(String(id)));
  }

  /**
   * The live sets whose change to `path` can move (no capture gap) and is in place now (undone:
   * taken back now), oldest first; a change partly undone is both. From the `set_files` index on
   * path: no other set is read.
   */
  touching(path: string, undone: boolean): ChangeSet[] {
    return (
      this.db
        .prepare(
          `SELECT ${COLUMNS} FROM sets s WHERE s.id IN (SELECT set_id FROM set_files WHERE path = ? AND undone IN (?, ?, 2) AND gap = 0) AND s.state != 'expired' ORDER BY s.id`,
        )
        .all(path, undone ? 1 : 0, undone ? 3 : 0) as SetRow[]
    ).map(toSet);
  }

  /** Ids of the live sets with a change to `path` that is no capture gap, newest first. From the `set_files` index on path. */
  liveOn(path: string): string[] {
    return (this.pathQuery("SELECT f.set_id FROM set_files f JOIN sets s ON s.id = f.set_id WHERE f.path = ? AND f.gap = 0 AND s.state != 'expired' ORDER BY f.set_id DESC").all(path) as number[]).map(String);
  }

  /** Single-column statement `sql`, compiled at its first use on this connection. */
  private pathQuery(sql: string): Database.Statement {
    let st = this.perPath.get(sql);
    if (!st) this.perPath.set(sql, (st = this.db.prepare(sql).pluck()));
    return st;
  }

  /**
   * Ids of the live sets numbered strictly between `from` and `to` whose change to `path` is in
   * place now (not undone; partly undone counts), oldest first.
   */
  inPlaceBetween(path: string, from: number, to: number): string[] {
    return (
      this.db
        .prepare(
          "SELECT f.set_id FROM set_files f JOIN sets s ON s.id = f.set_id WHERE f.path = ? AND f.set_id > ? AND f.set_id < ? AND f.undone IN (0, 2) AND s.state != 'expired' ORDER BY f.set_id",
        )
        .pluck()
        .all(path, from, to) as number[]
    ).map(String);
  }

  /**
   * Everything after a turn boundary: sets of turns numbered after `turn`, and sets outside any
   * turn recorded after it ended. Oldest first.
   */
  afterTurn(turn: { seq: number; start: number; end: number | null }): ChangeSet[] {
    const rows = this.db
      .prepare(
        `SELECT ${COLUMNS} FROM sets s LEFT JOIN turns t ON s.turn = t.id
         WHERE t.seq > ? OR (t.id IS NULL AND s.created_at > ?) ORDER BY s.id`,
      )
      .all(turn.seq, turn.end ?? turn.start) as SetRow[];
    return rows.map(toSet);
  }

  /**
   * Expires sets `ids`: each becomes a tombstone (state `expired`) that keeps its paths and
   * statuses for `list --all` but refers to no kept copy any more (every `sha256` is dropped), so
   * the sweep can take its blobs. Call inside a transaction.
   */
  expire(ids: string[]): void {
    const sel = this.db.prepare('SELECT files FROM sets WHERE id = ?');
    const upd = this.db.prepare("UPDATE sets SET state = 'expired', files = ? WHERE id = ?");
    const strip = (s: FileChange['before']): FileChange['before'] => (s.exists && s.type === 'file' ? { ...s, sha256: null } : s);
    for (const id of ids) {
      const row = sel.get(Number(id)) as { files: string } | undefined;
      if (!row) continue;
      const files = (JSON.parse(row.files) as FileChange[]).map((f) => ({ ...f, before: strip(f.before), after: strip(f.after) }));
      upd.run(JSON.stringify(files), Number(id));
    }
  }

  /**
   * The undo steps that still have sets with undone files, oldest step first (each step's sets
   * oldest first). A set belongs to the newest undo (or replace) that took back one of its files
   * still undone; a step whose sets were all redone since is not listed, and one whose sets were
   * partly redone lists the rest. Files partly undone (by hunks) count as undone.
   */
  undoSteps(): UndoStep[] {
    const rows = this.db
      .prepare(
        `SELECT ${COLUMNS}, u.op AS step FROM (SELECT set_id, MAX(last_op) AS op FROM (SELECT set_id, last_op FROM set_files WHERE undone = 1 UNION ALL SELECT set_id, last_op FROM set_files WHERE undone >= 2) GROUP BY set_id) u
         JOIN sets s ON s.id = u.set_id WHERE s.state != 'expired' ORDER BY u.op, s.id`,
      )
      .all() as (SetRow & { step: number })[];
    const steps: UndoStep[] = [];
    for (const r of rows) {
      const last = steps.at(-1);
      if (last && last.seq === r.step) last.sets.push(toSet(r));
      else steps.push({ seq: r.step, sets: [toSet(r)] });
    }
    return steps;
  }
}
