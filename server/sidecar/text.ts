import { diffLines } from 'diff';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { TextEdit } from 'vscode-languageserver/node';
import { isBinary } from '../core/diffs.js';

/*
 * Text as editors hold it. An editor's document is a string; the file is bytes. Some editors
 * keep a byte-order mark and CRLF line ends out of the document's text and put them back on
 * save (Neovim's 'bomb' and 'fileformat', IntelliJ's line separators), some keep them in it.
 * A document's "profile" says which, learned when it is opened by comparing its text with the
 * disk. A file goes through an editor only when its bytes survive the trip: bytes → the text
 * the editor will hold → the bytes it will save.
 */

const BOM = '\uFEFF';
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of UTF-8 `bytes` (a byte-order mark kept as U+FEFF), or null when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** How an editor's text differs from the file's: the mark and CRLF ends dropped from the text, put back on save. */
export interface TextProfile {
  stripsBom: boolean;
  normalizesCrlf: boolean;
}

export const IDENTITY: TextProfile = Object.freeze({ stripsBom: false, normalizesCrlf: false });

/** The text an editor with `profile` holds for file text `text`. */
export function toClientText(text: string, profile: TextProfile): string {
  let t = text;
  if (profile.stripsBom && t.startsWith(BOM)) t = t.slice(1);
  if (profile.normalizesCrlf) t = t.replace(/\r\n/g, '\n');
  return t;
}

/** The file text an editor with `profile` saves for its text `text` (given the file has a mark: `bom`). */
export function fromClientText(text: string, profile: TextProfile, bom: boolean): string {
  let t = text;
  if (profile.normalizesCrlf) t = t.replace(/\r?\n/g, '\r\n');
  if (profile.stripsBom && bom && !t.startsWith(BOM)) t = BOM + t;
  return t;
}

/** The profile under which `clientText` is the editor's view of `fileText`, or null when it is not (unsaved changes). */
export function learnProfile(clientText: string, fileText: string): TextProfile | null {
  for (const p of [IDENTITY, { stripsBom: true, normalizesCrlf: false }, { stripsBom: false, normalizesCrlf: true }, { stripsBom: true, normalizesCrlf: true }]) {
    if (toClientText(fileText, p) === clientText) return p;
  }
  return null;
}

/** A best guess of a document's profile when its text does not match the disk (it was opened with unsaved changes). */
export function guessProfile(clientText: string, fileText: string): TextProfile {
  return {
    stripsBom: fileText.startsWith(BOM) && !clientText.startsWith(BOM),
    normalizesCrlf: fileText.includes('\r\n') && !clientText.includes('\r'),
  };
}

/** Line ends of a text: `lf` (or none), `crlf`, `mixed`, or `lone-cr` (a CR alone: editors disagree on what a line is). */
export function eolOf(text: string): 'lf' | 'crlf' | 'mixed' | 'lone-cr' {
  let crlf = 0;
  let lf = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13) {
      if (text.charCodeAt(i + 1) !== 10) return 'lone-cr';
      crlf++;
      i++;
    } else if (c === 10) lf++;
  }
  if (crlf > 0 && lf > 0) return 'mixed';
  return crlf > 0 ? 'crlf' : 'lf';
}

export function hasBom(text: string): boolean {
  return text.startsWith(BOM);
}

/**
 * The text of `bytes` when an editor can hold it: valid UTF-8, no NUL byte, one kind of line
 * end, no lone CR. Null otherwise (the server writes such files itself).
 */
export function editableText(bytes: Uint8Array): string | null {
  if (isBinary(bytes)) return null;
  const text = decodeUtf8(bytes);
  if (text === null) return null;
  const eol = eolOf(text);
  if (eol === 'mixed' || eol === 'lone-cr') return null;
  return text;
}

/** Past this many characters of change a line diff gives up and the whole text is replaced. */
const MAX_EDIT_LENGTH = 20_000;

/**
 * The fewest whole-line edits (from a line diff) that turn `from` into `to`, as LSP text edits
 * (UTF-16 positions) against `from`. Adjacent removed and added lines become one edit. Sorted
 * by position, none overlapping, so a client may apply them in one step.
 */
export function lineEdits(from: string, to: string): TextEdit[] {
  if (from === to) return [];
  const doc = TextDocument.create('untitled:x', 'plaintext', 0, from);
  const whole = (): TextEdit[] => [{ range: { start: { line: 0, character: 0 }, end: doc.positionAt(from.length) }, newText: to }];
  const parts = diffLines(from, to, { maxEditLength: MAX_EDIT_LENGTH });
  if (!parts) return whole();
  const edits: TextEdit[] = [];
  let off = 0;
  let run: { start: number; end: number; text: string } | null = null;
  const flush = () => {
    if (run) edits.push({ range: { start: doc.positionAt(run.start), end: doc.positionAt(run.end) }, newText: run.text });
    run = null;
  };
  for (const p of parts) {
    if (p.added) {
      run ??= { start: off, end: off, text: '' };
      run.text += p.value;
    } else if (p.removed) {
      run ??= { start: off, end: off, text: '' };
      run.end += p.value.length;
      off += p.value.length;
    } else {
      flush();
      off += p.value.length;
    }
  }
  flush();
  // The diff's pieces must add up to `from`; if they do not, replace the whole text.
  return off === from.length ? edits : whole();
}

/** `text` with `edits` (non-overlapping, against `text`) applied. */
export function applyEdits(text: string, edits: TextEdit[]): string {
  const doc = TextDocument.create('untitled:x', 'plaintext', 0, text);
  return TextDocument.applyEdits(doc, edits);
}
