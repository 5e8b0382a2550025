import type { Workspace } from '../core/open-workspace.js';
import { readWorkspaceState } from '../core/fsstate.js';
import { changeHunks } from '../core/plan/hunks.js';
import { isMergeableText } from '../core/plan/merge.js';
import { textBlob } from '../core/plan/plan.js';
import type { BytesReader } from '../core/plan/preview.js';
import type { ChangeSet } from '../core/types.js';
import { fromWorkspacePath } from '../core/workspace.js';
import { toFileHunk, toSetDetail, toSetSummary, toTurnSummary, type CaptureStatus, type ChangeSetDetail, type ListResult } from '../wire.js';

/*
 * The journal's history as a person reads it: the change sets and turns of a workspace (`list`),
 * one change set in full (`show`), and whether commands are captured there.
 */

/** How many turns `list` shows without `all`. */
export const DEFAULT_LIST_TURNS = 20;

/** Whether commands are captured here (from the last scan). */
export function captureStatus(ws: Workspace): CaptureStatus {
  const meta = ws.journal.snapshot.meta();
  if (meta && meta.status === 'too-large') {
    return { commands: false, reason: `the workspace is ${meta.reason ?? 'over the scan limits'}: file tools only` };
  }
  return { commands: true, reason: null };
}

/**
 * The change sets of the workspace, newest first, with their turns. Without `all`, the sets of
 * the newest {@link DEFAULT_LIST_TURNS} turns (and any outside turns since) and no expired
 * tombstones; `turn` narrows to one turn, `agent` to one agent's turns and sets (`claude-code`,
 * `codex`, `gemini`, `cli`). `hunks` (a workspace-relative path) gives that file's summary in
 * each listed set its hunks, placed in the file as `now` reads it (default: the disk). Throws
 * `not-found`/`invalid-id` for a bad turn.
 */
export function listChanges(ws: Workspace, opts: { turn?: string; all?: boolean; agent?: string; hunks?: string; now?: BytesReader } = {}): ListResult {
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
  sets.reverse();
  const summaries = sets.map(toSetSummary);
  if (opts.hunks !== undefined) placeHunksOf(ws, opts.hunks, sets, summaries, opts.now);
  return {
    workspace: ws.root,
    capture: captureStatus(ws),
    turns: turns.reverse().map(toTurnSummary),
    sets: summaries,
    omittedTurns,
  };
}

/** The bytes of workspace path `path` on the disk now; 'secret' for a secret's, null when there are none. */
function diskBytesNow(ws: Workspace): BytesReader {
  return (path, abs) => {
    const r = readWorkspaceState(ws, path, { abs });
    return r.gap === 'secret' ? 'secret' : (r.bytes ?? null);
  };
}

/**
 * Gives `path`'s summary in each of `summaries` (those of `sets`, in the same order) the hunks of
 * its set's change, placed in the file now. The file is read once, and only when a set touches
 * it; a change whose sides are not both kept text (created, deleted, binary, a link) gets none,
 * and so does every change while the file now is not text.
 */
function placeHunksOf(ws: Workspace, path: string, sets: ChangeSet[], summaries: ListResult['sets'], now: BytesReader = diskBytesNow(ws)): void {
  let bytes: Buffer | null | undefined;
  for (const [i, s] of sets.entries()) {
    const f = s.files.find((x) => x.path === path);
    if (!f) continue;
    if (bytes === undefined) {
      const b = now(path, fromWorkspacePath(ws.root, path));
      bytes = b instanceof Buffer && isMergeableText(b) ? b : null;
    }
    if (bytes === null) return;
    const before = textBlob(ws, f.before);
    const after = before && textBlob(ws, f.after);
    if (!before || !after) continue;
    const summary = summaries[i]!.files.find((x) => x.path === path)!;
    summary.hunks = changeHunks(before, after, bytes).map(toFileHunk);
  }
}

/** One change set in full. Throws `invalid-id`, `not-found` or `expired`. */
export function showChange(ws: Workspace, id: string): ChangeSetDetail {
  return toSetDetail(ws.journal.sets.get(id));
}
