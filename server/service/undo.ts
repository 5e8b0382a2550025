import type * as W from '../../protocol/src/types.js';
import type { Engine } from '../core/engine.js';
import { applyUndo, type FileWriter } from '../core/plan/apply.js';
import { diskReader, makePlan, type CurrentReader } from '../core/plan/plan.js';
import { previewPlan, type BytesReader } from '../core/plan/preview.js';
import { selectSets, type Selector } from '../core/plan/select.js';
import { toApplyResult, toPreviewResult } from '../wire.js';

/** Previews an undo (or redo) of the selected sets: actions, diffs, conflicts and gaps. Writes nothing. */
export function previewStep(
  engine: Engine,
  sel: Selector,
  direction: 'undo' | 'redo',
  readers: { state?: CurrentReader; bytes?: BytesReader } = {},
): W.PreviewResult {
  const plan = makePlan(engine, selectSets(engine.journal, sel, direction), direction, readers.state ?? diskReader(engine), sel.paths);
  return toPreviewResult(plan, previewPlan(engine, plan, readers.bytes));
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
  opts: { force?: boolean; read?: CurrentReader; writer?: FileWriter } = {},
): W.ApplyResult {
  // Resolve the selector once outside the lock so that bad ids fail before anything else.
  selectSets(engine.journal, sel, direction);
  const r = applyUndo(engine, () => selectSets(engine.journal, sel, direction), direction, { ...opts, paths: sel.paths });
  return toApplyResult(r);
}
