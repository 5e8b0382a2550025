// Redo as the exact inverse of the undo it takes back, and what an undo or redo says it moved, in
// this process on a real journal: sets recorded by the capture functions against a real
// temporary workspace, moved by real undo and redo steps (runStep), the disk read back.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runStep } from '../server/core/plan/apply.js';
import { selectSets } from '../server/core/plan/select.js';
import type { ChangeSet } from '../server/core/types.js';
import { unitWorkspace, type UnitWorkspace } from './support/unit-workspace.js';

/** A tool call writing `data` to `rel`: the set it recorded. */
function edit(ws: UnitWorkspace, rel: string, data: string | Buffer, mode?: number): ChangeSet {
  const set = ws.tool([rel], () => ws.write(rel, data, mode));
  expect(set).not.toBeNull();
  return set!;
}

describe('what a step says it moved', () => {
  it('a selected set whose every file is a capture gap is not among the sets an undo names, and stays applied', () => {
    const ws = unitWorkspace();
    const a = edit(ws, 'a.txt', 'a\n');
    const secret = edit(ws, 'id_rsa', 'key');
    expect(secret.files.every((f) => f.gap === 'secret')).toBe(true);
    const r = ws.step({ ids: [a.id, secret.id] }, 'undo');
    expect(r.written).toBe(true);
    expect(r.sets).toEqual([a.id]);
    expect(r.gaps.map((g) => g.path)).toEqual(['id_rsa']);
    expect(ws.journal.sets.get(a.id).state).toBe('undone');
    expect(ws.journal.sets.get(secret.id).state).toBe('applied');
  });

  it('a path the step leaves as it is (the file there now could not be kept) is not recorded as moved: its change stays in place', () => {
    const ws = unitWorkspace({ TAKEBACK_MAX_FILE_BYTES: '64' });
    ws.write('a.txt', 'a\n');
    ws.write('big.txt', 'b\n');
    const set = ws.tool(['a.txt', 'big.txt'], () => {
      ws.write('a.txt', 'a\nA\n');
      ws.write('big.txt', 'b\nB\n');
    })!;
    // Over the size limit now: what is there could not be brought back, so the step never replaces it.
    const big = Buffer.alloc(200, 'x');
    ws.write('big.txt', big);
    const r = ws.step({ ids: [set.id] }, 'undo', { force: true });
    expect(r.written).toBe(true);
    expect(r.gaps.map((g) => [g.path, g.reason])).toEqual([['big.txt', 'too-large']]);
    expect(ws.read('a.txt').toString()).toBe('a\n');
    expect(ws.read('big.txt').equals(big)).toBe(true);
    const now = ws.journal.sets.get(set.id);
    expect(now.files.map((f) => [f.path, Boolean(f.undone)])).toEqual([
      ['a.txt', true],
      ['big.txt', false],
    ]);
    expect(now.state).toBe('partial');
    const op = ws.journal.oplog.head()!;
    expect(ws.journal.oplog.get(op)!.paths.map((p) => p.path)).toEqual(['a.txt']);
  });
});

/** Every byte and the mode of `rel` now. */
function bytesAndMode(ws: UnitWorkspace, rel: string): { bytes: string; mode: number } {
  return { bytes: ws.read(rel).toString('hex'), mode: fs.statSync(ws.abs(rel)).mode & 0o7777 };
}

