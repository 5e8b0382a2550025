import { closeSync, constants, fstatSync, ftruncateSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
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
 * emptied once the record is done. A daemon killed in between leaves it behind, naming the event
 * as the capture operations that stand for it. The next process that acts on a journal under that
 * home (a hook, in-process or in a new daemon; a command of the command line; the sidecar through
 * it) queues those operations in the spill of the event's workspace, cause `record-lost`, before
 * anything else: folded in late (core/capture/queued.ts), a command's begin or end, or a turn's
 * end, names every change it finds as a `not-kept` capture gap and is listed among the changes
 * that could not be kept (`list`, doctor). Nothing the agent was told was kept is lost unsaid.
 *
 * The file is not synced: it stands for a record lost to a killed process, not to a power cut
 * (see AnswerPoint for what a power cut in the window takes). A daemon keeps its marker open
 * between events and empties it once a record is done, rather than making and removing it for
 * each (one write on the agent's path instead of a file made): an empty marker stands for
 * nothing (unrecorded-marker.ts), and the daemon removes it as it leaves.
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

/** This process's marker, kept open between events: its path and descriptor. */
let kept: { file: string; fd: number } | null = null;

/** Closes the marker kept open, if any. */
function closeKept(): void {
  if (!kept) return;
  try {
    closeSync(kept.fd);
  } catch {
    // closed already
  }
  kept = null;
}

/**
 * The descriptor of marker `file`, empty: the one kept open while its file is still there (a
 * home wiped meanwhile unlinked it: opened anew), else opened (made 0600; never through a link).
 * Throws what the open throws.
 */
function emptyMarker(file: string): number {
  if (kept && kept.file === file) {
    const st = fstatSync(kept.fd);
    if (st.nlink > 0) {
      if (st.size > 0) ftruncateSync(kept.fd, 0);
      return kept.fd;
    }
  }
  closeKept();
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
  kept = { file, fd };
  return fd;
}

/**
 * Writes this process's marker under `home` for an event of the workspace around `cwd` answered
 * ahead of its record, whose capture operations are `ops` (0600, in the 0700 run folder). False
 * when it could not be written (the event is then answered once recorded). Before it first opens
 * its marker, a process queues what a marker of its own pid left by a process that is gone names
 * (a pid used again: a container started anew gives its daemon the pid it had), rather than
 * empty it unread. `log` hears what was queued. Never throws.
 */
export function markUnrecorded(home: string, cwd: string, ops: QueuedOp[], log?: (message: string) => void): boolean {
  ownStart ??= processStart(process.pid);
  const m: Marker = { pid: process.pid, start: ownStart, at: Date.now(), cwd, ops };
  try {
    const text = Buffer.from(JSON.stringify(m));
    const file = markerFile(home, process.pid);
    if (kept?.file !== file) adoptUnrecorded(home, log);
    const fd = emptyMarker(file);
    if (writeSync(fd, text, 0, text.length, 0) !== text.length) throw new Error('short write');
    return true;
  } catch {
    closeKept();
    return false;
  }
}

/** Empties this process's marker under `home` (its record is done), or removes it where it is not kept open. Never throws. */
export function unmarkUnrecorded(home: string): void {
  const file = markerFile(home, process.pid);
  if (kept && kept.file === file) {
    try {
      ftruncateSync(kept.fd, 0);
      return;
    } catch {
      closeKept();
    }
  }
  try {
    unlinkSync(file);
  } catch {
    // never written
  }
}

/**
 * This process is leaving: its marker under `home`, when empty, is removed and closed; one that
 * still names an event (a record not done) is left for the next process to queue. Never throws.
 */
export function closeUnrecorded(home: string): void {
  const file = markerFile(home, process.pid);
  if (!kept || kept.file !== file) return;
  try {
    if (fstatSync(kept.fd).size === 0) unlinkSync(file);
  } catch {
    // gone already
  }
  closeKept();
}

/**
 * Queues what every marker under `home` left by a capture daemon that is gone names (see the
 * module's comment) in the spill of its workspace, and removes the marker; a marker that is not
 * whole (its daemon killed while writing it, before it answered) is removed unread. Markers of
 * live processes, this one's included, are left; a marker of this process's pid written by
 * another process (a pid used again, told by its start) is not this one's. `log` hears what was queued or lost. Returns how
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
    if (!Number.isInteger(pid)) continue;
    const file = join(runDir(home), name);
    // This process's own marker, kept open: not read (every event of the daemon looks here).
    if (pid === process.pid && kept?.file === file) continue;
    // Empty (its daemon's last record done) or not whole (its daemon killed while writing it, before it answered): null.
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
