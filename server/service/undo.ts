import type { Workspace } from '../core/open-workspace.js';
import { prepareStep, runStep, type PreparedStep } from '../core/plan/apply.js';
import { diskReader, makePlan, type CurrentReader, type Plan } from '../core/plan/plan.js';
import { diskReaders, previewPlan, type BytesReader } from '../core/plan/preview.js';
import { leftOut, selectSets, stepPaths, type Selector } from '../core/plan/select.js';
import { sha256 } from '../core/store/blobs.js';
import type { FileState } from '../core/types.js';
import type { CurrentBytes } from '../core/plan/plan.js';
import { asOnDisk } from './history.js';
import { hunkInPlace } from './in-place.js';
import { toApplyResult, toPreviewResult, type WireApplyResult, type PreviewResult } from '../wire.js';

/** Reads that see an editor: the current state and bytes of a path, and whether it holds unsaved text. */
export interface EditorReaders {
  state?: CurrentReader;
  bytes?: BytesReader;
  /** True when an editor holds unsaved text for `path` (`target`: what the step would leave there). */
  unsaved?: (path: string, target: FileState) => boolean;
  /** The editor's name for people (`Neovim`, `Helix`), said in an `unsaved-in-editor` conflict. */
  editor?: string;
  /**
   * True when the editor can take `bytes` (a merge over its unsaved text for `path`, whose state
   * is `target`) into its buffer as text edits, byte for byte. Without it, or when false, unsaved
   * text is a conflict whatever its lines.
   */
  merges?: (path: string, bytes: Buffer, target: FileState) => boolean;
}

/**
 * The bytes an editor's readers give for a path, for the hunks of a plan narrowed to files (the
 * lines an editor names are its text's): taken only when
 * they are what `state` (what the plan's reader saw) says; null without a bytes reader (the plan
 * then reads the disk).
 */
function editorBytes(readers: EditorReaders): CurrentBytes | undefined {
  const bytes = readers.bytes;
  if (!bytes) return undefined;
  return (path, abs, state) => {
    if (!state.exists || state.type !== 'file' || !state.sha256) return null;
    const b = bytes(path, abs);
    // A secret's text is not the editor's to hand over: the plan reads the disk for it.
    if (b === null || b === 'secret') return null;
    return b.length === state.size && sha256(b) === state.sha256 ? b : null;
  };
}

/**
 * Marks every path of `plan` that the step would change and that an editor holds unsaved text
 * for as an `unsaved-in-editor` conflict (the user's later work, like a later change on disk),
 * "unsaved in Neovim" (`editor`'s name), with the lines of both sides when the merge over that
 * text found them overlapping ("unsaved in Neovim: line 3 changed by the agent and line 3
 * since"). A path the plan merged over the unsaved text is left merged when the editor takes the
 * merged text into its buffer (`merges`): the person's unsaved lines are kept as any later edit.
 */
export function markUnsaved(plan: Plan, unsaved: EditorReaders['unsaved'], editor = 'the editor', merges?: EditorReaders['merges']): void {
  if (!unsaved) return;
  for (const f of plan.files) {
    if (f.gap || f.action === 'none' || !unsaved(f.path, f.target)) continue;
    if (f.merged && !f.conflict && merges?.(f.path, f.merged, f.target)) continue;
    // The merge's own words for where the sides overlap, when it found them.
    const lines = f.conflict?.reason === 'changed-since' && f.overlap ? `: ${f.overlap}` : '';
    f.conflict = { reason: 'unsaved-in-editor', detail: `unsaved in ${editor}${lines}` };
  }
}

/**
 * The sets `sel` names (core/plan/select.ts's selectSets), `--last` judged by the disk as `list`
 * shows it: a change an editor's own undo of an undo gave back, saved, is the last one in place.
 */
function select(ws: Workspace, sel: Selector, direction: 'undo' | 'redo'): ReturnType<typeof selectSets> {
  return selectSets(ws.journal, sel, direction, (sets) => asOnDisk(ws, sets, hunkInPlace(ws)));
}

/**
 * Names in `plan.skipped` the sets the selector covers and leaves as they are (a turn's edits no
 * tool call claimed, the person's saves: `leftOut`), so that a preview and a step say so.
 */
