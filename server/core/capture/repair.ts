import type { Workspace } from '../open-workspace.js';
import { HOOK_BUSY_MS } from '../journal/journal.js';
import { STALE_CAPTURE_MS } from '../journal/captures.js';
import { endCommand } from './command.js';
import { endFiles } from './files.js';
import { unkeptCause } from './queued.js';
import { closeLostTurn } from './turn.js';

/** What {@link repairLostEnds} closed: the tool calls' capture ids and the turns' ids. */
export interface LostEnds {
  captures: string[];
  turns: string[];
}

/**
 * Closes what a journal left mid-way holds open for good (the hook process or the agent killed,
 * the disk full with no spill left, an event lost): left open, a tool call stays pending and a
 * turn "in progress" for ever, and a turn open takes what is seen until it ends for its own.
 *
 * A tool call begun over {@link STALE_CAPTURE_MS} ago whose end never came is closed as its late
 * end would be: what its paths (a file tool) or the workspace (a command) hold now is recorded,
 * every change a `not-kept` capture gap, because what is there an hour later may hold the
 * person's or another agent's later work — it is named, never taken back as the agent's. Each is
 * listed among the changes that could not be kept (cause `end-lost`), which `list` and doctor
 * count.
 *
 * An agent's turn with nothing heard of it for as long (no tool call in flight begun since, no
 * change recorded since; the calls closed here are no sign of life) is closed at its last event,
 * marked as ended without its end event (`Turn.endLost`, which `list` and doctor show): no scan,
 * so nothing that changed after its last event joins it. A turn of no session (a script's) is
 * ended by its script and left alone; so is anything younger than the bound, whose end may still
 * come.
 *
 * Runs at the start of the next session or turn, and of a command of the CLI (`list`, doctor).
 * Cheap when nothing is stale (two small queries, no write). Waits at most {@link HOOK_BUSY_MS}
 * for another process's lock, and leaves the repair to a later start when the journal cannot
 * take it (the lock still held, a full disk: see `unkeptCause`), closing nothing; throws other
 * errors.
 */
export function repairLostEnds(ws: Workspace, now = Date.now()): LostEnds {
  const { journal } = ws;
  const before = now - STALE_CAPTURE_MS;
  const none: LostEnds = { captures: [], turns: [] };
  if (!journal.hasLostEnds(now)) return none;
  try {
    return journal.withBusyTimeout(HOOK_BUSY_MS, () =>
      journal.write(() => {
        const out: LostEnds = { captures: [], turns: [] };
        // Found before the calls are closed: the sets those record are no sign of life.
        const quiet = journal.turns.quietSince(before);
        for (const pending of journal.captures.takeStale(before)) {
          const what =
            pending.kind === 'command'
              ? `${pending.tool ?? 'command'} ${pending.command ?? ''}`.trim()
              : `${pending.tool ?? 'tool'} ${pending.files.map((f) => f.path).join(' ')}`;
          journal.unkept.add({ at: pending.start, cause: 'end-lost', what: `${what}: its end was never heard`, capture: pending.id });
          if (pending.kind === 'command') endCommand(ws, pending, true);
          else endFiles(ws, pending, { late: true });
          out.captures.push(pending.id);
        }
        for (const { turn, last } of quiet) {
          closeLostTurn(ws, turn.id, last);
          out.turns.push(turn.id);
        }
        return out;
      }),
    );
  } catch (e) {
    // The journal cannot take it now (its lock held, its disk full): a later start repairs it.
    if (unkeptCause(e, ws.home) === null) throw e;
    return none;
  }
}
