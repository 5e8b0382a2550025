// Preview of an undo or redo in VS Code's diff editor: on the left a read-only `takeback:` document
// with the text the step would leave (for an undo: the bytes before the agent's change, with any
// later edits the sidecar would keep), on the right the file as it is now. The left side is the
// sidecar's unified diff (from the file now, buffers included, to after the step) applied to the
// text now; the sidecar computes the step, this only shows it.
import { applyPatch } from 'diff';
import * as vscode from 'vscode';
import type { PreviewFile, PreviewResult } from '../../../protocol/src/types';

/** The read-only `takeback:` documents of previews: their text by URI, kept until the window closes. */
export class PreviewDocuments implements vscode.TextDocumentContentProvider {
  static readonly scheme = 'takeback';
  private readonly texts = new Map<string, string>();
  private n = 0;

  /** A new document holding `text`, named after `rel` (a workspace-relative path) and `what`. */
  add(rel: string, what: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: PreviewDocuments.scheme, path: `/${rel}`, query: `${what}-${++this.n}` });
    this.texts.set(uri.toString(), text);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }
}

/** The text of `uri` now: its open document's (unsaved text included), else the disk's, else null (no such file). */
async function textNow(uri: vscode.Uri): Promise<string | null> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return open.getText();
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return null;
  }
}

/** What a file without a diff says instead: the sidecar's note, its conflict, its capture gap. */
function said(f: PreviewFile): string[] {
  const out: string[] = [];
  if (f.conflict) out.push(`${f.path}: conflict (${f.conflict.reason}): ${f.conflict.detail}`);
  if (f.gap) out.push(`${f.path}: capture gap (${f.gap.reason}): ${f.gap.detail}`);
  if (f.note) out.push(`${f.path}: ${f.note}`);
  return out;
}

/**
 * Opens the diff editor for `result` (one file: a diff editor; several: VS Code's multi-file diff
 * view) and says in a message what has no diff: conflicts, capture gaps, notes (binary files,
 * modes). `root` is the workspace the paths are relative to.
 */
export async function showPreview(docs: PreviewDocuments, root: vscode.Uri, result: PreviewResult): Promise<void> {
  const after = result.direction === 'undo' ? 'after undo' : 'after redo';
  const pairs: [vscode.Uri, vscode.Uri, vscode.Uri][] = [];
  const notes: string[] = [];
  for (const f of result.files) {
    notes.push(...said(f));
    if (f.diff === null) continue;
    const file = vscode.Uri.joinPath(root, f.path);
    const now = await textNow(file);
    const next = applyPatch(now ?? '', f.diff);
    // A diff that does not apply to the text read here (the file moved meanwhile) is shown as is.
    const left = docs.add(f.path, after.replace(' ', '-'), next === false ? f.diff : next);
    const right = now === null ? docs.add(f.path, 'now', '') : file;
    pairs.push([file, left, right]);
  }
  if (notes.length > 0) void vscode.window.showInformationMessage(`takeback preview: ${notes.join('; ')}`);
  if (pairs.length === 0) {
    if (notes.length === 0) void vscode.window.showInformationMessage(`takeback: nothing to ${result.direction}`);
    return;
  }
  if (pairs.length === 1) {
    const [file, left, right] = pairs[0]!;
    await vscode.commands.executeCommand('vscode.diff', left, right, `${vscode.workspace.asRelativePath(file)} (${after} ↔ now)`);
    return;
  }
  await vscode.commands.executeCommand('vscode.changes', `takeback: ${after} ↔ now`, pairs);
}
