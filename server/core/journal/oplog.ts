import type { FileChange, FileState } from '../types.js';
import type { Db } from './db.js';
import { statement } from '../statements.js';

/*
 * The journal's history is a log of operations, each an immutable row with its parent (the
 * operation before it): a capture records a change set; an undo or a redo moves files of sets;
 * a forced undo or redo also records what it wrote over, as a set of its own already taken back
 * (a `replace` operation, just before the step's own). Nothing in a past row changes. What a
 * set's files are now (applied or undone) is derived from the log, and kept in `set_files` as an
 * index: each path of each set, whether it is undone and which operation last moved it.
 */

/** What an operation is: `capture` (records a set), `undo`, `redo`, `replace` (records what a forced step wrote over, taken back at once). */
export type OpKind = 'capture' | 'undo' | 'redo' | 'replace';

/** One path as an undo or redo found it and left it. */
export interface OpPath {
  path: string;
  /** What was there when the step began (what it replaced, when it was forced). */
  found: FileState;
  /** What the step left there. */
  wrote: FileState;
}

/** One operation of the log as read back (`operations` and its rows). */
export interface Operation {
  id: number;
  /** The operation before it; null for the first. */
  parent: number | null;
  kind: OpKind;
  /** `undo` for an undo and a replace, `redo` for a redo, null for a capture. */
  direction: 'undo' | 'redo' | null;
  forced: boolean;
  /** Ms since the epoch. */
  time: number;
  /** For a capture or a replace: the set it recorded. */
  set: string | null;
  /** For a redo: the undo (or replace) it takes back, when every path it moved was last moved by that one operation. */
  inverts: number | null;
  /** For a forced undo or redo: the set that keeps what it wrote over (its replace operation's). */
  replaced: string | null;
  /** The sets' paths it moved (set id → paths, sorted). Empty for a capture. */
  files: Map<string, string[]>;
  /** Per path, what it found and what it wrote (undo and redo only). */
  paths: OpPath[];
}

/**
 * What the one undo or redo that last moved a path did there, for the step that takes it back
 * exactly ({@link OpLog.toInvert}): the operation, what it found and what it wrote, and the set
 * keeping what it wrote over when it was forced (moved along by its inverse: its file comes back
 * with the bytes the forced step found).
 */
export interface StepToInvert {
  op: number;
  found: FileState;
  wrote: FileState;
  /** The forced step's `replaced` set, when its file at the path is still as its replace left it; else null. */
  replaced: string | null;
}

/** The operation log's tables (see db.ts for the schema). */
export class OpLog {
  constructor(private readonly db: Db) {}

  private insertOp(kind: OpKind, direction: 'undo' | 'redo' | null, forced: boolean, time: number, set: number | null, inverts: number | null, replaced: number | null): number {
    const parent = statement(this.db, 'SELECT MAX(id) FROM operations').pluck().get() as number | null;
    const info = statement(this.db, 'INSERT INTO operations (parent, kind, direction, forced, time, set_id, inverts, replaced) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      parent,
      kind,
      direction,
      forced ? 1 : 0,
      time,
      set,
      inverts,
      replaced,
    );
    return Number(info.lastInsertRowid);
  }

  /**
   * Records set `set` (just inserted) with `files`: a `capture` operation, or with `replace` a
   * `replace` operation that also takes every file of it back at once (what a forced step wrote
   * over). Fills `set_files`. Returns the operation's id. Call inside a transaction.
   */
  recordSet(set: number, files: FileChange[], time: number, replace = false): number {
    const op = this.insertOp(replace ? 'replace' : 'capture', replace ? 'undo' : null, replace, time, set, null, null);
    const row = statement(this.db, 'INSERT INTO set_files (set_id, path, gap, undone, last_op) VALUES (?, ?, ?, ?, ?)');
    const moved = replace ? statement(this.db, 'INSERT INTO op_files (set_id, op, path) VALUES (?, ?, ?)') : null;
    for (const f of files) {
      row.run(set, f.path, f.gap ? 1 : 0, replace ? 1 : 0, op);
      moved?.run(set, op, f.path);
    }
    return op;
  }

