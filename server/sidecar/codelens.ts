import type * as v from 'valibot';
import type { CodeLens } from 'vscode-languageserver/node';
import { Commands } from '../../protocol/src/commands.js';
import { fileChanges } from './file-changes.js';
import type { CodeLensParams } from './lsp-params.js';
import type { Session } from './session.js';

const TOP = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

/**
 * Code lenses at the top of a file the agent changed: "Agent changed this file +24 −7" (shows
 * the diff), "Undo", "Diff"; on a file whose change is undone: "Agent's change undone", "Redo".
 * One lens per action, so every client can run each.
 */
export function codeLenses(s: Session, params: v.InferOutput<typeof CodeLensParams>): CodeLens[] {
  const path = s.docs.pathOf(params.textDocument.uri);
  if (path === null) return [];
  const fc = fileChanges(s, path);
  if (fc.undo) {
    const arg = [fc.undo.selector];
    return [
      { range: TOP, command: { title: `Agent changed this file +${fc.undo.added} −${fc.undo.removed}`, command: Commands.preview, arguments: arg } },
      { range: TOP, command: { title: 'Undo', command: Commands.undo, arguments: arg } },
      { range: TOP, command: { title: 'Diff', command: Commands.preview, arguments: arg } },
    ];
  }
  if (fc.redo) {
    return [
      { range: TOP, command: { title: "Agent's change undone", command: Commands.preview, arguments: [fc.redo] } },
      { range: TOP, command: { title: 'Redo', command: Commands.redo, arguments: [fc.redo] } },
    ];
  }
  return [];
}