function nameLeftOut(ws: Workspace, plan: Plan, sel: Selector): void {
  plan.skipped.push(...leftOut(ws.journal, sel));
}

/** Previews an undo (or redo) of the selected sets: actions, diffs, conflicts and gaps. Writes nothing. */
export function previewStep(ws: Workspace, sel: Selector, direction: 'undo' | 'redo', readers: EditorReaders = {}): PreviewResult {
  // From the disk alone, the plan's read of each file also gives its diff the bytes (one read, one hash).
  const disk = !readers.state && !readers.bytes ? diskReaders(ws) : null;
  const plan = makePlan(ws, select(ws, sel, direction), direction, readers.state ?? disk?.state ?? diskReader(ws), stepPaths(ws.journal, sel, direction), disk?.merge ?? editorBytes(readers), {
    lines: sel.lines,
    bytes: editorBytes(readers),
    inPlace: hunkInPlace(ws),
    ...(readers.state ? { disk: diskReader(ws) } : {}),
  });
  markUnsaved(plan, readers.unsaved, readers.editor, readers.merges);
  nameLeftOut(ws, plan, sel);
  return toPreviewResult(plan, previewPlan(ws, plan, readers.bytes ?? disk?.bytes));
}

/** The plan of a step without diffs (cheap: for code actions that only need to know about conflicts). */
export function planStep(ws: Workspace, sel: Selector, direction: 'undo' | 'redo', readers: EditorReaders = {}): Plan {
  const plan = makePlan(ws, select(ws, sel, direction), direction, readers.state ?? diskReader(ws), stepPaths(ws.journal, sel, direction), editorBytes(readers), {
    lines: sel.lines,
    bytes: editorBytes(readers),
    inPlace: hunkInPlace(ws),
    ...(readers.state ? { disk: diskReader(ws) } : {}),
  });
  markUnsaved(plan, readers.unsaved, readers.editor, readers.merges);
  nameLeftOut(ws, plan, sel);
  return plan;
}

/**
 * Undoes (or redoes) the selected sets as one transaction. With conflicts and no `force`,
 * nothing is written and `conflicts` names them. Throws `usage`, `invalid-id`, `not-found`,
 * `expired`, or `capture-gap` (a kept copy is missing or damaged: nothing written).
 */
export function applyStep(
  ws: Workspace,
  sel: Selector,
  direction: 'undo' | 'redo',
  opts: { force?: boolean; read?: CurrentReader; unsaved?: EditorReaders['unsaved']; editor?: string } = {},
): WireApplyResult {
  // Resolve the selector once outside the lock so that bad ids fail before anything else.
  select(ws, sel, direction);
  const { unsaved, editor, ...rest } = opts;
  const r = runStep(ws, () => select(ws, sel, direction), direction, {
    ...rest,
    paths: stepPaths(ws.journal, sel, direction),
    narrowing: { lines: sel.lines, inPlace: hunkInPlace(ws) },
    annotate: (plan: Plan) => {
      markUnsaved(plan, unsaved, editor);
      nameLeftOut(ws, plan, sel);
    },
  });
  return toApplyResult(r);
}

/**
 * The first phase of a step whose writes go partly through an editor: plans it under the lock
 * against what the editor shows (`readers`), with unsaved editor text as conflicts. The caller
 * writes with `writeStep` and records with `recordStep` (core/plan/apply.ts). Throws as
 * {@link applyStep}.
 */
export function prepareEditorStep(ws: Workspace, sel: Selector, direction: 'undo' | 'redo', opts: { force?: boolean } & EditorReaders = {}): PreparedStep {
  select(ws, sel, direction);
  return prepareStep(ws, () => select(ws, sel, direction), direction, {
    force: opts.force,
    read: opts.state,
    paths: stepPaths(ws.journal, sel, direction),
    narrowing: { lines: sel.lines, bytes: editorBytes(opts), inPlace: hunkInPlace(ws) },
    annotate: (plan) => {
      markUnsaved(plan, opts.unsaved, opts.editor, opts.merges);
      nameLeftOut(ws, plan, sel);
    },
  });
}
