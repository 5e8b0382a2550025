import { createTwoFilesPatch, diffLines } from 'diff';

/** Files at or over this many bytes get no line diff in a preview ("too large to show"). */
export const MAX_DIFF_BYTES = 1024 * 1024;

/** Edits past which a line diff gives up (pathological inputs): the file counts as replaced whole. */
const MAX_EDIT_LENGTH = 20_000;

/** True when `bytes` look binary: a NUL byte in the first 8,000 bytes (git's rule). */
export function isBinary(bytes: Uint8Array): boolean {
  return (bytes.length > 8000 ? bytes.subarray(0, 8000) : bytes).indexOf(0) !== -1;
}

/** `bytes` (null: none) decoded as UTF-8; a Buffer's or view's bytes are decoded in place, never copied first. */
function utf8(bytes: Uint8Array | null): string {
  if (!bytes) return '';
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('utf8');
}

function lineCount(text: string): number {
  if (text === '') return 0;
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return text.endsWith('\n') ? n : n + 1;
}

/**
 * Lines as the line diff compares them: `ended`, those ending in `\n` (kept here without it; a
 * `\r` before it stays), and `last`, a last line with no newline (null: none). Two lines are the
 * same line when both end in `\n` and their text is equal, or both are `last` and equal.
 */
interface Lines {
  ended: string[];
  last: string | null;
}

/** The lines of `text` (split once; no line is copied). */
function lineTokens(text: string): Lines {
  const ended = text.split('\n');
  const last = ended.pop()!;
  return { ended, last: last === '' ? null : last };
}

/** How many lines `l` has. */
function count(l: Lines): number {
  return l.last === null ? l.ended.length : l.ended.length + 1;
}

/**
 * True when no line of `a` is a line of `b` (a file rewritten whole). The line diff then has
 * nothing to align: every old line goes and every new one comes, in one hunk. Its search would
 * still try every alignment first (quadratic in the lines changed), so the answer is given here.
 */
function disjoint(a: Lines, b: Lines): boolean {
  if (a.last !== null && a.last === b.last) return false;
  const [small, large] = a.ended.length <= b.ended.length ? [a.ended, b.ended] : [b.ended, a.ended];
  // Lines of other lengths differ: only a line whose length the other side has is looked up
  // (a rewrite rarely has many, and hashing every line of both is the cost here).
  const lengths = new Set<number>();
  for (const l of small) lengths.add(l.length);
  let seen: Set<string> | null = null;
  for (const l of large) {
    if (!lengths.has(l.length)) continue;
    seen ??= new Set(small);
    if (seen.has(l)) return false;
  }
  return true;
}

/**
 * Lines added and removed going from `before` to `after` (`null`: the file does not exist or its
 * bytes are not kept). Binary content counts 0 and 0.
 */
export function lineStats(before: Uint8Array | null, after: Uint8Array | null): { added: number; removed: number } {
  if ((before && isBinary(before)) || (after && isBinary(after))) return { added: 0, removed: 0 };
  const a = utf8(before);
  const b = utf8(after);
  if (a === b) return { added: 0, removed: 0 };
  if (a === '' || b === '') return { added: lineCount(b), removed: lineCount(a) };
  const ta = lineTokens(a);
  const tb = lineTokens(b);
  if (disjoint(ta, tb)) return { added: count(tb), removed: count(ta) };
  const parts = diffLines(a, b, { maxEditLength: MAX_EDIT_LENGTH });
  if (!parts) return { added: lineCount(b), removed: lineCount(a) };
  let added = 0;
  let removed = 0;
  for (const p of parts) {
    if (p.added) added += p.count ?? 0;
    else if (p.removed) removed += p.count ?? 0;
  }
  return { added, removed };
}

/**
 * A unified diff (3 lines of context) from `from` to `to` for `path`, or a one-line note instead
 * for binary files ("Binary files differ") and files over {@link MAX_DIFF_BYTES}.
 */
export function unifiedDiff(path: string, from: Uint8Array | null, to: Uint8Array | null): { diff: string | null; note: string | null } {
  if ((from && from.length >= MAX_DIFF_BYTES) || (to && to.length >= MAX_DIFF_BYTES)) {
    return { diff: null, note: 'too large to show a diff' };
  }
  if ((from && isBinary(from)) || (to && isBinary(to))) return { diff: null, note: 'binary files differ' };
  const a = utf8(from);
  const b = utf8(to);
  if (a === b) return { diff: null, note: null };
  const oldName = from ? `a/${path}` : '/dev/null';
  const newName = to ? `b/${path}` : '/dev/null';
  if (a !== '' && b !== '') {
    const ta = lineTokens(a);
    const tb = lineTokens(b);
    if (disjoint(ta, tb)) return { diff: `--- ${oldName}\n+++ ${newName}\n@@ -1,${count(ta)} +1,${count(tb)} @@\n${hunk('-', ta)}${hunk('+', tb)}`, note: null };
  }
  const patch = createTwoFilesPatch(oldName, newName, a, b, undefined, undefined, {
    context: 3,
  });
  // Drop the "Index:"/"====" preamble some versions add; keep from the --- line on.
  const at = patch.indexOf('--- ');
  return { diff: at >= 0 ? patch.slice(at) : patch, note: null };
}

/** Lines of a unified diff hunk: `sign` and each line, and git's marker after a last line with no newline. */
function hunk(sign: string, lines: Lines): string {
  const ended = lines.ended.length > 0 ? `${sign}${lines.ended.join(`\n${sign}`)}\n` : '';
  return lines.last === null ? ended : `${ended}${sign}${lines.last}\n\\ No newline at end of file\n`;
}
