// The hunks of a change in this process: their boundaries are those of preview's unified diff,
// they are placed in the file as it is now through later edits (lines added above move them, a
// hunk whose lines were all changed since has no place), a selection of lines touches them by
// their changed lines (an insertion point by the line on either side), and moving only some of
// them gives back exact bytes (CRLF, a BOM, no final newline, bytes that are not UTF-8).
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../server/core/diffs.js';
import { applyHunks, changeHunks, diffHunks, mapRanges, parseLines, placeHunks, touches } from '../server/core/plan/hunks.js';
import { lines } from './support/takeback.js';

const B = (s: string | number[]) => (typeof s === 'string' ? Buffer.from(s, 'latin1') : Buffer.from(s));

/** `text` with line `n` (1-based) replaced by `line`. */
function withLine(text: string, n: number, line: string): string {
  const l = text.split('\n');
  l[n - 1] = line;
  return l.join('\n');
}

/** The `@@ -a,b +c,d @@` headers of preview's unified diff from `from` to `to`, as numbers (an empty side's start as the hunk's line). */
function previewHeaders(from: string, to: string): number[][] {
  const d = unifiedDiff('f', B(from), B(to)).diff!;
  return [...d.matchAll(/^@@ -(\d+),(\d+) \+(\d+),(\d+) @@/gm)].map((m) => {
    const [a, b, c, e] = m.slice(1).map(Number) as [number, number, number, number];
    return [b === 0 ? a + 1 : a, b, e === 0 ? c + 1 : c, e];
  });
}

const TWENTY = lines('line', 20);

describe('diffHunks: the hunks preview shows', () => {
  it('changes with seven lines between them are two hunks, with six one, with the same boundaries as the unified diff', () => {
    const two = withLine(withLine(TWENTY, 3, 'agent 3'), 11, 'agent 11');
    const h2 = diffHunks(B(TWENTY), B(two));
    expect(h2.map((h) => [h.fromStart, h.fromLines, h.toStart, h.toLines])).toEqual(previewHeaders(TWENTY, two));
    expect(h2.map((h) => h.changed)).toEqual([
      { start: 3, end: 3 },
      { start: 11, end: 11 },
    ]);
    const one = withLine(withLine(TWENTY, 3, 'agent 3'), 10, 'agent 10');
    const h1 = diffHunks(B(TWENTY), B(one));
    expect(h1).toHaveLength(1);
    expect(h1.map((h) => [h.fromStart, h.fromLines, h.toStart, h.toLines])).toEqual(previewHeaders(TWENTY, one));
    expect(h1[0]!.changed).toEqual({ start: 3, end: 10 });
    expect(h1[0]!.changedTo).toEqual({ start: 3, end: 10 });
  });

  it('changedTo is the hunk\'s changed lines on the other side: lines replaced by more lines, further down', () => {
    const more = TWENTY.replace('line 2\n', 'new a\nnew b\nnew c\n').replace('line 15\n', 'agent 15\n');
    expect(diffHunks(B(TWENTY), B(more)).map((h) => [h.changed, h.changedTo])).toEqual([
      [{ start: 2, end: 2 }, { start: 2, end: 4 }],
      [{ start: 15, end: 15 }, { start: 17, end: 17 }],
    ]);
    expect(diffHunks(B(more), B(TWENTY)).map((h) => [h.changed, h.changedTo])).toEqual([
      [{ start: 2, end: 4 }, { start: 2, end: 2 }],
      [{ start: 17, end: 17 }, { start: 15, end: 15 }],
    ]);
  });

  it('lines only added (from this side) have an insertion point, lines removed their own range; equal files have no hunk', () => {
    const added = TWENTY.replace('line 5\n', 'line 5\nnew a\nnew b\n');
    const [ins] = diffHunks(B(TWENTY), B(added));
    expect(ins!.changed).toEqual({ start: 6, end: 5 });
    expect(ins!.changedTo).toEqual({ start: 6, end: 7 });
    const [del] = diffHunks(B(added), B(TWENTY));
    expect(del!.changed).toEqual({ start: 6, end: 7 });
    expect(del!.changedTo).toEqual({ start: 6, end: 5 });
    expect(diffHunks(B(TWENTY), B(TWENTY))).toEqual([]);
  });

  it('a last line that loses its newline is a change of that line; CRLF against LF is a change of every line', () => {
    const [h] = diffHunks(B('a\nb\n'), B('a\nb'));
    expect(h!.changed).toEqual({ start: 2, end: 2 });
    expect(diffHunks(B('a\r\nb\r\n'), B('a\nb\n'))[0]!.changed).toEqual({ start: 1, end: 2 });
  });
});

