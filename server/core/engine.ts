import { statSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, takebackHome, type Config } from './config.js';
import { journalHasRecords } from './journal/db.js';
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
 * above it whose journal has recorded something (see `findWorkspaceRootIn`). The journal lives under
 * `$TAKEBACK_HOME`.
 * An undo or redo that a killed process left half-done is rolled back here.
 */
export function openEngine(opts: { workspace?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Engine {
  const env = opts.env ?? process.env;
  const home = takebackHome(env);
  return openAt(home, rootOf(home, opts), env);
}

/** The workspace root `opts` names (see {@link openEngine}). */
function rootOf(home: string, opts: { workspace?: string; cwd?: string }): string {
  return opts.workspace ? findWorkspaceRoot(opts.workspace) : findWorkspaceRootIn(home, opts.cwd ?? process.cwd(), journalHasRecords);
}

/** Opens the engine of workspace `root` (found already) under `home`. */
function openAt(home: string, root: string, env: NodeJS.ProcessEnv): Engine {
  const config = loadConfig(home, env);
  const journal = Journal.open(home, root);
  const engine = { root, home, config, journal };
  recoverIfNeeded(engine);
  return engine;
}

/** An undo or redo cut short by a killed process is rolled back before anything else reads. */
function recoverIfNeeded(engine: Engine): void {
  if (engine.journal.txns.all().length > 0) engine.journal.write(() => recoverTxns(engine));
}

/**
 * Engines a long-lived process keeps open between operations (the capture daemon), by home and
 * workspace root, least recently used first; at most {@link keepMax}. Kept open, a journal keeps
 * its SQLite connection (no open, pragmas and closing checkpoint an event: ≈ 1.5 ms) and its
 * snapshot rows in memory (a command's scan does not reload them: see SnapshotIndex).
 */
const kept = new Map<string, Engine>();
let keepMax = 0;
/** The inode of each kept engine's `journal.db` when it was opened. */
const keptInode = new WeakMap<Engine, number | null>();

function keyOf(home: string, root: string): string {
  return `${home}\0${root}`;
}

function dbInode(e: Engine): number | null {
  try {
    return statSync(join(e.journal.dir, 'journal.db')).ino;
  } catch {
    return null;
  }
}

/** From now on {@link acquireEngine} keeps up to `max` engines open in this process (0, the default: none). */
export function keepEnginesOpen(max: number): void {
  keepMax = max;
  while (kept.size > keepMax) closeOldest();
}

function closeOldest(): void {
  const [key, e] = kept.entries().next().value as [string, Engine];
  kept.delete(key);
  e.journal.close();
}

/** Closes every engine kept open (a process about to leave). */
export function closeKeptEngines(): void {
  for (const e of kept.values()) e.journal.close();
  kept.clear();
}

/**
 * {@link openEngine}, or, in a process that keeps engines open ({@link keepEnginesOpen}), the
 * one already open for the same home and workspace, with its config read again (from `env` and
 * `config.json`, as openEngine reads it) and a transaction another process left half-done
 * rolled back. Give it back with {@link releaseEngine}.
 */
export function acquireEngine(opts: { workspace?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Engine {
  if (keepMax === 0) return openEngine(opts);
  const env = opts.env ?? process.env;
  const home = takebackHome(env);
  const root = rootOf(home, opts);
  const key = keyOf(home, root);
  let engine = kept.get(key);
  // A journal deleted or replaced since it was opened (its folder removed, a home wiped): opened anew.
  if (engine && dbInode(engine) !== keptInode.get(engine)) {
    kept.delete(key);
    engine.journal.close();
    engine = undefined;
  }
  if (engine) {
    kept.delete(key);
    engine.config = loadConfig(home, env);
    recoverIfNeeded(engine);
  } else {
    engine = openAt(home, root, env);
    keptInode.set(engine, dbInode(engine));
    while (kept.size >= keepMax) closeOldest();
  }
  kept.set(key, engine);
  return engine;
}

/** Gives back an engine of {@link acquireEngine}: closed, unless this process keeps it open. */
export function releaseEngine(engine: Engine): void {
  if (kept.get(keyOf(engine.home, engine.root)) !== engine) engine.journal.close();
}