  /**
   * Records an undo or redo that moved `files` (set id → paths) and left `paths` as they say:
   * each (set, path) is marked undone (redo: applied again) in `set_files`. Sets expired
   * meanwhile are passed over (a tombstone stays one). A redo names the operation it inverts
   * when every path it moved was last moved by the same undo or replace. `replaced`: the set
   * keeping what a forced step wrote over. `marks` (`set id\0path` → `set_files.undone`): pairs
   * whose mark is not the direction's plain one — 2 for a change left partly undone (some hunks),
   * 3 for one undone by a step that took its last hunks (see db.ts). Returns the operation's id.
   * Call inside a transaction.
   */
  recordStep(opts: {
    direction: 'undo' | 'redo';
    forced: boolean;
    files: Map<string, string[]>;
    paths: OpPath[];
    replaced: string | null;
    time: number;
    marks?: Map<string, number>;
  }): number {
    const live = this.db.prepare("SELECT state != 'expired' FROM sets WHERE id = ?").pluck();
    const last = this.db.prepare('SELECT last_op FROM set_files WHERE set_id = ? AND path = ?').pluck();
    const moves: [number, string][] = [];
    const before = new Set<number>();
    for (const [id, paths] of opts.files) {
      if (live.get(Number(id)) !== 1) continue;
      for (const p of paths) {
        const op = last.get(Number(id), p) as number | undefined;
        if (op === undefined) continue;
        before.add(op);
        moves.push([Number(id), p]);
      }
    }
    // The replace operation of a forced undo, whose set its inverse moves along, is part of it.
    if (before.size === 2) {
      const [a, b] = [...before].sort((x, y) => x - y);
      const replace = this.db.prepare("SELECT set_id FROM operations WHERE id = ? AND kind = 'replace'").pluck().get(a) as number | undefined;
      const forced = this.db.prepare('SELECT replaced FROM operations WHERE id = ?').pluck().get(b) as number | null | undefined;
      if (replace !== undefined && replace === forced) before.delete(a!);
    }
    let inverts: number | null = null;
    if (opts.direction === 'redo' && before.size === 1) {
      const [only] = before;
      const kind = this.db.prepare('SELECT direction FROM operations WHERE id = ?').pluck().get(only) as string | null;
      if (kind === 'undo') inverts = only!;
    }
    const op = this.insertOp(opts.direction, opts.direction, opts.forced, opts.time, null, inverts, opts.replaced === null ? null : Number(opts.replaced));
    const mark = this.db.prepare('UPDATE set_files SET undone = ?, last_op = ? WHERE set_id = ? AND path = ?');
    const moved = this.db.prepare('INSERT INTO op_files (set_id, op, path) VALUES (?, ?, ?)');
    const undone = opts.direction === 'undo' ? 1 : 0;
    for (const [id, p] of moves) {
      mark.run(opts.marks?.get(`${id}\0${p}`) ?? undone, op, id, p);
      moved.run(id, op, p);
    }
    const at = this.db.prepare('INSERT INTO op_paths (op, path, found, wrote) VALUES (?, ?, ?, ?)');
    for (const p of opts.paths) at.run(op, p.path, JSON.stringify(p.found), JSON.stringify(p.wrote));
    return op;
  }

