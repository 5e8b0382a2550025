// The Takeback view: the journal's turns, newest first, each with its change sets and their files,
// as `changes/list` gives them. Items say what can be done to them through their context value
// (`undoable`, `redoable`), which the manifest's menus read to show Undo, Redo and Preview.
import * as vscode from 'vscode';
import type { ChangeSetSummary, FileSummary, ListResult, TurnSummary } from '../../../protocol/src/types';

/** Which way a step goes. */
export type Direction = 'undo' | 'redo';

/** A selector as `undo/preview` and `undo/apply` take it (see protocol/README.md). */
export interface StepSelector {
  ids?: string[];
  turn?: string;
  last?: boolean;
  afterTurn?: string;
  paths?: string[];
}

/** A row of the view. `loose` holds the change sets recorded outside any turn. */
export type Node =
  | { kind: 'turn'; turn: TurnSummary; sets: ChangeSetSummary[] }
  | { kind: 'loose'; sets: ChangeSetSummary[] }
  | { kind: 'set'; set: ChangeSetSummary }
  | { kind: 'file'; set: ChangeSetSummary; file: FileSummary };

/** The selectors of a row's Undo and Redo, and whether its Preview shows the redo (all of it is undone). */
export interface RowSelectors {
  undo: StepSelector;
  redo: StepSelector;
  preferRedo: boolean;
}

const isNode = (x: unknown): x is Node => typeof x === 'object' && x !== null && 'kind' in x;

/** `+3 −1`, the lines a change added and removed. */
const counts = (added: number, removed: number) => `+${added} −${removed}`;

function contextOf(sets: ChangeSetSummary[]): string {
  const undoable = sets.some((s) => s.state === 'applied' || s.state === 'partial');
  const redoable = sets.some((s) => s.state === 'undone' || s.state === 'partial');
  return [undoable && 'undoable', redoable && 'redoable'].filter(Boolean).join(' ');
}

/** The view's data: fetched with `list` on each refresh (after `changes/didChange` and each step). */
export class TurnsTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private roots: Node[] = [];
  private view: vscode.TreeView<Node> | undefined;
  /** The workspace root of the last list (absolute), once one arrived. */
  workspace: string | undefined;

  constructor(private readonly list: () => Promise<ListResult>) {}

  /** Gives the tree its view, where it says what capture cannot see. */
  attach(view: vscode.TreeView<Node>): void {
    this.view = view;
  }

  /** Lists the journal again and redraws the view. A failed list leaves the last rows. */
  async refresh(): Promise<void> {
    let r: ListResult;
    try {
      r = await this.list();
    } catch {
      return; // the sidecar is starting or stopping: the next change notification redraws
    }
    this.workspace = r.workspace;
    const live = r.sets.filter((s) => s.state !== 'expired');
    this.roots = r.turns.map((turn) => ({ kind: 'turn' as const, turn, sets: live.filter((s) => s.turn === turn.id) }));
    const loose = live.filter((s) => s.turn === null);
    if (loose.length > 0) this.roots.push({ kind: 'loose', sets: loose });
    if (this.view) {
      this.view.message = r.capture.commands ? undefined : `Commands are not captured here: ${r.capture.reason ?? 'over the scan limits'}.`;
    }
    this.changed.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.roots;
    if (node.kind === 'turn' || node.kind === 'loose') return node.sets.map((set) => ({ kind: 'set' as const, set }));
    if (node.kind === 'set') return node.set.files.map((file) => ({ kind: 'file' as const, set: node.set, file }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const C = vscode.TreeItemCollapsibleState;
    if (node.kind === 'turn') {
      const { turn, sets } = node;
      const item = new vscode.TreeItem(turn.label || turn.id, this.roots[0] === node ? C.Expanded : C.Collapsed);
      const undone = sets.filter((s) => s.state === 'undone').length;
      item.description = [turn.agent ?? '', `${sets.length} change${sets.length === 1 ? '' : 's'}`, undone > 0 ? `${undone} undone` : ''].filter(Boolean).join(' · ');
      item.tooltip = `${turn.id}: ${turn.label}\n${new Date(turn.start).toLocaleString()}${turn.end === null ? ' (in progress)' : ''}`;
      item.contextValue = `turn ${contextOf(sets)}`;
      item.id = `turn:${turn.id}`; // a stable id keeps the row's expansion across refreshes
      item.iconPath = new vscode.ThemeIcon('comment-discussion');
      return item;
    }
    if (node.kind === 'loose') {
      const item = new vscode.TreeItem('Outside any turn', C.Collapsed);
      item.contextValue = `loose ${contextOf(node.sets)}`;
      item.id = 'loose';
      return item;
    }
    if (node.kind === 'set') {
      const { set } = node;
      const item = new vscode.TreeItem(set.label, C.Collapsed);
      item.description = `${set.state === 'applied' ? '' : `${set.state} · `}${counts(set.added, set.removed)}`;
      item.tooltip = `change ${set.id}: ${set.label} (${set.state})`;
      item.contextValue = `set ${contextOf([set])}`;
      item.id = `set:${set.id}`;
      item.iconPath = new vscode.ThemeIcon(set.state === 'undone' ? 'discard' : 'edit');
      return item;
    }
    const { set, file } = node;
    const item = new vscode.TreeItem(file.path, C.None);
    const parts = [file.status, file.type === 'file' ? counts(file.added, file.removed) : file.type];
    if (file.undone) parts.push('undone');
    if (file.gap) parts.push(`capture gap: ${file.gap}`);
    item.description = parts.join(' · ');
    item.id = `file:${set.id}:${file.path}`;
    item.tooltip = file.gap ? `${file.path}: a capture gap (${file.gap}): an undo cannot bring it back` : `${file.path} (${file.status})`;
    if (this.workspace) item.resourceUri = vscode.Uri.file(`${this.workspace}/${file.path}`);
    const redoable = file.undone || set.state === 'undone';
    item.contextValue = `file ${!file.undoable ? '' : redoable ? 'redoable' : 'undoable'}`;
    if (file.gap) item.iconPath = new vscode.ThemeIcon('warning');
    if (!file.gap) item.command = { command: 'takeback.view.preview', title: 'Preview', arguments: [node] };
    return item;
  }

  /** The selectors of a row's steps, or undefined for something that is no row of this view. */
  selectorOf(item: unknown): RowSelectors | undefined {
    if (!isNode(item)) return undefined;
    if (item.kind === 'turn') {
      const allUndone = item.sets.length > 0 && item.sets.every((s) => s.state === 'undone');
      return { undo: { turn: item.turn.id }, redo: { turn: item.turn.id }, preferRedo: allUndone };
    }
    if (item.kind === 'loose') {
      const ids = item.sets.map((s) => s.id);
      return { undo: { ids }, redo: { ids }, preferRedo: item.sets.every((s) => s.state === 'undone') };
    }
    if (item.kind === 'set') return { undo: { ids: [item.set.id] }, redo: { ids: [item.set.id] }, preferRedo: item.set.state === 'undone' };
    const s = { ids: [item.set.id], paths: [item.file.path] };
    return { undo: s, redo: s, preferRedo: item.file.undone || item.set.state === 'undone' };
  }
}
