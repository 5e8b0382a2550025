import { structuredPatch } from 'diff';
import { keptLines, splitLines, type LineRange } from './merge.js';

/*
 * The hunks of a change, for an undo or redo of only some of them (`--lines`).
 *
 * A hunk is one hunk of the unified diff preview shows (the `diff` package, 3 lines of context):
 * runs of changed lines less than seven lines apart are one hunk. It is found on the bytes: each
 * line a latin1 string with its own terminator (as the merge compares them, merge.ts), so that
 * CRLF, a BOM, a missing final newline and bytes that are not UTF-8 are compared and written back
 * exactly.
 *
 * A hunk is placed in the file as it is now by the lines the change left that are still there:
 * its changed lines mapped through the diff from what the change left to the file now, so that
 * lines added or removed above it since move it, and a hunk whose lines were all changed since
 * (or taken back already) has no place.
 */

/** Context lines around each hunk, as preview's unified diff (diffs.ts). */
const CONTEXT = 3;

/** Edits past which the diff gives up (a file rewritten whole): the change is then one hunk. */
const MAX_EDIT_LENGTH = 20_000;

/**
 * One hunk of the diff from `from` to `to` (one step of an undo or redo: undo goes from what the
 * change left to what it found). Lines are 1-based.
 */
export interface Hunk {
  /** The hunk's lines in `from`, context included: `start` and a count (0: an insertion before `start`). */
  fromStart: number;
  fromLines: number;
  /** The same in `to`. */
  toStart: number;
  toLines: number;
  /** The changed lines in `from`, without context (`end < start`: none, an insertion just before `start`). */
  changed: LineRange;
  /** The same in `to`: the lines the hunk puts there (`end < start`: none, lines taken out just before `start`). */
  changedTo: LineRange;
}

/** A hunk with its place in the file as it is now. */
export interface PlacedHunk extends Hunk {
  /** Its changed lines in the file now (`end < start`: an insertion point), or null when none of them is still there. */
  now: LineRange | null;
  /** True when every changed line (for an insertion, the lines on both sides of it) is still there, next to each other. */
  intact: boolean;
}

/** The hunks of the diff from `from` to `to`, as preview's unified diff draws them. Empty when they are equal. */
export function diffHunks(from: Buffer, to: Buffer): Hunk[] {
  if (from.equals(to)) return [];
  const a = from.toString('latin1');
  const b = to.toString('latin1');
  const patch = structuredPatch('a', 'b', a, b, undefined, undefined, { context: CONTEXT, maxEditLength: MAX_EDIT_LENGTH });
  if (!patch) {
    // Past what the diff follows: the whole file is one hunk.
    const n = splitLines(from).length;
    const m = splitLines(to).length;
    return [{ fromStart: 1, fromLines: n, toStart: 1, toLines: m, changed: { start: 1, end: n }, changedTo: { start: 1, end: m } }];
  }
  return patch.hunks.map((h) => {
    // The changed lines: each removed line, and for lines added, the line just before where they go.
    let at = h.oldStart;
    let start = Infinity;
    let end = -Infinity;
    let removed = false;
    let insertAt = -1;
    // The same walk in `to`: the lines added, or where the removed ones were.
    let toAt = h.newStart;
    let toStart = -1;
    let toEnd = -1;
    let removeAt = -1;
    for (const l of h.lines) {
      const sign = l[0];
      if (sign === '\\') continue;
      if (sign === ' ') {
        at++;
        toAt++;
      } else if (sign === '-') {
        start = Math.min(start, at);
        end = Math.max(end, at);
        removed = true;
        if (removeAt < 0) removeAt = toAt;
        at++;
      } else if (sign === '+') {
        if (insertAt < 0) insertAt = at;
        start = Math.min(start, at);
        end = Math.max(end, at - 1);
        if (toStart < 0) toStart = toAt;
        toEnd = toAt;
        toAt++;
      }
    }
    // A hunk that only adds lines has no changed line of its own: its place is where they go.
    const changed = removed ? { start, end: Math.max(end, start) } : { start: insertAt, end: insertAt - 1 };
    // One that only removes lines puts none in `to`: its place there is where they were.
    const changedTo = toStart > 0 ? { start: toStart, end: toEnd } : { start: removeAt, end: removeAt - 1 };
    return { fromStart: h.oldStart, fromLines: h.oldLines, toStart: h.newStart, toLines: h.newLines, changed, changedTo };
  });
}

/**
 * `hunks` (of a diff from `from`) placed in `now`, the file as it is now: each hunk's changed
 * lines mapped through the diff from `from` to `now`. A changed line that is no longer there
 * does not count; a hunk with none left has no place (`now: null`).
 */
