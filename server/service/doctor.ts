import { excludedIn } from '../core/scan/filter.js';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Workspace } from '../core/open-workspace.js';
import { lastSweep, type LastSweep } from '../core/gc/schedule.js';
import { collectGarbage, type GcReport } from '../core/gc/sweep.js';
import { STALE_CAPTURE_MS } from '../core/journal/captures.js';
import { quickCheck, turnCounts } from '../core/journal/counts.js';
import { holderText, lockState, type LockState } from '../core/journal/holder.js';
import { queued } from '../core/journal/spill.js';
import { homeDiskFull } from '../core/capture/queued.js';
import { unkeptText, type UnkeptSummary } from '../core/journal/unkept.js';
import { haveNativeCheck } from '../core/scan/native.js';
import { isUnlisted, rowStamp } from '../core/scan/packed.js';
import type { Turn } from '../core/types.js';
import { captureStatus } from './history.js';
import type { CaptureStatus } from '../wire.js';

/**
 * What `takeback doctor` reports of a workspace's journal and the blob store, without what lies
 * outside them (the capture daemon: the command line adds it). Sizes in bytes.
 */
export interface JournalHealth {
  version: string;
  workspace: string;
  home: string;
  journal: string;
  log: string;
  capture: CaptureStatus;
  snapshot: { files: number; bytes: number; scannedAt: number | null } | null;
  sets: { applied: number; undone: number; expired: number };
  /** How many turns, how many open, and how many were closed at a later start with their end never heard (`Turn.endLost`). */
  turns: { total: number; open: number; endLost: number };
  captures: { open: number; stale: number };
  blobs: { count: number; bytes: number };
  transactions: number;
  /**
   * The journal's write lock: whether another process holds it now, and who (its process id,
   * command line, since when in ms since the epoch, and whether it is stopped) when the holder
   * record names a live process. Hooks wait about a second for it, then queue their events.
   */
  lock: LockState;
  /** The changes that could not be kept as they happened (a full disk, a lock held too long): how many, why, when (ms since the epoch); null when none. */
  unkept: UnkeptSummary | null;
  /** Events the hooks queued in the spill that no process has folded in yet. */
  queued: number;
  limits: { maxFileBytes: number; maxWorkspaceFiles: number; maxWorkspaceBytes: number; maxBackgroundFiles: number; maxBackgroundBytes: number };
  /**
   * What the blob store keeps for all workspaces, and why (`takeback gc --dry-run`): copies the
   * working state needs, copies of live change sets, young unreferenced copies, and what a sweep
   * (or the retention rules) would take now; and the last sweep (`$TAKEBACK_HOME/gc.json`: when it
   * was claimed, when it ran and finished, what it took, in how many slices), null when none ran yet.
   */
  storage: Pick<GcReport, 'use' | 'expired' | 'sets' | 'limits' | 'workspaces'> & {
    snapshot: { tracked: number; copied: number } | null;
    lastSweep: LastSweep | null;
  };
  /** How a warm scan checks its stats: `native` (native/scan-check.c, built by `npm ci`) or `javascript` (not built, or TAKEBACK_NATIVE=0). */
  scanCheck: 'native' | 'javascript';
  problems: string[];
}

/** What doctor says of a journal's lock held by another process: who, since when, and whether it is stopped. */
function lockProblem(lock: LockState): string {
  if (!lock.holder) return `the journal is locked by ${holderText(null)} (hooks queue their events until it lets go)`;
  return `the journal is locked by ${holderText(lock.holder)}: hooks queue their events until it lets go`;
}

/** How long a turn may stay open before doctor names it: an hour, as for a tool call. */
const STALE_TURN_MS = 60 * 60 * 1000;

/**
 * What doctor says of a turn open with nothing heard of it (no change set, no tool call begun)
 * for over {@link STALE_TURN_MS}, `last` its last event (ms since the epoch): an agent whose
 * prompt failed before it could say it stopped (or was killed) leaves it so, and every change
 * seen until it ends is taken for the turn's. It names the turn, how long since it began and
 * since its last event, and what ends it: the same session's next prompt, or `takeback turn end`.
 */
function staleTurnProblem(t: Turn, last: number): string {
  const hoursSince = (at: number) => Math.max(1, Math.floor((Date.now() - at) / (60 * 60 * 1000)));
  const who = [t.agent, t.label ? `'${t.label}'` : null].filter(Boolean).join(', ');
  const end = `\`takeback turn end --id ${t.id}\``;
  const ends = t.session ? `the session's next prompt ends it, as does ${end}` : `${end} ends it`;
  const quiet = last > t.start ? `, nothing heard of it for ${hoursSince(last)} h,` : '';
  return `turn ${t.id}${who ? ` (${who})` : ''} began ${hoursSince(t.start)} h ago${quiet} and never ended (its prompt may have failed before the agent stopped, or the agent was killed): ${ends}`;
}

/**
 * What doctor says of the turns closed at a later start because their end was never heard (the
 * agent killed, its stop event lost): how many, the newest few by id, agent and prompt, and that
 * nothing after their last event was taken for theirs. Null when there are none.
 */
