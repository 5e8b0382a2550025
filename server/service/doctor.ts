import { excludedIn } from '../core/scan/filter.js';
import { haveNativeCheck } from '../core/scan/native.js';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../core/engine.js';
import { lastSweep, type LastSweep } from '../core/gc/schedule.js';
import { collectGarbage, type GcReport } from '../core/gc/sweep.js';
import { hookProblems } from '../agents/http-hooks.js';
import { claudeCode } from '../agents/claude-code.js';
import { daemonStatus, type DaemonStatus } from '../daemon/status.js';
import { captureStatus } from './changes.js';

/** What `takeback doctor` reports. Sizes in bytes. */
export interface DoctorReport {
  version: string;
  workspace: string;
  home: string;
  journal: string;
  log: string;
  capture: { commands: boolean; reason: string | null };
  snapshot: { files: number; bytes: number; scannedAt: number | null } | null;
  sets: { applied: number; undone: number; expired: number };
  turns: { total: number; open: number };
  captures: { open: number; stale: number };
  blobs: { count: number; bytes: number };
  transactions: number;
  limits: { maxFileBytes: number; maxWorkspaceFiles: number; maxWorkspaceBytes: number };
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
  /** The capture daemon (`takeback hook-daemon`): its socket, and the http hook ports it serves. */
  daemon: DaemonStatus;
  /** How a warm scan checks its stats: `native` (native/scan-check.c, built by `npm ci`) or `javascript` (not built, or TAKEBACK_NATIVE=0). */
  scanCheck: 'native' | 'javascript';
  problems: string[];
}

/** Health and size of the journal, and whether commands are captured here. */
export function doctor(engine: Engine, version: string): DoctorReport {
  const { journal, config } = engine;
  const problems: string[] = [];
  const { partial, ...counts } = journal.sets.counts();
  // A partly undone set is counted as itself, in the JSON only.
  if (partial > 0) Object.assign(counts, { partial });
  const turns = journal.db.prepare('SELECT count(*) AS total, sum(ended_at IS NULL) AS open FROM turns').get() as { total: number; open: number | null };
  const gc = collectGarbage({ home: engine.home, config, dryRun: true });
  const meta = journal.snapshot.meta();
  const captures = journal.captures.counts(60 * 60 * 1000);
  if (captures.stale > 0) problems.push(`${captures.stale} tool call(s) began over an hour ago and never ended (the agent may have been killed)`);
  const txns = journal.txns.all().length;
  if (txns > 0) problems.push(`${txns} unfinished undo transaction(s) could not be rolled back`);
  const integrity = journal.db.pragma('quick_check', { simple: true });
  if (integrity !== 'ok') problems.push(`journal database check: ${String(integrity)}`);
  const daemon = daemonStatus(engine.home);
  for (const h of daemon.http) {
    if (!h.alive) problems.push(`the capture daemon for http hooks on port ${h.port} (pid ${h.pid}) is gone: hooks run in-process until the next one starts it`);
  }
  problems.push(...hookProblems(claudeCode, engine.root, engine.home));
  if (excludedIn(engine.root, config.excludePaths).length > 0) problems.push(`TAKEBACK_HOME (${engine.home}) is inside this workspace: every scan and capture leaves it out, but a command here can still delete the history (move it outside)`);
  const dbFile = join(journal.dir, 'journal.db');
  try {
    if ((statSync(dbFile).mode & 0o077) !== 0) problems.push(`${dbFile} is readable by others (expected 0600)`);
  } catch {
    problems.push(`${dbFile} is missing`);
  }
  return {
    version,
    workspace: engine.root,
    home: engine.home,
    journal: journal.dir,
    log: join(engine.home, 'logs', 'hook.log'),
    capture: captureStatus(engine),
    scanCheck: haveNativeCheck() ? 'native' : 'javascript',
    snapshot: meta ? { files: meta.files, bytes: meta.bytes, scannedAt: Number(BigInt(meta.startedNs) / 1_000_000n) } : null,
    sets: counts,
    turns: { total: turns.total, open: turns.open ?? 0 },
    captures,
    blobs: { count: gc.use.total.count, bytes: gc.use.total.bytes },
    transactions: txns,
    limits: { maxFileBytes: config.maxFileBytes, maxWorkspaceFiles: config.maxWorkspaceFiles, maxWorkspaceBytes: config.maxWorkspaceBytes },
    storage: {
      use: gc.use,
      expired: gc.expired,
      sets: gc.sets,
      limits: gc.limits,
      workspaces: gc.workspaces,
      snapshot: meta && meta.status === 'ok' ? { tracked: meta.files - (meta.copied ?? meta.files), copied: meta.copied ?? meta.files } : null,
      lastSweep: lastSweep(engine.home),
    },
    daemon,
    problems,
  };
}
