import { TakebackError, checkId } from '../errors.js';
import type { Journal } from '../journal/journal.js';
import type { ChangeSet, Selector } from '../types.js';

/** Which change sets an undo, redo or preview is about (defined in types.ts). */
export type { Selector };

/** A one-line description of a selector, for messages. */
export function describeSelector(s: Selector): string {
  if (s.ids?.length) return s.ids.length === 1 ? `change ${s.ids[0]}` : `changes ${s.ids.join(', ')}`;
  if (s.turn !== undefined) return `turn ${s.turn}`;
  if (s.afterTurn !== undefined) return `everything after turn ${s.afterTurn}`;
  return 'the last change';
}

/**
 * The sets a selector names, oldest first. `--last` names the newest set still applied (undo),
 * never takeback's own bookkeeping (what a forced step wrote over), or every set the most recent
 * undo step took back (redo). Ids are checked before anything is read. Throws
 * `usage` (no selector, or several kinds), `invalid-id`, `not-found`, or `expired` (a named set
 * has expired; sets expired inside a turn or range are left out).
 */
export function selectSets(journal: Journal, sel: Selector, direction: 'undo' | 'redo' = 'undo'): ChangeSet[] {
  const kinds = [sel.ids?.length ? 1 : 0, sel.turn !== undefined ? 1 : 0, sel.last ? 1 : 0, sel.afterTurn !== undefined ? 1 : 0];
  const n = kinds.reduce((a, b) => a + b, 0);
  if (n !== 1) {
    throw new TakebackError('usage', n === 0 ? 'say which changes: ID..., --turn T, --last or --after-turn T' : 'give one kind of selector only');
  }
  if (sel.ids?.length) {
    for (const id of sel.ids) checkId(id, 'change set id');
    const uniq = [...new Set(sel.ids)];
    return uniq.map((id) => journal.sets.get(id)).sort((a, b) => Number(a.id) - Number(b.id));
  }
  if (sel.turn !== undefined) {
    const t = journal.turns.get(sel.turn);
    return journal.sets.list({ turn: t.id }).filter((s) => s.state !== 'expired');
  }
  if (sel.afterTurn !== undefined) {
    const t = journal.turns.get(sel.afterTurn);
    return journal.sets.afterTurn(t).filter((s) => s.state !== 'expired');
  }
  // --last: for undo the newest change still in place; for redo what the most recent undo step
  // took back (every set of it still undone: a whole turn, several ids), oldest first. With
  // paths, the newest such change, or step, that touches one of them (and of a step only its
  // sets that do). A change whose every file is a capture gap can never move: --last passes over
  // it rather than stick on it.
  const movable = (set: ChangeSet) =>
    set.files.some(
      (f) => !f.gap && (!sel.paths?.length || sel.paths.includes(f.path)) && (direction === 'undo' ? !f.undone : f.undone),
    );
  if (direction === 'undo') {
    const pick = journal.sets.newestMovable(false, sel.paths);
    if (!pick) throw new TakebackError('not-found', 'no change to undo');
    return [pick];
  }
  const steps = journal.sets.undoSteps();
  for (let i = steps.length - 1; i >= 0; i--) {
    const sets = steps[i]!.sets.filter(movable);
    if (sets.length) return sets;
  }
  throw new TakebackError('not-found', 'no undone change to redo');
}
