import { beginCommand, endCommand, type CommandScan } from '../core/capture/command.js';
import { beginFiles, endFiles } from '../core/capture/files.js';
import { scanAndCommit } from '../core/capture/scan-commit.js';
import { beginTurn, endTurn } from '../core/capture/turn.js';
import type { Workspace } from '../core/open-workspace.js';
import { TakebackError, checkId } from '../core/errors.js';
import type { PendingCapture } from '../core/journal/captures.js';
import { labelFromPrompt } from '../core/journal/turns.js';
import { type CaptureBeginResult, type CaptureEndResult, toSetSummary, toTurnSummary, type TurnBeginResult, type TurnEndResult, type TurnSummary } from '../wire.js';

/**
 * Resolves the turn a capture belongs to: the named one; else the session's open turn, else an
 * open turn of no session (begun by a script); without a session, the newest open turn; else none.
 */
function resolveTurn(ws: Workspace, turn: string | undefined, session?: string | null): string | null {
  if (turn !== undefined) return ws.journal.turns.get(turn).id;
  return ws.journal.turns.forSession(session)?.id ?? null;
}

/**
 * Begins capturing one tool call. With `paths`, a file tool: their current states are kept.
 * Without, a command: the workspace snapshot is brought up to date. `id` is the tool call's id
 * (checked against `^[A-Za-z0-9_-]{1,64}$` first).
 */
export function captureBegin(
  ws: Workspace,
  opts: {
    id: string;
    paths?: string[];
    cwd?: string;
    turn?: string;
    agent?: string | null;
    session?: string | null;
    /** For an agent without tool call ids: the key its end is paired by (see `captureEndByOrder`). */
    pair?: string | null;
    tool?: string | null;
    command?: string | null;
    onProgress?: (n: number) => void;
    /**
     * Called once the begin has read what it must see (a command's scan done, its bytes stored),
     * before its writes to the journal, the blobs' syncs and the commit; Journal.write's `fixed`
     * calls it again once the begin's work is done (the only call for a begin that scanned
     * nothing), so it must do nothing the second time, as the capture daemon's answer does.
     */
    fixed?: () => void;
  },
): CaptureBeginResult {
  checkId(opts.id, 'capture id');
  return ws.journal.write(() => {
    const turn = resolveTurn(ws, opts.turn, opts.session);
    const who = { agent: opts.agent ?? null, session: opts.session ?? null, pair: opts.pair ?? null };
    if (opts.paths && opts.paths.length > 0) {
      beginFiles(ws, { id: opts.id, paths: opts.paths, cwd: opts.cwd, turn, tool: opts.tool ?? null, ...who });
      return { id: opts.id, kind: 'files', turn };
    }
    const scan = beginCommand(ws, { id: opts.id, command: opts.command ?? null, tool: opts.tool ?? null, turn, ...who, onProgress: opts.onProgress, read: opts.fixed });
    return { id: opts.id, kind: 'command', turn, scan };
  }, { fixed: opts.fixed });
}

function finish(ws: Workspace, pending: PendingCapture): CaptureEndResult {
  if (pending.kind === 'files') {
    const set = endFiles(ws, pending);
    return { id: pending.id, set: set ? toSetSummary(set) : null };
  }
  const { set, scan } = endCommand(ws, pending);
  return { id: pending.id, set: set ? toSetSummary(set) : null, scan };
}

/** Ends capture `id` and records its change set. Throws `not-found` for an id with no `begin`. */
export function captureEnd(ws: Workspace, opts: { id: string }): CaptureEndResult {
  checkId(opts.id, 'capture id');
  return ws.journal.write(() => {
    const pending = ws.journal.captures.take(opts.id);
    if (!pending) throw new TakebackError('not-found', `no capture ${opts.id} was begun`, { id: opts.id });
    return finish(ws, pending);
  });
}

/**
 * Ends the capture a tool call's end belongs to when the agent gives no tool call id (Gemini
 * CLI): paired by order within `agent`'s `session` (see `Captures.takeByOrder`); the set's
 * source says `pairedBy: 'order'`. Throws `not-found` when the session has no capture open.
 */
export function captureEndByOrder(ws: Workspace, opts: { agent: string; session: string | null; pair: string; tool: string }): CaptureEndResult {
  return ws.journal.write(() => {
    const pending = ws.journal.captures.takeByOrder(opts.agent, opts.session, opts.pair, opts.tool);
    if (!pending) throw new TakebackError('not-found', `no ${opts.tool} call of this session was begun`);
    return finish(ws, pending);
  });
}

/** Begins a turn (ending the session's previous one if it is still open): never queued, so the turn is always there. */
export function turnBegin(
  ws: Workspace,
  opts: { id?: string; label?: string | null; agent?: string | null; session?: string | null; agentTurn?: string | null; promptKey?: string | null },
): TurnBeginResult & { turn: TurnSummary } {
  if (opts.id !== undefined) checkId(opts.id, 'turn id');
  return ws.journal.write(() => {
    // A label is one line (a prompt's first line, shortened), whoever gives it.
    const { turn, closed } = beginTurn(ws, { ...opts, label: labelFromPrompt(opts.label) });
    return { turn: toTurnSummary(turn), closed: closed ? toSetSummary(closed) : null };
  });
}

/**
 * Ends a turn: the named one, else the session's open turn, else the newest open turn. What
 * changed during it that no tool call claimed is recorded as its own set. Throws `not-found`
 * when there is no such turn (or none open).
 */
export function turnEnd(
  ws: Workspace,
  opts: { id?: string; session?: string | null; agentTurn?: string | null },
): TurnEndResult & { turn: string } {
  if (opts.id !== undefined) checkId(opts.id, 'turn id');
  return ws.journal.write(() => {
    const { turns } = ws.journal;
    const named = opts.id === undefined && opts.agentTurn ? turns.byAgentTurn(opts.session ?? null, opts.agentTurn) : null;
    let turn;
    if (opts.id !== undefined) turn = turns.get(opts.id);
    else if (named) turn = named.end === null ? named : null; // ended already (a second Stop): not again
    else turn = turns.open(opts.session);
    if (!turn) throw new TakebackError('not-found', 'no turn is open');
    const { set } = endTurn(ws, turn.id);
    return { turn: turn.id, set: set ? toSetSummary(set) : null };
  });
}

/** Makes sure the workspace has a snapshot to compare the next command with (SessionStart). */
export function ensureBaseline(ws: Workspace, onProgress?: (n: number) => void): CommandScan {
  return ws.journal.write(() => {
    const meta = ws.journal.snapshot.meta();
    if (meta) return { status: meta.status === 'ok' ? 'ok' : 'too-large', reason: meta.reason };
    const outcome = scanAndCommit(ws, onProgress);
    return { status: outcome.status, reason: outcome.reason };
  });
}
