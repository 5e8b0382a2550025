import { statfsSync } from 'node:fs';
import type { Workspace } from '../open-workspace.js';
import type { ReadState } from '../fsstate.js';
import type { PendingCapture } from '../journal/captures.js';
import { HOOK_BUSY_MS } from '../journal/journal.js';
import { hasQueued, queued, recordBytes, release, spill, SLOT_BYTES } from '../journal/spill.js';
import type { UnkeptCause } from '../journal/unkept.js';
import type { BlobStore } from '../store/blobs.js';
import type { FileState, GapReason } from '../types.js';
import { endCommand } from './command.js';
import { endFiles, keepFiles } from './files.js';
import { scanAndCommit } from './scan-commit.js';
import { endTurn } from './turn.js';

/*
 * Capture events queued in the spill (journal/spill.ts) when the journal could not take them,
 * and their folding in: the next process that holds the journal applies them first, in order,
 * each in one write transaction. What could not be kept when it happened is named: the "before"
 * of a file tool whose bytes could not be stored is a `not-kept` gap, so is every change of a
 * command whose scan could not run at its begin or its end, and each is listed in the journal's
 * `unkept` table (what `list` and doctor count).
 */

/** Who made a capture event: the agent, its session, and the agent's own turn id when it gives one. */
export interface QueuedWho {
  agent: string | null;
  session: string | null;
  agentTurn: string | null;
}

/** A path's state as a tool call's end found it, kept then (its bytes stored, when they could be). */
export interface QueuedFound {
  path: string;
  state: FileState;
  gap?: GapReason;
}

/** One capture operation, as a hook would have carried it out on the journal. */
export type QueuedOp =
  /** A session began: the workspace needs a snapshot to compare the next command with. */
  | { op: 'baseline' }
  /** A turn's begin; `id` when its caller named it (the sidecar's `turn/begin`); `promptKey` its prompt's key when the agent gave the prompt no id (journal/turns.ts `promptKey`). */
  | ({ op: 'turn-begin'; label: string | null; id?: string; promptKey?: string | null } & QueuedWho)
  /** A turn's end: the one named by `id` or by the agent's own turn id, else the session's open turn. */
  | ({ op: 'turn-end'; id?: string } & QueuedWho)
  /** A file tool's begin: `files` as {@link keepFiles} kept them when it was queued. */
  | ({ op: 'files-begin'; id: string; tool: string; pair: string | null; files: PendingCapture['files'] } & QueuedWho)
  /** A command's begin, whose scan could not run. */
  | ({ op: 'command-begin'; id: string; tool: string; command: string; pair: string | null } & QueuedWho)
  /** A tool call's end, by its capture id, with what its paths were found in when they are known. */
  | { op: 'end'; id: string; tool: string; found: QueuedFound[] | null }
  /** A tool call's end paired by order (an agent without tool call ids). */
  | { op: 'end-by-order'; agent: string; session: string | null; pair: string; tool: string }
  /** Something that could not be recorded at all (`takeback run` that could not capture). */
  | { op: 'lost'; what: string };

/** One queued record: why the journal could not take it, and its operations, in order. */
export interface QueuedEvent {
  cause: UnkeptCause;
  ops: QueuedOp[];
}

/**
 * Why an error of the journal means it cannot take an event now (and the event is queued
 * instead), or null when the error is another (bad input, a bug: logged, never queued): a full
 * disk (`ENOSPC`, `EDQUOT`, `SQLITE_FULL`, or an I/O error with no space left under `home`), a
 * lock another process holds (`SQLITE_BUSY`, `SQLITE_LOCKED`), or another I/O error of SQLite's.
 */
export function unkeptCause(e: unknown, home: string): UnkeptCause | null {
  const code = String((e as { code?: unknown } | null)?.code ?? '');
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL') return 'disk-full';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'journal-busy';
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN') || code === 'EIO') return homeDiskFull(home) ? 'disk-full' : 'journal-error';
  return null;
}

/** Free bytes under a TAKEBACK_HOME below which its disk counts as full: less than a blob or a page of the journal can be had for sure. */
const DISK_FULL_BYTES = 256 * 1024;

/**
 * True when the disk under `home` (a TAKEBACK_HOME) has less than 256 KiB free for this user
 * (statfs' available blocks); false when it has more, or cannot be asked.
 */
export function homeDiskFull(home: string): boolean {
  try {
    const st = statfsSync(home);
    return st.bavail * st.bsize < DISK_FULL_BYTES;
  } catch {
    return false;
  }
}

/** A command's text for a queued record: at most this many characters (a record has one slot). */
const COMMAND_CHARS = 1000;

