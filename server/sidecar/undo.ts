import type * as v from 'valibot';
import type { UndoApplyParams, UndoPreviewParams } from '../../protocol/src/methods.js';
import type * as W from '../../protocol/src/types.js';
import { previewStep } from '../service/undo.js';
import { workspaceSelector } from './params.js';
import type { Session } from './session.js';
import { editorReaders, runStep } from './undo-through-editor.js';

/*
 * `undo/preview` and `undo/apply`. What is "there now" includes the client's open documents:
 * unsaved text counts, and an undo goes through the editor when it can apply edits.
 */

/** `undo/preview`: what an undo (or redo) would do, writing nothing. */
export function preview(s: Session, p: v.InferOutput<typeof UndoPreviewParams>): W.PreviewResult {
  const sel = workspaceSelector('undo/preview', s.ws, p.selector);
  return previewStep(s.ws, sel, p.direction ?? 'undo', editorReaders(s));
}

/** `undo/apply`: undo (or redo) the selected sets as one step. */
export function apply(s: Session, p: v.InferOutput<typeof UndoApplyParams>): Promise<W.ApplyResult> {
  const sel = workspaceSelector('undo/apply', s.ws, p.selector);
  return runStep(s, { selector: sel, direction: p.direction ?? 'undo', force: p.force ?? false, origin: 'request' });
}
