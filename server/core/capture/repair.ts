import type { Workspace } from '../open-workspace.js';
import { HOOK_BUSY_MS } from '../journal/journal.js';
import { STALE_CAPTURE_MS } from '../journal/captures.js';
import { endCommand } from './command.js';
import { endFiles } from './files.js';
import { unkeptCause } from './queued.js';

/**
 * Closes the tool calls a journal left mid-way holds open for good: each begun over
 * {@link STALE_CAPTURE_MS} ago whose end never came (the hook process killed, the disk full with
 * no spill left, an event lost). Left open, it stays pending for ever. Returns their capture ids.
 *
 * Each is closed as its late end would be: what its paths (a file tool) or the workspace (a
 * command) hold now is recorded, every change a `not-kept` capture gap, because what is there an
 * hour later may hold the person's or another agent's later work — it is named, never taken back
 * as the agent's. Each is listed among the changes that could not be kept (cause `end-lost`),
 * which `list` and doctor count. A call younger than the bound is left: its end may still come.
 * A turn left open is not closed here: doctor names it, and its session's next prompt ends it.
 *
 * Runs at the start of the next session or turn, and of a command of the CLI (`list`, doctor).
 * Cheap when nothing is stale (one query of the calls in flight, no write). Waits at most
 * {@link HOOK_BUSY_MS} for another process's lock, and leaves the repair to a later start when
 * the journal cannot take it (the lock still held, a full disk: see `unkeptCause`), closing
 * nothing; throws other errors.
 */
export function repairLostEnds(ws: Workspace, now = Date.now()): string[] {
  const { journal } = ws;
  const before = now - STALE_CAPTURE_MS;
  if (!journal.captures.hasStale(before)) return [];
  try {
    return journal.withBusyTimeout(HOOK_BUSY_MS, () =>
      journal.write(() => {
        const closed: string[] = [];
        for (const pending of journal.captures.takeStale(before)) {
          const what =
            pending.kind === 'command'
              ? `${pending.tool ?? 'command'} ${pending.command ?? ''}`.trim()
              : `${pending.tool ?? 'tool'} ${pending.files.map((f) => f.path).join(' ')}`;
          journal.unkept.add({ at: pending.start, cause: 'end-lost', what: `${what}: its end was never heard`, capture: pending.id });
          if (pending.kind === 'command') endCommand(ws, pending, true);
          else endFiles(ws, pending, { late: true });
          closed.push(pending.id);
        }
        return closed;
      }),
    );
  } catch (e) {
    // The journal cannot take it now (its lock held, its disk full): a later start repairs it.
    if (unkeptCause(e, ws.home) === null) throw e;
    return [];
  }
}
