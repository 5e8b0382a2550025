import { chmodSync, closeSync, constants, fchmodSync, lstatSync, mkdirSync, openSync, realpathSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { TakebackError } from '../errors.js';
import type { FileState } from '../types.js';
import { fromWorkspacePath } from '../workspace.js';
import { readState } from '../fsstate.js';
import { foundOf, type Found } from './job-steps.js';
import { runJobSync, type ChmodJob, type RemoveJob, type WriteJob } from './jobs.js';

/*
 * Writing back into the workspace, safely. Why not a generic atomic-write library: those resolve
 * symbolic links and write through them (write-file-atomic calls realpath first), and takeback
 * must never write through a link, nor into a folder whose real path moved, nor outside the
 * workspace, even while a folder on the way is being swapped (see below). A small file is
 * written over a plain file already there, in place (jobs.ts says why and what keeps it safe);
 * every other write goes to a temporary file beside the target, named after the transaction so
 * that recovery can find it, and is renamed into place.
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

/*
 * Every write, rename, removal, mode change and folder made goes through a folder opened one
 * component at a time from the workspace root, each with O_DIRECTORY|O_NOFOLLOW (as systemd's
 * chase() and git do), and names only an entry of that folder: a folder on the way swapped for a
 * link at any moment (renameat2 with RENAME_EXCHANGE in a loop) makes the open fail, and can
 * never redirect a call made through a folder already open. Checking a real path and then using
 * the full path could not hold: the swap can land between the two.
 *
 * Node's fs has no openat, but on Linux the kernel resolves `/proc/self/fd/<fd>/<name>` from the
 * folder the descriptor holds (not from the path text its link shows), then `name` in it: exactly
 * as openat(fd, name), the last component followed only where the call itself would follow it
 * (O_NOFOLLOW, lstat, rename, unlink, symlink and mkdir never do). So every call of jobs.ts
 * keeps its shape and runs the same on the writer thread (it shares this process's
 * descriptors). Where `/proc/self/fd` does not work (not Linux, or /proc not mounted) the folders
 * are named by their full paths, each checked (a real folder, not a link, at its real path)
 * before each write: that holds against a link put in place before the step, not against one
 * swapped in during it. TAKEBACK_FOLDER_FDS=0 takes that way on Linux too (the tests run both).
 */

/** The folder of the calls through descriptors (Linux's /proc/self/fd). */
const PROC_FD = '/proc/self/fd';
let procFdWorks: boolean | undefined;

/** True when `/proc/self/fd/<fd>/<name>` reaches entry `name` of an open folder (checked once, on `/`). */
function throughDescriptors(): boolean {
  if (procFdWorks !== undefined) return procFdWorks;
  procFdWorks = false;
  if (process.platform !== 'linux' || process.env.TAKEBACK_FOLDER_FDS === '0') return procFdWorks;
  try {
    const fd = openSync('/', DIR_FLAGS);
    try {
      procFdWorks = lstatSync(`${PROC_FD}/${fd}/.`).isDirectory() && lstatSync(`${PROC_FD}/${fd}`).isSymbolicLink();
    } finally {
      closeSync(fd);
    }
  } catch {
    procFdWorks = false;
  }
  return procFdWorks;
}

/** A workspace folder as the calls name it: `/proc/self/fd/<fd>` for an open one (`fd` set), else its full path (`fd` null). */
interface Folder {
  path: string;
  fd: number | null;
}

/** The folders opened for one step, shared by its writes and by the putting back of a failed step. */
interface OpenFolders {
  /** Workspace-relative folder ('' the root) → the folder as opened. */
  byRel: Map<string, Folder>;
  /** True once a job may still be under way on the writer thread: the descriptors then stay open (a number reused would name another folder). */
  keepOpen: boolean;
}

/**
 * The folders of one step's writes (see the comment above): each workspace folder is opened once
 * from the root, one component at a time, and every later write below it goes through that open
 * folder; its real path is checked again right before each write (a folder moved elsewhere is
 * refused: the step writes where it was planned or not at all). Made by {@link writeContext};
 * {@link closeContext} lets the folders go.
 */
export interface WriteContext {
  /** The root's real path, resolved once for the step. */
  rootReal: string;
  /** The folders opened so far (shared with {@link putBackContext}'s view). */
  open: OpenFolders;
  /** True for {@link putBackContext}'s view: no real-path check (see there). */
  putBack: boolean;
}

/** A fresh {@link WriteContext} for one step's writes under `root`. Throws as realpath does when the root is not there. */
export function writeContext(root: string): WriteContext {
  return { rootReal: realpathSync.native(root), open: { byRel: new Map(), keepOpen: false }, putBack: false };
}

/**
 * The same step's folders, for putting back what the step wrote after it failed: a write goes
 * through the folder its step's write went through, with no real-path check, so that a folder
 * moved (or swapped) meanwhile gets back exactly what was written into it; a folder not opened
 * by the step is opened from the root as usual.
 */
export function putBackContext(ctx: WriteContext): WriteContext {
  return { ...ctx, putBack: true };
}

/** How many folders `ctx` holds open (a caller bounds it: each is a descriptor). */
export function openFolderCount(ctx: WriteContext): number {
  return ctx.open.byRel.size;
}

/** Keeps `ctx`'s folders open for good: a job of the writer thread may still be under way (it stopped answering). */
export function keepFoldersOpen(ctx: WriteContext): void {
  ctx.open.keepOpen = true;
}

/** Lets `ctx`'s folders go (closes their descriptors); later writes open them again. */
export function closeContext(ctx: WriteContext): void {
  if (ctx.open.keepOpen) return;
  for (const f of ctx.open.byRel.values()) {
    if (f.fd === null) continue;
    try {
      closeSync(f.fd);
    } catch {
      // already closed
    }
  }
  ctx.open.byRel.clear();
}

/**
 * `e` with every `/proc/self/fd/<fd>` of `ctx`'s folders in its message replaced by the folder's
 * full path (an error names the path a person knows). Returns `e` itself.
 */
export function withPlainPaths<E>(ctx: WriteContext, e: E): E {
  const err = e as { message?: unknown } | null;
  if (!err || typeof err.message !== 'string' || !err.message.includes(`${PROC_FD}/`)) return e;
  const byFd = new Map<string, string>();
  for (const [rel, f] of ctx.open.byRel) if (f.fd !== null) byFd.set(String(f.fd), rel === '' ? ctx.rootReal : join(ctx.rootReal, ...rel.split('/')));
  err.message = err.message.replace(/\/proc\/self\/fd\/(\d+)/g, (whole, fd: string) => byFd.get(fd) ?? whole);
  return e;
}

/** `ctx` when given, else a fresh one for `root` that `run` lets go of when done; errors name full paths ({@link withPlainPaths}). */
function withContext<T>(root: string, ctx: WriteContext | undefined, run: (ctx: WriteContext) => T): T {
  const c = ctx ?? writeContext(root);
  try {
    return run(c);
  } catch (e) {
    throw withPlainPaths(c, e);
  } finally {
    if (!ctx) closeContext(c);
  }
}

/**
 * Linux's O_PATH (not in Node's constants): a descriptor that only names the folder, so that one
 * this process may not read (mode 0300) still opens, as a path through it would.
 */
const O_PATH = process.platform === 'linux' ? 0o10000000 : 0;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | O_PATH;

/** Lets go of `ctx`'s folder `rel` and those below it (a folder made again replaces them). */
function forget(ctx: WriteContext, rel: string): void {
  for (const [k, f] of ctx.open.byRel) {
    if (k !== rel && !k.startsWith(`${rel}/`)) continue;
    ctx.open.byRel.delete(k);
    if (f.fd !== null) closeSync(f.fd);
  }
}

/** `name` in `folder`, as the calls name it. */
function entry(folder: Folder, name: string): string {
  return `${folder.path}/${name}`;
}

/**
 * Opens folder `p` without following a link (with O_PATH when `pathOnly`); null when nothing is
 * there; refuses (for `rel`, naming `dirRel`) a link or something else.
 */
function openFolderAt(p: string, rel: string, dirRel: string, pathOnly = true): number | null {
  try {
    return openSync(p, pathOnly ? DIR_FLAGS : DIR_FLAGS & ~O_PATH);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ENOTDIR' || code === 'ELOOP') {
      const st = lstatOrNull(p);
      if (!st) return null;
      refuse(rel, st.isSymbolicLink() ? `${dirRel} is a symbolic link` : `${dirRel} is not a folder`);
    }
    throw e;
  }
}

