import type * as v from 'valibot';
import type { CodeAction, Command } from 'vscode-languageserver/node';
import { Commands } from '../../protocol/src/commands.js';
import { plural } from '../service/text.js';
import { planStep } from '../service/undo.js';
import { fileChanges } from './file-changes.js';
import type { CodeActionParams } from './lsp-params.js';
import type { Session } from './session.js';
import { editorReaders } from './undo-through-editor.js';

/** The kind of takeback's code actions (clients that ask for `source` actions get them too). */
export const ACTION_KIND = 'source.takeback';

/**
 * The lines (1-based) an LSP range covers: a range that ends at the start of a line (a selection
 * of whole lines) does not take that line.
 */
function rangeLines(r: { start: { line: number; character: number }; end: { line: number; character: number } }): { start: number; end: number } {
  const end = r.end.line > r.start.line && r.end.character === 0 ? r.end.line - 1 : r.end.line;
  return { start: r.start.line + 1, end: Math.max(end, r.start.line) + 1 };
}

/**
 * Code actions on a file the agent changed: "Undo the agent's change here" (the hunks of the
 * agent's change that the cursor or selection touches, when there are any), "Undo the agent's
 * change to this file", "Undo all N changes from this turn", "Undo, replacing later changes" (when later changes stand in the way:
 * Helix asks no questions, so forcing is an action of its own), "Redo". Each runs a command.
 */
export function codeActions(s: Session, params: v.InferOutput<typeof CodeActionParams>, literals: boolean): (CodeAction | Command)[] {
  const only = params.context.only;
  if (only && only.length > 0 && !only.some((k) => ACTION_KIND === k || ACTION_KIND.startsWith(`${k}.`))) return [];
  const path = s.docs.pathOf(params.textDocument.uri);
  if (path === null) return [];
  const fc = fileChanges(s, path);
  const out: Command[] = [];
  if (fc.undo) {
    const here = { ...fc.undo.selector, lines: rangeLines(params.range) };
    const readers = editorReaders(s);
    let touched = false;
    try {
      touched = planStep(s.ws, here, 'undo', readers).files.some((f) => f.hunks?.some((h) => h.taken));
    } catch {
      // No hunk of the agent's at the cursor (or the file has none): no action for it.
      touched = false;
    }
    if (touched) out.push({ title: "Undo the agent's change here", command: Commands.undo, arguments: [here] });
    out.push({ title: "Undo the agent's change to this file", command: Commands.undo, arguments: [fc.undo.selector] });
    if (fc.turn) out.push({ title: `Undo all ${plural(fc.turn.count, 'change')} from this turn`, command: Commands.undo, arguments: [{ turn: fc.turn.id }] });
    let conflicted = false;
    try {
      conflicted = planStep(s.ws, fc.undo.selector, 'undo', readers).files.some((f) => f.conflict);
    } catch {
      conflicted = false;
    }
    if (conflicted) out.push({ title: 'Undo, replacing later changes', command: Commands.undoForce, arguments: [fc.undo.selector] });
  }
  if (fc.redo) out.push({ title: 'Redo', command: Commands.redo, arguments: [fc.redo] });
  if (!literals) return out;
  return out.map((command) => ({ title: command.title, kind: ACTION_KIND, command }));
}
