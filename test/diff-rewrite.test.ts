// A file rewritten whole (no line in common) gets its preview diff and line counts without the
// line diff's search: the result must be the one the diff library gives, byte for byte.
import { createTwoFilesPatch, diffLines } from 'diff';
import { describe, expect, it } from 'vitest';
import { lineStats, unifiedDiff } from '../server/core/diffs.js';

function rand(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A text of `n` lines from `alphabet`, with LF or CRLF endings and maybe no final newline. */
function text(r: () => number, n: number, alphabet: string): string {
  const eol = r() < 0.3 ? '\r\n' : '\n';
  let s = '';
  for (let i = 0; i < n; i++) {
    const len = Math.floor(r() * 12);
    let line = '';
    for (let k = 0; k < len; k++) line += alphabet[Math.floor(r() * alphabet.length)];
    s += i < n - 1 || r() < 0.7 ? line + eol : line;
  }
  return s;
}

function library(path: string, a: string, b: string): string {
  const p = createTwoFilesPatch(`a/${path}`, `b/${path}`, a, b, undefined, undefined, { context: 3 });
  return p.slice(p.indexOf('--- '));
}

describe('a file rewritten whole', () => {
  it('gives the same diff and line counts as the diff library', () => {
    const r = rand(42);
    let disjointCases = 0;
    for (let i = 0; i < 400; i++) {
      const a = text(r, 1 + Math.floor(r() * 30), 'abcde');
      // Mostly no line in common (other letters), sometimes some (to cover the ordinary path).
      const b = text(r, 1 + Math.floor(r() * 30), r() < 0.8 ? 'vwxyz' : 'abcxyz');
      if (a === b) continue;
      const ours = unifiedDiff('f.txt', Buffer.from(a), Buffer.from(b));
      expect(ours.diff, JSON.stringify({ a, b })).toBe(library('f.txt', a, b));
      const parts = diffLines(a, b);
      const want = { added: 0, removed: 0 };
      for (const p of parts) {
        if (p.added) want.added += p.count ?? 0;
        else if (p.removed) want.removed += p.count ?? 0;
      }
      expect(lineStats(Buffer.from(a), Buffer.from(b))).toEqual(want);
      if (!a.split('\n').some((l) => b.split('\n').includes(l))) disjointCases++;
    }
    expect(disjointCases).toBeGreaterThan(50);
  });
});
