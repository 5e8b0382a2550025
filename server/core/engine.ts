import { loadConfig, takebackHome, type Config } from './config.js';
import { Journal } from './journal/journal.js';
import { recoverTxns } from './plan/recover.js';
import { findWorkspaceRoot, findWorkspaceRootIn } from './workspace.js';

/** Everything an operation on one workspace needs: its root (a real path), its journal, the limits. */
export interface Engine {
  root: string;
  home: string;
  config: Config;
  journal: Journal;
}

/**
 * Opens the engine for the workspace that encloses `opts.workspace` (or `opts.cwd`, or the
 * current folder): the git root, else that folder — for `cwd`, outside git, the nearest folder
 * above it that already has a journal (see `findWorkspaceRootIn`). The journal lives under
 * `$TAKEBACK_HOME`.
 * An undo or redo that a killed process left half-done is rolled back here.
 */
export function openEngine(opts: { workspace?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Engine {
  const env = opts.env ?? process.env;
  const home = takebackHome(env);
  const root = opts.workspace ? findWorkspaceRoot(opts.workspace) : findWorkspaceRootIn(home, opts.cwd ?? process.cwd());
  const config = loadConfig(home, env);
  const journal = Journal.open(home, root);
  const engine = { root, home, config, journal };
  // An undo or redo cut short by a killed process is rolled back before anything else reads.
  if (journal.txns.all().length > 0) journal.write(() => recoverTxns(engine));
  return engine;
}
