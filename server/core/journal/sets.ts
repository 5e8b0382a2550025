import { TakebackError, checkId } from '../errors.js';
import type { ChangeSet, ChangeSource, FileChange, HistoryEntry, SetState } from '../types.js';
import type { Db } from './db.js';

interface SetRow {
  id: number;
  turn: string | null;
  source: string;
  created_at: number;
  state: string;
  files: string;
  history: string;
  agent: string | null;
  session: string | null;
  undo_seq: number | null;
}

/**
 * One undo step as the journal remembers it, for `redo --last`: the sets it took back that still
 * have files undone.
 */
export interface UndoStep {
  /** The step's number (`undo_seq`): later steps have larger ones. */
  seq: number;
  /** Its sets that still have undone files, oldest first. */
  sets: ChangeSet[];
}

function toSet(r: SetRow): ChangeSet {
  return {
    id: String(r.id),
    turn: r.turn,
    agent: r.agent,
    session: r.session,
    source: JSON.parse(r.source) as ChangeSource,
    time: r.created_at,
    state: r.state as SetState,
    files: JSON.parse(r.files) as FileChange[],
    history: JSON.parse(r.history) as HistoryEntry[],
  };
}

/** Change sets: written whole in one statement, so a killed process leaves all of a set or none. */
export class Sets {
  constructor(private readonly db: Db) {}

