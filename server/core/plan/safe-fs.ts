import { closeSync, constants, fchmodSync, lstatSync, mkdirSync, openSync, realpathSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TakebackError } from '../errors.js';
import type { FileState } from '../types.js';
import { fromWorkspacePath } from '../workspace.js';
import { runJobSync, type ChmodJob, type RemoveJob, type WriteJob } from './jobs.js';

/*
 * Writing back into the workspace, safely. Why not a generic atomic-write library: those resolve
 * symbolic links and write through them (write-file-atomic calls realpath first), and takeback
 * must never write through a link, nor into a folder whose real path moved, nor outside the
 * workspace. A small file is written over a plain file already there, in place (jobs.ts says why
 * and what keeps it safe); every other write goes to a temporary file beside the target, named
 * after the transaction so that recovery can find it, and is renamed into place.
 */

/**
 * Files of at most this many bytes (256 KiB) are written in place over a plain file already
 * there (one write call: a reader at that moment may see part of it, which for larger files
 * would last longer, while the rename they go through instead costs relatively less).
 */
export const IN_PLACE_MAX_BYTES = 256 * 1024;

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw e;
  }
}

function refuse(rel: string, why: string): never {
  throw new TakebackError('outside-workspace', `refusing to write ${rel}: ${why}`, { path: rel });
}

/**
 * Folders already verified within one step (one transaction tag): the walk from the root is done
 * once a folder, and each later write into it re-checks only that folder (not a link, still a
 * folder, real path where it should be) right before its rename. Made by {@link writeContext}.
 */
export interface WriteContext {
  /** The root's real path, resolved once for the step. */
  rootReal: string;
  /** Workspace-relative folders walked and verified in this step ('' is the root). */
  verified: Set<string>;
}

/** A fresh {@link WriteContext} for one step's writes under `root`. */
export function writeContext(root: string): WriteContext {
  return { rootReal: realpathSync.native(root), verified: new Set() };
}

/**
 * The one-folder check, done right before each rename: `rel`'s parent is a real folder (not a
 * link) and its real path is where it should be under the root's real path (a folder on the way
 * swapped for a link, or moved, gives another real path).
 */
function checkParent(root: string, rel: string, rootReal: string): string {
  const parent = dirname(fromWorkspacePath(root, rel));
  const st = lstatOrNull(parent);
  if (!st || st.isSymbolicLink() || !st.isDirectory()) refuse(rel, 'its folder moved');
  let real: string;
  try {
    real = realpathSync.native(parent);
  } catch {
    refuse(rel, 'its folder moved');
  }
  if (real !== join(rootReal, ...rel.split('/').slice(0, -1))) refuse(rel, 'its folder moved');
  return parent;
}

/**
 * Makes sure every folder from the workspace root down to `rel`'s parent exists and is a real
 * folder: a component that is a symbolic link (or not a folder) is refused. Folders are created
 * as needed (their paths are appended to `made`) and checked again after creating, and the
 * parent's real path must be where it should be under the root's real path. With `ctx`, a parent
 * already walked in this step is only checked itself ({@link checkParent}).
 */
export function ensureParent(root: string, rel: string, made: string[] = [], ctx?: WriteContext): string {
  const segs = rel.split('/');
  const parentRel = segs.slice(0, -1).join('/');
  if (ctx && ctx.verified.has(parentRel)) return checkParent(root, rel, ctx.rootReal);
  let dir = root;
  for (let i = 0; i < segs.length - 1; i++) {
    dir = join(dir, segs[i]!);
    let st = lstatOrNull(dir);
    if (!st) {
      mkdirSync(dir, { mode: 0o777 });
      made.push(dir);
      st = lstatOrNull(dir);
    }
    if (!st || st.isSymbolicLink()) refuse(rel, `${segs.slice(0, i + 1).join('/')} is a symbolic link`);
    if (!st.isDirectory()) refuse(rel, `${segs.slice(0, i + 1).join('/')} is not a folder`);
  }
  const parent = dirname(fromWorkspacePath(root, rel));
  const rootReal = ctx ? ctx.rootReal : realpathSync(root);
  if (realpathSync(parent) !== join(rootReal, ...segs.slice(0, -1))) refuse(rel, 'its folder moved');
  ctx?.verified.add(parentRel);
  return parent;
}

/** The temporary name beside `abs` for transaction `tag`: `.<name>.takeback-<tag>`. */
function tmpName(abs: string, tag: string): string {
  return join(dirname(abs), `.${basename(abs)}.takeback-${tag}`);
}

/** The real path workspace path `rel`'s folder must have, under the root's real path `rootReal`. */
function parentRealOf(rootReal: string, rel: string): string {
  return join(rootReal, ...rel.split('/').slice(0, -1));
}