describe('placeHunks: where each hunk is in the file now', () => {
  const agent = withLine(withLine(TWENTY, 3, 'agent 3'), 15, 'agent 15');
  const hunks = diffHunks(B(agent), B(TWENTY));

  it('in place: where the change left it', () => {
    expect(placeHunks(hunks, B(agent), B(agent)).map((h) => [h.now, h.intact])).toEqual([
      [{ start: 3, end: 3 }, true],
      [{ start: 15, end: 15 }, true],
    ]);
  });

  it('lines added above since move it down; lines removed above move it up', () => {
    const now = `top 1\ntop 2\n${agent}`;
    expect(placeHunks(hunks, B(agent), B(now)).map((h) => h.now)).toEqual([
      { start: 5, end: 5 },
      { start: 17, end: 17 },
    ]);
    const fewer = agent.replace('line 1\nline 2\n', '');
    expect(placeHunks(hunks, B(agent), B(fewer)).map((h) => h.now)).toEqual([
      { start: 1, end: 1 },
      { start: 13, end: 13 },
    ]);
  });

  it('a hunk whose changed lines were all changed since has no place; one partly changed keeps the lines still there, not intact', () => {
    const now = withLine(agent, 15, 'mine 15');
    const placed = placeHunks(hunks, B(agent), B(now));
    expect(placed[0]).toMatchObject({ now: { start: 3, end: 3 }, intact: true });
    expect(placed[1]).toMatchObject({ now: null, intact: false });
    const wide = withLine(withLine(TWENTY, 3, 'agent 3'), 4, 'agent 4');
    const [h] = diffHunks(B(wide), B(TWENTY));
    const [p] = placeHunks([h!], B(wide), B(withLine(wide, 4, 'mine 4')));
    expect(p).toMatchObject({ now: { start: 3, end: 3 }, intact: false });
  });

  it('an insertion point moves with the lines around it', () => {
    const deleted = TWENTY.replace('line 5\nline 6\n', '');
    const [h] = diffHunks(B(deleted), B(TWENTY));
    expect(h!.changed).toEqual({ start: 5, end: 4 });
    const [p] = placeHunks([h!], B(deleted), B(`top\n${deleted}`));
    expect(p).toMatchObject({ now: { start: 6, end: 5 }, intact: true });
  });
});

describe('touches', () => {
  it('a range touches the lines it shares; an insertion point the line before it and the line after it', () => {
    expect(touches({ start: 5, end: 7 }, { start: 7, end: 9 })).toBe(true);
    expect(touches({ start: 5, end: 7 }, { start: 8, end: 9 })).toBe(false);
    expect(touches({ start: 5, end: 7 }, { start: 1, end: 4 })).toBe(false);
    expect(touches({ start: 6, end: 5 }, { start: 5, end: 5 })).toBe(true);
    expect(touches({ start: 6, end: 5 }, { start: 6, end: 6 })).toBe(true);
    expect(touches({ start: 6, end: 5 }, { start: 7, end: 7 })).toBe(false);
    expect(touches({ start: 6, end: 5 }, { start: 4, end: 4 })).toBe(false);
  });
});