  /**
   * Records a change set. `agent` and `session` default to the turn's. Returns it, or `null` when
   * `files` is empty (nothing to keep).
   */
  add(opts: { turn: string | null; agent?: string | null; session?: string | null; source: ChangeSource; files: FileChange[]; now?: number }): ChangeSet | null {
    if (opts.files.length === 0) return null;
    const now = opts.now ?? Date.now();
    const history: HistoryEntry[] = [{ action: 'applied', time: now }];
    const files = [...opts.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    let agent = opts.agent ?? null;
    let session = opts.session ?? null;
    if (opts.turn && (agent === null || session === null)) {
      const t = this.db.prepare('SELECT agent, session FROM turns WHERE id = ?').get(opts.turn) as { agent: string | null; session: string | null } | undefined;
      agent ??= t?.agent ?? null;
      session ??= t?.session ?? null;
    }
    const info = this.db
      .prepare('INSERT INTO sets (turn, agent, session, source, created_at, state, files, history) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(opts.turn, agent, session, JSON.stringify(opts.source), now, 'applied', JSON.stringify(files), JSON.stringify(history));
    return { id: String(info.lastInsertRowid), turn: opts.turn, agent, session, source: opts.source, time: now, state: 'applied', files, history };
  }

  /** The agents that recorded sets here (expired ones too), sorted. */
  agents(): string[] {
    return this.db.prepare('SELECT DISTINCT agent FROM sets WHERE agent IS NOT NULL ORDER BY agent').pluck().all() as string[];
  }

  /** The set `id`. Throws `invalid-id`, `not-found`, or `expired` (its copies are gone; a tombstone remains). */
  get(id: string): ChangeSet {
    checkId(id, 'change set id');
    const row = /^\d+$/.test(id) ? (this.db.prepare('SELECT * FROM sets WHERE id = ?').get(Number(id)) as SetRow | undefined) : undefined;
    if (!row) throw new TakebackError('not-found', `no change set ${id}`, { id });
    const set = toSet(row);
    if (set.state === 'expired') throw new TakebackError('expired', `change set ${id} has expired: its copies are gone`, { id });
    return set;
  }

  /** Sets of turn `turn`, or all sets; oldest first. Includes expired tombstones. */
  list(opts: { turn?: string } = {}): ChangeSet[] {
    const rows = (
      opts.turn !== undefined
        ? this.db.prepare('SELECT * FROM sets WHERE turn = ? ORDER BY id').all(opts.turn)
        : this.db.prepare('SELECT * FROM sets ORDER BY id').all()
    ) as SetRow[];
    return rows.map(toSet);
  }

  /**
   * The sets of turns `turns` and the sets outside any turn recorded at or after `since`, oldest
   * first; expired tombstones too unless `live`. Reads only those rows (`list` of a long journal).
   */
  recent(turns: string[], since: number, opts: { live?: boolean } = {}): ChangeSet[] {
    const live = opts.live ? " AND state != 'expired'" : '';
    const rows = this.db
      .prepare(
        `SELECT * FROM sets WHERE (turn IN (SELECT value FROM json_each(?)) OR (turn IS NULL AND created_at >= ?))${live} ORDER BY id`,
      )
      .all(JSON.stringify(turns), since) as SetRow[];
    return rows.map(toSet);
  }

  /** Sets with ids from `from` to `to` (inclusive), oldest first. */
  range(from: number, to: number): ChangeSet[] {
    return (this.db.prepare('SELECT * FROM sets WHERE id BETWEEN ? AND ? ORDER BY id').all(from, to) as SetRow[]).map(toSet);
  }

  /** The newest set in one of `states`, or null. */
  newest(...states: SetState[]): ChangeSet | null {
    const row = this.db
      .prepare(`SELECT * FROM sets WHERE state IN (${states.map(() => '?').join(',')}) ORDER BY id DESC LIMIT 1`)
      .get(...states) as SetRow | undefined;
    return row ? toSet(row) : null;
  }

  /** Sets in one of `states`, oldest first. */
  inState(...states: SetState[]): ChangeSet[] {
    return (this.db.prepare(`SELECT * FROM sets WHERE state IN (${states.map(() => '?').join(',')}) ORDER BY id`).all(...states) as SetRow[]).map(toSet);
  }

  /**
   * Everything after a turn boundary: sets of turns numbered after `turn`, and sets outside any
   * turn recorded after it ended. Oldest first.
   */
  afterTurn(turn: { seq: number; start: number; end: number | null }): ChangeSet[] {
    const rows = this.db
      .prepare(
        `SELECT s.* FROM sets s LEFT JOIN turns t ON s.turn = t.id
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
   * oldest first). Sets of one step share its number; a step whose sets were all redone since is
   * not listed, and one whose sets were partly redone lists the rest.
   */
  undoSteps(): UndoStep[] {
    const rows = this.db
      .prepare("SELECT * FROM sets WHERE state IN ('undone', 'partial') ORDER BY undo_seq, id")
      .all() as SetRow[];
    const steps: UndoStep[] = [];
    for (const r of rows) {
      // Null only in a journal a takeback of schema 2 wrote to after the migration (the next
      // open numbers them): such sets sort first, and each is a step of its own.
      const seq = r.undo_seq ?? 0;
      const last = steps.at(-1);
      if (last && r.undo_seq !== null && last.seq === seq) last.sets.push(toSet(r));
      else steps.push({ seq, sets: [toSet(r)] });
    }
    return steps;
  }

  /**
   * Marks files of sets undone (`undone: true`) or applied again, appends `entry` to each set's
   * history and derives each set's state: `undone` when all its files are, `applied` when none
   * are, `partial` otherwise. `files` maps set id → the paths moved (all of them, or some).
   * Marking files undone is one undo step: every set of `files` gets the step's new number
   * (`undo_seq`, see {@link undoSteps}), which `redo --last` goes by. Call inside a transaction.
   */
  markFiles(files: Map<string, string[]>, undone: boolean, entry: HistoryEntry): void {
    const sel = this.db.prepare('SELECT state, files, history FROM sets WHERE id = ?');
    const upd = this.db.prepare('UPDATE sets SET state = ?, files = ?, history = ?, undo_seq = COALESCE(?, undo_seq) WHERE id = ?');
    const seq = undone && files.size > 0 ? (this.db.prepare('SELECT COALESCE(MAX(undo_seq), 0) FROM sets').pluck().get() as number) + 1 : null;
    for (const [id, paths] of files) {
      const row = sel.get(Number(id)) as { state: string; files: string; history: string } | undefined;
      // Expired meanwhile (the retention sweep, between an undo's start and its end): a tombstone
      // stays one; its copies are no longer kept for it.
      if (!row || row.state === 'expired') continue;
      const list = JSON.parse(row.files) as FileChange[];
      const moved = new Set(paths);
      for (const f of list) {
        if (!moved.has(f.path)) continue;
        if (undone) f.undone = true;
        else delete f.undone;
      }
      const history = JSON.parse(row.history) as HistoryEntry[];
      const whole = list.every((f) => moved.has(f.path));
      history.push(whole ? entry : { ...entry, paths: [...moved].sort() });
      // Files a capture gap keeps from moving do not count: they can never be undone.
      const movable = list.filter((f) => !f.gap);
      const n = movable.filter((f) => f.undone).length;
      const state: SetState = n === 0 ? 'applied' : n === movable.length ? 'undone' : 'partial';
      upd.run(state, JSON.stringify(list), JSON.stringify(history), seq, Number(id));
    }
  }
}
