// The journal's history is an operation log: every capture, undo, redo and forced replacement is
// a row with its parent, sets never change once recorded (but by expiry), and a set's state is
// derived from the log. The real binary, then the journal read back as it is on disk.
import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox, type Sandbox } from './support/takeback.js';

function step(sb: Sandbox, args: string[]): void {
  const r = sb.tb(args);
  if (r.code !== 0) throw new Error(`takeback ${args.join(' ')}: exit ${r.code}\n${r.stdout}${r.stderr}`);
}

function open(sb: Sandbox): Database.Database {
  return new Database(path.join(sb.journalDir(), 'journal.db'), { readonly: true });
}

describe('the operation log', () => {
  it('undo, forced undo and redo are operations with what they found and wrote; sets stay as recorded', () => {
    const sb = sandbox({ git: true });
    sb.write('f.txt', 'a\n');
    step(sb, ['turn', 'begin', '--id', 't1']);
    step(sb, ['run', '--', 'sh', '-c', 'echo b >> f.txt && echo n > n.txt']); // set 1
    step(sb, ['turn', 'end', '--id', 't1']);
    let db = open(sb);
    const recorded = db.prepare('SELECT id, state, files FROM sets').all();
    db.close();

    step(sb, ['undo', '1', '--file', 'n.txt']);
    sb.write('f.txt', 'a\nb\nmine\n'); // the person's edit over set 1
    step(sb, ['undo', '1', '--force']);
    step(sb, ['redo', '--last', '--file', 'f.txt']);

    db = open(sb);
    try {
      // Set 1's row is as it was recorded; set 2 keeps what the forced undo replaced.
      expect(db.prepare('SELECT id, state, files FROM sets WHERE id = 1').all()).toEqual(recorded);
      const ops = db.prepare('SELECT * FROM operations ORDER BY id').all() as any[];
      expect(ops.map((o) => [o.kind, o.direction, o.forced, o.set_id])).toEqual([
        ['capture', null, 0, 1],
        ['undo', 'undo', 0, null],
        ['replace', 'undo', 1, 2],
        ['undo', 'undo', 1, null],
        ['redo', 'redo', 0, null],
      ]);
      expect(ops.map((o) => o.parent)).toEqual([null, ...ops.slice(0, -1).map((o) => o.id)]);
      // The forced undo names the set of what it replaced, recorded at the same moment (no date
      // made up to order them: the log's order does).
      const [, , replace, forced, redo] = ops;
      expect(forced.replaced).toBe(2);
      const kept = db.prepare('SELECT created_at FROM sets WHERE id = 2').pluck().get();
      expect(kept).toBe(replace.time);
      expect(replace.time).toBe(forced.time);
      // The redo (of f.txt alone) takes back the forced undo, and says so: what the undo replaced
      // comes back with it.
      expect(redo.inverts).toBe(forced.id);
      expect(db.prepare('SELECT set_id, path FROM op_files WHERE op = ? ORDER BY set_id').all(redo.id)).toEqual([
        { set_id: 1, path: 'f.txt' },
        { set_id: 2, path: 'f.txt' },
      ]);
      // Per path, what the forced undo found (the person's bytes) and what it wrote (set 1's before).
      const paths = db.prepare('SELECT path, found, wrote FROM op_paths WHERE op = ?').all(forced.id) as { path: string; found: string; wrote: string }[];
      expect(paths.map((p) => p.path)).toEqual(['f.txt']);
      expect(JSON.parse(paths[0]!.found)).toMatchObject({ exists: true, size: 'a\nb\nmine\n'.length });
      expect(JSON.parse(paths[0]!.wrote)).toMatchObject({ exists: true, size: 'a\n'.length });
      // set_files: what is undone now, and by which operation.
      expect(db.prepare('SELECT set_id, path, undone, last_op FROM set_files ORDER BY set_id, path').all()).toEqual([
        { set_id: 1, path: 'f.txt', undone: 0, last_op: redo.id },
        { set_id: 1, path: 'n.txt', undone: 1, last_op: ops[1].id },
        { set_id: 2, path: 'f.txt', undone: 0, last_op: redo.id },
      ]);
    } finally {
      db.close();
    }
    // The state and history shown are the log's.
    expect(sb.json(['list']).sets.map((s: any) => [s.id, s.state])).toEqual([
      ['2', 'applied'],
      ['1', 'partial'],
    ]);
    const history = sb.json(['show', '1']).history;
    expect(history.map((h: any) => [h.action, h.forced ?? false, h.paths ?? null])).toEqual([
      ['applied', false, null],
      ['undone', false, ['n.txt']],
      ['undone', true, ['f.txt']],
      ['redone', false, ['f.txt']],
    ]);
    expect(sb.read('f.txt').toString()).toBe('a\nb\nmine\n');
    expect(sb.exists('n.txt')).toBe(false);
  });
});
