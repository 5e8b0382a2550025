import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runDir } from './address.js';

/*
 * Whether a capture daemon has an event answered and not recorded yet (its marker in `run/`, see
 * unrecorded.ts), apart from what adopts a marker: every command of the command line asks this
 * before it opens a journal (daemon/settle.ts), and loads the capture code that queues what a
 * killed daemon left only when there is a marker.
 */

/** How a marker's name begins: `unrecorded-<pid>.json` in `$TAKEBACK_HOME/run/`. */
export const MARKER_PREFIX = 'unrecorded-';

/** Whether `name`, in `run/`, is a marker's. */
export function isMarkerName(name: string): boolean {
  return name.startsWith(MARKER_PREFIX) && name.endsWith('.json');
}

/**
 * True while a marker that is not empty is there under `home`: some daemon answered an event it
 * has not recorded yet (or was killed before it did). A daemon keeps its marker, empty, between
 * events: an empty one stands for nothing. None: nothing an agent was answered for is missing
 * from the journals, and a reader need not ask the daemon. One folder listing and a stat of each
 * marker; never throws.
 */
export function hasUnrecorded(home: string): boolean {
  try {
    const dir = runDir(home);
    return readdirSync(dir).some((n) => isMarkerName(n) && (statSync(join(dir, n), { throwIfNoEntry: false })?.size ?? 0) > 0);
  } catch {
    return false;
  }
}
