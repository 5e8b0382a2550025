import type { Engine } from '../core/engine.js';
import { prepareStep, runStep, type PreparedStep } from '../core/plan/apply.js';
import { diskReader, makePlan, type CurrentReader, type Plan } from '../core/plan/plan.js';
import { diskReaders, previewPlan, type BytesReader } from '../core/plan/preview.js';
import { selectSets, type Selector } from '../core/plan/select.js';
import type { FileState } from '../core/types.js';
import { toApplyResult, toPreviewResult, type WireApplyResult, type PreviewResult } from '../wire.js';

/** Reads that see an editor: the current state and bytes of a path, and whether it holds unsaved text. */
export interface EditorReaders {
  state?: CurrentReader;
  bytes?: BytesReader;
  /** True when an editor holds unsaved text for `path` (`target`: what the step would leave there). */
  unsaved?: (path: string, target: FileState) => boolean;
}

/**
 * Marks every path of `plan` that the step would change and that an editor holds unsaved text
 * for as an `unsaved-in-editor` conflict (the user's later work, like a later change on disk).
 */
export function markUnsaved(plan: Plan, unsaved: EditorReaders['unsaved']): void {
  if (!unsaved) return;
  for (const f of plan.files) {
    if (f.gap || f.action === 'none' || !unsaved(f.path, f.target)) continue;
    f.conflict = { reason: 'unsaved-in-editor', detail: 'unsaved changes in the editor' };
  }
}

/** Previews an undo (or redo) of the selected sets: actions, diffs, conflicts and gaps. Writes nothing. */
export function previewStep(engine: Engine, sel: Selector, direction: 'undo' | 'redo', readers: EditorReaders = {}): PreviewResult {
  // From the disk alone, the plan's read of each file also gives its diff the bytes (one read, one hash).
  const disk = !readers.state && !readers.bytes ? diskReaders(engine) : null;
  const plan = makePlan(engine, selectSets(engine.journal, sel, direction), direction, readers.state ?? disk?.state ?? diskReader(engine), sel.paths, disk?.merge);
  markUnsaved(plan, readers.unsaved);
  return toPreviewResult(plan, previewPlan(engine, plan, readers.bytes ?? disk?.bytes));
}

/** The plan of a step without diffs (cheap: for code actions that only need to know about conflicts). */
export function planStep(engine: Engine, sel: Selector, direction: 'undo' | 'redo', readers: EditorReaders = {}): Plan {
  const plan = makePlan(engine, selectSets(engine.journal, sel, direction), direction, readers.state ?? diskReader(engine), sel.paths);
  markUnsaved(plan, readers.unsaved);
  return plan;
}

/**
 * Undoes (or redoes) the selected sets as one transaction. With conflicts and no `force`,
 * nothing is written and `conflicts` names them. Throws `usage`, `invalid-id`, `not-found`,
 * `expired`, or `capture-gap` (a kept copy is missing or damaged: nothing written).
 */
export function applyStep(
  engine: Engine,
  sel: Selector,
  direction: 'undo' | 'redo',
  opts: { force?: boolean; read?: CurrentReader; unsaved?: EditorReaders['unsaved'] } = {},
): WireApplyResult {
  // Resolve the selector once outside the lock so that bad ids fail before anything else.
  selectSets(engine.journal, sel, direction);
  const { unsaved, ...rest } = opts;
  const r = runStep(engine, () => selectSets(engine.journal, sel, direction), direction, {
    ...rest,
    paths: sel.paths,
    ...(unsaved ? { annotate: (plan: Plan) => markUnsaved(plan, unsaved) } : {}),
  });
  return toApplyResult(r);
}

/**
 * The first phase of a step whose writes go partly through an editor: plans it under the lock
 * against what the editor shows (`readers`), with unsaved editor text as conflicts. The caller
 * writes with `writeStep` and records with `recordStep` (core/plan/apply.ts). Throws as
 * {@link applyStep}.
 */
export function prepareEditorStep(engine: Engine, sel: Selector, direction: 'undo' | 'redo', opts: { force?: boolean } & EditorReaders = {}): PreparedStep {
  selectSets(engine.journal, sel, direction);
  return prepareStep(engine, () => selectSets(engine.journal, sel, direction), direction, {
    force: opts.force,
    read: opts.state,
    paths: sel.paths,
    annotate: (plan) => markUnsaved(plan, opts.unsaved),
  });
}
