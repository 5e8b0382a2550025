import { createTwoFilesPatch, diffLines } from 'diff';

/** Files at or over this many bytes get no line diff in a preview ("too large to show"). */
export const MAX_DIFF_BYTES = 1024 * 1024;

/** Edits past which a line diff gives up (pathological inputs): the file counts as replaced whole. */
const MAX_EDIT_LENGTH = 20_000;

/** True when `bytes` look binary: a NUL byte in the first 8,000 bytes (git's rule). */
export function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 8000);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

function lineCount(text: string): number {
  if (text === '') return 0;
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return text.endsWith('\n') ? n : n + 1;
}

/** The lines of `text` as the line diff compares them: each with its ending (`\n`, `\r\n`, or none at the end). */
function lineTokens(text: string): string[] {
  const parts = text.split('\n');
  const last = parts.pop()!;
  const out = parts.map((l) => `${l}\n`);
  if (last !== '') out.push(last);
  return out;
}

/**
 * True when no line of `a` is a line of `b` (a file rewritten whole). The line diff then has
 * nothing to align: every old line goes and every new one comes, in one hunk. Its search would
 * still try every alignment first (quadratic in the lines changed), so the answer is given here.
 */
function disjoint(a: string[], b: string[]): boolean {
  const seen = new Set(a);
  for (const l of b) if (seen.has(l)) return false;
  return true;
}

/**
 * Lines added and removed going from `before` to `after` (`null`: the file does not exist or its
 * bytes are not kept). Binary content counts 0 and 0.
 */
export function lineStats(before: Uint8Array | null, after: Uint8Array | null): { added: number; removed: number } {
  if ((before && isBinary(before)) || (after && isBinary(after))) return { added: 0, removed: 0 };
  const a = before ? Buffer.from(before).toString('utf8') : '';
  const b = after ? Buffer.from(after).toString('utf8') : '';
  if (a === b) return { added: 0, removed: 0 };
  if (a === '' || b === '') return { added: lineCount(b), removed: lineCount(a) };
  const ta = lineTokens(a);
  const tb = lineTokens(b);
  if (disjoint(ta, tb)) return { added: tb.length, removed: ta.length };
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
  const a = from ? Buffer.from(from).toString('utf8') : '';
  const b = to ? Buffer.from(to).toString('utf8') : '';
  if (a === b) return { diff: null, note: null };
  const oldName = from ? `a/${path}` : '/dev/null';
  const newName = to ? `b/${path}` : '/dev/null';
  if (a !== '' && b !== '') {
    const ta = lineTokens(a);
    const tb = lineTokens(b);
    if (disjoint(ta, tb)) return { diff: `--- ${oldName}\n+++ ${newName}\n@@ -1,${ta.length} +1,${tb.length} @@\n${hunk('-', ta)}${hunk('+', tb)}`, note: null };
  }
  const patch = createTwoFilesPatch(oldName, newName, a, b, undefined, undefined, {
    context: 3,
  });
  // Drop the "Index:"/"====" preamble some versions add; keep from the --- line on.
  const at = patch.indexOf('--- ');
  return { diff: at >= 0 ? patch.slice(at) : patch, note: null };
}

/** Lines of a unified diff hunk: `sign` and each line, and git's marker after a last line with no newline. */
function hunk(sign: string, lines: string[]): string {
  let out = '';
  for (const l of lines) out += l.endsWith('\n') ? `${sign}${l}` : `${sign}${l}\n\\ No newline at end of file\n`;
  return out;
}
