import { loadConfig, takebackHome, type Config } from './config.js';
import { journalHasRecords } from './journal/db.js';
import { HOOK_BUSY_MS, Journal } from './journal/journal.js';
import { recoverTxns } from './plan/recover.js';
import { findWorkspaceRootIn } from './workspace.js';

/** Everything an operation on one workspace needs: its root (a real path), its journal, the limits. */
export interface Workspace {
  root: string;
  home: string;
  config: Config;
  journal: Journal;
  /**
   * True when opening it (or acquiring it again) found an undo or redo of another live process
   * under way: its transaction's lock still held after about a second (see recoverIfNeeded). A
   * hook that has waited that second does not wait again: it queues its event.
   */
  undoUnderWay?: boolean;
}

/**
 * Opens the workspace of `opts.workspace` (or `opts.cwd`, or the current folder),
 * found by the one rule every entry point uses ({@link findWorkspaceRootIn}): the git root, else,
 * outside git, that folder or the nearest folder above it whose journal has recorded something.
 * The journal lives under `$TAKEBACK_HOME`.
 * An undo or redo that a killed process left half-done is rolled back here.
 */
export function openWorkspace(opts: { workspace?: string; cwd?: string; env?: NodeJS.ProcessEnv; busyMs?: number } = {}): Workspace {
  const env = opts.env ?? process.env;
  const home = takebackHome(env);
  return openWorkspaceAt(home, workspaceRootOf(home, opts), env, opts.busyMs);
}

/** The workspace root `opts` names (see {@link openWorkspace}): a real path. */
export function workspaceRootOf(home: string, opts: { workspace?: string; cwd?: string }): string {
  return findWorkspaceRootIn(home, opts.workspace ?? opts.cwd ?? process.cwd(), journalHasRecords);
}

/**
 * Opens workspace `root` (found already, by {@link workspaceRootOf}) under `home`,
 * as {@link openWorkspace} does. `busyMs`: how long its writes wait for another process's lock
 * (see `Journal.open`).
 */
export function openWorkspaceAt(home: string, root: string, env: NodeJS.ProcessEnv, busyMs?: number): Workspace {
  const config = loadConfig(home, env);
  const journal = Journal.open(home, root, { busyMs });
  const ws = { root, home, config, journal };
  recoverIfNeeded(ws);
  return ws;
}

/**
 * Rolls back an undo or redo that a killed process cut short, before anything else reads the
 * journal. Cheap when there is none (one folder listing). A transaction whose lock is still held
 * after about a second belongs to a live undo or redo (a killed one holds no lock): it is left
 * to it, and rolled back by a later open if its process dies; `ws.undoUnderWay` says so.
 */
export function recoverIfNeeded(ws: Workspace): void {
  const { journal } = ws;
  ws.undoUnderWay = false;
  if (journal.txns.all().length === 0) return;
  try {
    journal.withBusyTimeout(HOOK_BUSY_MS, () => journal.write(() => recoverTxns(ws)));
  } catch (e) {
    if (!String((e as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY')) throw e;
    ws.undoUnderWay = true;
  }
}