/**
 * Workspace folder `dirRel` ('' the root) opened through `ctx` (see {@link WriteContext}), for a
 * write of `rel`: each missing folder on the way is made (mode 0777 less the umask; its path
 * appended to `made`) when `create`, else null is returned. A component that is a link, or not a
 * folder, is refused (`outside-workspace`, naming it).
 */
function folderOf(root: string, ctx: WriteContext, dirRel: string, rel: string, create: boolean, made: string[] = []): Folder | null {
  const known = ctx.open.byRel.get(dirRel);
  if (known) return known;
  let folder: Folder;
  if (dirRel === '') {
    if (!throughDescriptors()) folder = { path: ctx.rootReal, fd: null };
    else {
      const fd = openFolderAt(ctx.rootReal, rel, '.');
      if (fd === null) refuse(rel, 'the workspace folder is gone');
      folder = { path: `${PROC_FD}/${fd}`, fd };
    }
  } else {
    const cut = dirRel.lastIndexOf('/');
    const parent = folderOf(root, ctx, cut < 0 ? '' : dirRel.slice(0, cut), rel, create, made);
    if (!parent) return null;
    const at = entry(parent, dirRel.slice(cut + 1));
    if (parent.fd === null) {
      // Full paths (no descriptors): a real folder, not a link, checked now and again before each write.
      let st = lstatOrNull(at);
      if (!st && create) {
        mkdirSync(at, { mode: 0o777 });
        made.push(fromWorkspacePath(root, dirRel));
        st = lstatOrNull(at);
      }
      if (!st) return null;
      if (st.isSymbolicLink()) refuse(rel, `${dirRel} is a symbolic link`);
      if (!st.isDirectory()) refuse(rel, `${dirRel} is not a folder`);
      folder = { path: at, fd: null };
    } else {
      let fd = openFolderAt(at, rel, dirRel);
      if (fd === null && create) {
        try {
          mkdirSync(at, { mode: 0o777 });
          made.push(fromWorkspacePath(root, dirRel));
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
        fd = openFolderAt(at, rel, dirRel);
      }
      if (fd === null) return null;
      folder = { path: `${PROC_FD}/${fd}`, fd };
    }
  }
  ctx.open.byRel.set(dirRel, folder);
  return folder;
}

/** The folder part of workspace path `rel` ('' at the root) and its last name. */
function splitRel(rel: string): [string, string] {
  const cut = rel.lastIndexOf('/');
  return cut < 0 ? ['', rel] : [rel.slice(0, cut), rel.slice(cut + 1)];
}

/** `rel`'s folder, opened through `ctx` (never made); refuses when it is not there. */
function existingFolder(root: string, ctx: WriteContext, rel: string): Folder {
  const folder = folderOf(root, ctx, splitRel(rel)[0], rel, false);
  if (!folder) refuse(rel, 'its folder is not there');
  return folder;
}

/**
 * Makes sure every folder from the workspace root down to `rel`'s parent exists and is a real
 * folder, opening each through `ctx` (see {@link WriteContext}; without one, a fresh one let go
 * at the end): a component that is a symbolic link (or not a folder) is refused
 * (`outside-workspace`). Folders are created as needed (their paths appended to `made`). Returns
 * the parent's full path.
 */
export function ensureParent(root: string, rel: string, made: string[] = [], ctx?: WriteContext): string {
  withContext(root, ctx, (c) => folderOf(root, c, splitRel(rel)[0], rel, true, made));
  return dirname(fromWorkspacePath(root, rel));
}

/** The temporary name for `name` of transaction `tag`: `.<name>.takeback-<tag>`. */
function tmpName(name: string, tag: string): string {
  return `.${name}.takeback-${tag}`;
}

/** The real path workspace path `rel`'s folder must have, under the root's real path; null for a put back (see {@link putBackContext}). */
function parentRealOf(ctx: WriteContext, rel: string): string | null {
  return ctx.putBack ? null : join(ctx.rootReal, ...rel.split('/').slice(0, -1));
}

/**
 * The job that removes workspace path `rel` (a file, a link or an empty folder) through its
 * folder opened by `ctx` (see {@link runJobSync}); a folder on the way that is not there leaves
 * nothing to remove. Refuses (`outside-workspace`) a folder on the way that is a link. With
 * `found` (what the step found there), the job stops when the path holds something else now.
 */
export function removeJob(root: string, rel: string, ctx: WriteContext, found?: Found | null): RemoveJob {
  const [dirRel, name] = splitRel(rel);
  const folder = folderOf(root, ctx, dirRel, rel, false);
  // Nothing there to remove: its walk looks at '' (never anything), and the job stops there.
  if (!folder) return { kind: 'remove', rel, abs: '', walk: [['', dirRel]] };
  const walk: [string, string][] = [];
  if (folder.fd === null) {
    // Full paths: every folder on the way is checked again when the job runs.
    const segs = rel.split('/');
    for (let i = 1; i < segs.length; i++) walk.push([join(ctx.rootReal, ...segs.slice(0, i)), segs.slice(0, i).join('/')]);
  }
  return { kind: 'remove', rel, abs: entry(folder, name), walk, ...(found !== undefined ? { found } : {}) };
}

/**
 * The job that puts file or link state `to` at workspace path `rel`, with `bytes` the verified
 * bytes of a file state: in place over a plain file there when they are at most
 * {@link IN_PLACE_MAX_BYTES}, else through a temporary file of transaction `tag`; through `rel`'s
 * folder opened by `ctx`. The job checks the folder's real path right before the write in place
 * or the rename, and before making the temporary file when `checkFirst`; it does not make the
 * folder (see {@link ensureParent}). With `found` (what the step found at `rel`; null: nothing),
 * the job stops, writing nothing there, when the path holds something else right before the
 * write (see job-steps.ts's Found). Throws `capture-gap` when a file state comes without bytes,
 * `outside-workspace` when a folder on the way is a link or not there.
 */
export function writeJob(root: string, ctx: WriteContext, rel: string, to: FileState, bytes: Buffer | null, tag: string, checkFirst: boolean, found?: Found | null): WriteJob {
  if (!to.exists || to.type === 'dir') throw new TypeError(`writeJob: ${rel} is not a file or a link state`);
  if (to.type === 'file' && !bytes) throw new TakebackError('capture-gap', `no kept bytes for ${rel}`, { path: rel });
  const folder = existingFolder(root, ctx, rel);
  const name = splitRel(rel)[1];
  return {
    kind: 'write',
    rel,
    abs: entry(folder, name),
    tmp: entry(folder, tmpName(name, tag)),
    parent: folder.path,
    parentReal: parentRealOf(ctx, rel),
    checkFirst,
    mode: to.mode,
    bytes: to.type === 'file' ? bytes : null,
    link: to.type === 'symlink' ? to.target : null,
    inPlaceMax: IN_PLACE_MAX_BYTES,
    ...(found !== undefined ? { found } : {}),
  };
}

/** The job that sets the permission bits of the file at workspace path `rel` to `mode`, through its folder opened by `ctx` (its real path checked first). */
export function chmodJob(root: string, ctx: WriteContext, rel: string, mode: number): ChmodJob {
  const folder = existingFolder(root, ctx, rel);
  return { kind: 'chmod', rel, abs: entry(folder, splitRel(rel)[1]), parent: folder.path, parentReal: parentRealOf(ctx, rel), mode };
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
 * What is at workspace path `rel` now, read through `ctx`'s folders (the ones a step wrote
 * through, even when moved since) and never through a link: its state (a file by its bytes'
 * sha256, whatever they hold; a link by its target; a folder by its mode) and its identity for a
 * write that must find it unchanged (`found`, null: nothing there). Nothing there also when a
 * folder on the way is gone. Throws `outside-workspace` when a folder on the way is a link.
 */
export function stateThrough(root: string, rel: string, ctx: WriteContext): { state: FileState; found: Found | null } {
  const folder = folderOf(root, ctx, splitRel(rel)[0], rel, false);
  if (!folder) return { state: { exists: false }, found: null };
  const r = readState(entry(folder, splitRel(rel)[1]), { maxFileBytes: Number.MAX_SAFE_INTEGER, anyBytes: true });
  return { state: r.state, found: r.stat && r.state.exists ? foundOf(r.stat) : null };
}

/**
 * Puts workspace path `rel` into state `to`: `bytes` are the verified bytes of a file state.
 * Never follows a link at `rel` itself (a link there is replaced, not written through), nor on
 * the way (every call goes through folders opened by `ctx`, or by a fresh context let go at the
 * end). Returns a note when something was left as it was (a folder that is not empty), else
 * null. With `found` (a file, link or removal), nothing is written when the path holds something
 * else right before the write (`busy`, "changed meanwhile"). Files, links and removals are the
 * steps of jobs.ts, run on this thread.
 */
export function writeState(
  root: string,
  rel: string,
  to: FileState,
  bytes: Buffer | null,
  tag: string,
  made: string[] = [],
  ctx?: WriteContext,
  found?: Found | null,
): string | null {
  return withContext(root, ctx, (c) => {
    if (!to.exists) return runJobSync(removeJob(root, rel, c, found));
    const [dirRel, name] = splitRel(rel);
    const folder = folderOf(root, c, dirRel, rel, true, made)!;
    if (to.type !== 'dir') return runJobSync(writeJob(root, c, rel, to, bytes, tag, false, found));
    const at = entry(folder, name);
    const cur = lstatOrNull(at);
    if (cur && !cur.isDirectory()) removeAt(at);
    if (!cur || !cur.isDirectory()) {
      mkdirSync(at, { mode: to.mode });
      made.push(fromWorkspacePath(root, rel));
    }
    // Opened without following a link (one swapped in after the mkdir is refused); kept open
    // for the writes below it, in place of one opened before it was made.
    const fd = openFolderAt(at, rel, rel, folder.fd !== null);
    if (fd === null) refuse(rel, 'the folder could not be made');
    let kept = false;
    try {
      // An O_PATH descriptor takes no fchmod: its /proc/self/fd link names the folder itself.
      if (folder.fd !== null) chmodSync(`${PROC_FD}/${fd}`, to.mode);
      else fchmodSync(fd, to.mode);
      if (folder.fd !== null && (!cur || !cur.isDirectory() || !c.open.byRel.has(rel))) {
        forget(c, rel);
        c.open.byRel.set(rel, { path: `${PROC_FD}/${fd}`, fd });
        kept = true;
      }
    } finally {
      if (!kept) closeSync(fd);
    }
    return null;
  });
}

/** Changes only the permission bits of the file at `rel`, without following a link (through `ctx`'s folders, as {@link writeState}). */
export function chmodState(root: string, rel: string, mode: number, ctx?: WriteContext): void {
  withContext(root, ctx, (c) => {
    folderOf(root, c, splitRel(rel)[0], rel, true);
    runJobSync(chmodJob(root, c, rel, mode));
  });
}

/** Removes temporary files a transaction `tag` may have left beside `rel` (recovery), through its folder opened from the root. */
export function removeTemp(root: string, rel: string, tag: string, ctx?: WriteContext): void {
  try {
    withContext(root, ctx, (c) => {
      const [dirRel, name] = splitRel(rel);
      const folder = folderOf(root, c, dirRel, rel, false);
      if (!folder) return;
      const tmp = entry(folder, tmpName(name, tag));
      if (lstatOrNull(tmp)) unlinkSync(tmp);
    });
  } catch {
    // The folder is gone, or the path is refused: nothing of ours can be there.
  }
}