describe('redo --last is the exact inverse of the undo it takes back', () => {
  it('after a plain undo: the agent\'s bytes and mode, and the set applied', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'a\n', 0o644);
    const set = edit(ws, 'f.txt', 'a\nb\n', 0o755);
    const agent = bytesAndMode(ws, 'f.txt');
    ws.step({ last: true }, 'undo');
    expect(ws.read('f.txt').toString()).toBe('a\n');
    expect(ws.step({ last: true }, 'redo').sets).toEqual([set.id]);
    expect(bytesAndMode(ws, 'f.txt')).toEqual(agent);
    expect(ws.journal.sets.get(set.id).state).toBe('applied');
  });

  it('after a merged undo: the bytes the undo found, the later edit and the agent\'s change both', () => {
    const ws = unitWorkspace();
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}\r\n`);
    ws.write('f.txt', `\ufeff${lines.join('')}`);
    const set = edit(ws, 'f.txt', `\ufeff${lines.map((l, i) => (i === 1 ? 'AGENT\r\n' : l)).join('')}`);
    // A later edit far from the agent's line, with bytes that are not UTF-8.
    const found = Buffer.concat([ws.read('f.txt').subarray(0, -('line 12\r\n'.length)), Buffer.from([0xff, 0xfe, 0x0d, 0x0a])]);
    ws.write('f.txt', found);
    const undo = ws.step({ ids: [set.id] }, 'undo');
    expect(undo.applied.map((f) => f.merged !== null)).toEqual([true]);
    expect(ws.read('f.txt').includes('AGENT')).toBe(false);
    expect(ws.step({ last: true }, 'redo').sets).toEqual([set.id]);
    expect(ws.read('f.txt').equals(found)).toBe(true);
  });

  it('after a forced undo: the later edits come back in one step with the change, and what the undo replaced is applied with it', () => {
    const ws = unitWorkspace();
    ws.write('f.bin', Buffer.from([0, 1, 2, 3]), 0o644);
    ws.write('g.txt', 'one\r\ntwo\r\n');
    let sets: ChangeSet[] = [];
    const turn = ws.turn(() => {
      sets = [edit(ws, 'f.bin', Buffer.from([0, 9, 9, 3])), edit(ws, 'g.txt', 'one\r\nTWO\r\n')];
    });
    // The person's edits over the agent's: binary bytes and a mode, the agent's own line.
    ws.write('f.bin', Buffer.from([0, 9, 9, 3, 0xff]), 0o600);
    ws.write('g.txt', 'one\r\nTWO and mine\r\n');
    const theirs = { f: bytesAndMode(ws, 'f.bin'), g: bytesAndMode(ws, 'g.txt') };
    expect(ws.step({ turn }, 'undo').written).toBe(false);
    const undo = ws.step({ turn }, 'undo', { force: true });
    expect(undo).toMatchObject({ written: true, forced: true });
    expect(ws.read('g.txt').toString()).toBe('one\r\ntwo\r\n');
    const kept = ws.journal.sets.list().find((s) => s.source.kind === 'replaced')!;
    expect(kept.state).toBe('undone');

    const redo = ws.step({ last: true }, 'redo');
    expect(redo.sets).toEqual([...sets.map((s) => s.id), kept.id]);
    expect(redo.conflicts).toEqual([]);
    expect({ f: bytesAndMode(ws, 'f.bin'), g: bytesAndMode(ws, 'g.txt') }).toEqual(theirs);
    for (const s of [...sets, kept]) expect(ws.journal.sets.get(s.id).state).toBe('applied');
    // Nothing is left to redo, and undo --last is the agent's newest change, not the bookkeeping.
    expect(() => ws.step({ last: true }, 'redo')).toThrow(/no undone change/);
    expect(ws.step({ last: true }, 'undo', { force: true }).sets).toEqual([sets[1]!.id]);
  });

  it('redo of only some of the sets an undo took back on a path is no inverse: the selected change alone comes back', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'a\n');
    const one = edit(ws, 'f.txt', 'a\nb\n');
    const two = edit(ws, 'f.txt', 'a\nb\nc\n');
    ws.step({ ids: [one.id, two.id] }, 'undo');
    expect(ws.read('f.txt').toString()).toBe('a\n');
    expect(ws.step({ ids: [one.id] }, 'redo').sets).toEqual([one.id]);
    expect(ws.read('f.txt').toString()).toBe('a\nb\n');
  });

  it('an undo that found the file as it leaves it wrote nothing: its redo brings the change back', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'a\n');
    const set = edit(ws, 'f.txt', 'a\nb\n');
    ws.write('f.txt', 'a\n'); // put back by hand
    const undo = ws.step({ ids: [set.id] }, 'undo');
    expect(undo.applied.map((f) => f.action)).toEqual(['none']);
    ws.step({ last: true }, 'redo');
    expect(ws.read('f.txt').toString()).toBe('a\nb\n');
  });
});

describe('redo --last after undos by hunks', () => {
  it('after two undos of one hunk each, each leaving the change partial: the hunk the last one took, then the one before', () => {
    const ws = unitWorkspace();
    const text = (line: (i: number) => string) => Array.from({ length: 30 }, (_, i) => line(i + 1)).join('');
    const base = (i: number) => `line ${i}\n`;
    const agentAt = (...at: number[]) => text((i) => (at.includes(i) ? `agent ${i}\r\n` : base(i)));
    ws.write('f.txt', text(base));
    const set = edit(ws, 'f.txt', agentAt(3, 13, 23));
    const byLine = (n: number) =>
      runStep(ws, () => selectSets(ws.journal, { ids: [set.id], paths: ['f.txt'] }, 'undo'), 'undo', { paths: ['f.txt'], narrowing: { lines: { start: n, end: n } } });
    expect(byLine(3).sets).toEqual([set.id]);
    expect(byLine(13).sets).toEqual([set.id]);
    expect(ws.read('f.txt').toString()).toBe(agentAt(23));
    expect(ws.journal.sets.get(set.id).state).toBe('partial');

    expect(ws.step({ last: true }, 'redo').sets).toEqual([set.id]);
    expect(ws.read('f.txt').toString()).toBe(agentAt(13, 23));
    expect(ws.journal.sets.get(set.id).state).toBe('partial');
    expect(ws.step({ last: true }, 'redo').sets).toEqual([set.id]);
    expect(ws.read('f.txt').toString()).toBe(agentAt(3, 13, 23));
    expect(ws.journal.sets.get(set.id).state).toBe('applied');
  });
});

describe('undo --last never names bookkeeping', () => {
  it('what a forced undo replaced, once redone, is passed over', () => {
    const ws = unitWorkspace();
    ws.write('f.txt', 'a\n');
    const set = edit(ws, 'f.txt', 'a\nb\n');
    ws.write('f.txt', 'mine\n');
    ws.step({ ids: [set.id] }, 'undo', { force: true });
    const kept = ws.journal.sets.list().find((s) => s.source.kind === 'replaced')!;
    // Redone with the change it was replaced by: applied, and newer than the agent's change.
    ws.step({ last: true }, 'redo');
    expect(ws.journal.sets.get(kept.id).state).toBe('applied');
    expect(ws.read('f.txt').toString()).toBe('mine\n');
    expect(selectSets(ws.journal, { last: true }, 'undo').map((s) => s.id)).toEqual([set.id]);
  });
});
