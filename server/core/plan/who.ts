import type { Workspace } from '../open-workspace.js';
import { sameState, type ChangeSet, type FileState } from '../types.js';

/** At most this many later changes are named in one conflict (the rest are counted). */
const NAMED_MAX = 3;

/** A command as a conflict names it: its first line, cut at this many characters. */
const COMMAND_CHARS = 40;

/** What made a set, in a few words: the command, the tool, "changed during the turn by no tool call", "saved in Helix". */
function madeBy(set: ChangeSet): string {
  const s = set.source;
  switch (s.kind) {
    case 'command': {
      const line = s.command.split('\n')[0]!.trim();
      return line.length > COMMAND_CHARS ? `${line.slice(0, COMMAND_CHARS - 1)}…` : line || 'a command';
    }
    case 'tool':
      return s.tool;
    case 'turn':
      return 'changed during the turn by no tool call';
    case 'replaced':
      return 'replaced by a forced step';
    case 'person':
      return `saved in ${s.editor}`;
  }
}

/** "#5 (prettier --write ., turn 3)": a later change as a conflict names it. */
function describeSet(ws: Workspace, set: ChangeSet): string {
  const parts = [madeBy(set)];
  if (set.turn !== null) {
    try {
      parts.push(`turn ${ws.journal.turns.get(set.turn).seq}`);
    } catch {
      // a turn no longer in the journal: the set is named without it
    }
  }
  return `#${set.id} (${parts.join(', ')})`;
}

/**
 * Who changed a path since the selected changes, for a `changed-since` conflict: the changes
 * recorded after the newest of `selected` that touched `path` and are still in place (oldest
 * first), and whether the file now is other than what the newest of them left (then it was also
 * changed outside takeback). Reads the journal's per-path index only.
 */
export function laterChanges(ws: Workspace, path: string, selected: string[], current: FileState): { sets: ChangeSet[]; outside: boolean } {
  const newest = Math.max(...selected.map(Number));
  const chosen = new Set(selected);
  const ids = ws.journal.sets.inPlaceBetween(path, newest, Number.MAX_SAFE_INTEGER).filter((id) => !chosen.has(id));
  const sets = ids.map((id) => ws.journal.sets.get(id));
  const last = sets.at(-1)?.files.find((f) => f.path === path);
  return { sets, outside: !last || !sameState(last.after, current) };
}

/**
 * `conflict` (a `changed-since` one of `path`, undone or redone for the sets `selected`) with
 * who changed the file since in its detail, after its first words ("changed since", "deleted
 * since", "created since"): "by #5 (prettier --write ., turn 3)", "outside takeback", or both.
 * `sets` lists the later changes still in place, and for an undo `combined` the ids of the one
 * undo that takes them back too (both absent when there are none): every set of the step
 * (`step`, default `selected`: an undo of a whole turn whose one file conflicts still takes the
 * turn's other changes) and the later ones. The command is the client's to word, so the detail
 * does not say it.
 */
export function withWho<C extends { detail: string; sets?: string[]; combined?: string[] }>(
  ws: Workspace,
  conflict: C,
  path: string,
  selected: string[],
  current: FileState,
  direction: 'undo' | 'redo',
  step: string[] = selected,
): C {
  const { sets, outside } = laterChanges(ws, path, selected, current);
  const colon = conflict.detail.indexOf(':');
  const [head, rest] = colon < 0 ? [conflict.detail, ''] : [conflict.detail.slice(0, colon), conflict.detail.slice(colon)];
  const named = sets.slice(0, NAMED_MAX).map((s) => describeSet(ws, s));
  if (sets.length > NAMED_MAX) named.push(`${sets.length - NAMED_MAX} more`);
  const who = [sets.length > 0 ? `by ${named.join('; ')}` : '', outside ? 'outside takeback' : ''].filter(Boolean).join(' and ');
  const detail = `${head} ${who}${rest}`;
  if (sets.length === 0) return { ...conflict, detail };
  const later = sets.map((s) => s.id);
  if (direction === 'redo') return { ...conflict, detail, sets: later };
  const combined = [...new Set([...step, ...selected, ...later])].sort((a, b) => Number(a) - Number(b));
  return { ...conflict, detail, sets: later, combined };
}
