// takeback in VS Code: a language client that starts `takeback serve` for the workspace, a tree of
// the turns and change sets the journal holds (Undo, Redo, Preview on each), and the flows that
// turn the sidecar's answers into VS Code's own UI: a diff editor for a preview, a modal for a
// conflict, saving what an undo left in the buffers. Planning, merging, the journal and the edits
// themselves are the sidecar's: undo and redo arrive as one `workspace/applyEdit`, which VS Code
// applies to its buffers, so its own Undo (Ctrl+Z) brings the agent's change back.
import * as vscode from 'vscode';
import { LanguageClient, RevealOutputChannelOn, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import type { ApplyResult, ListResult } from '../../../protocol/src/types';
import { PreviewDocuments, showPreview } from './preview';
import { TurnsTree, type Direction, type StepSelector } from './tree';

/**
 * Runs `flow`; an error of the sidecar (a set expired, nothing to redo, a write that failed) is
 * shown as a message rather than thrown at VS Code.
 */
async function reported<T>(flow: () => Promise<T>): Promise<T | undefined> {
  try {
    return await flow();
  } catch (e) {
    void vscode.window.showErrorMessage(`takeback: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
}

/** The button of the conflict modal that runs the step again with `force`. */
const REPLACE = { undo: 'Undo, replacing later changes', redo: 'Redo, replacing later changes' } as const;

/**
 * The one undo that takes the conflicts' later changes back too: the ids of every conflict's
 * `combined` (the selected changes and the later ones), ascending, or none.
 */
function combinedIds(conflicts: ApplyResult['conflicts']): string[] {
  const ids = new Set(conflicts.flatMap((c) => c.combined ?? []));
  return [...ids].sort((a, b) => Number(a) - Number(b));
}

/** The conflict modal's button for that undo: "Undo #1 and #2 together", "Undo #1, #2 and #5 together". */
function togetherLabel(ids: string[]): string {
  const named = ids.map((id) => `#${id}`);
  return `Undo ${named.slice(0, -1).join(', ')} and ${named.at(-1)} together`;
}

let client: LanguageClient | undefined;

/** Starts the sidecar for the first workspace folder and registers the view and its commands. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file') return; // the sidecar journals local folders only
  const [command, ...args] = vscode.workspace.getConfiguration('takeback').get<string[]>('command') ?? ['takeback', 'serve'];
  const serverOptions: ServerOptions = { command: command ?? 'takeback', args, options: { cwd: folder.uri.fsPath } };
  const previews = new PreviewDocuments();
  const tree = new TurnsTree(() => list());

  const clientOptions: LanguageClientOptions = {
    // Every local file: the sidecar plans against what the buffers show (unsaved text is a
    // conflict) and puts its code lenses on the files the agent changed.
    documentSelector: [{ scheme: 'file' }],
    outputChannelName: 'takeback',
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    middleware: {
      // The sidecar's lens and action commands run the extension's flows, so a click on a lens
      // gets the same modal, diff editor and saving as the view's buttons.
      executeCommand: (name, cmdArgs, next) => {
        const selector = cmdArgs[0] as StepSelector;
        switch (name) {
          case 'takeback.undo':
            return reported(() => step(selector, 'undo', false));
          case 'takeback.undoForce':
            return reported(() => step(selector, 'undo', true));
          case 'takeback.redo':
            return reported(() => step(selector, 'redo', false));
          case 'takeback.preview':
            return reported(() => preview(selector, 'undo'));
          default:
            return next(name, cmdArgs);
        }
      },
    },
  };
  const lc = new LanguageClient('takeback', 'takeback', serverOptions, clientOptions);
  client = lc;

  /** `changes/list` for every turn, newest first; the tree's source. */
  async function list(): Promise<ListResult> {
    return lc.sendRequest<ListResult>('changes/list', { all: true });
  }

  /** The workspace root the sidecar journals (its paths are relative to it). */
  async function root(): Promise<vscode.Uri> {
    return vscode.Uri.file(tree.workspace ?? (await list()).workspace);
  }

  async function preview(selector: StepSelector, direction: Direction): Promise<unknown> {
    const result = await lc.sendRequest('undo/preview', { selector, direction });
    await showPreview(previews, await root(), result as never);
    return result;
  }

  /**
   * Undo or redo `selector` through the sidecar. Conflicts without `force` write nothing: a modal
   * names the files and offers the undo that takes the later recorded changes back too, when
   * there is one, and the step again with `force`. Paths the edit left unsaved in the buffers
   * (`pending`) are saved, so the disk holds the step and the journal records it; but not a
   * document that held unsaved text before the step, which the sidecar merged the step into
   * (not a conflict it forced): that one is the person's to save, and its save finishes the step.
   */
  async function step(selector: StepSelector, direction: Direction, force: boolean): Promise<ApplyResult | undefined> {
    const dirtyBefore = new Set(vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => d.uri.toString()));
    const r = await lc.sendRequest<ApplyResult>('undo/apply', { selector, direction, force });
    if (!r.written && r.conflicts.length > 0) {
      const names = r.conflicts.map((c) => c.path).join(', ');
      const detail = r.conflicts.map((c) => `${c.path}: ${c.detail}`).join('\n');
      const together = direction === 'undo' ? combinedIds(r.conflicts) : [];
      const buttons: string[] = together.length > 0 ? [togetherLabel(together), REPLACE[direction]] : [REPLACE[direction]];
      const pick = await vscode.window.showWarningMessage(
        `takeback: later changes stand in the way of this ${direction} in ${names}. Nothing was written.`,
        { modal: true, detail },
        ...buttons,
      );
      if (together.length > 0 && pick === buttons[0]) return step({ ids: together, ...(selector.paths ? { paths: selector.paths } : {}) }, 'undo', false);
      return pick === REPLACE[direction] ? step(selector, direction, true) : r;
    }
    const base = await root();
    const forced = new Set(r.conflicts.map((c) => c.path));
    const kept: string[] = [];
    for (const rel of r.pending ?? []) {
      const uri = vscode.Uri.joinPath(base, rel);
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      if (dirtyBefore.has(uri.toString()) && !forced.has(rel)) kept.push(rel);
      else if (doc?.isDirty) await doc.save();
    }
    if (kept.length > 0) {
      void vscode.window.showInformationMessage(`takeback: ${direction === 'undo' ? 'put back' : 'made again'} in the buffer, keeping your unsaved changes: save ${kept.join(', ')} to finish`);
    }
    if (r.failed && r.failed.length > 0) {
      void vscode.window.showErrorMessage(`takeback: the ${direction} did not land in ${r.failed.map((f) => `${f.path} (${f.reason})`).join(', ')}; nothing was recorded.`);
    } else if (r.gaps.length > 0) {
      void vscode.window.showWarningMessage(`takeback: capture gaps, not brought back: ${r.gaps.map((g) => `${g.path} (${g.reason}: ${g.detail})`).join('; ')}`);
    } else if (r.written) {
      const verb = direction === 'undo' ? 'undone' : 'redone';
      vscode.window.setStatusBarMessage(`takeback: ${verb} ${r.applied.map((a) => a.path).join(', ')}`, 5000);
    } else if (r.notes.length > 0) {
      void vscode.window.showInformationMessage(`takeback: ${r.notes.join('; ')}`);
    }
    void tree.refresh();
    return r;
  }

  const view = vscode.window.createTreeView('takeback.turns', { treeDataProvider: tree, showCollapseAll: true });
  tree.attach(view);
  /** The item a view command is about: the one clicked, else the view's selection. */
  const target = (item: unknown) => tree.selectorOf(item ?? view.selection[0]);
  context.subscriptions.push(
    view,
    vscode.workspace.registerTextDocumentContentProvider(PreviewDocuments.scheme, previews),
    vscode.commands.registerCommand('takeback.view.refresh', () => tree.refresh()),
    vscode.commands.registerCommand('takeback.view.undo', (item?: unknown) => {
      const s = target(item);
      return s && reported(() => step(s.undo, 'undo', false));
    }),
    vscode.commands.registerCommand('takeback.view.redo', (item?: unknown) => {
      const s = target(item);
      return s && reported(() => step(s.redo, 'redo', false));
    }),
    vscode.commands.registerCommand('takeback.view.preview', (item?: unknown) => {
      const s = target(item);
      return s && reported(() => preview(s.preferRedo ? s.redo : s.undo, s.preferRedo ? 'redo' : 'undo'));
    }),
    lc,
  );
  await lc.start();
  context.subscriptions.push(lc.onNotification('changes/didChange', () => void tree.refresh()));
  await tree.refresh();
}

/** Stops the sidecar. */
export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