  /** The operation `id`, or null. */
  get(id: number): Operation | null {
    const r = this.db.prepare('SELECT * FROM operations WHERE id = ?').get(id) as OpRow | undefined;
    if (!r) return null;
    const files = new Map<string, string[]>();
    for (const f of this.db.prepare('SELECT set_id, path FROM op_files WHERE op = ? ORDER BY set_id, path').all(id) as { set_id: number; path: string }[]) {
      const list = files.get(String(f.set_id));
      if (list) list.push(f.path);
      else files.set(String(f.set_id), [f.path]);
    }
    const paths = (this.db.prepare('SELECT path, found, wrote FROM op_paths WHERE op = ? ORDER BY path').all(id) as { path: string; found: string; wrote: string }[]).map((p) => ({
      path: p.path,
      found: JSON.parse(p.found) as FileState,
      wrote: JSON.parse(p.wrote) as FileState,
    }));
    return {
      id: r.id,
      parent: r.parent,
      kind: r.kind as OpKind,
      direction: r.direction as Operation['direction'],
      forced: r.forced === 1,
      time: r.time,
      set: r.set_id === null ? null : String(r.set_id),
      inverts: r.inverts,
      replaced: r.replaced === null ? null : String(r.replaced),
      files,
      paths,
    };
  }

  /**
   * The step a `direction` step of `sets` on `path` takes back exactly, or null: one operation of
   * the other direction last moved `path` of every set of `sets`, no other set's change to the
   * path is still as it left it, and it recorded what it found and wrote there (the caller checks
   * that the path still holds what it wrote). A redo's inverse of a
   * forced undo names the undo's `replaced` set when that set's file at the path is still taken
   * back by its replace operation; an undo does not invert a forced redo (what that redo wrote
   * over would have to come back applied while the step marks its sets undone). From index
   * seeks on `set_files`, `op_files` and `op_paths`.
   */
  toInvert(path: string, sets: string[], direction: 'undo' | 'redo'): StepToInvert | null {
    if (sets.length === 0) return null;
    const op = this.lastMoved(sets[0]!, path);
    if (op === null || sets.some((id) => this.lastMoved(id, path) !== op)) return null;
    const row = statement(this.db, 'SELECT kind, forced, replaced FROM operations WHERE id = ?').get(op) as { kind: string; forced: number; replaced: number | null } | undefined;
    const other = direction === 'undo' ? 'redo' : 'undo';
    if (!row || row.kind !== other) return null;
    // No other set's change to the path is still as that step left it (the path's rows, by index).
    const still = statement(this.db, 'SELECT set_id FROM set_files WHERE path = ? AND last_op = ?').pluck().all(path, op) as number[];
    const wanted = new Set(sets.map(Number));
    if (still.length !== wanted.size || !still.every((id) => wanted.has(id))) return null;
    const at = statement(this.db, 'SELECT found, wrote FROM op_paths WHERE op = ? AND path = ?').get(op, path) as { found: string; wrote: string } | undefined;
    if (!at) return null;
    let replaced: string | null = null;
    if (row.replaced !== null) {
      if (direction === 'undo') return null;
      const kept = statement(
        this.db,
        "SELECT 1 FROM set_files f JOIN operations o ON o.id = f.last_op WHERE f.set_id = ? AND f.path = ? AND f.undone = 1 AND o.kind = 'replace' AND o.set_id = f.set_id",
      ).get(row.replaced, path);
      if (kept) replaced = String(row.replaced);
    }
    return { op, found: JSON.parse(at.found) as FileState, wrote: JSON.parse(at.wrote) as FileState, replaced };
  }

