import type { Workspace } from '../open-workspace.js';
import { entryState } from '../scan/scan.js';
import { unkeptGap } from '../fsstate.js';
import type { ChangeSet, FileChange, Turn } from '../types.js';
import { makeChange } from './file-change.js';
import { endCommand, scanHeldByCommand } from './command.js';
import { endFiles } from './files.js';
import { scanAndCommit } from './scan-commit.js';

/**
 * A turn begins (a prompt was submitted). The session's previous turn, if still open, is ended
 * first. The workspace snapshot is brought up to date without blaming anyone: what changed
 * between turns is the user's. `promptKey`: the key of the prompt that begins it (journal/turns.ts
 * `promptKey`), when the agent gives the prompt no id. Call inside a write transaction.
 */
export function beginTurn(
  ws: Workspace,
  opts: { id?: string; agent?: string | null; session?: string | null; agentTurn?: string | null; label?: string | null; promptKey?: string | null; now?: number },
): { turn: Turn; closed: ChangeSet | null } {
  const { journal } = ws;
  const stale = opts.session ? journal.turns.open(opts.session) : null;
  const closed = stale ? endTurn(ws, stale.id).set : null;
  // While a command runs (another agent's), what moved may be its doing: left for its end.
  if (!scanHeldByCommand(ws)) scanAndCommit(ws);
  const turn = journal.turns.begin(opts);
  return { turn, closed };
}

/**
 * A turn ends (the agent stopped). Tool calls of the turn still open are ended (their sets
 * recorded). Scans once more — unless another agent's command is running, whose end will record
 * what moved —; what changed during the turn that no tool call of the turn claimed is recorded
 * as its own set ("changed during this turn"). Call inside a write transaction. `late`: the
 * turn's end was queued in the spill and is folded in later, so what the scan sees now may hold
 * changes made after it: they are `not-kept` gaps, as are those of its tool calls still open.
 */
export function endTurn(ws: Workspace, turnId: string, now?: number, late = false): { set: ChangeSet | null } {
  const { journal } = ws;
  // A tool call of this turn whose end never came (a patch that failed part-way: Codex sends no
  // PostToolUse; a shell call the user cancelled) still changed what it changed: its set is
  // recorded now, as its own. The agent has stopped, so its commands have too.
  for (const pending of journal.captures.takeOpen(turnId, 'files')) endFiles(ws, pending, { late });
  for (const pending of journal.captures.takeOpen(turnId, 'command')) endCommand(ws, pending, late);
  // Another agent's command still running: what moved may be its doing, left for its end.
  const outcome = scanHeldByCommand(ws, { now }) ? null : scanAndCommit(ws);
  if (outcome && outcome.status === 'ok' && outcome.changes.length > 0) {
    journal.drift.add(
      turnId,
      outcome.changes.map((c) => ({ path: c.path, before: entryState(c.before), after: entryState(c.after) })),
    );
  }
  const set = recordDrift(ws, turnId, now, late);
  journal.turns.end(turnId, now);
  return { set };
}

/**
 * Records what the scans saw change during turn `turnId` that no tool call of it claimed, as its
 * set "changed during this turn" (null when nothing), at `now`. `late`: each change is a
 * `not-kept` gap.
 */
function recordDrift(ws: Workspace, turnId: string, now: number | undefined, late: boolean): ChangeSet | null {
  const { journal } = ws;
  const drift = journal.drift.take(turnId);
  const claimed = new Set<string>();
  for (const s of journal.sets.list({ turn: turnId })) for (const f of s.files) claimed.add(f.path);
  const files: FileChange[] = [];
  for (const d of drift) {
    if (claimed.has(d.path)) continue;
    const c = makeChange(journal.blobs, d.path, d.before, d.after, unkeptGap(d.path, d.before, d.after) ?? (late ? 'not-kept' : undefined));
    if (c) files.push(c);
  }
  return journal.sets.add({ turn: turnId, source: { kind: 'turn' }, files, now });
}

/**
 * Closes turn `turnId`, whose end was never heard (its agent killed, its stop event lost), at
 * `last`, the time of its last event (ms since the epoch), marked so ({@link Turn.endLost}). No
 * scan is made: what changed since its last event may be the person's or another agent's, and is
 * never taken for this turn's. What the scans saw
 * during the turn that no tool call claimed is its "changed during this turn", as at an end.
 * Call inside a write transaction, with no tool call of the turn still in flight.
 */
export function closeLostTurn(ws: Workspace, turnId: string, last: number): { set: ChangeSet | null } {
  const set = recordDrift(ws, turnId, last, false);
  ws.journal.turns.endLost(turnId, last);
  return { set };
}
