import { statSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, takebackHome } from '../core/config.js';
import { openWorkspace, openWorkspaceAt, recoverIfNeeded, workspaceRootOf, type Workspace } from '../core/open-workspace.js';

/**
 * Workspaces a long-lived process keeps open between operations (the capture daemon), by home and
 * workspace root, least recently used first; at most {@link keepMax}. Kept open, a journal keeps
 * its SQLite connection (no open, pragmas and closing checkpoint an event: ≈ 1.5 ms) and its
 * snapshot rows in memory (a command's scan does not reload them: see SnapshotIndex).
 */
const kept = new Map<string, Workspace>();
let keepMax = 0;
/** The inode of each kept workspace.s `journal.db` when it was opened. */
const keptInode = new WeakMap<Workspace, number | null>();

function keyOf(home: string, root: string): string {
  return `${home}\0${root}`;
}

function dbInode(e: Workspace): number | null {
  try {
    return statSync(join(e.journal.dir, 'journal.db')).ino;
  } catch {
    return null;
  }
}

/** From now on {@link acquireWorkspace} keeps up to `max` workspaces open in this process (0, the default: none). */
export function keepWorkspacesOpen(max: number): void {
  keepMax = max;
  while (kept.size > keepMax) closeOldest();
}

function closeOldest(): void {
  const [key, e] = kept.entries().next().value as [string, Workspace];
  kept.delete(key);
  e.journal.close();
}

/** Closes every workspace kept open (a process about to leave). */
export function closeKeptWorkspaces(): void {
  for (const e of kept.values()) e.journal.close();
  kept.clear();
}

/**
 * {@link openWorkspace}, or, in a process that keeps workspaces open ({@link keepWorkspacesOpen}), the
 * one already open for the same home and workspace, with its config read again (from `env` and
 * `config.json`, as openWorkspace reads it) and a transaction another process left half-done
 * rolled back. `busyMs`: how long the writes of a workspace it opens wait for another process's lock
 * (see openWorkspaceAt). Give it back with {@link releaseWorkspace}.
 */
export function acquireWorkspace(opts: { workspace?: string; cwd?: string; env?: NodeJS.ProcessEnv; busyMs?: number } = {}): Workspace {
  if (keepMax === 0) return openWorkspace(opts);
  const env = opts.env ?? process.env;
  const home = takebackHome(env);
  const root = workspaceRootOf(home, opts);
  const key = keyOf(home, root);
  let ws = kept.get(key);
  // A journal deleted or replaced since it was opened (its folder removed, a home wiped): opened anew.
  if (ws && dbInode(ws) !== keptInode.get(ws)) {
    kept.delete(key);
    ws.journal.close();
    ws = undefined;
  }
  if (ws) {
    kept.delete(key);
    ws.config = loadConfig(home, env);
    recoverIfNeeded(ws);
  } else {
    ws = openWorkspaceAt(home, root, env, opts.busyMs);
    keptInode.set(ws, dbInode(ws));
    while (kept.size >= keepMax) closeOldest();
  }
  kept.set(key, ws);
  return ws;
}

/** Whether workspace `ws` of {@link acquireWorkspace} is still kept open by this process (not closed since to make room). */
export function stillKept(ws: Workspace): boolean {
  return kept.get(keyOf(ws.home, ws.root)) === ws;
}

/** Gives back a workspace of {@link acquireWorkspace}: closed, unless this process keeps it open. */
export function releaseWorkspace(ws: Workspace): void {
  if (kept.get(keyOf(ws.home, ws.root)) !== ws) ws.journal.close();
}
