import * as v from 'valibot';
import { ResponseError } from 'vscode-languageserver/node';
import { Commands } from '../../protocol/src/commands.js';
import { ErrorCodes } from '../../protocol/src/errors.js';
import { Selector } from '../../protocol/src/selector.js';
import type * as W from '../../protocol/src/types.js';
import { describeSelector } from '../core/plan/select.js';
import { plural, takesBackHint } from '../service/text.js';
import { previewStep } from '../service/undo.js';
import { invalidParams, isJournalBusy, journalBusyError } from './errors.js';
import type { ExecuteCommandParams } from './lsp-params.js';
import { parseParams, workspaceSelector } from './params.js';
import type { Session } from './session.js';
import { editorReaders, runStep } from './undo-through-editor.js';

/*
 * workspace/executeCommand: the commands code lenses and code actions carry. Results go to the
 * user through window/showMessage; the response is the result object (or an error).
 */

/** Every command, for `executeCommandProvider.commands`. */
export const COMMAND_NAMES: string[] = Object.values(Commands);

/** A command's arguments: one selector. */
const OneSelector = v.object({ arguments: v.tuple([Selector]) });

/** Up to this many lines of diff go into a preview message. */
const PREVIEW_LINES = 60;

/**
 * The undo that takes a conflict's later changes back too, as `editor` (the client's name) runs
 * it: Helix through its shell command, then a reload of its buffers (it has no file watcher);
 * another editor, whose own commands name no ids, through the command line. Null when there is none.
 */
function undoHint(editor: string, c: { combined?: string[] }): string | null {
  if (!c.combined) return null;
  return editor === 'Helix' ? `${takesBackHint(':sh takeback undo', c.combined)} (then :reload-all)` : takesBackHint('takeback undo', c.combined);
}

/** A conflict in words: its detail, then the undo that takes the later changes back too. */
function conflictText(editor: string, c: { detail: string; combined?: string[] }): string {
  const hint = undoHint(editor, c);
  return hint ? `${c.detail} — ${hint}` : c.detail;
}

function previewMessage(r: W.PreviewResult, what: string, editor: string): string {
  if (r.sets.length === 0) return `takeback: nothing to ${r.direction} for ${what}${r.skipped.length ? ` (${r.skipped.map((x) => `#${x.id} ${x.reason}`).join(', ')})` : ''}`;
  const lines = [
    `takeback: ${r.direction} ${what} (${r.sets.map((x) => `#${x}`).join(' ')}) would change ${plural(r.files.length, 'file')}${r.conflicts ? `; ${plural(r.conflicts, 'conflict')}` : ''}`,
  ];
  for (const f of r.files) {
    lines.push(`${f.path}: ${f.action}${f.conflict ? ` — CONFLICT: ${conflictText(editor, f.conflict)}` : ''}${f.gap ? ` — ${f.gap.detail}` : ''}${f.note ? ` (${f.note})` : ''}`);
    if (f.diff) lines.push(...f.diff.trimEnd().split('\n'));
  }
  return lines.length > PREVIEW_LINES ? [...lines.slice(0, PREVIEW_LINES), `… (${lines.length - PREVIEW_LINES} more lines: takeback preview)`].join('\n') : lines.join('\n');
}

function applyMessage(r: W.ApplyResult, what: string, editor: string): { type: 'info' | 'warning' | 'error'; text: string } {
  const verb = r.direction === 'undo' ? 'undid' : 'redid';
  if (r.failed && r.failed.length > 0) {
    return { type: 'error', text: `takeback: ${r.direction} of ${what} did not land: ${r.failed.map((f) => `${f.path} (${f.reason})`).join('; ')}. Nothing was recorded.` };
  }
  if (!r.written) {
    if (r.conflicts.length > 0) {
      return {
        type: 'warning',
        text: `takeback: nothing ${r.direction === 'undo' ? 'undone' : 'redone'}: ${r.conflicts.map((c) => `${c.path} (${conflictText(editor, c)})`).join('; ')}. "Undo, replacing later changes" replaces them.`,
      };
    }
    // Files it could not take back are never "nothing to do": they are named.
    if (!r.complete) return { type: 'warning', text: `takeback: nothing ${r.direction === 'undo' ? 'undone' : 'redone'} for ${what}; not restored: ${r.gaps.map((g) => `${g.path} (${g.detail})`).join('; ')}` };
    return { type: 'info', text: `takeback: nothing to ${r.direction} for ${what}${r.skipped.length ? ` (${r.skipped.map((x) => `#${x.id} ${x.reason}`).join(', ')})` : ''}` };
  }
  const files = plural(r.applied.length, 'file');
  const forced = r.forced && r.conflicts.length > 0 ? ', replacing later changes' : '';
  const gaps = r.gaps.length > 0 ? `; not restored: ${r.gaps.map((g) => g.path).join(', ')}` : '';
  if (r.pending && r.pending.length > 0) {
    return { type: 'info', text: `takeback: ${verb} ${what} in the editor (${files}${forced}); save ${r.pending.join(', ')} to finish${gaps}` };
  }
  return { type: r.gaps.length > 0 ? 'warning' : 'info', text: `takeback: ${verb} ${what} (${files}${forced})${gaps}` };
}

/** Runs one command. Throws ResponseError for a bad command or arguments, and `Conflicts` when later changes stop an undo. */
export async function executeCommand(s: Session, params: v.InferOutput<typeof ExecuteCommandParams>): Promise<W.ApplyResult | W.PreviewResult> {
  const m = 'workspace/executeCommand';
  if (!COMMAND_NAMES.includes(params.command)) {
    throw new ResponseError(ErrorCodes.InvalidParams, `${m}: unknown command ${JSON.stringify(params.command)} (known: ${COMMAND_NAMES.join(', ')})`, { field: 'command' });
  }
  const args = params.arguments ?? [];
  if (args.length !== 1) throw invalidParams(m, `${params.command} takes one argument, a selector`, 'arguments');
  const sel = workspaceSelector(m, s.ws, parseParams(m, OneSelector, { arguments: args }).arguments[0]);
  const what = describeSelector(sel) + (sel.paths?.length ? ` in ${sel.paths.join(', ')}` : '');
  try {
    if (params.command === Commands.preview) {
      const r = previewStep(s.ws, sel, 'undo', editorReaders(s));
      s.client.showMessage(r.conflicts > 0 ? 'warning' : 'info', previewMessage(r, what, s.docs.editor));
      return r;
    }
    const direction = params.command === Commands.redo ? 'redo' : 'undo';
    const r = await runStep(s, { selector: sel, direction, force: params.command === Commands.undoForce, origin: 'command' });
    const msg = applyMessage(r, what, s.docs.editor);
    s.client.showMessage(msg.type, msg.text);
    if (!r.written && r.conflicts.length > 0) throw new ResponseError(ErrorCodes.Conflicts, msg.text, { conflicts: r.conflicts });
    return r;
  } catch (e) {
    // A lock another process holds: said with its holder, not as SQLite's "database is locked".
    const err = isJournalBusy(e) ? journalBusyError(s.ws.journal.dir) : e;
    if (err !== e) s.client.showMessage('error', (err as ResponseError<unknown>).message);
    else if (!(e instanceof ResponseError)) s.client.showMessage('error', `takeback: ${e instanceof Error ? e.message : String(e)}`);
    throw err;
  }
}
