// The selectors in this process: which change sets `selectSets` names on a real journal, filled
// by the capture functions against a real temporary workspace (and moved by real undo steps),
// and the errors it throws before reading anything it should not.
import { describe, expect, it } from 'vitest';
import { TakebackError } from '../server/core/errors.js';
import { describeSelector, selectSets } from '../server/core/plan/select.js';
import type { ChangeSet, Selector } from '../server/core/types.js';
import { unitWorkspace, type UnitWorkspace } from './support/unit-workspace.js';

/** The ids `sel` selects for `direction`. */
const ids = (ws: UnitWorkspace, sel: Selector, direction: 'undo' | 'redo' = 'undo') => selectSets(ws.journal, sel, direction).map((s) => s.id);

/** The error code `fn` throws (a TakebackError), or null when it throws nothing. */
function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(TakebackError);
    return (e as TakebackError).code;
  }
}

/** A tool call writing `text` to `rel`: the set it recorded. */
function edit(ws: UnitWorkspace, rel: string, text: string): ChangeSet {
  const set = ws.tool([rel], () => ws.write(rel, text));
  expect(set).not.toBeNull();
  return set!;
}

describe('selectSets: the kinds of selector', () => {
  it('ids: each named set once, oldest first, whatever order they are given in', () => {
    const ws = unitWorkspace();
    const a = edit(ws, 'a.txt', 'a');
    const b = edit(ws, 'b.txt', 'b');
    edit(ws, 'c.txt', 'c');
    expect(ids(ws, { ids: [b.id, a.id, b.id] })).toEqual([a.id, b.id]);
  });

  it('turn: every set of the turn, by its id or its number, and none of another turn', () => {
    const ws = unitWorkspace();
    let first: ChangeSet[] = [];
    const t1 = ws.turn(() => {
      first = [edit(ws, 'a.txt', 'a'), edit(ws, 'b.txt', 'b')];
    });
    let second: ChangeSet | null = null;
    const t2 = ws.turn(() => {
      second = edit(ws, 'c.txt', 'c');
    });
    expect(ids(ws, { turn: t1 })).toEqual(first.map((s) => s.id));
    const seq = String(ws.journal.turns.get(t1).seq);
    expect(ids(ws, { turn: seq })).toEqual(first.map((s) => s.id));
    expect(ids(ws, { turn: t2 })).toEqual([second!.id]);
  });

  it('afterTurn: the sets of later turns and those outside any turn recorded after it ended, not its own or earlier ones', () => {
    const ws = unitWorkspace();
    edit(ws, 'before.txt', 'x');
    const t1 = ws.turn(() => {
      edit(ws, 'a.txt', 'a');
    });
    // "After it ended" is by the journal's millisecond clock: the next change comes a tick later,
    // as any change a person or an agent makes after a turn does.
    const ended = Date.now();
    while (Date.now() === ended) {
      // wait for the clock to move on
    }
    const loose = edit(ws, 'loose.txt', 'l');
    let later: ChangeSet | null = null;
    ws.turn(() => {
      later = edit(ws, 'b.txt', 'b');
    });
    expect(ids(ws, { afterTurn: t1 })).toEqual([loose.id, later!.id]);
  });

  it('last (undo): the newest set still applied, then the one before once it is undone', () => {
    const ws = unitWorkspace();
    const a = edit(ws, 'a.txt', 'a');
    const b = edit(ws, 'b.txt', 'b');
    expect(ids(ws, { last: true })).toEqual([b.id]);
    ws.step({ last: true }, 'undo');
    expect(ids(ws, { last: true })).toEqual([a.id]);
  });

  it('last (undo) passes over a set whose every file is a capture gap', () => {
    const ws = unitWorkspace();
    const a = edit(ws, 'a.txt', 'a');
    const secret = edit(ws, 'id_rsa', 'key');
    expect(secret.files.every((f) => f.gap === 'secret')).toBe(true);
    expect(ids(ws, { last: true })).toEqual([a.id]);
  });

  it('last (undo) with paths: the newest applied set that touches one of them', () => {
    const ws = unitWorkspace();
    const a = edit(ws, 'a.txt', 'a');
    edit(ws, 'b.txt', 'b');
    expect(ids(ws, { last: true, paths: ['a.txt'] })).toEqual([a.id]);
    expect(codeOf(() => ids(ws, { last: true, paths: ['nothing.txt'] }))).toBe('not-found');
  });

  it('last (redo): the newest undo step still in effect, whole; then the step before it', () => {
    const ws = unitWorkspace();
    const a = edit(ws, 'a.txt', 'a');
    const b = edit(ws, 'b.txt', 'b');
    const c = edit(ws, 'c.txt', 'c');
    expect(ws.step({ ids: [a.id, b.id] }, 'undo').sets.sort()).toEqual([a.id, b.id].sort());
    expect(ids(ws, { last: true }, 'redo')).toEqual([a.id, b.id]);
    ws.step({ ids: [c.id] }, 'undo');
    expect(ids(ws, { last: true }, 'redo')).toEqual([c.id]);
    ws.step({ last: true }, 'redo');
    expect(ids(ws, { last: true }, 'redo')).toEqual([a.id, b.id]);
    // With paths: of the step, only the sets that touch them.
    expect(ids(ws, { last: true, paths: ['b.txt'] }, 'redo')).toEqual([b.id]);
  });

  it('last: nothing to undo, nothing to redo', () => {
    const ws = unitWorkspace();
    expect(codeOf(() => ids(ws, { last: true }))).toBe('not-found');
    edit(ws, 'a.txt', 'a');
    expect(codeOf(() => ids(ws, { last: true }, 'redo'))).toBe('not-found');
  });
});

