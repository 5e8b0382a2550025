// `redo --last` takes back the most recent undo *step*, as editors do: after `undo --turn T` (or
// `undo 1 2`) it redoes every set that step undid, oldest first, as one transaction; after an undo
// of one set, that set. Steps are taken back newest first. Also: `undo --force` (the later changes
// it replaced come back with the turn, in one step), `--file`, a journal of schema 2 (sets undone
// before steps were numbered), and the sidecar's `{ last: true }`. The real binary throughout.
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../protocol/src/errors.js';
import type { ApplyResult, PreviewResult } from '../protocol/src/types.js';
import { SCHEMA_VERSION } from '../server/core/journal/db.js';
import { overStdio } from './support/lsp-client.js';
import { sandbox, type Entry, type Sandbox } from './support/takeback.js';

/** Runs `takeback ...args`, which must succeed. */
function step(sb: Sandbox, args: string[]): void {
  const r = sb.tb(args);
  if (r.code !== 0) throw new Error(`takeback ${args.join(' ')}: exit ${r.code}\n${r.stdout}${r.stderr}`);
}

/**
 * The tester's history: f.txt holds `a`; turn t1 appends `b` (set 1) then `c` (set 2). With
 * `turn2`, turn t2 then appends `d` (set 3) and writes g.txt (set 4). Returns the trees after each
 * set (`S[0]`: before anything).
 */
function build(sb: Sandbox, opts: { turn2?: boolean } = {}): Record<string, Entry>[] {
  sb.write('f.txt', 'a\n');
  const S = [sb.tree()];
  step(sb, ['turn', 'begin', '--id', 't1']);
  step(sb, ['run', '--', 'sh', '-c', 'echo b >> f.txt']);
  S.push(sb.tree());
  step(sb, ['run', '--', 'sh', '-c', 'echo c >> f.txt']);
  S.push(sb.tree());
  step(sb, ['turn', 'end', '--id', 't1']);
  if (opts.turn2) {
    step(sb, ['turn', 'begin', '--id', 't2']);
    step(sb, ['run', '--', 'sh', '-c', 'echo d >> f.txt']);
    S.push(sb.tree());
    step(sb, ['run', '--', 'sh', '-c', 'printf "g\\n" > g.txt && chmod 640 g.txt']);
    S.push(sb.tree());
    step(sb, ['turn', 'end', '--id', 't2']);
  }
  return S;
}

/**
 * Puts the journal `file` back to schema 2, which kept each set's history as JSON, its state and
 * its files' `undone` flags in the set's row, and knew no steps: rebuilt from what `list` and
 * `show` say, the operation log emptied.
 */
function toSchema2(sb: Sandbox, file: string): void {
  const sets = sb.json(['list', '--all']).sets as { id: string; state: string; files: { path: string; undone: boolean }[] }[];
  const history = new Map(sets.map((s) => [s.id, sb.json(['show', s.id]).history]));
  const db = new Database(file);
  db.exec(`ALTER TABLE sets ADD COLUMN history TEXT NOT NULL DEFAULT '[]';
    DELETE FROM operations; DELETE FROM op_files; DELETE FROM op_paths; DELETE FROM set_files;`);
  for (const s of sets) {
    const undone = new Set(s.files.filter((f) => f.undone).map((f) => f.path));
    const files = (JSON.parse(db.prepare('SELECT files FROM sets WHERE id = ?').pluck().get(Number(s.id)) as string) as { path: string; undone?: boolean }[]).map((f) =>
      undone.has(f.path) ? { ...f, undone: true } : f,
    );
    db.prepare('UPDATE sets SET state = ?, files = ?, history = ? WHERE id = ?').run(s.state, JSON.stringify(files), JSON.stringify(history.get(s.id)), Number(s.id));
  }
  db.pragma('user_version = 2');
  db.close();
}

const states = (sb: Sandbox) => Object.fromEntries(sb.json(['list', '--all']).sets.map((s: any) => [s.id, s.state]));

