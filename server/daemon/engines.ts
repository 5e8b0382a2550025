import { statSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, takebackHome } from '../core/config.js';
import { openEngine, openEngineAt, recoverIfNeeded, workspaceRootOf, type Engine } from '../core/engine.js';

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
 * rolled back. `busyMs`: how long the writes of an engine it opens wait for another process's lock
 * (see openEngineAt). Give it back with {@link releaseEngine}.
 */
export function acquireEngine(opts: { workspace?: string; cwd?: string; env?: NodeJS.ProcessEnv; busyMs?: number } = {}): Engine {
  if (keepMax === 0) return openEngine(opts);
  const env = opts.env ?? process.env;
  const home = takebackHome(env);
  const root = workspaceRootOf(home, opts);
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
    engine = openEngineAt(home, root, env, opts.busyMs);
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
