import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { TakebackError } from './errors.js';
import { sha256Hex } from './sha256.js';

/**
 * The enclosing git work tree's top for `dir` (the nearest folder holding `.git`, a folder or a
 * file), else `dir` itself. Always a real path (links resolved). Throws `usage` when `dir` does
 * not exist. This is the project folder an agent's settings belong to; which journal a folder
 * belongs to is {@link findWorkspaceRootIn}'s rule.
 */
export function findWorkspaceRoot(dir: string): string {
  const start = realFolder(dir);
  for (let d = start; ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return d;
    if (dirname(d) === d) return start;
  }
}

/** `dir` as a real path (links resolved). Throws `usage` when it does not exist. */
export function realFolder(dir: string): string {
  try {
    return realpathSync(resolve(dir));
  } catch {
    throw new TakebackError('usage', `no such folder: ${dir}`, { path: dir });
  }
}

/**
 * The workspace for `dir`, by the one rule every entry point follows (the CLI from a folder or
 * with `--workspace`, an agent's hook by its event's cwd, the capture daemon, the sidecar by the
 * folder its editor names, and through the CLI the editor clients): the git work tree's top as
 * {@link findWorkspaceRoot} finds it; outside git, `dir` itself when it has a journal under
 * `home`, else the nearest folder above it whose journal has recorded something (`recorded`,
 * given the journal's database file: an agent that ran a command in a subfolder, `cwd` then
 * being that subfolder, belongs to the workspace its session started in), else `dir` itself. A
 * journal that holds nothing — made by a `list` or a `doctor` run there once — claims no
 * subfolder: run once in `$HOME`, it would otherwise take in every project below.
 */
export function findWorkspaceRootIn(home: string, dir: string, recorded: (dbFile: string) => boolean): string {
  const root = findWorkspaceRoot(dir);
  if (existsSync(join(root, '.git'))) return root;
  for (let d = root; ; d = dirname(d)) {
    const db = join(home, 'workspaces', workspaceKey(d), 'journal.db');
    if (existsSync(db) && (d === root || recorded(db))) return d;
    if (dirname(d) === d) return root;
  }
}

/**
 * A short stable name for a workspace root: the first 16 hex digits of its SHA-256 (of its UTF-8
 * bytes). Hashed without node:crypto (sha256.ts): `list` and `show` need nothing else of it.
 */
export function workspaceKey(root: string): string {
  return sha256Hex(root).slice(0, 16);
}

/**
 * `p` (absolute, or relative to `cwd`) as a workspace-relative path with `/` separators, or
 * `null` when it lies outside `root`. Does not touch the disk.
 */
export function toWorkspacePath(root: string, p: string, cwd = root): string | null {
  const abs = isAbsolute(p) ? resolve(p) : resolve(cwd, p);
  const rel = relative(root, abs);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

/**
 * The absolute path of workspace-relative `rel`, refusing anything that would leave the root
 * (`..`, absolute paths, NUL bytes): throws `outside-workspace`.
 */
export function fromWorkspacePath(root: string, rel: string): string {
  if (rel.includes('\0') || isAbsolute(rel) || rel.split('/').some((s) => s === '..' || s === '')) {
    throw new TakebackError('outside-workspace', `path outside the workspace: ${rel}`, { path: rel });
  }
  return join(root, ...rel.split('/'));
}