export function placeHunks(hunks: Hunk[], from: Buffer, now: Buffer): PlacedHunk[] {
  if (from.equals(now)) return hunks.map((h) => ({ ...h, now: { ...h.changed }, intact: true }));
  const base = splitLines(from);
  const map = keptLines(base, splitLines(now));
  return hunks.map((h) => {
    if (!map) return { ...h, now: null, intact: false };
    const { start, end } = h.changed;
    if (end < start) {
      // An insertion before line `start` of `from` (0-based: before index p).
      const p = start - 1;
      const before = p > 0 ? map[p - 1]! : -2;
      const after = p < base.length ? map[p]! : -2;
      const at = before >= 0 ? before + 1 : before === -2 ? 0 : after >= 0 ? after : -1;
      if (at < 0 && !(before === -2 && after === -2)) return { ...h, now: null, intact: false };
      const pos = Math.max(at, 0);
      const intact = (before !== -1 && after !== -1 && (before < 0 || after < 0 || after === before + 1)) || base.length === 0;
      return { ...h, now: { start: pos + 1, end: pos }, intact };
    }
    let lo = -1;
    let hi = -1;
    let all = true;
    for (let i = start - 1; i < end; i++) {
      const j = map[i]!;
      if (j < 0) {
        all = false;
        continue;
      }
      if (lo < 0) lo = j;
      hi = j;
    }
    if (lo < 0) return { ...h, now: null, intact: false };
    return { ...h, now: { start: lo + 1, end: hi + 1 }, intact: all && hi - lo === end - start };
  });
}

/**
 * One hunk of a change's own diff, from what it found (`before`) to what it left (`after`), and
 * where it is in the file now: the lines of `after` it changed, mapped through the later edits.
 * Ranges are 1-based and inclusive; `end < start` is the place just before `start` (no line).
 */
export interface ChangeHunk {
  before: LineRange;
  after: LineRange;
  /** Its changed lines in the file now, or null when none is still there (changed since, or taken back); a hunk that only removed lines has a place while the lines on both sides of it are still next to each other. */
  now: LineRange | null;
}

/**
 * The hunks of a change from `before` to `after` (as preview's unified diff draws them), each
 * placed in `now`, the file as it is now ({@link ChangeHunk}). Empty when `before` equals `after`.
 */
export function changeHunks(before: Buffer, after: Buffer, now: Buffer): ChangeHunk[] {
  // The undo's hunks: from what the change left, so that each is placed by the agent's own lines.
  return placeHunks(diffHunks(after, before), after, now).map((h) => {
    const here = h.now && (h.changed.end >= h.changed.start || h.intact) ? h.now : null;
    return { before: h.changedTo, after: h.changed, now: here };
  });
}

/**
 * Line ranges of `from` mapped to `to` as {@link placeHunks} places a hunk's changed lines (each
 * range what it covers of the lines kept), null for a range with no line left there.
 */
export function mapRanges(ranges: LineRange[], from: Buffer, to: Buffer): (LineRange | null)[] {
  const as = ranges.map((r) => ({ fromStart: r.start, fromLines: 0, toStart: r.start, toLines: 0, changed: r, changedTo: r }));
  return placeHunks(as, from, to).map((h) => h.now);
}

/**
 * True when the lines `sel` touch hunk range `r` (both in the file now): they share a line, or,
 * for an insertion point (`r.end < r.start`), `sel` holds the line before it or the line after it.
 */
export function touches(r: LineRange, sel: LineRange): boolean {
  if (r.end < r.start) return sel.start <= r.start && sel.end >= r.start - 1;
  return sel.start <= r.end && sel.end >= r.start;
}

/**
 * `from` with the hunks `chosen` (of {@link diffHunks}`(from, to)`) made as in `to`, the others
 * left as they are: the bytes of the step that moves only those hunks. Exact bytes.
 */
export function applyHunks(from: Buffer, to: Buffer, chosen: Hunk[]): Buffer {
  const a = splitLines(from);
  const b = splitLines(to);
  const out: string[] = [];
  let i = 0;
  for (const h of [...chosen].sort((x, y) => x.fromStart - y.fromStart)) {
    const start = h.fromStart - 1;
    for (; i < start; i++) out.push(a[i]!);
    for (let k = 0; k < h.toLines; k++) out.push(b[h.toStart - 1 + k]!);
    i = start + h.fromLines;
  }
  for (; i < a.length; i++) out.push(a[i]!);
  return Buffer.from(out.join(''), 'latin1');
}

/** "8" or "8-10": a line range as `--lines` takes it. */
export function rangeText(r: LineRange): string {
  return r.end <= r.start ? `${r.start}` : `${r.start}-${r.end}`;
}

/** The range `--lines A[-B]` names (1-based, `A <= B`), or null when `text` is not one. */
export function parseLines(text: string): LineRange | null {
  const m = /^([1-9][0-9]*)(?:-([1-9][0-9]*))?$/.exec(text.trim());
  if (!m) return null;
  const start = Number(m[1]);
  const end = m[2] === undefined ? start : Number(m[2]);
  return end >= start && Number.isSafeInteger(end) ? { start, end } : null;
}