  /**
   * {@link toInvert} for a redo of `sets`, for all their paths at once (path → the undo to take
   * back there, with `moved`: the sets whose change to the path that undo still holds taken
   * back), in a few queries however many paths: the sets' undone rows, then per undo that last
   * moved them its recorded paths and the rows it still holds. A path is the caller's to check:
   * `moved` must be the sets selected there, and the path must hold what the undo wrote.
   */
  undosToInvert(sets: string[]): Map<string, StepToInvert & { moved: Set<string> }> {
    const out = new Map<string, StepToInvert & { moved: Set<string> }>();
    if (sets.length === 0) return out;
    const rows = statement(this.db, 'SELECT DISTINCT last_op FROM set_files WHERE set_id IN (SELECT value FROM json_each(?)) AND undone = 1')
      .pluck()
      .all(JSON.stringify(sets.map(Number))) as number[];
    for (const op of rows) {
      const row = statement(this.db, 'SELECT kind, replaced FROM operations WHERE id = ?').get(op) as { kind: string; replaced: number | null } | undefined;
      if (!row || row.kind !== 'undo') continue;
      const kept = new Set<string>();
      if (row.replaced !== null) {
        const paths = statement(
          this.db,
          "SELECT f.path FROM set_files f JOIN operations o ON o.id = f.last_op WHERE f.set_id = ? AND f.undone = 1 AND o.kind = 'replace' AND o.set_id = f.set_id",
        )
          .pluck()
          .all(row.replaced) as string[];
        for (const p of paths) kept.add(p);
      }
      for (const p of statement(this.db, 'SELECT path, found, wrote FROM op_paths WHERE op = ?').all(op) as { path: string; found: string; wrote: string }[]) {
        out.set(p.path, {
          op,
          found: JSON.parse(p.found) as FileState,
          wrote: JSON.parse(p.wrote) as FileState,
          replaced: kept.has(p.path) ? String(row.replaced) : null,
          moved: new Set(),
        });
      }
      for (const r of statement(this.db, 'SELECT set_id, path FROM set_files WHERE last_op = ? AND undone = 1').all(op) as { set_id: number; path: string }[]) {
        const at = out.get(r.path);
        if (at && at.op === op) at.moved.add(String(r.set_id));
      }
    }
    return out;
  }

  /**
   * What the journal last left at `path`, by its newest operation there: what an undo or redo
   * wrote (`state`), or the set whose capture (its `after`) or replace (its `before`: taken back
   * at once) was the last word. Null when no operation touched the path. From index seeks.
   */
  leftAt(path: string): { state: FileState } | { set: string; side: 'before' | 'after' } | null {
    const op = statement(this.db, 'SELECT MAX(last_op) FROM set_files WHERE path = ?').pluck().get(path) as number | null;
    if (op === null) return null;
    const at = statement(this.db, 'SELECT wrote FROM op_paths WHERE op = ? AND path = ?').pluck().get(op, path) as string | undefined;
    if (at !== undefined) return { state: JSON.parse(at) as FileState };
    const row = statement(this.db, 'SELECT kind, set_id FROM operations WHERE id = ?').get(op) as { kind: string; set_id: number | null } | undefined;
    if (!row || row.set_id === null) return null;
    return { set: String(row.set_id), side: row.kind === 'replace' ? 'before' : 'after' };
  }

  /**
   * What the newest undo or redo at `path` found there (what it replaced), when that step is the
   * journal's last word on the path; null when a capture is, or no operation touched it. From
   * index seeks, as {@link leftAt}.
   */
  foundAt(path: string): FileState | null {
    const op = statement(this.db, 'SELECT MAX(last_op) FROM set_files WHERE path = ?').pluck().get(path) as number | null;
    if (op === null) return null;
    const at = statement(this.db, 'SELECT found FROM op_paths WHERE op = ? AND path = ?').pluck().get(op, path) as string | undefined;
    return at === undefined ? null : (JSON.parse(at) as FileState);
  }

  /** The operation that last moved `path` of set `set` (its capture when none did), or null when the set has no such path. */
  lastMoved(set: string, path: string): number | null {
    return (statement(this.db, 'SELECT last_op FROM set_files WHERE set_id = ? AND path = ?').pluck().get(Number(set), path) as number | undefined) ?? null;
  }

  /** The newest operation's id, or null when the log is empty. */
  head(): number | null {
    return this.db.prepare('SELECT MAX(id) FROM operations').pluck().get() as number | null;
  }
}

interface OpRow {
  id: number;
  parent: number | null;
  kind: string;
  direction: string | null;
  forced: number;
  time: number;
  set_id: number | null;
  inverts: number | null;
  replaced: number | null;
}
