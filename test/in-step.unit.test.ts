// The journal in step with the disk, in this process on a real journal: a change's state per file
// is what the disk holds (applied, undone, no longer in place), for list and show, for the plan
// of an undo or redo, and only the paths whose disk moved since the journal's last word are
// judged. Sets recorded by the capture functions against a real temporary workspace.
import { describe, expect, it } from 'vitest';
import { makePlan } from '../server/core/plan/plan.js';
import type { ChangeSet } from '../server/core/types.js';
import fs from 'node:fs';
import { hunkProbe, listChanges, showChange } from '../server/service/history.js';
import { hunkInPlace } from '../server/service/in-place.js';
import { unitWorkspace, type UnitWorkspace } from './support/unit-workspace.js';

function edit(ws: UnitWorkspace, rel: string, data: string): ChangeSet {
  const set = ws.tool([rel], () => ws.write(rel, data));
  expect(set).not.toBeNull();
  return set!;
}

/** Set id → [set state, each file's state] as list gives them. */
function listed(ws: UnitWorkspace): Record<string, [string, string[]]> {
  return Object.fromEntries(listChanges(ws).sets.map((s) => [s.id, [s.state, s.files.map((f) => f.state)]]));
}

describe('a change\'s state by what the disk holds', () => {
  it('in step: the flags as the operation log has them', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'a\n');
    const one = edit(ws, 'f.txt', 'a\nb\n');
    const two = edit(ws, 'g.txt', 'g\n');
    ws.step({ ids: [two.id] }, 'undo');
    expect(listed(ws)).toEqual({ [one.id]: ['applied', ['applied']], [two.id]: ['undone', ['undone']] });
  });

  it('undone, then the agent\'s bytes written back from outside (an editor\'s undo and a save): applied again, and undo plans it', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'a\n');
    const set = edit(ws, 'f.txt', 'a\nb\n');
    ws.step({ ids: [set.id] }, 'undo');
    expect(listed(ws)[set.id]).toEqual(['undone', ['undone']]);
    ws.write('f.txt', 'a\nb\n');
    expect(listed(ws)[set.id]).toEqual(['applied', ['applied']]);
    expect(showChange(ws, set.id)).toMatchObject({ state: 'applied', files: [{ undone: false, state: 'applied' }] });
    const plan = makePlan(ws, [ws.journal.sets.get(set.id)], 'undo');
    expect(plan.skipped).toEqual([]);
    expect(plan.files.map((f) => [f.path, f.action, f.conflict])).toEqual([['f.txt', 'put-back', null]]);
    expect(makePlan(ws, [ws.journal.sets.get(set.id)], 'redo').skipped).toEqual([{ id: set.id, reason: 'not undone' }]);
    // And the undo takes it back again, recorded.
    expect(ws.step({ ids: [set.id] }, 'undo').sets).toEqual([set.id]);
    expect(ws.read('f.txt').toString()).toBe('a\n');
    expect(listed(ws)[set.id]).toEqual(['undone', ['undone']]);
  });

  it('applied, then taken back by hand: applied until an undo records it; written over: no longer in place', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'a\n');
    const set = edit(ws, 'f.txt', 'a\nb\n');
    ws.write('f.txt', 'a\n');
    expect(listed(ws)[set.id]).toEqual(['applied', ['applied']]);
    ws.write('f.txt', 'something else\n');
    expect(listed(ws)[set.id]).toEqual(['applied', ['overwritten']]);
  });

  it('two changes to one file: the newer taken back by hand leaves the older applied under it; written over, both are no longer in place', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'a\n');
    const one = edit(ws, 'f.txt', 'a\nb\n');
    const two = edit(ws, 'f.txt', 'a\nb\nc\n');
    expect(listed(ws)).toEqual({ [one.id]: ['applied', ['applied']], [two.id]: ['applied', ['applied']] });
    ws.write('f.txt', 'a\nb\n');
    expect(listed(ws)).toEqual({ [one.id]: ['applied', ['applied']], [two.id]: ['applied', ['applied']] });
    ws.write('f.txt', 'x\n');
    expect(listed(ws)).toEqual({ [one.id]: ['applied', ['overwritten']], [two.id]: ['applied', ['overwritten']] });
  });

  it('the newer of two undone and given back from outside: applied, and the older one under it too', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'a\n');
    const one = edit(ws, 'f.txt', 'a\nb\n');
    const two = edit(ws, 'f.txt', 'a\nb\nc\n');
    ws.step({ ids: [two.id] }, 'undo');
    ws.write('f.txt', 'a\nb\nc\n');
    expect(listed(ws)).toEqual({ [one.id]: ['applied', ['applied']], [two.id]: ['applied', ['applied']] });
  });

  it('a merged undo leaves what the journal last wrote: in step, the older change applied under it', () => {
    const ws = unitWorkspace();
    const ten = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`);
    ws.write('f.txt', ten.join(''));
    const one = edit(ws, 'f.txt', ten.map((l, i) => (i === 1 ? 'one\n' : l)).join(''));
    const two = edit(ws, 'f.txt', ten.map((l, i) => (i === 1 ? 'one\n' : i === 5 ? 'two\n' : l)).join(''));
    ws.write('f.txt', ten.map((l, i) => (i === 1 ? 'one\n' : i === 5 ? 'two\n' : i === 9 ? 'mine\n' : l)).join(''));
    expect(ws.step({ ids: [two.id] }, 'undo').applied.map((f) => f.merged !== null)).toEqual([true]);
    expect(listed(ws)).toEqual({ [one.id]: ['applied', ['applied']], [two.id]: ['undone', ['undone']] });
  });

  it('the hunk check is asked for a text file written over since, and not for one removed or made a link since (no hunk can be there)', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'a\nb\nc\n');
    ws.write('g.txt', 'a\nb\nc\n');
    const one = edit(ws, 'f.txt', 'a\nB\nc\n');
    const two = edit(ws, 'g.txt', 'a\nB\nc\n');
    const asked = () => {
      const { probe, asked } = hunkProbe(ws);
      const sets = listChanges(ws, { inPlace: probe }).sets;
      return { asked: asked(), states: Object.fromEntries(sets.map((s) => [s.id, s.files.map((f) => f.state)])) };
    };
    expect(asked()).toEqual({ asked: false, states: { [one.id]: ['applied'], [two.id]: ['applied'] } });
    ws.write('f.txt', 'a\nB\nmine\n');
    expect(asked()).toEqual({ asked: true, states: { [one.id]: ['overwritten'], [two.id]: ['applied'] } });
    fs.rmSync(ws.abs('f.txt'));
    fs.rmSync(ws.abs('g.txt'));
    fs.symlinkSync('elsewhere', ws.abs('g.txt'));
    expect(asked()).toEqual({ asked: false, states: { [one.id]: ['overwritten'], [two.id]: ['overwritten'] } });
    // What the real check says of them: the same.
    expect(Object.fromEntries(listChanges(ws, { inPlace: hunkInPlace(ws) }).sets.map((s) => [s.id, s.files.map((f) => f.state)]))).toEqual({ [one.id]: ['overwritten'], [two.id]: ['overwritten'] });
  });
});
