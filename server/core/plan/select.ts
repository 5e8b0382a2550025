import { TakebackError, checkId } from '../errors.js';
import type { Journal } from '../journal/journal.js';
import type { ChangeSet, Selector } from '../types.js';

/** Which change sets an undo, redo or preview is about (defined in types.ts). */
export type { Selector };

/** Why `--turn` and `--after-turn` leave a set of a turn's edits that no tool call claims (see {@link leftOut}). */
export const UNCLAIMED_REASON = 'left as they are: changed during the turn by no tool call';

/** True when `set` came from a tool call of the agent (a file tool, or a command run by one). */
const fromToolCall = (set: ChangeSet) => (set.source.kind === 'tool' || set.source.kind === 'command') && set.source.toolCallId !== undefined;

/**
 * The sets `--turn` and `--after-turn` leave as they are, with the reason, unless the selector
 * says `includeUnclaimed` (the first kind only): a turn's "changed during this turn" (what
 * changed while it was open that no tool call claimed: the person's edits, another program's)
 * when the turn's agent reported its tool calls (one of its sets came from a tool call); and
 * the person's saves (source `person`), which no turn's undo takes. `sets`: what the selector
 * covers, all sets of each turn among them. A set named by id is never left out.
 */
function leaveOut(sets: ChangeSet[], sel: Selector): Map<string, string> {
  const out = new Map<string, string>();
  if (sel.turn === undefined && sel.afterTurn === undefined) return out;
  const toolTurns = new Set(sets.filter(fromToolCall).map((s) => s.turn));
  for (const s of sets) {
    if (s.source.kind === 'person') out.set(s.id, `left as they are: saved in ${s.source.editor} by the person`);
    else if (s.source.kind === 'turn' && !sel.includeUnclaimed && toolTurns.has(s.turn)) out.set(s.id, UNCLAIMED_REASON);
  }
  return out;
}

/** A one-line description of a selector, for messages. */
export function describeSelector(s: Selector): string {
  if (s.ids?.length) return s.ids.length === 1 ? `change ${s.ids[0]}` : `changes ${s.ids.join(', ')}`;
  if (s.turn !== undefined) return `turn ${s.turn}`;
  if (s.afterTurn !== undefined) return `everything after turn ${s.afterTurn}`;
  return 'the last change';
}

/** Every set a `--turn` or `--after-turn` selector covers, oldest first, expired ones too. Throws `not-found` for an unknown turn. */
function coveredSets(journal: Journal, sel: Selector): ChangeSet[] {
  if (sel.turn !== undefined) return journal.sets.list({ turn: journal.turns.get(sel.turn).id });
  return journal.sets.afterTurn(journal.turns.get(sel.afterTurn!));
}

/**
 * The live sets a `--turn` or `--after-turn` selector covers and leaves as they are, oldest
 * first, with the reason (a plan lists them as skipped): a turn's edits that no tool call claims,
 * when its agent reported its tool calls (unless `includeUnclaimed`), and the person's saves.
 * Empty for any other selector. Throws as {@link selectSets}.
 */
export function leftOut(journal: Journal, sel: Selector): { id: string; reason: string }[] {
  if (sel.turn === undefined && sel.afterTurn === undefined) return [];
  const covered = coveredSets(journal, sel);
  const left = leaveOut(covered, sel);
  return covered.filter((s) => s.state !== 'expired' && left.has(s.id)).map((s) => ({ id: s.id, reason: left.get(s.id)! }));
}

/**
 * `sets` with their states as the disk has them (core/plan/in-step.ts's inStepWithDisk, with the
 * check of hunks in place that `list` uses). Reads, never writes.
 */
export type OnDisk = (sets: ChangeSet[]) => ChangeSet[];

/** How many changes newer than the newest one flagged in place `undo --last` asks the disk about. */
const LAST_ON_DISK_MAX = 32;

