import type { ChangeSource, FileChange, FileState } from '../types.js';
import type Database from 'better-sqlite3';

/** A set's history entry as journals before the operation log kept it (JSON in `sets.history`). */
interface OldEntry {
  action?: string;
  time?: number;
  forced?: boolean;
  paths?: string[];
}

/** An operation rebuilt from the sets' histories, before it is numbered. */
interface Rebuilt {
  kind: 'capture' | 'replace' | 'undo' | 'redo';
  time: number;
  forced: boolean;
  /** The set a capture or replace recorded. */
  set: number | null;
  /** Set id → the paths it moved. */
  files: Map<number, string[]>;
}

const RANK = { capture: 0, replace: 1, undo: 2, redo: 2 } as const;

function parse<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/**
 * Turns the histories of a journal of schema 3 or older (each set's JSON `history` and its
 * files' `undone` flags) into the operation log: one `capture` per set at its creation; one
 * `undo` or `redo` per step, the entries of several sets with the same action, time and force
 * being one step (one step stamped every set it moved with its one time); a set that keeps what a
 * forced step replaced is recorded by a `replace` at the time it was taken back, and that step
 * names it. Operations are numbered in time order (a replace before the step it belongs to).
 * What an old step found and wrote at each path was not kept: it is taken from the sets (what
 * the newest set it moved left, or what the replaced set kept; what the oldest had before). A
 * path's `undone` in `set_files` is the old flag; `last_op` the last operation that moved it.
 * Removes the flags from `sets.files`, and marks tombstones `expired`, other sets `applied` (as recorded).
 * Call inside the migration's transaction, before the old columns are dropped.
 */