/**
 * Queues `ops` in the spill of the journal in `journalDir`, for `cause`. The end of a file tool
 * whose paths are known (from `ws.pending`, the journal's pending captures when it could be read,
 * or an earlier queued begin) keeps what its paths hold now, their bytes stored in `ws.blobs` when
 * they can be, and made durable with the blobs of `ws.blobs` stored before (a file tool's
 * "before"); a record too large for its slot is queued as lost. Returns false when nothing
 * could be queued (no spill, every slot taken). Never throws.
 */
export function queueOps(
  journalDir: string,
  ws: { root: string; config: { maxFileBytes: number; excludePaths: string[] }; blobs: BlobStore; pending?: (id: string) => PendingCapture | null },
  cause: UnkeptCause,
  ops: QueuedOp[],
): boolean {
  try {
    const shaped = ops.map((op) => shapeOp(journalDir, ws, op, ops));
    // The blobs a record names are on the disk before it is queued (and the hook answers).
    ws.blobs.sync();
    let ev: QueuedEvent = { cause, ops: shaped };
    if (recordBytes(ev) > SLOT_BYTES) ev = { cause, ops: [{ op: 'lost', what: describe(shaped).slice(0, 500) }] };
    return spill(journalDir, ev);
  } catch {
    return false;
  }
}

function describe(ops: QueuedOp[]): string {
  return ops
    .map((op) => ('tool' in op ? `${op.op} ${op.tool}${'command' in op ? ` ${op.command}` : ''}` : op.op))
    .join(', ');
}

function shapeOp(journalDir: string, ws: Parameters<typeof queueOps>[1], op: QueuedOp, event: QueuedOp[]): QueuedOp {
  if (op.op === 'command-begin' && op.command.length > COMMAND_CHARS) return { ...op, command: `${op.command.slice(0, COMMAND_CHARS - 1)}…` };
  if (op.op !== 'end' || op.found) return op;
  const paths = pathsOf(journalDir, ws, op.id, event);
  if (!paths) return op;
  let files;
  try {
    files = keepFiles(ws, paths, ws.root);
  } catch {
    files = keepFiles({ ...ws, blobs: null }, paths, ws.root);
  }
  return { ...op, found: files.map((f) => ({ path: f.path, state: f.state, ...(f.gap ? { gap: f.gap } : {}) })) };
}

/** The paths of file tool call `id` begun earlier: in this event, in the journal, or in the spill; null when not known (or not a file tool). */
function pathsOf(journalDir: string, ws: Parameters<typeof queueOps>[1], id: string, event: QueuedOp[]): string[] | null {
  const inEvent = event.find((o) => o.op === 'files-begin' && o.id === id);
  if (inEvent && inEvent.op === 'files-begin') return inEvent.files.map((f) => f.path);
  try {
    const p = ws.pending?.(id);
    if (p) return p.kind === 'files' ? p.files.map((f) => f.path) : null;
  } catch {
    // the journal cannot be read either: the spill may know
  }
  for (const e of queued<QueuedEvent>(journalDir).entries.reverse()) {
    for (const o of e.value.ops) if (o.op === 'files-begin' && o.id === id) return o.files.map((f) => f.path);
  }
  return null;
}

/**
 * Folds the events queued in the spill of `ws`.s journal in, oldest first, each in one
 * write transaction that waits at most about a second for the lock; stops (leaving the rest
 * queued) when the journal still cannot take one. A record cut short is dropped and named.
 * Returns how many records were folded in. Cheap when nothing is queued (one folder listing).
 */
export function foldSpill(ws: Workspace): number {
  const { journal } = ws;
  if (!hasQueued(journal.dir)) return 0;
  return journal.withBusyTimeout(HOOK_BUSY_MS, () => {
    let folded = 0;
    try {
      const { entries, dropped } = queued<QueuedEvent>(journal.dir);
      if (dropped > 0) {
        journal.write(() => {
          for (let i = 0; i < dropped; i++) journal.unkept.add({ at: Date.now(), cause: 'journal-error', what: 'an event queued while the journal could not be written was cut short', capture: null });
        });
      }
      for (const e of entries) {
        const key = `spill:${e.name}`;
        try {
          journal.write(() => {
            if (journal.db.prepare('SELECT 1 FROM meta WHERE key = ?').get(key)) return; // folded in before its slot was freed
            for (const op of e.value.ops ?? []) applyOp(ws, e.value.cause, e.at, op);
            journal.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run(key, String(Date.now()));
          });
        } catch (err) {
          if (unkeptCause(err, ws.home) !== null) throw err;
          // A record that cannot be applied (not one of today's shapes) is dropped and named:
          // left queued, it would hold every later event behind it.
          journal.write(() => journal.unkept.add({ at: e.at, cause: e.value.cause ?? 'journal-error', what: `a queued event that could not be folded in (${(err as Error).message})`, capture: null }));
        }
        release(journal.dir, e.name);
        folded++;
      }
      if (entries.length > 0) journal.write(() => journal.db.prepare("DELETE FROM meta WHERE key LIKE 'spill:%'").run());
    } catch (err) {
      if (unkeptCause(err, ws.home) === null) throw err;
      // The journal still cannot take them: left queued for the next process.
    }
    return folded;
  });
}

