// Selectors of preview/undo/redo: ids, --turn, --last, --after-turn, --file; several sets on
// one path (undo walks newest first: expected from the first set met, target from the last);
// an interleaved change that is not selected; redo --last.
//
// One history is built once and the tests walk it in order; each test leaves the workspace
// as it found it (everything applied), which it checks.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesOf, sandbox, type Entry, type Sandbox } from './support/takeback.js';

let sb: Sandbox;
/** S[i]: the tree after set i (S[0]: before anything). */
const S: Record<string, Entry>[] = [];

/** The tree of state `i`, with some paths taken from state `j`. */
function mix(i: number, from: Record<string, number>): Record<string, Entry> {
  const t = { ...S[i]! };
  for (const [p, j] of Object.entries(from)) {
    const e = S[j]![p];
    if (e) t[p] = e;
    else delete t[p];
  }
  return t;
}

function ok(args: string[]): any {
  const r = sb.tb([...args, '--json']);
  expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout);
}

beforeAll(() => {
  sb = sandbox();
  sb.write('a.txt', 'v0\n');
  sb.write('keep.txt', 'keep\n');
  S.push(sb.tree());
  const step = (args: string[]) => {
    const r = sb.tb(args);
    if (r.code !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
  };
  step(['turn', 'begin', '--id', 'T1', '--label', 'first turn']);
  step(['run', '--', 'sh', '-c', 'printf "v1\\n" > a.txt']); // set 1
  S.push(sb.tree());
  step(['run', '--', 'sh', '-c', 'printf "b1\\n" > b.txt']); // set 2
  S.push(sb.tree());
  step(['turn', 'end']);
  step(['turn', 'begin', '--id', 'T2']);
  step(['capture', 'begin', '--id', 'toolu_3', '--tool', 'Edit', 'a.txt']); // set 3
  fs.writeFileSync(sb.abs('a.txt'), 'v2\n');
  step(['capture', 'end', '--id', 'toolu_3']);
  S.push(sb.tree());
  step(['run', '--', 'sh', '-c', 'printf "b2\\n" >> b.txt && printf "c\\n" > c.txt']); // set 4
  S.push(sb.tree());
  step(['turn', 'end', '--id', 'T2']);
  step(['run', '--', 'sh', '-c', 'printf "v3\\n" > a.txt']); // set 5, outside any turn
  S.push(sb.tree());
});

afterAll(() => {
  if (sb && !process.env.TAKEBACK_KEEP_TMP) fs.rmSync(sb.base, { recursive: true, force: true });
});

describe('selectors', () => {
  it('the history is as built: 5 sets in 2 turns and one outside', () => {
    const list = ok(['list']);
    expect(list.sets.map((s: any) => [s.id, s.turn])).toEqual([
      ['5', null],
      ['4', 'T2'],
      ['3', 'T2'],
      ['2', 'T1'],
      ['1', 'T1'],
    ]);
    expect(filesOf(list.sets[1])).toEqual({ 'b.txt': 'modified', 'c.txt': 'created' });
    expect(list.turns.map((t: any) => [t.id, t.seq, t.label])).toEqual([
      ['T2', 2, null],
      ['T1', 1, 'first turn'],
    ]);
    expect(ok(['list', '--turn', 'T1']).sets.map((s: any) => s.id)).toEqual(['2', '1']);
  });

  it("--last undoes the newest agent's set, never the person's own run (set 5, outside any turn); redo --last redoes the one undone most recently", () => {
    expect(ok(['preview', '--last']).sets).toEqual(['4']);
    expect(ok(['undo', '5']).sets).toEqual(['5']);
    expect(sb.tree()).toEqual(S[4]);
    expect(ok(['undo', '--last']).sets).toEqual(['4']);
    expect(sb.tree()).toEqual(S[3]);
    // 4 was undone last: redo --last takes it first, then 5.
    expect(ok(['redo', '--last']).sets).toEqual(['4']);
    expect(sb.tree()).toEqual(mix(4, { 'a.txt': 3 }));
    expect(ok(['redo', '--last']).sets).toEqual(['5']);
    expect(sb.tree()).toEqual(S[5]);
    // Nothing left to redo: not found.
    expect(sb.tb(['redo', '--last']).code).toBe(3);
  });

  it('ids: several at once; an id already undone is skipped', () => {
    const r = ok(['undo', '4', '2']);
    expect(r.sets).toEqual(['4', '2']); // newest first
    expect(sb.tree()).toEqual(mix(5, { 'b.txt': 0, 'c.txt': 0 }));
    const again = ok(['undo', '2']);
    expect(again.written).toBe(false); // nothing to write: the step did not happen
    expect(again.sets).toEqual([]);
    expect(again.skipped).toEqual([{ id: '2', reason: 'already undone' }]);
    ok(['redo', '2', '4']);
    expect(sb.tree()).toEqual(S[5]);
  });

  it('--turn: a turn whose file was changed later conflicts; after undoing the later set it goes through', () => {
    const r = sb.tb(['undo', '--turn', 'T2', '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    // The undo that takes the later set back too is the whole turn's (3 and 4) with it, not only a.txt's.
    expect(out.conflicts).toEqual([{ path: 'a.txt', reason: 'changed-since', detail: 'changed since by #5 (sh -c \'printf "v3\\n" > a.txt\'): line 1 changed by the agent and line 1 since', combined: ['3', '4', '5'] }]);
    expect(sb.tree()).toEqual(S[5]);

    ok(['undo', '5']);
    expect(ok(['undo', '--turn', 'T2']).sets).toEqual(['4', '3']);
    expect(sb.tree()).toEqual(S[2]);
    // A turn can be named by its number too.
    expect(ok(['preview', '--redo', '--turn', '2']).sets).toEqual(['3', '4']);
    expect(ok(['redo', '--turn', 'T2']).sets).toEqual(['3', '4']);
    ok(['redo', '5']);
    expect(sb.tree()).toEqual(S[5]);
  });

  it('--after-turn: everything after a turn boundary, including sets outside any turn', () => {
    const p = ok(['preview', '--after-turn', 'T1']);
    expect(p.sets).toEqual(['5', '4', '3']);
    const a = p.files.find((f: any) => f.path === 'a.txt');
    // Walked newest first: expected v3 (set 5), target v1 (set 3's before).
    expect(a.sets).toEqual(['5', '3']);
    expect(a.diff).toContain('-v3\n+v1');
    expect(ok(['undo', '--after-turn', 'T1']).sets).toEqual(['5', '4', '3']);
    expect(sb.tree()).toEqual(S[2]);
    expect(ok(['list']).sets.map((s: any) => s.state)).toEqual(['undone', 'undone', 'undone', 'applied', 'applied']);
    expect(ok(['redo', '--after-turn', 'T1']).sets).toEqual(['3', '4', '5']);
    expect(sb.tree()).toEqual(S[5]);
    expect(ok(['preview', '--after-turn', 'T2']).sets).toEqual(['5']);
  });

  it('several sets on one path: expected from the newest, target from the oldest', () => {
    const p = ok(['preview', '1', '3', '5']);
    expect(p.files).toHaveLength(1);
    expect(p.files[0]).toMatchObject({ path: 'a.txt', action: 'put-back', conflict: null, sets: ['5', '3', '1'] });
    expect(p.files[0].diff).toContain('-v3\n+v0');
    ok(['undo', '1', '3', '5']);
    expect(sb.tree()).toEqual(mix(5, { 'a.txt': 0 }));
    const redo = ok(['preview', '--redo', '5', '3', '1']);
    expect(redo.files[0].sets).toEqual(['1', '3', '5']);
    expect(redo.files[0].diff).toContain('-v0\n+v3');
    ok(['redo', '1', '3', '5']);
    expect(sb.tree()).toEqual(S[5]);
  });

  it('an interleaved change that is not selected is a conflict; nothing is written', () => {
    const r = sb.tb(['undo', '1', '5', '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.written).toBe(false);
    expect(out.conflicts).toHaveLength(1);
    expect(out.conflicts[0]).toMatchObject({ path: 'a.txt', reason: 'interleaved' });
    expect(out.conflicts[0].detail).toContain('3');
    expect(sb.tree()).toEqual(S[5]);
    expect(ok(['list']).sets.every((s: any) => s.state === 'applied')).toBe(true);
  });

  it('--file narrows a selector to one file; the set becomes partial', () => {
    const r = ok(['undo', '--last', '--file', 'b.txt']);
    expect(r.sets).toEqual(['4']);
    expect(r.applied.map((a: any) => a.path)).toEqual(['b.txt']);
    expect(sb.tree()).toEqual(mix(5, { 'b.txt': 2 }));
    const set4 = ok(['show', '4']);
    expect(set4.state).toBe('partial');
    expect(set4.files.map((f: any) => [f.path, f.undone])).toEqual([
      ['b.txt', true],
      ['c.txt', false],
    ]);
    // The rest of the set can still be undone; --file with ids.
    ok(['undo', '4', '--file', 'c.txt']);
    expect(ok(['show', '4']).state).toBe('undone');
    expect(sb.tree()).toEqual(mix(5, { 'b.txt': 2, 'c.txt': 2 }));
    ok(['redo', '--last', '--file', 'c.txt']);
    expect(ok(['show', '4']).state).toBe('partial');
    ok(['redo', '4']);
    expect(ok(['show', '4']).state).toBe('applied');
    expect(sb.tree()).toEqual(S[5]);
    // A file the named change does not touch (a typo) is not found, not "nothing to do".
    const typo = sb.tb(['undo', '4', '--file', 'no-such.txt', '--json']);
    expect(typo.code).toBe(3);
    expect(JSON.parse(typo.stdout).error).toMatchObject({ code: 'not-found', message: '#4 does not touch no-such.txt' });
    expect(sb.tb(['preview', '4', '--file', 'no-such.txt']).code).toBe(3);
    expect(sb.tree()).toEqual(S[5]);
  });

  it('--file relative to the current folder; a path outside the workspace is a usage error', () => {
    fs.mkdirSync(sb.abs('sub'), { recursive: true });
    // Without a git root the workspace is the current folder: name it with --workspace.
    const r = sb.tb(['--workspace', sb.ws, 'preview', '--last', '--file', '../a.txt', '--json'], { cwd: sb.abs('sub') });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).files.map((f: any) => f.path)).toEqual(['a.txt']);
    expect(sb.tb(['preview', '--last', '--file', '/etc/passwd']).code).toBe(2);
    fs.rmdirSync(sb.abs('sub'));
    expect(sb.tree()).toEqual(S[5]);
  });

  it('one kind of selector only; none is a usage error', () => {
    expect(sb.tb(['undo']).code).toBe(2);
    expect(sb.tb(['undo', '1', '--last']).code).toBe(2);
    expect(sb.tb(['undo', '--turn', 'T1', '--after-turn', 'T1']).code).toBe(2);
    expect(sb.tb(['undo', '--turn', 'nope']).code).toBe(3);
    expect(sb.tb(['undo', '--after-turn', 'nope']).code).toBe(3);
    expect(sb.tb(['undo', '99']).code).toBe(3);
    expect(sb.tree()).toEqual(S[5]);
  });
});