export function migrateToOpLog(db: Database.Database): void {
  const rows = db.prepare('SELECT id, source, created_at, state, files, history FROM sets ORDER BY id').all() as {
    id: number;
    source: string;
    created_at: number;
    state: string;
    files: string;
    history: string;
  }[];
  const files = new Map<number, FileChange[]>();
  const sources = new Map<number, ChangeSource>();
  const ops: Rebuilt[] = [];
  const steps = new Map<string, Rebuilt>();
  for (const r of rows) {
    const list = parse<FileChange[]>(r.files, []);
    files.set(r.id, list);
    const source = parse<ChangeSource>(r.source, { kind: 'turn' });
    sources.set(r.id, source);
    const all = list.map((f) => f.path);
    let entries = parse<OldEntry[]>(r.history, []).filter((e) => (e.action === 'undone' || e.action === 'redone') && typeof e.time === 'number');
    if (source.kind === 'replaced' && entries[0]?.action === 'undone') {
      ops.push({ kind: 'replace', time: entries[0].time!, forced: true, set: r.id, files: new Map([[r.id, entries[0].paths ?? all]]) });
      entries = entries.slice(1);
    } else {
      ops.push({ kind: 'capture', time: r.created_at, forced: false, set: r.id, files: new Map() });
    }
    for (const e of entries) {
      const kind = e.action === 'undone' ? 'undo' : 'redo';
      const key = `${kind}|${e.time}|${e.forced ? 1 : 0}`;
      let op = steps.get(key);
      if (!op) {
        op = { kind, time: e.time!, forced: Boolean(e.forced), set: null, files: new Map() };
        steps.set(key, op);
        ops.push(op);
      }
      op.files.set(r.id, e.paths ?? all);
    }
  }
  const firstSet = (o: Rebuilt) => o.set ?? Math.min(...o.files.keys());
  ops.sort((a, b) => a.time - b.time || RANK[a.kind] - RANK[b.kind] || firstSet(a) - firstSet(b));

  const insertOp = db.prepare('INSERT INTO operations (parent, kind, direction, forced, time, set_id, inverts, replaced) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const insertFile = db.prepare('INSERT OR IGNORE INTO op_files (set_id, op, path) VALUES (?, ?, ?)');
  const insertPath = db.prepare('INSERT OR IGNORE INTO op_paths (op, path, found, wrote) VALUES (?, ?, ?, ?)');
  const lastOp = new Map<string, number>(); // `${set}\0${path}` → operation id
  const idOf = new Map<Rebuilt, number>();
  const directionOf = new Map<number, 'undo' | 'redo' | null>();
  let parent: number | null = null;
  // The replace operations not yet claimed by the forced step they belong to.
  const pendingReplace: { op: Rebuilt; source: Extract<ChangeSource, { kind: 'replaced' }> }[] = [];
  for (const o of ops) {
    const direction = o.kind === 'capture' ? null : o.kind === 'redo' ? 'redo' : 'undo';
    let inverts: number | null = null;
    if (o.kind === 'redo') {
      const before = new Set<number>();
      for (const [set, paths] of o.files) for (const p of paths) before.add(lastOp.get(`${set}\0${p}`) ?? -1);
      const [only] = before;
      if (before.size === 1 && only !== undefined && directionOf.get(only) === 'undo') inverts = only;
    }
    let replaced: number | null = null;
    if ((o.kind === 'undo' || o.kind === 'redo') && o.forced) {
      const i = pendingReplace.findIndex((r) => r.source.direction === o.kind && r.source.sets.every((id) => o.files.has(Number(id))));
      if (i >= 0) replaced = pendingReplace.splice(i, 1)[0]!.op.set;
    }
    const id: number = Number(insertOp.run(parent, o.kind, direction, o.forced ? 1 : 0, o.time, o.set, inverts, replaced).lastInsertRowid);
    idOf.set(o, id);
    directionOf.set(id, direction);
    parent = id;
    if (o.kind === 'capture' || o.kind === 'replace') {
      for (const f of files.get(o.set!) ?? []) lastOp.set(`${o.set}\0${f.path}`, id);
    }
    if (o.kind === 'replace') {
      const source = sources.get(o.set!);
      if (source?.kind === 'replaced') pendingReplace.push({ op: o, source });
    }
    for (const [set, paths] of o.files) {
      for (const p of paths) {
        insertFile.run(set, id, p);
        lastOp.set(`${set}\0${p}`, id);
      }
    }
    if (o.kind === 'undo' || o.kind === 'redo') {
      for (const p of stepPaths(o, files, replaced === null ? null : (files.get(replaced) ?? null))) insertPath.run(id, p.path, JSON.stringify(p.found), JSON.stringify(p.wrote));
    }
  }

  const setFile = db.prepare('INSERT OR REPLACE INTO set_files (set_id, path, gap, undone, last_op) VALUES (?, ?, ?, ?, ?)');
  const rewrite = db.prepare('UPDATE sets SET files = ?, state = ? WHERE id = ?');
  for (const r of rows) {
    const list = files.get(r.id)!;
    let flagged = false;
    for (const f of list) {
      setFile.run(r.id, f.path, f.gap ? 1 : 0, f.undone ? 1 : 0, lastOp.get(`${r.id}\0${f.path}`) ?? 0);
      if ('undone' in f) {
        delete f.undone;
        flagged = true;
      }
    }
    const state = r.state === 'expired' ? 'expired' : 'applied';
    if (flagged || state !== r.state) rewrite.run(flagged ? JSON.stringify(list) : r.files, state, r.id);
  }
}

/**
 * What an old step found and wrote at each path, as far as the sets tell: an undo found what the
 * newest set it moved there left (or, forced, what the replaced set kept) and wrote what the
 * oldest had before; a redo the other way round.
 */
function stepPaths(o: Rebuilt, files: Map<number, FileChange[]>, replaced: FileChange[] | null): { path: string; found: FileState; wrote: FileState }[] {
  const byPath = new Map<string, FileChange[]>();
  for (const [set, paths] of [...o.files].sort(([a], [b]) => a - b)) {
    const want = new Set(paths);
    for (const f of files.get(set) ?? []) {
      if (!want.has(f.path)) continue;
      const list = byPath.get(f.path);
      if (list) list.push(f);
      else byPath.set(f.path, [f]);
    }
  }
  const out: { path: string; found: FileState; wrote: FileState }[] = [];
  for (const [path, list] of byPath) {
    const oldest = list[0]!;
    const newest = list.at(-1)!;
    const kept = replaced?.find((f) => f.path === path);
    if (o.kind === 'undo') out.push({ path, found: kept ? kept.after : newest.after, wrote: oldest.before });
    else out.push({ path, found: kept ? kept.after : oldest.before, wrote: newest.after });
  }
  return out;
}
