import type { Workspace } from '../open-workspace.js';
import { checkId } from '../errors.js';
import type { PendingCapture } from '../journal/captures.js';
import { entryState, snapshotStands, type ScanChange } from '../scan/scan.js';
import type { ChangeSet, FileChange } from '../types.js';
import { makeChange } from './file-change.js';
import { keepsBaselines, racyLineOf, scanAndCommit } from './scan-commit.js';

/** Scan changes as file changes (gap entries keep their reason). */
export function scanChangesToFiles(ws: Workspace, changes: ScanChange[]): FileChange[] {
  const out: FileChange[] = [];
  for (const c of changes) {
    const gap = c.after?.gap ?? c.before?.gap ?? undefined;
    const fc = makeChange(ws.journal.blobs, c.path, entryState(c.before), entryState(c.after), gap);
    if (fc) out.push(fc);
  }
  return out;
}

/** How long a command begun and not ended counts as still running (Claude Code's Bash stops at 10 minutes). */
export const COMMAND_RUNNING_MS = 15 * 60 * 1000;

/**
 * True when a scan must not be committed now: the workspace has a usable snapshot and a command
 * begun less than {@link COMMAND_RUNNING_MS} ago (of any agent or session; other than `except`)
 * has not ended. What moved may be that command's doing, and a scan committed by anything else (a
 * turn beginning or ending, another command beginning) would take it from it: it is left for that
 * command's end to record. A command begun long ago and never ended (a killed process) does not
 * count; without a snapshot the scan is the baseline, and always runs.
 */
export function scanHeldByCommand(ws: Workspace, opts: { now?: number; except?: string } = {}): boolean {
  const { journal } = ws;
  if (journal.snapshot.meta()?.status !== 'ok') return false;
  return journal.captures.inFlight('command', (opts.now ?? Date.now()) - COMMAND_RUNNING_MS, opts.except) > 0;
}

/**
 * Asked by a command's begin, inside its write transaction, in workspace `root`: whether this
 * process's file watcher, synced for the operation under way, heard nothing since the snapshot of
 * generation `gen` (a random token, see SnapshotIndex) whose racy line is `racyMs` (ms since the
 * epoch): that snapshot was written by the scan its last hints went to. False when it cannot say.
 */
export type QuietSince = (root: string, gen: string, racyMs: number) => boolean;

let quietSince: QuietSince | null = null;

/** From now on every {@link beginCommand} of this process asks `source` (null, the default: none) whether anything moved since the snapshot. */
export function useQuietSnapshots(source: QuietSince | null): void {
  quietSince = source;
}

/** What a command capture saw: whether the workspace could be scanned, and why not. */
export interface CommandScan {
  status: 'ok' | 'baseline' | 'too-large';
  reason?: string;
}

/**
 * A command is about to run: brings the workspace snapshot up to date. What moved since the last
 * look is not the command's doing: while a turn is open it is kept as the turn's drift (and ends
 * up in "changed during this turn" unless a tool call claims it), otherwise it is the user's
 * and is dropped. Call inside a write transaction.
 */
export function beginCommand(
  ws: Workspace,
  opts: {
    id: string;
    command?: string | null;
    tool?: string | null;
    turn?: string | null;
    agent?: string | null;
    session?: string | null;
    pair?: string | null;
    now?: number;
    onProgress?: (n: number) => void;
    /** Called once the scan has read the workspace, before its writes to the journal (see scanAndCommit's `read`). */
    read?: () => void;
  },
): CommandScan {
  checkId(opts.id, 'capture id');
  const { journal } = ws;
  const turn = opts.turn === undefined ? (journal.turns.open()?.id ?? null) : opts.turn;
  const now = opts.now ?? Date.now();
  const capture: PendingCapture = { id: opts.id, kind: 'command', turn, tool: opts.tool ?? null, command: opts.command ?? null, start: now, files: [], agent: opts.agent ?? null, session: opts.session ?? null, pair: opts.pair ?? null };
  // What moved since the last look is the turn's drift (in a turn) or the user's (dropped), unless
  // another command still running (this agent's in parallel, or another agent's) may have made it.
  if (scanHeldByCommand(ws, { now, except: opts.id })) {
    journal.captures.put(capture);
    return { status: 'ok' };
  }
  // Nothing moved since the snapshot, as far as a scan would look (the watcher heard nothing, and
  // no rule file, git's index, excludes or limits moved): that snapshot is what the command finds.
  // Said now (`read`: a capture daemon answers the agent), under the journal's lock, so that no
  // other process scans before this begin is recorded; no scan, none being needed.
  const meta = journal.snapshot.meta();
  if (meta && quietSince && snapshotStands(ws.root, ws.config, meta, keepsBaselines()) && quietSince(ws.root, journal.snapshot.generation(), racyLineOf(meta))) {
    opts.read?.();
    journal.captures.put(capture);
    return { status: 'ok' };
  }
  const outcome = scanAndCommit(ws, opts.onProgress, undefined, opts.read);
  if (outcome.status === 'ok' && turn && outcome.changes.length > 0) {
    journal.drift.add(
      turn,
      outcome.changes.map((c) => ({ path: c.path, before: entryState(c.before), after: entryState(c.after) })),
    );
  }
  journal.captures.put(capture);
  return { status: outcome.status, reason: outcome.reason };
}

/**
 * A command has run: scans again and records what moved since its start as its change set.
 * Returns the set (or `null` when nothing changed) and how the scan went. Call inside a write
 * transaction. `late`: the end was queued in the spill and is folded in later, so what moved may
 * hold later changes; then, and when the command's begin could not be kept (`unkept`), every
 * change is a `not-kept` gap.
 */
export function endCommand(ws: Workspace, pending: PendingCapture, late = false): { set: ChangeSet | null; scan: CommandScan } {
  const outcome = scanAndCommit(ws);
  if (outcome.status !== 'ok') return { set: null, scan: { status: outcome.status, reason: outcome.reason } };
  const files = scanChangesToFiles(ws, outcome.changes);
  // What the command found before it ran (or what it left) could not be kept when it ran: what
  // the scan sees now is named, as gaps, and never undone.
  if (late || ws.journal.unkept.hasCapture(pending.id)) for (const f of files) f.gap ??= 'not-kept';
  const paired = pending.pairedBy ? { pairedBy: pending.pairedBy } : {};
  const source = pending.tool
    ? { kind: 'command' as const, command: pending.command ?? '', tool: pending.tool, toolCallId: pending.id, ...paired }
    : { kind: 'command' as const, command: pending.command ?? '' };
  const set = ws.journal.sets.add({ turn: pending.turn, agent: pending.agent ?? null, session: pending.session ?? null, source, files });
  return { set, scan: { status: 'ok' } };
}
