import { baselineProgress } from '../core/capture/baseline.js';
import type { Workspace } from '../core/open-workspace.js';
import { hunksMayBeInPlace, inStepWithDisk, statReader, type HunkInPlace } from '../core/plan/in-step.js';
import type { ChangeSet } from '../core/types.js';
import { toSetDetail, toSetSummary, toTurnSummary, type CaptureStatus, type ChangeSetDetail, type ListResult } from '../wire.js';

/*
 * The journal's history as a person reads it: the change sets and turns of a workspace (`list`),
 * one change set in full (`show`), and whether commands are captured there.
 */

/** How many turns `list` shows without `all`. */
export const DEFAULT_LIST_TURNS = 20;

/** Whether commands are captured here (from the last scan), and how far a baseline made in the background is. */
export function captureStatus(ws: Workspace): CaptureStatus {
  const meta = ws.journal.snapshot.meta();
  if (meta && meta.status === 'too-large') {
    return { commands: false, reason: `the workspace is ${meta.reason ?? 'over the scan limits'}: file tools only`, baseline: null };
  }
  return { commands: true, reason: null, baseline: baselineProgress(ws) };
}

/**
 * The change sets of the workspace, newest first, with their turns. Without `all`, the sets of
 * the newest {@link DEFAULT_LIST_TURNS} turns (and any outside turns since) and no expired
 * tombstones; `turn` narrows to one turn, `agent` to one agent's turns and sets (`claude-code`,
 * `codex`, `gemini`, `cli`). Each file's state is the disk's ({@link asOnDisk}: a stat per file,
 * read only when its stat moved); no diff is made but by `inPlace` (service/in-place.ts: a file
 * written over since keeps a change applied while a hunk of it is there, and gives one undone
 * back as applied when all its hunks are there again; without it, such a file is `overwritten`,
 * see {@link hunkProbe}), and `list-hunks.ts` adds a file's hunks. Throws
 * `not-found`/`invalid-id` for a bad turn.
 */
export function listChanges(ws: Workspace, opts: { turn?: string; all?: boolean; agent?: string; inPlace?: HunkInPlace } = {}): ListResult {
  const { journal } = ws;
  let turns;
  let omittedTurns = 0;
  let sets;
  const total = opts.turn === undefined && !opts.all ? journal.turns.count(opts.agent) : 0;
  if (opts.turn !== undefined) {
    const t = journal.turns.get(opts.turn);
    sets = journal.sets.list({ turn: t.id });
    turns = [t];
  } else if (!opts.all && total > DEFAULT_LIST_TURNS) {
    // Only the rows shown are read: a journal of thousands of turns and sets lists as fast as a new one.
    turns = journal.turns.newest(DEFAULT_LIST_TURNS, opts.agent);
    omittedTurns = total - turns.length;
    sets = journal.sets.recent(
      turns.map((t) => t.id),
      turns[0]!.start,
      { live: true },
    );
  } else {
    turns = journal.turns.all(opts.agent);
    sets = journal.sets.list();
  }
  if (!opts.all) sets = sets.filter((s) => s.state !== 'expired');
  if (opts.agent !== undefined) sets = sets.filter((s) => s.agent === opts.agent);
  sets = asOnDisk(ws, sets, opts.inPlace);
  return {
    workspace: ws.root,
    capture: captureStatus(ws),
    turns: turns.reverse().map(toTurnSummary),
    sets: sets.reverse().map(toSetSummary),
    omittedTurns,
  };
}

/** One change set in full, its files' states as the disk has them (`inPlace`: as for {@link listChanges}). Throws `invalid-id`, `not-found` or `expired`. */
export function showChange(ws: Workspace, id: string, inPlace?: HunkInPlace): ChangeSetDetail {
  return toSetDetail(asOnDisk(ws, [ws.journal.sets.get(id)], inPlace)[0]!);
}

/**
 * `sets` with each file's state as the disk has it (applied, undone, no longer in place) and
 * their states following (core/plan/in-step.ts): a file is stat'ed, and read only when its stat
 * is not the snapshot index's.
 */
export function asOnDisk(ws: Workspace, sets: ChangeSet[], inPlace?: HunkInPlace): ChangeSet[] {
  const paths = new Set<string>();
  for (const s of sets) if (s.state !== 'expired') for (const f of s.files) if (!f.gap) paths.add(f.path);
  return inStepWithDisk(ws, sets, statReader(ws, paths), null, inPlace);
}

/**
 * A stand-in for service/in-place.ts's check in workspace `ws` that answers `none` (what the disk
 * says without a diff) and notes whether it was asked where the real check could answer
 * otherwise: only a text file that moved from what the journal left there, and holds neither
 * side of a text change, asks it ({@link hunksMayBeInPlace}: a file removed or replaced since
 * does not), so a caller loads the real check (a diff) and lists again only then (`asked()`).
 */
export function hunkProbe(ws: Workspace): { probe: HunkInPlace; asked: () => boolean } {
  let asked = false;
  return {
    probe: (f, _abs, now) => {
      if (hunksMayBeInPlace(f, now, ws.config.maxFileBytes)) asked = true;
      return 'none';
    },
    asked: () => asked,
  };
}