describe('applyHunks: only the chosen hunks, exact bytes', () => {
  it('the second of two hunks taken back leaves the first as the change left it', () => {
    const agent = withLine(withLine(TWENTY, 3, 'agent 3'), 15, 'agent 15');
    const hunks = diffHunks(B(agent), B(TWENTY));
    expect(applyHunks(B(agent), B(TWENTY), [hunks[1]!]).toString('latin1')).toBe(withLine(TWENTY, 3, 'agent 3'));
    expect(applyHunks(B(agent), B(TWENTY), [hunks[0]!]).toString('latin1')).toBe(withLine(TWENTY, 15, 'agent 15'));
    expect(applyHunks(B(agent), B(TWENTY), hunks).toString('latin1')).toBe(TWENTY);
    expect(applyHunks(B(agent), B(TWENTY), []).toString('latin1')).toBe(agent);
  });

  it('CRLF, a BOM, bytes that are not UTF-8 and no final newline come back exactly', () => {
    const rows = (n: number, tag: (i: number) => string) => Array.from({ length: n }, (_, i) => tag(i + 1));
    const before = Buffer.concat([
      B([0xef, 0xbb, 0xbf]),
      B(rows(12, (i) => (i === 6 ? 'caf\xe9 \xff\xfe\r\n' : `row ${i}\r\n`)).join('')),
      B('mixed\nlast line, no newline'),
    ]);
    const text = before.toString('latin1');
    const after = B(text.replace('row 2\r\n', 'agent 2\r\n').replace('last line, no newline', 'agent last\n'));
    const hunks = diffHunks(after, before);
    expect(hunks).toHaveLength(2);
    const firstBack = applyHunks(after, before, [hunks[0]!]);
    expect(firstBack.equals(B(text.replace('last line, no newline', 'agent last\n')))).toBe(true);
    const lastBack = applyHunks(after, before, [hunks[1]!]);
    expect(lastBack.equals(B(text.replace('row 2\r\n', 'agent 2\r\n')))).toBe(true);
    expect(applyHunks(after, before, hunks).equals(before)).toBe(true);
  });

  it('from an empty file and to an empty one', () => {
    const [h] = diffHunks(B(''), B('a\nb\n'));
    expect(applyHunks(B(''), B('a\nb\n'), [h!]).toString()).toBe('a\nb\n');
    const [g] = diffHunks(B('a\nb\n'), B(''));
    expect(applyHunks(B('a\nb\n'), B(''), [g!]).toString()).toBe('');
  });
});

describe('parseLines', () => {
  it('A or A-B, from 1, A <= B', () => {
    expect(parseLines('8')).toEqual({ start: 8, end: 8 });
    expect(parseLines('8-10')).toEqual({ start: 8, end: 10 });
    for (const bad of ['0', '10-8', '-3', 'x', '3-', '1.5', '']) expect(parseLines(bad)).toBeNull();
  });
});

describe("changeHunks: a change's hunks, each with its place in the file now", () => {
  const before = TWENTY;
  const after = withLine(TWENTY, 3, 'agent 3').replace('line 11\n', '');

  it('by the lines the change left: moved by lines added above, a removal placed while its neighbours stay next to each other', () => {
    const r = (s: number, e: number) => ({ start: s, end: e });
    expect(changeHunks(B(before), B(after), B(after))).toEqual([
      { before: r(3, 3), after: r(3, 3), now: r(3, 3) },
      { before: r(11, 11), after: r(11, 10), now: r(11, 10) },
    ]);
    expect(changeHunks(B(before), B(after), B(`mine\n${after}`))).toEqual([
      { before: r(3, 3), after: r(3, 3), now: r(4, 4) },
      { before: r(11, 11), after: r(11, 10), now: r(12, 11) },
    ]);
  });

  it('a hunk taken back, or whose lines were all changed since, has no place; a removal whose lines came back has none either', () => {
    expect(changeHunks(B(before), B(after), B(before)).map((h) => h.now)).toEqual([null, null]);
    const mine = withLine(after, 3, 'mine 3');
    expect(changeHunks(B(before), B(after), B(mine)).map((h) => h.now)).toEqual([null, { start: 11, end: 10 }]);
  });

  it('mapRanges maps line ranges through the diff, null where none of their lines is left', () => {
    expect(mapRanges([{ start: 2, end: 3 }, { start: 5, end: 5 }], B(TWENTY), B(`a\nb\n${TWENTY.replace('line 5\n', 'five\n')}`))).toEqual([{ start: 4, end: 5 }, null]);
  });
});