function lostTurnsProblem(lost: { turns: Turn[]; count: number }): string | null {
  if (lost.count === 0) return null;
  const named = lost.turns.map((t) => {
    const who = [t.agent, t.label ? `'${t.label}'` : null].filter(Boolean).join(', ');
    return `${t.id}${who ? ` (${who})` : ''}`;
  });
  const more = lost.count > lost.turns.length ? `, and ${lost.count - lost.turns.length} more` : '';
  const why = '(the agent killed, or its stop event lost)';
  if (lost.count === 1) return `turn ${named[0]} ended without its end event ${why}: closed at a later start at its last event, nothing seen after it taken for the turn's`;
  return `${lost.count} turns ended without their end event ${why}: closed at a later start at their last event, nothing seen after it taken for theirs: ${named.join(', ')}${more}`;
}

/**
 * Health and size of the journal, and whether commands are captured here. `outside` are the
 * problems found outside the journal (the capture daemon's, the agents' hooks'), listed after
 * the journal's own and before its file's.
 */
export function journalHealth(ws: Workspace, version: string, outside: string[]): JournalHealth {
  const { journal, config } = ws;
  const problems: string[] = [];
  const { partial, ...counts } = journal.sets.counts();
  // A partly undone set is counted as itself, in the JSON only.
  if (partial > 0) Object.assign(counts, { partial });
  const gc = collectGarbage({ home: ws.home, config, dryRun: true });
  const meta = journal.snapshot.meta();
  const captures = journal.captures.counts(STALE_CAPTURE_MS);
  // The command line closes such calls (repairLostEnds) before doctor looks: left when it could not.
  if (captures.stale > 0) problems.push(`${captures.stale} tool call(s) began over an hour ago and never ended (the agent may have been killed)`);
  // Only a turn quiet as long: one that began hours ago and still records changes is at work.
  problems.push(...journal.turns.quietSince(Date.now() - STALE_TURN_MS, { scripts: true }).map(({ turn, last }) => staleTurnProblem(turn, last)));
  const lostTurns = lostTurnsProblem(journal.turns.endedLost(5));
  if (lostTurns) problems.push(lostTurns);
  const txns = journal.txns.all().length;
  if (txns > 0) problems.push(`${txns} unfinished undo transaction(s) could not be rolled back`);
  const lock = lockState(journal.db, journal.dir);
  if (lock.held) problems.push(lockProblem(lock));
  const unkept = journal.unkept.summary();
  if (unkept) problems.push(`${unkeptText(unkept)}: named as capture gaps in takeback list`);
  // The log lies under the home too: on a full disk nothing says why the baseline and the events stopped but this.
  if (homeDiskFull(ws.home)) {
    const stalled = meta?.status === 'ok' && meta.pending ? ': the baseline in the background and the events queued wait for room' : '';
    problems.push(`the disk under ${ws.home} is full (under 256 KiB free): nothing more can be kept, nor logged${stalled}`);
  }
  const waiting = queued(journal.dir).entries.length;
  if (waiting > 0) problems.push(`${waiting} hook event(s) queued while the journal could not take them, not folded in yet`);
  const integrity = quickCheck(journal.db);
  if (integrity !== 'ok') problems.push(`journal database check: ${integrity}`);
  const unlisted = [...journal.snapshot.rows()].filter(([, buf]) => isUnlisted(rowStamp(buf))).map(([dir]) => dir || '.');
  if (unlisted.length > 0) {
    const shown = unlisted.sort().slice(0, 5).join(', ') + (unlisted.length > 5 ? ', …' : '');
    problems.push(`${unlisted.length} folder(s) could not be listed at the last scan (no permission): what changes in them is not captured (${shown})`);
  }
  problems.push(...outside);
  if (excludedIn(ws.root, config.excludePaths).length > 0) problems.push(`TAKEBACK_HOME (${ws.home}) is inside this workspace: every scan and capture leaves it out, but a command here can still delete the history (move it outside)`);
  const dbFile = join(journal.dir, 'journal.db');
  try {
    if ((statSync(dbFile).mode & 0o077) !== 0) problems.push(`${dbFile} is readable by others (expected 0600)`);
  } catch {
    problems.push(`${dbFile} is missing`);
  }
  return {
    version,
    workspace: ws.root,
    home: ws.home,
    journal: journal.dir,
    log: join(ws.home, 'logs', 'hook.log'),
    capture: captureStatus(ws),
    scanCheck: haveNativeCheck() ? 'native' : 'javascript',
    snapshot: meta ? { files: meta.files, bytes: meta.bytes, scannedAt: Number(BigInt(meta.startedNs) / 1_000_000n) } : null,
    sets: counts,
    turns: turnCounts(journal.db),
    captures,
    blobs: { count: gc.use.total.count, bytes: gc.use.total.bytes },
    transactions: txns,
    lock,
    unkept,
    queued: waiting,
    limits: {
      maxFileBytes: config.maxFileBytes,
      maxWorkspaceFiles: config.maxWorkspaceFiles,
      maxWorkspaceBytes: config.maxWorkspaceBytes,
      maxBackgroundFiles: config.maxBackgroundFiles,
      maxBackgroundBytes: config.maxBackgroundBytes,
    },
    storage: {
      use: gc.use,
      expired: gc.expired,
      sets: gc.sets,
      limits: gc.limits,
      workspaces: gc.workspaces,
      snapshot: meta && meta.status === 'ok' ? { tracked: meta.files - (meta.copied ?? meta.files), copied: meta.copied ?? meta.files } : null,
      lastSweep: lastSweep(ws.home),
    },
    problems,
  };
}