describe('redo --last takes back the most recent undo step', () => {
  it('after undo --turn: both sets of the turn, oldest first, in one step, byte for byte, no conflict', () => {
    const sb = sandbox({ git: true });
    const S = build(sb);
    expect(sb.json(['undo', '--turn', 't1']).sets).toEqual(['2', '1']);
    expect(sb.read('f.txt').toString()).toBe('a\n');
    expect(sb.tree()).toEqual(S[0]);

    const preview = sb.json(['preview', '--redo', '--last']);
    expect(preview).toMatchObject({ direction: 'redo', sets: ['1', '2'], conflicts: 0 });

    const r = sb.tb(['redo', '--last']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('Redid 2 changes (#1 #2)');
    expect(r.stdout + r.stderr).not.toMatch(/changed since|--force/);
    expect(sb.read('f.txt').toString()).toBe('a\nb\nc\n');
    expect(sb.tree()).toEqual(S[2]);
    expect(states(sb)).toEqual({ '1': 'applied', '2': 'applied' });
    // One step: both sets record the same redo.
    const redone = ['1', '2'].map((id) => sb.json(['show', id]).history.at(-1));
    expect(redone[0]).toMatchObject({ action: 'redone' });
    expect(redone[1]).toEqual(redone[0]);

    // Nothing left to redo; undo --last is still the newest change alone.
    expect(sb.tb(['redo', '--last']).code).toBe(3);
    expect(sb.json(['undo', '--last']).sets).toEqual(['2']);
    expect(sb.tree()).toEqual(S[1]);
    expect(sb.json(['redo', '--last']).sets).toEqual(['2']);
    expect(sb.tree()).toEqual(S[2]);
  });

  it('after undo of several ids at once: all of them, as JSON', () => {
    const sb = sandbox({ git: true });
    const S = build(sb, { turn2: true });
    expect(sb.json(['undo', '4', '3']).sets).toEqual(['4', '3']);
    expect(sb.tree()).toEqual(S[2]);
    const r = sb.json(['redo', '--last']);
    expect(r).toMatchObject({ written: true, conflicts: [] });
    expect(r.sets).toEqual(['3', '4']);
    expect(sb.tree()).toEqual(S[4]);
  });

  it('after undo of one set: that set alone', () => {
    const sb = sandbox({ git: true });
    const S = build(sb, { turn2: true });
    expect(sb.json(['undo', '4']).sets).toEqual(['4']);
    expect(sb.tree()).toEqual(S[3]);
    expect(sb.json(['redo', '--last']).sets).toEqual(['4']);
    expect(sb.tree()).toEqual(S[4]);
    expect(sb.tb(['redo', '--last']).code).toBe(3);
  });

  it('two separate undos: redo --last twice takes them back in reverse order', () => {
    const sb = sandbox({ git: true });
    const S = build(sb, { turn2: true });
    // Two steps of one set each.
    expect(sb.json(['undo', '--last']).sets).toEqual(['4']);
    expect(sb.json(['undo', '--last']).sets).toEqual(['3']);
    expect(sb.tree()).toEqual(S[2]);
    expect(sb.json(['redo', '--last']).sets).toEqual(['3']);
    expect(sb.tree()).toEqual(S[3]);
    expect(sb.json(['redo', '--last']).sets).toEqual(['4']);
    expect(sb.tree()).toEqual(S[4]);

    // Two steps of a turn each: t2, then t1.
    expect(sb.json(['undo', '--turn', 't2']).sets).toEqual(['4', '3']);
    expect(sb.json(['undo', '--turn', 't1']).sets).toEqual(['2', '1']);
    expect(sb.tree()).toEqual(S[0]);
    expect(sb.json(['redo', '--last']).sets).toEqual(['1', '2']);
    expect(sb.tree()).toEqual(S[2]);
    expect(sb.json(['redo', '--last']).sets).toEqual(['3', '4']);
    expect(sb.tree()).toEqual(S[4]);
    expect(sb.tb(['redo', '--last']).code).toBe(3);
  });

  it('a step partly redone since: redo --last takes back the rest of it', () => {
    const sb = sandbox({ git: true });
    const S = build(sb, { turn2: true });
    expect(sb.json(['undo', '--turn', 't2']).sets).toEqual(['4', '3']);
    expect(sb.json(['undo', '--turn', 't1']).sets).toEqual(['2', '1']);
    expect(sb.json(['redo', '1']).sets).toEqual(['1']);
    expect(sb.tree()).toEqual(S[1]);
    expect(sb.json(['redo', '--last']).sets).toEqual(['2']);
    expect(sb.tree()).toEqual(S[2]);
    expect(sb.json(['redo', '--last']).sets).toEqual(['3', '4']);
    expect(sb.tree()).toEqual(S[4]);
  });

  it('--file: of the most recent step touching the file, only its sets that do, only that file', () => {
    const sb = sandbox({ git: true });
    const S = build(sb, { turn2: true });
    expect(sb.json(['undo', '--turn', 't2']).sets).toEqual(['4', '3']);
    const r = sb.json(['redo', '--last', '--file', 'g.txt']);
    expect(r.sets).toEqual(['4']);
    expect(sb.tree()).toEqual({ ...S[2]!, 'g.txt': S[4]!['g.txt']! });
    expect(sb.json(['redo', '--last']).sets).toEqual(['3']);
    expect(sb.tree()).toEqual(S[4]);
  });

  it('after undo --turn --force over a later edit: redo --last gives the turn back with the edit, in one step', () => {
    const sb = sandbox({ git: true });
    build(sb);
    sb.write('f.txt', 'a\nb\nc\nmine\n', 0o600);
    const mine = sb.tree();
    expect(sb.tb(['undo', '--turn', 't1']).code).toBe(1);
    expect(sb.json(['undo', '--turn', 't1', '--force'])).toMatchObject({ written: true, forced: true });
    expect(sb.read('f.txt').toString()).toBe('a\n');
    const kept = sb.json(['list']).sets.find((s: any) => s.source.kind === 'replaced');
    expect(kept).toMatchObject({ state: 'undone', source: { kind: 'replaced', direction: 'undo', sets: ['2', '1'] } });
    // The exact inverse of the forced undo: the bytes and mode it found, and what it replaced applied again.
    expect(sb.json(['redo', '--last'])).toMatchObject({ written: true, conflicts: [], sets: ['1', '2', kept.id] });
    expect(sb.tree()).toEqual(mine);
    expect(states(sb)).toEqual({ '1': 'applied', '2': 'applied', [kept.id]: 'applied' });
    expect(sb.tb(['redo', '--last']).code).toBe(3);
    // undo --last is the agent's newest change, not what the forced undo replaced.
    expect(sb.json(['preview', '--last']).sets).toEqual(['2']);
  });

  it('right after a plain, a merged and a forced undo: the bytes and modes before the undo, exactly (CRLF, a BOM, bytes not UTF-8, binary, a mode)', () => {
    const sb = sandbox({ git: true });
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}\r\n`).join('');
    sb.write('crlf.txt', `\ufeff${lines}`);
    sb.write('bin.dat', Buffer.from([0, 1, 2, 0xff, 0]));
    sb.write('plain.txt', 'p\n', 0o644);
    step(sb, ['turn', 'begin', '--id', 't1']);
    step(sb, ['run', '--', 'sh', '-c', "sed -i 's/^line 2/AGENT 2/' crlf.txt && printf '\\000\\011\\000' >> bin.dat && echo q >> plain.txt && chmod 755 plain.txt"]);
    step(sb, ['turn', 'end', '--id', 't1']);
    const agent = sb.tree();

    // Plain: nothing changed since.
    expect(sb.json(['undo', '--last'])).toMatchObject({ written: true, forced: false });
    expect(sb.json(['redo', '--last']).sets).toEqual(['1']);
    expect(sb.tree()).toEqual(agent);

    // Merged: a later edit far from the agent's line, with bytes that are not UTF-8.
    const later = Buffer.concat([sb.read('crlf.txt').subarray(0, -'line 12\r\n'.length), Buffer.from([0xc3, 0x28, 0x0d, 0x0a])]);
    sb.write('crlf.txt', later);
    const merged = sb.tree();
    const u = sb.json(['undo', '--last']);
    expect(u).toMatchObject({ written: true, forced: false });
    expect(u.applied.find((f: any) => f.path === 'crlf.txt')).toMatchObject({ merged: true });
    expect(sb.json(['redo', '--last'])).toMatchObject({ written: true, sets: ['1'], conflicts: [] });
    expect(sb.tree()).toEqual(merged);

    // Forced: the binary file and the mode changed since (conflicts that never merge).
    sb.write('bin.dat', Buffer.from([0, 1, 2, 0xff, 0, 9, 0, 7]));
    fs.chmodSync(sb.abs('plain.txt'), 0o700);
    const forced = sb.tree();
    expect(sb.tb(['undo', '--last']).code).toBe(1);
    expect(sb.json(['undo', '--last', '--force'])).toMatchObject({ written: true, forced: true });
    const kept = sb.json(['list']).sets.find((x: any) => x.source.kind === 'replaced');
    expect(sb.json(['redo', '--last'])).toMatchObject({ written: true, sets: ['1', kept.id], conflicts: [] });
    expect(sb.tree()).toEqual(forced);
    expect(sb.tb(['redo', '--last']).code).toBe(3);
  });

  it("undo --last is the agent's newest change: the person's own takeback run, outside any turn, is passed over, and undone by its id", () => {
    const sb = sandbox({ git: true });
    const S = build(sb); // sets 1 and 2, in the turn t1
    step(sb, ['run', '--', 'sh', '-c', 'echo mine > mine.txt']); // set 3: the person's
    expect(sb.json(['show', '3'])).toMatchObject({ turn: null, agent: 'cli', source: { kind: 'command' } });
    expect(sb.json(['preview', '--last']).sets).toEqual(['2']);
    expect(sb.json(['undo', '--last']).sets).toEqual(['2']);
    expect(sb.read('f.txt').toString()).toBe('a\nb\n');
    expect(sb.read('mine.txt').toString()).toBe('mine\n');
    // No agent's change to that file: nothing to undo.
    expect(sb.tb(['undo', '--last', '--file', 'mine.txt']).code).toBe(3);
    expect(sb.json(['undo', '--last']).sets).toEqual(['1']);
    expect(sb.tree()).toEqual({ ...S[0], 'mine.txt': expect.anything() });
    // Named by its id, the person's run is undone and redone as any change.
    expect(sb.json(['undo', '3']).sets).toEqual(['3']);
    expect(sb.exists('mine.txt')).toBe(false);
    expect(sb.json(['redo', '--last']).sets).toEqual(['3']);
    expect(sb.read('mine.txt').toString()).toBe('mine\n');
  });

  it("of a set undone in two steps, only the newest step's files: a file an earlier undo took back stays undone", () => {
    const sb = sandbox({ git: true });
    step(sb, ['run', '--', 'sh', '-c', 'echo 1 > x && echo 1 > y']); // set 1
    step(sb, ['undo', '1', '--file', 'y']); // step A: set 1's y
    step(sb, ['undo', '1']); // step B: the rest of set 1, x
    const r = sb.json(['redo', '--last']);
    expect(r.sets).toEqual(['1']);
    expect(r.applied.map((f: { path: string }) => f.path)).toEqual(['x']);
    expect(sb.read('x').toString()).toBe('1\n');
    expect(sb.exists('y')).toBe(false);
    // Then step A: y.
    expect(sb.json(['redo', '--last']).applied.map((f: { path: string }) => f.path)).toEqual(['y']);
    expect(sb.read('y').toString()).toBe('1\n');
  });

  it('an undo redone since does not count: redo --last takes back the newest undo still in effect', () => {
    const sb = sandbox({ git: true });
    step(sb, ['run', '--', 'sh', '-c', 'echo 1 > x && echo 1 > y']); // set 1
    step(sb, ['run', '--', 'sh', '-c', 'echo 1 > z']); // set 2
    step(sb, ['undo', '1', '--file', 'x']); // step A: set 1's x
    step(sb, ['undo', '2']); // step B: set 2
    step(sb, ['undo', '1', '--file', 'y']); // step C: set 1's y...
    step(sb, ['redo', '1', '--file', 'y']); // ...redone: what C took back is in place again
    // B is the newest undo still in effect (set 1 is undone by A only).
    expect(sb.json(['redo', '--last']).sets).toEqual(['2']);
    expect(sb.exists('z')).toBe(true);
    expect(sb.exists('x')).toBe(false);
    expect(sb.json(['redo', '--last']).sets).toEqual(['1']);
    expect(sb.read('x').toString()).toBe('1\n');
  });

  it('a journal of schema 2: sets undone before steps were numbered are grouped by their undo', () => {
    const sb = sandbox({ git: true });
    const S = build(sb, { turn2: true });
    // Steps: set 4 alone, set 3 alone, turn t1. Then back to schema 2, which knew no steps.
    expect(sb.json(['undo', '4']).sets).toEqual(['4']);
    expect(sb.json(['undo', '3']).sets).toEqual(['3']);
    expect(sb.json(['undo', '--turn', 't1']).sets).toEqual(['2', '1']);
    const file = path.join(sb.journalDir(), 'journal.db');
    toSchema2(sb, file);

    expect(sb.json(['redo', '--last']).sets).toEqual(['1', '2']);
    const check = new Database(file, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    check.close();
    expect(sb.json(['redo', '--last']).sets).toEqual(['3']);
    expect(sb.json(['redo', '--last']).sets).toEqual(['4']);
    expect(sb.tree()).toEqual(S[4]);
    expect(sb.tb(['redo', '--last']).code).toBe(3);
  });
});

describe('the sidecar: { last: true } with direction redo', () => {
  it('takes back the most recent undo step: a whole turn, then single sets in reverse order', async () => {
    const sb = sandbox({ git: true });
    const S = build(sb);
    const { editor } = overStdio(sb.ws, 'headless', sb.env);
    try {
      await editor.initialize();
      const undo = (selector: object) => editor.request<ApplyResult>('undo/apply', { selector });
      const redoLast = () => editor.request<ApplyResult>('undo/apply', { selector: { last: true }, direction: 'redo' });

      expect((await undo({ turn: 't1' })).sets).toEqual(['2', '1']);
      expect(sb.tree()).toEqual(S[0]);
      const p = await editor.request<PreviewResult>('undo/preview', { selector: { last: true }, direction: 'redo' });
      expect(p).toMatchObject({ direction: 'redo', sets: ['1', '2'], conflicts: 0 });
      const r = await redoLast();
      expect(r).toMatchObject({ written: true, conflicts: [], sets: ['1', '2'] });
      expect(sb.tree()).toEqual(S[2]);

      expect((await undo({ last: true })).sets).toEqual(['2']);
      expect((await undo({ last: true })).sets).toEqual(['1']);
      expect((await redoLast()).sets).toEqual(['1']);
      expect(sb.tree()).toEqual(S[1]);
      expect((await redoLast()).sets).toEqual(['2']);
      expect(sb.tree()).toEqual(S[2]);
      await expect(redoLast()).rejects.toMatchObject({ code: ErrorCodes.NotFound });
    } finally {
      await editor.close();
    }
  });
});
