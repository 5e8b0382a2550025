import { diffArrays } from 'diff';
import { diff3Merge } from 'node-diff3';

/*
 * The three-way merge of an undo or redo: the change's own hunks taken back (or made again)
 * over a file that was edited since, keeping those later edits.
 *
 * It works on bytes: each line is a latin1 string of its bytes with its own terminator (`\n`,
 * `\r\n`, or none for a last line without one), so that CRLF, mixed line ends, a BOM (bytes of
 * the first line), a missing final newline and bytes that are not UTF-8 come back exactly as they
 * were, and two lines are the same only when every byte is.
 *
 * node-diff3 decides each region (one side's change taken, or a conflict). Its LCS is quadratic
 * in the lines it is given (a 20,000-line file takes minutes), so it is given only the unstable
 * regions: the lines of the base that both sides keep — found by the `diff` package's Myers
 * diff, linear in the lines when the changes are few — split the three files into independent
 * regions (as diff3's own stable chunks do), and only the regions where a side changed something
 * go to node-diff3; a region too long for it is decided without it (see mergeBytes). The diff
 * runs on the lines both sides have (a line of one side only is never kept), so a file rewritten
 * whole since costs as little as one barely touched, and comes out as an overlap that names the
 * lines, not a give-up.
 */

/** Edits past which a side's diff gives up (a file rewritten whole): the merge is then a conflict. */
const MAX_EDIT_LENGTH = 20_000;
/**
 * The diff's work, at most: lines (both sides) times edits followed, about 3 s on a slow
 * machine. A longer pair of files is followed through fewer edits, so no undo waits a minute on
 * its merge; the bound depends on the files alone, never on the clock, so a merge comes out the
 * same on any machine.
 */
const MAX_DIFF_WORK = 40_000_000;
/** Edits a diff of two whole sides follows before the lines of one side only are set aside (see keptLines). */
const FEW_EDITS = 64;
/** Lines of a region (on any side) past which it is not given to node-diff3, whose LCS is quadratic (see region in mergeBytes). */
const DIFF3_MAX_LINES = 2_000;

/** A range of lines, 1-based and inclusive; `end < start` is an empty range just before `start`. */
export interface LineRange {
  start: number;
  end: number;
}

/** Where the change's hunk and a later edit overlap: the change's lines (in `base`) and the later edit's (in `ours`). */
export interface MergeOverlap {
  change: LineRange;
  since: LineRange;
}

/** The merged bytes, or the overlaps that stop the merge (`tooManyEdits`: a side was rewritten past what the diff follows). */
export type MergeOutcome = { ok: true; bytes: Buffer } | { ok: false; overlaps: MergeOverlap[]; tooManyEdits?: boolean };

/** True when `bytes` can be merged as text: no NUL byte anywhere. */
export function isMergeableText(bytes: Uint8Array): boolean {
  return bytes.indexOf(0) === -1;
}

/** The lines of `bytes` as latin1 strings, each with its own terminator (`\n`, `\r\n`, none at the end). */
export function splitLines(bytes: Buffer): string[] {
  const s = bytes.toString('latin1');
  const out: string[] = [];
  let from = 0;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', from)) {
    out.push(s.slice(from, i + 1));
    from = i + 1;
  }
  if (from < s.length) out.push(s.slice(from));
  return out;
}

/**
 * For each line of `base` (0-based), the index of the same line in `other` when the diff keeps
 * it, else -1; null when the two differ past what the diff follows (MAX_EDIT_LENGTH edits, fewer
 * for long files: MAX_DIFF_WORK).
 *
 * A line found on one side only is never kept, so the diff runs on the lines both sides have:
 * the same longest common subsequence, and a side that rewrote much of the file (each new line
 * an edit) costs no more than one that rewrote little.
 */
export function keptLines(base: string[], other: string[]): Int32Array | null {
  const map = new Int32Array(base.length).fill(-1);
  // Few edits (most merges): the diff of the whole is cheapest, no lines set aside.
  const few = diffArrays(base, other, { maxEditLength: FEW_EDITS });
  if (few) return keep(few, map, null, null);
  const inOther = new Set(other);
  const inBase = new Set(base);
  const bi: number[] = [];
  const oi: number[] = [];
  for (let i = 0; i < base.length; i++) if (inOther.has(base[i]!)) bi.push(i);
  for (let j = 0; j < other.length; j++) if (inBase.has(other[j]!)) oi.push(j);
  const b = bi.map((i) => base[i]!);
  const o = oi.map((j) => other[j]!);
  const edits = Math.max(1, Math.min(MAX_EDIT_LENGTH, Math.floor(MAX_DIFF_WORK / Math.max(1, b.length + o.length))));
  const parts = diffArrays(b, o, { maxEditLength: edits });
  return parts ? keep(parts, map, bi, oi) : null;
}

/**
 * `map` with each line the diff `parts` keeps set to its index on the other side; `bi`/`oi` map
 * the diffed lines back to the whole sides' indices (null: the diff was of the whole sides).
 */
function keep(parts: { count?: number; value: string[]; added?: boolean; removed?: boolean }[], map: Int32Array, bi: number[] | null, oi: number[] | null): Int32Array {
  let i = 0;
  let j = 0;
  for (const p of parts) {
    const n = p.count ?? p.value.length;
    if (p.added) j += n;
    else if (p.removed) i += n;
    else {
      for (let k = 0; k < n; k++) map[bi ? bi[i + k]! : i + k] = oi ? oi[j + k]! : j + k;
      i += n;
      j += n;
    }
  }
  return map;
}

