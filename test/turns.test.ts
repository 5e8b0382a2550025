// Turns: what changed during a turn that no tool call claimed becomes its own set; what the
// user changed between turns, or between two commands, is not blamed on the next command.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { filesOf, sandbox, setsOf } from './support/takeback.js';

describe('turns', () => {
  it('"changed during this turn": changes no tool call claimed, recorded at turn end', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    const s0 = sb.tree();
    expect(sb.tb(['turn', 'begin', '--id', 'T', '--label', 'do things']).stdout).toBe('T\n');
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "1\\n" > claimed.txt']).code).toBe(0);
    // Changed with no capture around it (an uncaptured tool, a background job...).
    sb.write('unclaimed-1.txt', 'u1\n');
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "2\\n" > claimed-2.txt']).code).toBe(0);
    sb.tb(['capture', 'begin', '--id', 'w1', '--tool', 'Write', 'w.txt']);
    sb.write('w.txt', 'w\n');
    sb.tb(['capture', 'end', '--id', 'w1']);
    sb.write('unclaimed-2.txt', 'u2\n');
    fs.rmSync(sb.abs('a.txt'));
    const s1 = sb.tree();

    const end = sb.tb(['turn', 'end', '--json']);
    expect(end.code).toBe(0);
    const ended = JSON.parse(end.stdout);
    expect(ended.turn).toBe('T');
    expect(ended.set.label).toBe('changed during this turn');

    const list = sb.json(['list']);
    const sets = setsOf(list);
    expect(sets.map((s: any) => [s.source.kind, filesOf(s)])).toEqual([
      ['command', { 'claimed.txt': 'created' }],
      ['command', { 'claimed-2.txt': 'created' }], // not unclaimed-1.txt: it moved before the command began
      ['tool', { 'w.txt': 'created' }],
      ['turn', { 'a.txt': 'deleted', 'unclaimed-1.txt': 'created', 'unclaimed-2.txt': 'created' }],
    ]);
    expect(sets.every((s: any) => s.turn === 'T')).toBe(true);
    expect(list.turns[0]).toMatchObject({ id: 'T', seq: 1, label: 'do things' });
    expect(list.turns[0].end).not.toBeNull();

    const human = sb.tb(['list']).stdout;
    expect(human).toMatch(/Turn T · "do things"/);
    expect(human).toMatch(/changed during this turn\s+3 files changed \+2 −1/);

    // A tool call of the turn was reported (w1): what no tool call claimed is left by the turn's
    // undo and redo, and taken with --include-unclaimed.
    const turnSet = sets[3].id as string;
    const left = sb.json(['undo', '--turn', 'T']);
    expect(left.skipped).toEqual([{ id: turnSet, reason: 'left as they are: changed during the turn by no tool call' }]);
    expect(Object.keys(sb.tree()).sort()).toEqual(['unclaimed-1.txt', 'unclaimed-2.txt']);
    sb.json(['redo', '--turn', 'T']);
    expect(sb.tree()).toEqual(s1);
    sb.json(['undo', '--turn', 'T', '--include-unclaimed']);
    expect(sb.tree()).toEqual(s0);
    sb.json(['redo', '--turn', 'T', '--include-unclaimed']);
    expect(sb.tree()).toEqual(s1);
  });

  it('changes the user made between turns are not blamed on anyone', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    sb.write('b.txt', 'b\n');
    sb.tb(['turn', 'begin', '--id', 'T1']);
    sb.tb(['run', '--', 'sh', '-c', 'printf "a1\\n" > a.txt']);
    sb.tb(['turn', 'end']);
    // The user, between turns.
    sb.write('b.txt', 'b by the user\n');
    sb.write('user.txt', 'mine\n');
    sb.write('a.txt', 'a1 and the user\n');
    sb.tb(['turn', 'begin', '--id', 'T2']);
    sb.tb(['run', '--', 'sh', '-c', 'printf "c\\n" > c.txt']);
    const end = sb.json(['turn', 'end']);
    expect(end.set).toBeNull(); // nothing unclaimed in T2
    const sets = setsOf(sb.json(['list']));
    expect(sets.map((s: any) => [s.turn, filesOf(s)])).toEqual([
      ['T1', { 'a.txt': 'modified' }],
      ['T2', { 'c.txt': 'created' }],
    ]);
    // Outside any turn, a command's begin drops what moved before it, too.
    sb.write('b.txt', 'user again\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "d\\n" > d.txt']);
    expect(filesOf(sb.json(['list']).sets[0])).toEqual({ 'd.txt': 'created' });
  });

  it('user changes between two commands are not blamed on the second command', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    sb.write('b.txt', 'b\n');
    sb.tb(['turn', 'begin', '--id', 'T']);
    sb.tb(['run', '--', 'sh', '-c', 'printf "a1\\n" > a.txt']);
    sb.write('b.txt', 'b changed between commands\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "c\\n" > c.txt']);
    const second = sb.json(['list']).sets[0];
    expect(filesOf(second)).toEqual({ 'c.txt': 'created' });
    // Inside a turn nobody can tell the user from the agent: the change is the turn's own set.
    const end = sb.json(['turn', 'end']);
    expect(end.set.files.map((f: any) => f.path)).toEqual(['b.txt']);

    // Outside a turn, it is nobody's.
    sb.tb(['run', '--', 'sh', '-c', 'printf "a2\\n" > a.txt']);
    sb.write('b.txt', 'user\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "e\\n" > e.txt']);
    const sets = sb.json(['list']).sets;
    expect(filesOf(sets[0])).toEqual({ 'e.txt': 'created' });
    expect(sets.filter((s: any) => s.files.some((f: any) => f.path === 'b.txt'))).toHaveLength(1);
  });

  it('a capture names its turn with --turn; turn ids are checked; ending with none open is not found', () => {
    const sb = sandbox();
    sb.tb(['turn', 'begin', '--id', 'A']);
    sb.tb(['turn', 'end']);
    sb.tb(['turn', 'begin']); // t2
    sb.tb(['capture', 'begin', '--id', 'x1', '--turn', 'A', '--tool', 'Write', 'f.txt']);
    sb.write('f.txt', 'f\n');
    sb.tb(['capture', 'end', '--id', 'x1']);
    sb.tb(['run', '--', 'sh', '-c', 'printf g > g.txt']);
    const sets = setsOf(sb.json(['list']));
    expect(sets.map((s: any) => s.turn)).toEqual(['A', 't2']);
    expect(sb.tb(['turn', 'begin', '--id', 'A']).code).toBe(2); // exists
    expect(sb.tb(['turn', 'end']).code).toBe(0);
    expect(sb.tb(['turn', 'end']).code).toBe(3); // none open
    expect(sb.tb(['run', '--turn', 'nope', '--', 'true']).code).toBe(3);
  });
  it("the person's takeback run never joins a turn an agent left open (a prompt that failed before its Stop)", () => {
    const sb = sandbox();
    sb.tb(['turn', 'begin', '--agent', 'claude-code', '--session', 's1', '--label', 'a prompt that failed']);
    sb.tb(['run', '--', 'sh', '-c', 'printf mine > mine.txt']);
    const sets = setsOf(sb.json(['list']));
    expect(sets.map((s: any) => s.turn)).toEqual([null]);
    sb.tb(['undo', '--turn', '1']); // the agent's turn holds nothing of the person's
    expect(sb.read('mine.txt').toString()).toBe('mine');
  });

  it('an undo that leaves a folder in place (not empty) is not reported later as the folder created during the turn', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    expect(sb.tb(['run', '--', 'sh', '-c', 'mkdir -p gen && printf "g\\n" > gen/out.txt']).code).toBe(0);
    sb.write('gen/mine.txt', 'the user put this here\n'); // keeps the folder from being removed
    sb.tb(['turn', 'begin', '--id', 'T']);
    const undo = sb.json(['undo', '1']);
    expect(undo.notes.join(' ')).toMatch(/gen: folder not empty, left in place/);
    expect(sb.exists('gen/mine.txt')).toBe(true);
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "b\\n" > b.txt']).code).toBe(0);
    const end = sb.json(['turn', 'end']);
    // The folder and the user's file were there before the turn: nothing "changed during this turn".
    expect(end.set).toBeNull();
  });
});