/**
 * The job that removes workspace path `rel` (a file, a link or an empty folder) once every folder
 * on the way is checked to be a real folder (see {@link runJobSync}).
 */
export function removeJob(root: string, rel: string): RemoveJob {
  const abs = fromWorkspacePath(root, rel);
  const segs = rel.split('/');
  const walk: [string, string][] = [];
  for (let i = 1; i < segs.length; i++) walk.push([join(root, ...segs.slice(0, i)), segs.slice(0, i).join('/')]);
  return { kind: 'remove', rel, abs, walk };
}

/**
 * The job that puts file or link state `to` at workspace path `rel`, with `bytes` the verified
 * bytes of a file state: in place over a plain file there when they are at most
 * {@link IN_PLACE_MAX_BYTES}, else through a temporary file of transaction `tag`. The job checks
 * the folder right before the write in place or the rename, and before making the temporary file
 * when `checkFirst`; it does not make the folder (see {@link ensureParent}). Throws `capture-gap`
 * when a file state comes without bytes.
 */
export function writeJob(root: string, rootReal: string, rel: string, to: FileState, bytes: Buffer | null, tag: string, checkFirst: boolean): WriteJob {
  if (!to.exists || to.type === 'dir') throw new TypeError(`writeJob: ${rel} is not a file or a link state`);
  const abs = fromWorkspacePath(root, rel);
  if (to.type === 'file' && !bytes) throw new TakebackError('capture-gap', `no kept bytes for ${rel}`, { path: rel });
  return {
    kind: 'write',
    rel,
    abs,
    tmp: tmpName(abs, tag),
    parent: dirname(abs),
    parentReal: parentRealOf(rootReal, rel),
    checkFirst,
    mode: to.mode,
    bytes: to.type === 'file' ? bytes : null,
    link: to.type === 'symlink' ? to.target : null,
    inPlaceMax: IN_PLACE_MAX_BYTES,
  };
}

/** The job that sets the permission bits of the file at workspace path `rel` to `mode` (its folder checked first). */
export function chmodJob(root: string, rootReal: string, rel: string, mode: number): ChmodJob {
  const abs = fromWorkspacePath(root, rel);
  return { kind: 'chmod', rel, abs, parent: dirname(abs), parentReal: parentRealOf(rootReal, rel), mode };
}

/** Removes what is at `abs` (a file, a link, or an empty folder). Returns false for a folder that is not empty. */
function removeAt(abs: string): boolean {
  const st = lstatOrNull(abs);
  if (!st) return true;
  if (st.isDirectory()) {
    try {
      rmdirSync(abs);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOTEMPTY' || (e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    }
    return true;
  }
  unlinkSync(abs);
  return true;
}

/**
 * Puts workspace path `rel` into state `to`: `bytes` are the verified bytes of a file state.
 * Never follows a link at `rel` itself (a link there is replaced, not written through). Returns
 * a note when something was left as it was (a folder that is not empty), else null. Files, links
 * and removals are the steps of jobs.ts, run on this thread.
 */
export function writeState(
  root: string,
  rel: string,
  to: FileState,
  bytes: Buffer | null,
  tag: string,
  made: string[] = [],
  ctx?: WriteContext,
): string | null {
  if (!to.exists) return runJobSync(removeJob(root, rel));
  const abs = fromWorkspacePath(root, rel);
  ensureParent(root, rel, made, ctx);
  if (to.type === 'dir') {
    const cur = lstatOrNull(abs);
    if (cur && !cur.isDirectory()) removeAt(abs);
    if (!cur || !cur.isDirectory()) {
      mkdirSync(abs, { mode: to.mode });
      made.push(abs);
    }
    const st = lstatOrNull(abs);
    if (!st || !st.isDirectory()) refuse(rel, 'the folder could not be made');
    const fd = openSync(abs, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    try {
      fchmodSync(fd, to.mode);
    } finally {
      closeSync(fd);
    }
    return null;
  }
  const rootReal = ctx ? ctx.rootReal : realpathSync.native(root);
  return runJobSync(writeJob(root, rootReal, rel, to, bytes, tag, false));
}

/** Changes only the permission bits of the file at `rel`, without following a link. */
export function chmodState(root: string, rel: string, mode: number, ctx?: WriteContext): void {
  ensureParent(root, rel, [], ctx);
  runJobSync(chmodJob(root, ctx ? ctx.rootReal : realpathSync.native(root), rel, mode));
}

/** Removes temporary files a transaction `tag` may have left beside `rel` (recovery). */
export function removeTemp(root: string, rel: string, tag: string): void {
  try {
    const abs = fromWorkspacePath(root, rel);
    const tmp = tmpName(abs, tag);
    if (lstatOrNull(tmp)) unlinkSync(tmp);
  } catch {
    // The folder is gone, or the path is refused: nothing of ours can be there.
  }
}