/**
 * The sets a selector names, oldest first. `--turn` and `--after-turn` leave out what
 * {@link leftOut} says. `--last` names the newest agent's change still applied (undo: never
 * takeback's own bookkeeping, what a forced step wrote over, nor the person's saves or own
 * `takeback run`; see Sets.newestMovable; with `onDisk`, a newer one flagged taken back that the
 * disk holds in place again comes first), or every set the most recent undo step took back
 * (redo). Ids are checked before anything is read. Throws
 * `usage` (no selector, or several kinds), `invalid-id`, `not-found`, or `expired` (a named set
 * has expired; sets expired inside a turn or range are left out).
 */
export function selectSets(journal: Journal, sel: Selector, direction: 'undo' | 'redo' = 'undo', onDisk?: OnDisk): ChangeSet[] {
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
  if (sel.turn !== undefined || sel.afterTurn !== undefined) {
    const covered = coveredSets(journal, sel);
    const left = leaveOut(covered, sel);
    return covered.filter((s) => s.state !== 'expired' && !left.has(s.id));
  }
  // --last: for undo the newest change still in place; for redo what the most recent undo step
  // took back (every set of it still undone: a whole turn, several ids), oldest first. With
  // paths, the newest such change, or step, that touches one of them (and of a step only its
  // sets that do). A change whose every file is a capture gap can never move: --last passes over
  // it rather than stick on it. A file partly undone (some hunks) can move either way.
  if (direction === 'undo') {
    const pick = journal.sets.newestMovable(false, sel.paths);
    // A newer change its flags say is taken back is the last one when the disk holds it again
    // (what `list` shows): --last undoes what the person sees in place, not an older change.
    if (onDisk) {
      const back = onDisk(journal.sets.undoneSince(pick ? Number(pick.id) : 0, LAST_ON_DISK_MAX, sel.paths)).find((s) => s.state === 'applied' || s.state === 'partial');
      if (back) return [journal.sets.get(back.id)];
    }
    if (!pick) throw new TakebackError('not-found', 'no change to undo');
    return [pick];
  }
  const last = lastUndo(journal, sel);
  if (!last) throw new TakebackError('not-found', 'no undone change to redo');
  return last.sets;
}

/** For `redo --last`: the most recent undo step that took back a set `sel` can move (its operation's id), with those sets; null when there is none. */
function lastUndo(journal: Journal, sel: Selector): { op: number; sets: ChangeSet[] } | null {
  const movable = (set: ChangeSet) => set.files.some((f) => !f.gap && (!sel.paths?.length || sel.paths.includes(f.path)) && (f.partial || f.undone));
  const steps = journal.sets.undoSteps();
  for (let i = steps.length - 1; i >= 0; i--) {
    const sets = steps[i]!.sets.filter(movable);
    if (sets.length) return { op: steps[i]!.seq, sets };
  }
  return null;
}

/**
 * The paths a step of `sel` is narrowed to: `sel.paths`, except for `redo --last` after an undo
 * that took back only some of its sets' undone files (one file, or some hunks of one, of a change
 * an earlier undo took other files of): then the paths that undo moved (within `sel.paths`), so
 * that the redo takes back that one undo and leaves the earlier ones. Undefined: every path.
 * Throws as {@link selectSets}.
 */
export function stepPaths(journal: Journal, sel: Selector, direction: 'undo' | 'redo'): string[] | undefined {
  if (direction !== 'redo' || !sel.last) return sel.paths;
  const last = lastUndo(journal, sel);
  const op = last && journal.oplog.get(last.op);
  if (!last || !op) return sel.paths;
  const moved = new Set<string>();
  for (const s of last.sets) for (const p of op.files.get(s.id) ?? []) if (!sel.paths?.length || sel.paths.includes(p)) moved.add(p);
  const undone = last.sets.flatMap((s) => s.files.filter((f) => !f.gap && (f.undone || f.partial) && (!sel.paths?.length || sel.paths.includes(f.path))).map((f) => f.path));
  if (moved.size === 0 || undone.every((p) => moved.has(p))) return sel.paths;
  return [...moved].sort();
}
