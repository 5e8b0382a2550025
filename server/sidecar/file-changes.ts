import { inStepWithDisk, statReader } from '../core/plan/in-step.js';
import type { Selector } from '../core/plan/select.js';
import type { ChangeSet } from '../core/types.js';
import type { Session } from './session.js';

/** What the agent changed in one file, for code lenses and code actions. */
export interface FileChanges {
  path: string;
  /** "The agent's change to this file": every change of the newest turn that touched it and is still in place. Null when none is. */
  undo: { selector: Selector; added: number; removed: number; sets: string[] } | null;
  /** The newest change's turn, with the number of its changes still in place (by what the disk holds). */
  turn: { id: string; count: number } | null;
  /** The undone change to this file to redo (the one undone most recently). */
  redo: Selector | null;
}

/**
 * Reads the journal for what the agent did to `path` (the person's own saves are never the
 * agent's change), each change's state there as the disk has it (core/plan/in-step.ts): a change
 * the editor's own undo and a save gave back is in place again, one taken back by hand is undone.
 */
export function fileChanges(s: Session, path: string): FileChanges {
  const { journal } = s.ws;
  const only = new Set([path]);
  // A change partly undone here is among both lists: once is enough.
  const byId = new Map(
    [...journal.sets.touching(path, false), ...journal.sets.touching(path, true)].filter((set) => set.source.kind !== 'person').map((set) => [set.id, set]),
  );
  const onDisk = inStepWithDisk(
    s.ws,
    [...byId.values()].sort((a, b) => Number(a.id) - Number(b.id)),
    statReader(s.ws, only),
    only,
  );
  const here = (set: ChangeSet) => set.files.find((f) => f.path === path);
  const touching = onDisk.filter((set) => !here(set)?.undone);
  const newest = touching.at(-1) ?? null;
  let undo: FileChanges['undo'] = null;
  let turn: FileChanges['turn'] = null;
  if (newest) {
    const mine: ChangeSet[] = newest.turn ? touching.filter((set) => set.turn === newest.turn) : [newest];
    let added = 0;
    let removed = 0;
    for (const set of mine) {
      for (const f of set.files) {
        if (f.path !== path) continue;
        added += f.added;
        removed += f.removed;
      }
    }
    const selector: Selector = newest.turn ? { turn: newest.turn, paths: [path] } : { ids: [newest.id], paths: [path] };
    undo = { selector, added, removed, sets: mine.map((x) => x.id) };
    if (newest.turn) turn = { id: newest.turn, count: inPlace(s, journal.sets.list({ turn: newest.turn })) };
  }
  const undone = onDisk.some((set) => here(set)?.undone || here(set)?.partial);
  return { path, undo, turn, redo: undone ? { last: true, paths: [path] } : null };
}

/** How many of `sets` are in place, whole or in part, by what the disk holds at their files (core/plan/in-step.ts). */
function inPlace(s: Session, sets: ChangeSet[]): number {
  const paths = new Set<string>();
  for (const set of sets) if (set.state !== 'expired') for (const f of set.files) if (!f.gap) paths.add(f.path);
  return inStepWithDisk(s.ws, sets, statReader(s.ws, paths)).filter((set) => set.state === 'applied' || set.state === 'partial').length;
}
