import { readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDir } from './address.js';
import { isMarkerName, MARKER_PREFIX as PREFIX } from './unrecorded-marker.js';
import { queueOps, type QueuedOp } from '../core/capture/queued.js';
import { loadConfig } from '../core/config.js';
import { journalDirOf } from '../core/journal/journal.js';
import { workspaceRootOf } from '../core/open-workspace.js';
import { processAlive, processStart } from '../core/proc.js';
import { BlobStore } from '../core/store/blobs.js';

/*
 * What a capture daemon keeps while it records an event it has answered already (see AnswerPoint
 * in agents/registry.ts): `$TAKEBACK_HOME/run/unrecorded-<pid>.json`, written before the answer,
 * removed once the record is done. A daemon killed in between leaves it behind, naming the event
 * as the capture operations that stand for it. The next process that acts on a journal under that
 * home (a hook, in-process or in a new daemon; a command of the command line; the sidecar through
 * it) queues those operations in the spill of the event's workspace, cause `record-lost`, before
 * anything else: folded in late (core/capture/queued.ts), a command's begin or end, or a turn's
 * end, names every change it finds as a `not-kept` capture gap and is listed among the changes
 * that could not be kept (`list`, doctor). Nothing the agent was told was kept is lost unsaid.
 *
 * The file is not synced: it stands for a record lost to a killed process, not to a power cut
 * (see AnswerPoint for what a power cut in the window takes).
 */

/** What a marker holds. */
interface Marker {
  /** The daemon's pid and when it started (see processStart): a marker of a live daemon is its own business. */
  pid: number;
  start: string | null;
  /** When it answered (ms since the epoch). */
  at: number;
  /** The event's folder, which names its workspace. */
  cwd: string;
  /** The capture operations that stand for the event. */
  ops: QueuedOp[];
}

/** The marker of process `pid` under `home`. */
function markerFile(home: string, pid: number): string {
  return join(runDir(home), `${PREFIX}${pid}.json`);
}

let ownStart: string | null | undefined;

/**
 * Writes this process's marker under `home` for an event of the workspace around `cwd` answered
 * ahead of its record, whose capture operations are `ops` (0600, in the 0700 run folder). False
 * when it could not be written (the event is then answered once recorded). Never throws.
 */
export function markUnrecorded(home: string, cwd: string, ops: QueuedOp[]): boolean {
  ownStart ??= processStart(process.pid);
  const m: Marker = { pid: process.pid, start: ownStart, at: Date.now(), cwd, ops };
  try {
    writeFileSync(markerFile(home, process.pid), JSON.stringify(m), { mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

/** Removes this process's marker under `home` (its record is done). Never throws. */
export function unmarkUnrecorded(home: string): void {
  try {
    unlinkSync(markerFile(home, process.pid));
  } catch {
    // never written
  }
}

/**
 * Queues what every marker under `home` left by a capture daemon that is gone names (see the
 * module's comment) in the spill of its workspace, and removes the marker; a marker that is not
 * whole (its daemon killed while writing it, before it answered) is removed unread. Markers of
 * live processes, this one's included, are left. `log` hears what was queued or lost. Returns how
 * many events were queued. Cheap when there is none (one folder listing). Never throws.
 */
export function adoptUnrecorded(home: string, log?: (message: string) => void): number {
  let names: string[];
  try {
    names = readdirSync(runDir(home)).filter(isMarkerName);
  } catch {
    return 0;
  }
  let adopted = 0;
  for (const name of names) {
    const pid = Number(name.slice(PREFIX.length, -'.json'.length));
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const file = join(runDir(home), name);
    let m: Marker | null = null;
    try {
      m = JSON.parse(readFileSync(file, 'utf8')) as Marker;
    } catch {
      m = null;
    }
    if (processAlive(pid, m?.start ?? null)) continue;
    // Taken by one process only: the rename.
    const mine = `${file}.${process.pid}`;
    try {
      renameSync(file, mine);
    } catch {
      continue;
    }
    try {
      if (m && Array.isArray(m.ops) && m.ops.length > 0 && typeof m.cwd === 'string') {
        const root = workspaceRootOf(home, { cwd: m.cwd });
        const config = loadConfig(home, process.env);
        const kept = queueOps(journalDirOf(home, root), { root, config, blobs: new BlobStore(home) }, 'record-lost', m.ops);
        const what = m.ops.map((o) => o.op).join(', ');
        log?.(`hook: the capture daemon ${pid} answered an event and was gone before recording it: ${kept ? `queued ${what} (its changes named as not kept)` : `${what} lost (the spill of ${root} could not take it)`}`);
        if (kept) adopted++;
      }
    } catch (e) {
      log?.(`hook: what the capture daemon ${pid} left unrecorded could not be queued: ${(e as Error).message}`);
    } finally {
      try {
        unlinkSync(mine);
      } catch {
        // gone
      }
    }
  }
  return adopted;
}