describe('selectSets: errors', () => {
  it('usage: no selector, or more than one kind', () => {
    const ws = unitWorkspace();
    const a = edit(ws, 'a.txt', 'a');
    expect(codeOf(() => ids(ws, {}))).toBe('usage');
    expect(codeOf(() => ids(ws, { ids: [] }))).toBe('usage');
    expect(codeOf(() => ids(ws, { paths: ['a.txt'] }))).toBe('usage');
    expect(codeOf(() => ids(ws, { ids: [a.id], last: true }))).toBe('usage');
    expect(codeOf(() => ids(ws, { turn: 't1', afterTurn: 't1' }))).toBe('usage');
  });

  it('invalid-id: a malformed set or turn id, checked before anything is read', () => {
    const ws = unitWorkspace();
    const a = edit(ws, 'a.txt', 'a');
    expect(codeOf(() => ids(ws, { ids: ['99', '../1'] }))).toBe('invalid-id'); // not not-found: 99 is never looked up
    expect(codeOf(() => ids(ws, { ids: [a.id, '../1'] }))).toBe('invalid-id');
    expect(codeOf(() => ids(ws, { ids: [''] }))).toBe('invalid-id');
    expect(codeOf(() => ids(ws, { turn: 't 1' }))).toBe('invalid-id');
    expect(codeOf(() => ids(ws, { afterTurn: 'x'.repeat(65) }))).toBe('invalid-id');
  });

  it('not-found: a set or turn that does not exist', () => {
    const ws = unitWorkspace();
    edit(ws, 'a.txt', 'a');
    expect(codeOf(() => ids(ws, { ids: ['99'] }))).toBe('not-found');
    expect(codeOf(() => ids(ws, { turn: 't9' }))).toBe('not-found');
    expect(codeOf(() => ids(ws, { afterTurn: '9' }))).toBe('not-found');
  });

  it('expired: a named set that has expired throws; inside a turn it is left out', () => {
    const ws = unitWorkspace();
    let sets: ChangeSet[] = [];
    const t = ws.turn(() => {
      sets = [edit(ws, 'a.txt', 'a'), edit(ws, 'b.txt', 'b')];
    });
    ws.expire(sets[0]!.id);
    expect(codeOf(() => ids(ws, { ids: [sets[0]!.id] }))).toBe('expired');
    expect(ids(ws, { turn: t })).toEqual([sets[1]!.id]);
    // --last passes over it as well.
    ws.expire(sets[1]!.id);
    expect(codeOf(() => ids(ws, { last: true }))).toBe('not-found');
  });
});

describe('describeSelector', () => {
  it('says which changes, in words', () => {
    expect(describeSelector({ ids: ['4'] })).toBe('change 4');
    expect(describeSelector({ ids: ['4', '7'] })).toBe('changes 4, 7');
    expect(describeSelector({ turn: 't2' })).toBe('turn t2');
    expect(describeSelector({ afterTurn: '3' })).toBe('everything after turn 3');
    expect(describeSelector({ last: true })).toBe('the last change');
    expect(describeSelector({ ids: [], last: true })).toBe('the last change');
  });
});