/**
 * The lines that differ between `from` and `to` (a conflict region's base and one side), as one
 * span of 0-based indices, `from` inclusive and `to` exclusive, in `from`'s lines (`side` 'from')
 * or in `to`'s ('to'): from the first of that side's lines removed (or added) to the last; where
 * lines are only added (or only removed), the span is empty at that place. The whole of the side
 * when nothing differs.
 */
function changedSpan(from: string[], to: string[], side: 'from' | 'to'): { from: number; to: number } {
  // A diff keeps the lines both begin and end with, and changes something at the first and the
  // last line where they differ: the span is what lies between, without diffing.
  const short = Math.min(from.length, to.length);
  let head = 0;
  while (head < short && from[head] === to[head]) head++;
  if (head === from.length && head === to.length) return { from: 0, to: side === 'from' ? from.length : to.length };
  let tail = 0;
  while (tail < short - head && from[from.length - 1 - tail] === to[to.length - 1 - tail]) tail++;
  return { from: head, to: (side === 'from' ? from.length : to.length) - tail };
}

/**
 * Merges `ours` (the file now) and `theirs` (what the step puts back) against `base` (what the
 * step expects to find): where only one side changed a region from `base`, that side's lines are
 * taken; where both changed it differently, it is an overlap naming each side's own changed
 * lines (the step's in `base`, the later edit's in `ours`), also when the two changes are only
 * adjacent (still one region, so an overlap). Both sides making the same change is no overlap. Call only with text
 * ({@link isMergeableText}); the bytes that come back are exact (see the top of this file).
 */
export function mergeBytes(base: Buffer, ours: Buffer, theirs: Buffer): MergeOutcome {
  if (ours.equals(base)) return { ok: true, bytes: theirs };
  if (theirs.equals(base) || theirs.equals(ours)) return { ok: true, bytes: ours };
  const o = splitLines(base);
  const a = splitLines(ours);
  const b = splitLines(theirs);
  // Lines the three share at the start and at the end are stable as they are: only the middle is diffed.
  let head = 0;
  const short = Math.min(o.length, a.length, b.length);
  while (head < short && o[head] === a[head] && o[head] === b[head]) head++;
  let tail = 0;
  while (tail < short - head && o[o.length - 1 - tail] === a[a.length - 1 - tail] && o[o.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const ma = keptLines(o.slice(head, o.length - tail), a.slice(head, a.length - tail));
  const mb = keptLines(o.slice(head, o.length - tail), b.slice(head, b.length - tail));
  if (!ma || !mb) return { ok: false, overlaps: [], tooManyEdits: true };
  const out: string[] = o.slice(0, head);
  const overlaps: MergeOverlap[] = [];
  // The start of the region after the last stable line, in each of o, a, b.
  let oi = head;
  let ai = head;
  let bi = head;
  const region = (oEnd: number, aEnd: number, bEnd: number) => {
    if (oi === oEnd && ai === aEnd && bi === bEnd) return;
    const oSeg = o.slice(oi, oEnd);
    const aSeg = a.slice(ai, aEnd);
    const bSeg = b.slice(bi, bEnd);
    if (Math.max(oSeg.length, aSeg.length, bSeg.length) > DIFF3_MAX_LINES) {
      // Too long for node-diff3 (quadratic): every base line in a region is changed by one side
      // at least (one both keep would end it), so both sides' changes tile it — one overlap over
      // each side's changed lines, unless one side left it as it was or both made it the same.
      const same = (x: string[], y: string[]) => x.length === y.length && x.every((l, k) => l === y[k]);
      if (same(aSeg, oSeg) || same(aSeg, bSeg)) out.push(...bSeg);
      else if (same(bSeg, oSeg)) out.push(...aSeg);
      else {
        const change = changedSpan(oSeg, bSeg, 'from');
        const since = changedSpan(oSeg, aSeg, 'to');
        overlaps.push({ change: { start: oi + change.from + 1, end: oi + change.to }, since: { start: ai + since.from + 1, end: ai + since.to } });
      }
      return;
    }
    for (const r of diff3Merge(aSeg, oSeg, bSeg, { excludeFalseConflicts: true })) {
      if (r.ok) {
        for (const l of r.ok) out.push(l);
      } else if (r.conflict) {
        // The region spans both sides' changes (adjacent changes are one region); each side is
        // named by its own lines in it: the change's in `base`, the later edit's in `ours`.
        const c = r.conflict;
        const change = changedSpan(c.o, c.b, 'from');
        const since = changedSpan(c.o, c.a, 'to');
        overlaps.push({
          change: { start: oi + c.oIndex + change.from + 1, end: oi + c.oIndex + change.to },
          since: { start: ai + c.aIndex + since.from + 1, end: ai + c.aIndex + since.to },
        });
      }
    }
  };
  for (let k = 0; k < ma.length; k++) {
    if (ma[k]! < 0 || mb[k]! < 0) continue;
    const i = head + k;
    const ja = head + ma[k]!;
    const jb = head + mb[k]!;
    region(i, ja, jb);
    out.push(o[i]!);
    oi = i + 1;
    ai = ja + 1;
    bi = jb + 1;
  }
  region(o.length - tail, a.length - tail, b.length - tail);
  if (overlaps.length > 0) return { ok: false, overlaps };
  for (let i = o.length - tail; i < o.length; i++) out.push(o[i]!);
  return { ok: true, bytes: Buffer.from(out.join(''), 'latin1') };
}

/** `r` for people: "line 8", "lines 8-10", or "after line 7" (an empty range). */
export function linesText(r: LineRange): string {
  if (r.end < r.start) return r.start <= 1 ? 'at the start' : `after line ${r.start - 1}`;
  return r.end === r.start ? `line ${r.start}` : `lines ${r.start}-${r.end}`;
}
