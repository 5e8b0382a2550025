// A change taken back hunk by hunk and made again hunk by hunk, then undone whole, through the
// real CLI on real files: undo by lines of one hunk (partial), then the other (undone); redo by
// lines of one (partial), then the other (applied); then `undo ID` takes the whole change back
// and `redo --last` puts back exactly the bytes that undo replaced. The same with a later edit of
// the person's, on lines no hunk touches, made before the first step or between the redos: every
// step merges, and the edit stays through all of them. And one hunk undone, then `redo --last`
// (the inverse of that undo), then `undo ID`: the whole change again.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lines, sandbox, type Sandbox } from './support/takeback.js';

let sb: Sandbox | null = null;

afterEach(() => {
  if (sb && !process.env.TAKEBACK_KEEP_TMP) fs.rmSync(sb.base, { recursive: true, force: true });
  sb = null;
});

/** `text` with line `n` (1-based) replaced by `line`. */
function withLine(text: string, n: number, line: string): string {
  const l = text.split('\n');
  l[n - 1] = line;
  return l.join('\n');
}

const TWENTY = lines('line', 20);
const AGENT = withLine(withLine(TWENTY, 3, 'agent 3'), 15, 'agent 15');

/** A workspace with app.js holding TWENTY, then the agent's change to AGENT (through `takeback run`); its id. */
function start(): { s: Sandbox; id: string } {
  const s = sandbox();
  s.write('app.js', TWENTY);
  expect(s.tb(['run', '--', 'true']).code).toBe(0);
  const stage = path.join(s.base, 'stage');
  fs.writeFileSync(stage, AGENT);
  expect(s.tb(['run', '--', 'cp', stage, 'app.js']).code).toBe(0);
  return { s, id: s.json(['list']).sets[0].id as string };
}

/** Runs a step; it must succeed. */
function step(s: Sandbox, args: string[]): void {
  const r = s.tb(args);
  expect(r.code, `${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe(0);
}

function stateOf(s: Sandbox, id: string): string {
  return s.json(['list', '--all']).sets.find((x: { id: string }) => x.id === id).state as string;
}

/**
 * The walk: each hunk undone by lines, then each made again by lines, checking the file and the
 * state after each step; then the whole change undone and `redo --last`. `mine` turns a text of
 * the file into the same with the person's edit (identity when there is none); `editAt` is the
 * step after which the person edits (0: before the first).
 */
function walk(s: Sandbox, id: string, mine: (t: string) => string, editAt: number | null): void {
  const file = () => s.read('app.js').toString();
  let edited = false;
  const shown = (t: string) => (edited ? mine(t) : t);
  const edit = (n: number) => {
    if (editAt !== n) return;
    fs.writeFileSync(s.abs('app.js'), mine(file()));
    edited = true;
  };
  edit(0);
  // Line numbers are the file's now: the person's edit is below both hunks, so they do not move.
  step(s, ['undo', id, '--file', 'app.js', '--lines', '3']);
  expect(file()).toBe(shown(withLine(AGENT, 3, 'line 3')));
  expect(stateOf(s, id)).toBe('partial');
  edit(1);
  step(s, ['undo', id, '--file', 'app.js', '--lines', '15']);
  expect(file()).toBe(shown(TWENTY));
  expect(stateOf(s, id)).toBe('undone');
  edit(2);
  step(s, ['redo', id, '--file', 'app.js', '--lines', '15']);
  expect(file()).toBe(shown(withLine(TWENTY, 15, 'agent 15')));
  expect(stateOf(s, id)).toBe('partial');
  edit(3);
  step(s, ['redo', id, '--file', 'app.js', '--lines', '3']);
  expect(file()).toBe(shown(AGENT));
  expect(stateOf(s, id)).toBe('applied');
  edit(4);

  const before = s.read('app.js');
  step(s, ['undo', id]);
  expect(file()).toBe(shown(TWENTY));
  expect(stateOf(s, id)).toBe('undone');
  step(s, ['redo', '--last']);
  expect(s.read('app.js')).toEqual(before);
  expect(stateOf(s, id)).toBe('applied');
}

/** The person's edit: line 18 of the file (below both hunks). */
const MINE = (t: string) => withLine(t, 18, 'mine 18');

describe('per-hunk undo and redo, then the whole change undone and redone', () => {
  it('no later edit: undo ID takes the whole change back after a per-hunk redo finished it; redo --last puts back exactly those bytes', () => {
    const { s, id } = start();
    sb = s;
    walk(s, id, (t) => t, null);
  });

  for (const at of [0, 2, 3, 4]) {
    it(`a later edit of the person's on another line, made ${at === 0 ? 'before the first step' : `after step ${at}`}: every step merges and keeps it`, () => {
      const { s, id } = start();
      sb = s;
      walk(s, id, MINE, at);
    });
  }

  it('one hunk undone, redo --last (the inverse of that undo: applied again), then undo ID takes the whole change back; redo --last puts back exactly those bytes', () => {
    for (const mine of [(t: string) => t, MINE]) {
      if (sb && !process.env.TAKEBACK_KEEP_TMP) fs.rmSync(sb.base, { recursive: true, force: true });
      const { s, id } = start();
      sb = s;
      fs.writeFileSync(s.abs('app.js'), mine(AGENT));
      step(s, ['undo', id, '--file', 'app.js', '--lines', '3']);
      expect(stateOf(s, id)).toBe('partial');
      step(s, ['redo', '--last']);
      expect(s.read('app.js').toString()).toBe(mine(AGENT));
      expect(stateOf(s, id)).toBe('applied');
      step(s, ['undo', id]);
      expect(s.read('app.js').toString()).toBe(mine(TWENTY));
      expect(stateOf(s, id)).toBe('undone');
      step(s, ['redo', '--last']);
      expect(s.read('app.js').toString()).toBe(mine(AGENT));
      expect(stateOf(s, id)).toBe('applied');
    }
  });
});
