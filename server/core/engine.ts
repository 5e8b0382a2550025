import { loadConfig, takebackHome, type Config } from './config.js';
import { journalHasRecords } from './journal/db.js';
import { Journal } from './journal/journal.js';
import { recoverTxns } from './plan/recover.js';
import { findWorkspaceRootIn } from './workspace.js';

/** Everything an operation on one workspace needs: its root (a real path), its journal, the limits. */
export interface Engine {
  root: string;
  home: string;
  config: Config;
  journal: Journal;
}

/**
 * Opens the engine for the workspace of `opts.workspace` (or `opts.cwd`, or the current folder),
 * found by the one rule every entry point uses ({@link findWorkspaceRootIn}): the git root, else,
 * outside git, that folder or the nearest folder above it whose journal has recorded something.
 * The journal lives under `$TAKEBACK_HOME`.
 * An undo or redo that a killed process left half-done is rolled back here.
 */
export function openEngine(opts: { workspace?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Engine {
  const env = opts.env ?? process.env;
  const home = takebackHome(env);
  return openEngineAt(home, workspaceRootOf(home, opts), env);
}

/** The workspace root `opts` names (see {@link openEngine}): a real path. */
export function workspaceRootOf(home: string, opts: { workspace?: string; cwd?: string }): string {
  return findWorkspaceRootIn(home, opts.workspace ?? opts.cwd ?? process.cwd(), journalHasRecords);
}

/** Opens the engine of workspace `root` (found already, by {@link workspaceRootOf}) under `home`, as {@link openEngine} does. */
export function openEngineAt(home: string, root: string, env: NodeJS.ProcessEnv): Engine {
  const config = loadConfig(home, env);
  const journal = Journal.open(home, root);
  const engine = { root, home, config, journal };
  recoverIfNeeded(engine);
  return engine;
}

/**
 * Rolls back an undo or redo that a killed process cut short, before anything else reads the
 * journal. Cheap when there is none (one folder listing).
 */
export function recoverIfNeeded(engine: Engine): void {
  if (engine.journal.txns.all().length > 0) engine.journal.write(() => recoverTxns(engine));
}
