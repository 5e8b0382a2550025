// A real journal of schema 3 (test/fixtures/journal-v3: made by the code of that schema, see its
// README) opened by this takeback: migrated in place to the operation log, it gives the answers
// the code of schema 3 gave — list, show of every set, preview both ways, and `redo --last` in a
// row (a forced undo's step with what it replaced, which schema 3 took back in two, then a file
// undone on its own).
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../server/core/journal/db.js';
import { workspaceKey } from '../server/core/workspace.js';
import { sandbox, type Sandbox } from './support/takeback.js';

const DATA = path.join(import.meta.dirname, 'fixtures/journal-v3/data');
const expected = JSON.parse(fs.readFileSync(path.join(DATA, 'expected.json'), 'utf8'));

/** A sandbox whose workspace and TAKEBACK_HOME are as the fixture's were when it was made. Returns it and its journal file. */
function fromFixture(): { sb: Sandbox; file: string } {
  const sb = sandbox({ git: true });
  for (const [rel, f] of Object.entries(expected.files as Record<string, { text: string; mode: number }>)) sb.write(rel, f.text, f.mode);
  const dir = path.join(sb.home, 'workspaces', workspaceKey(sb.ws));
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.copyFileSync(path.join(DATA, 'journal.db'), path.join(dir, 'journal.db'));
  fs.cpSync(path.join(DATA, 'blobs'), path.join(sb.home, 'blobs'), { recursive: true });
  return { sb, file: path.join(dir, 'journal.db') };
}

/** `takeback ...args --json` as the fixture's run recorded it: exit code and output. */
function answer(sb: Sandbox, args: string[]): { code: number; out: any } {
  const r = sb.tb([...args, '--json']);
  return { code: r.code ?? -1, out: JSON.parse(r.stdout) };
}

const withoutWorkspace = (list: any) => ({ ...list, workspace: null });

/**
 * `out` (a list or a set, as schema 3's code gave it) with what this takeback adds: each file's
 * state, a list's background baseline (none), and whether each turn's end was never heard (none
 * was). A file's state is what the disk holds, here what the flag says (the fixture's files are
 * as its journal left them).
 */
function withFileStates(out: any): any {
  const files = (fs: any[]) => fs.map((f) => ({ ...f, state: f.undone ? 'undone' : 'applied' }));
  // A list also says how far a baseline made in the background has got: none here.
  if (out.sets)
    return {
      ...out,
      capture: { ...out.capture, baseline: null },
      turns: out.turns.map((t: any) => ({ ...t, endLost: false })),
      sets: out.sets.map((x: any) => (x.files ? { ...x, files: files(x.files) } : x)),
    };
  return out.files ? { ...out, files: files(out.files) } : out;
}

describe('a journal of schema 3, migrated in place', () => {
  it('opens as schema 4 with its history as operations, and list, show and preview answer as before', () => {
    const { sb, file } = fromFixture();
    const before = new Database(file, { readonly: true });
    expect(before.pragma('user_version', { simple: true })).toBe(3);
    before.close();

    expect(withoutWorkspace(sb.json(['list', '--all']))).toEqual(withFileStates(withoutWorkspace(expected.list)));

    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      const columns = (db.prepare('PRAGMA table_info(sets)').all() as { name: string }[]).map((c) => c.name);
      expect(columns).not.toContain('history');
      expect(columns).not.toContain('undo_seq');
      expect(db.prepare("SELECT count(*) FROM sets WHERE files LIKE '%\"undone\"%'").pluck().get()).toBe(0);
      // The log: six sets recorded (five captures and the replace of set 6), the undo of turn t2,
      // its redo (naming that undo), the undo of c.txt alone, the forced undo of set 4 (naming set 6).
      const ops = db.prepare('SELECT id, parent, kind, forced, set_id, inverts, replaced FROM operations ORDER BY id').all() as any[];
      expect(ops.map((o) => [o.kind, o.set_id ?? o.replaced])).toEqual([
        ['capture', 1],
        ['capture', 2],
        ['capture', 3],
        ['capture', 4],
        ['capture', 5],
        ['undo', null],
        ['redo', null],
        ['undo', null],
        ['replace', 6],
        ['undo', 6],
      ]);
      expect(ops.slice(1).map((o) => o.parent)).toEqual(ops.slice(0, -1).map((o) => o.id));
      expect(ops[6].inverts).toBe(ops[5].id);
      expect(ops[9].forced).toBe(1);
      const moved = (op: number) => db.prepare('SELECT set_id, path FROM op_files WHERE op = ? ORDER BY set_id, path').all(op);
      expect(moved(ops[5].id)).toEqual([
        { set_id: 4, path: 'a.txt' },
        { set_id: 5, path: 'd.txt' },
      ]);
      expect(moved(ops[7].id)).toEqual([{ set_id: 3, path: 'c.txt' }]);
      // What the forced undo found at a.txt is what set 6 kept: the person's line.
      const found = JSON.parse(db.prepare('SELECT found FROM op_paths WHERE op = ? AND path = ?').pluck().get(ops[9].id, 'a.txt') as string);
      const six = expected.show['6'].out.files.find((f: any) => f.path === 'a.txt');
      expect(found).toEqual(six.after);
      expect(db.prepare('SELECT set_id, path, undone FROM set_files WHERE undone = 1 ORDER BY set_id').all()).toEqual([
        { set_id: 3, path: 'c.txt', undone: 1 },
        { set_id: 4, path: 'a.txt', undone: 1 },
        { set_id: 6, path: 'a.txt', undone: 1 },
      ]);
    } finally {
      db.close();
    }

    for (const id of ['1', '2', '3', '4', '5', '6']) {
      const want = expected.show[id];
      expect(answer(sb, ['show', id]), `show ${id}`).toEqual({ ...want, out: withFileStates(want.out) });
    }
    expect(sb.json(['preview', '--last'])).toEqual(expected.previewUndo);
    // Redo is the exact inverse of the forced undo of set 4: it gives back what that undo found
    // (the person's line over set 4's) and moves set 6, which kept it, along.
    expect(sb.json(['preview', '--redo', '--last'])).toEqual({
      ...expected.previewRedo,
      sets: ['4', '6'],
      files: [{ ...expected.previewRedo.files[0], diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,4 @@\n a\n a2\n+a3\n+mine\n', sets: ['4', '6'] }],
    });
  });

  it('redo --last takes back what schema 3 would have, in the same order, to the same bytes: the forced undo with what it replaced in one step', () => {
    const { sb } = fromFixture();
    // Schema 3's code took back the forced undo of set 4, then set 6 (what it replaced), then c.txt.
    const [forced, replaced, alone] = expected.redos as any[];
    const redos = [{ ...forced, sets: ['4', '6'], after: replaced.after }, alone, { code: 3, sets: null, error: 'not-found', after: alone.after }];
    for (const [i, want] of redos.entries()) {
      const r = answer(sb, ['redo', '--last']);
      expect({ code: r.code, sets: r.out.sets ?? null, error: r.out.error?.code ?? null }, `redo ${i + 1}`).toEqual({ code: want.code, sets: want.sets, error: want.error });
      for (const [rel, text] of Object.entries(want.after as Record<string, string | null>)) {
        expect(sb.exists(rel) ? sb.read(rel).toString() : null, `${rel} after redo ${i + 1}`).toBe(text);
      }
    }
    expect(withoutWorkspace(sb.json(['list', '--all']))).toEqual(withFileStates(withoutWorkspace(expected.listAfter)));
  });
});