function applyOp(ws: Workspace, cause: UnkeptCause, at: number, op: QueuedOp): void {
  const { journal } = ws;
  const { turns, captures, unkept } = journal;
  // A turn begun late is begun without the scan a turn's begin makes: what moved since it began
  // is the doing of its queued tool calls (or its own, at its end), not the user's.
  // A turn begun already (the same event handled by another process too: see journal/turns.ts
  // `twinOf`) is not begun again.
  const turnOnce = (who: QueuedWho, label: string | null, id?: string, promptKey?: string | null) => {
    if (who.agentTurn && turns.byAgentTurn(who.session, who.agentTurn)) return;
    if (!who.agentTurn && promptKey && who.session && turns.twinOf(who.session, promptKey)) return;
    const stale = who.session ? turns.open(who.session) : null;
    if (stale) endTurn(ws, stale.id, at, true);
    turns.begin({ ...(id !== undefined ? { id } : {}), agent: who.agent, session: who.session, agentTurn: who.agentTurn, label, promptKey: promptKey ?? null, now: at });
  };
  switch (op.op) {
    case 'baseline':
      if (!journal.snapshot.meta()) scanAndCommit(ws);
      return;
    case 'turn-begin':
      turnOnce(op, op.label, op.id, op.promptKey);
      return;
    case 'turn-end': {
      const named = op.id !== undefined ? turns.get(op.id) : op.agentTurn ? turns.byAgentTurn(op.session, op.agentTurn) : null;
      const turn = named ? (named.end === null ? named : null) : turns.open(op.session);
      if (!turn) return;
      const { set } = endTurn(ws, turn.id, at, true);
      if (set && set.files.some((f) => f.gap === 'not-kept')) unkept.add({ at, cause, what: `what changed during turn ${turn.id} that no tool call claimed`, capture: null });
      return;
    }
    case 'files-begin':
    case 'command-begin': {
      // A command begun already (a capture daemon killed after recording a begin it had answered,
      // before it took its note away): that begin stands, and is not made a gap.
      if (op.op === 'command-begin' && captures.peek(op.id)) return;
      if (op.agentTurn) turnOnce(op, null);
      const turn = turns.forSession(op.session)?.id ?? null;
      // The same tool call (by the agent's id) handled by another process too, its event's twin
      // (see turnOnce), and found there: its capture open, or its set recorded. Begun again from
      // here, its "before" would be taken after the other's and named not kept, or a call whose
      // end was heard left open, to be recorded a second time when its turn ends.
      if (op.pair === null && (captures.peek(op.id) || journal.sets.hasToolCall(turn, op.id))) return;
      const base = { id: op.id, turn, tool: op.tool, start: at, agent: op.agent, session: op.session, pair: op.pair };
      if (op.op === 'files-begin') {
        captures.put({ ...base, kind: 'files', command: null, files: op.files });
        for (const f of op.files) if (f.gap === 'not-kept') unkept.add({ at, cause, what: `${op.tool} ${f.path}: what it held before`, capture: op.id });
      } else {
        // No scan here: what the command changed has happened by now, and a scan would take it
        // into the snapshot unseen. Its end compares with the snapshot as it is, and names
        // what moved as gaps.
        captures.put({ ...base, kind: 'command', command: op.command, files: [] });
        unkept.add({ at, cause, what: `${op.tool} ${op.command}: what it found before it ran`, capture: op.id });
      }
      return;
    }
    case 'end':
    case 'end-by-order': {
      const pending = op.op === 'end' ? captures.take(op.id) : captures.takeByOrder(op.agent, op.session, op.pair, op.tool);
      if (!pending) return;
      if (pending.kind === 'command') {
        endCommand(ws, pending, true);
        unkept.add({ at, cause, what: `${op.tool} ${pending.command ?? ''}: what it left`, capture: pending.id });
        return;
      }
      const found = op.op === 'end' && op.found ? new Map<string, ReadState>(op.found.map((f) => [f.path, { state: f.state, ...(f.gap ? { gap: f.gap } : {}) }])) : undefined;
      endFiles(ws, pending, found ? { found } : { late: true });
      if (!found) unkept.add({ at, cause, what: `${op.tool} ${pending.files.map((f) => f.path).join(' ')}: what it left`, capture: pending.id });
      return;
    }
    case 'lost':
      unkept.add({ at, cause, what: op.what, capture: null });
      return;
  }
}
