import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readlinkSync, type Stats } from 'node:fs';
import { holdsSecret, isSecretPath } from './secrets.js';
import type { BlobStore } from './store/blobs.js';
import { sha256 } from './store/blobs.js';
import { S_IFMT, S_IFREG } from './scan/lstat.js';
import { isKept, type FileState, type GapReason } from './types.js';
import { fromWorkspacePath } from './workspace.js';

/** What reading one path gives: its state, why its bytes were not kept (if so), and the bytes. */
export interface ReadState {
  state: FileState;
  gap?: GapReason;
  /** The file's bytes, when it is a kept regular file. */
  bytes?: Buffer;
  stat?: Stats;
}

/**
 * Where `readFd` looks past the size fstat gave (64 KB, shared): most files have not grown, and a
 * look that finds nothing then costs no allocation. What it finds is copied out at once.
 */
const probe = Buffer.allocUnsafe(64 * 1024);

/**
 * Reads all of an open file descriptor (`size` is a hint from fstat, in bytes; a file that grew
 * since is read to its end, one that shrank to where it ends). Throws what `readSync` throws.
 */
export function readFd(fd: number, size: number): Buffer {
  let buf = Buffer.allocUnsafe(Math.max(size, 0));
  let off = 0;
  for (;;) {
    if (off === buf.length) {
      // The file may have grown since fstat: look for more.
      const n = readSync(fd, probe, 0, probe.length, off);
      if (n === 0) break;
      // It did: room for at least as much again (a file growing fast is read in ever larger steps).
      const grown = Buffer.allocUnsafe(Math.max(off * 2, off + probe.length));
      buf.copy(grown, 0, 0, off);
      probe.copy(grown, off, 0, n);
      buf = grown;
      off += n;
      continue;
    }
    const n = readSync(fd, buf, off, buf.length - off, off);
    if (n === 0) break;
    off += n;
  }
  return off === buf.length ? buf : buf.subarray(0, off);
}

function isNotFound(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * The state of `abs`, never following a link: a link is kept as a link, a folder by its mode, a
 * regular file by its bytes (stored in `blobs` when given, else only hashed).
 *
 * Bytes are not kept, and `gap` says why, for a secret (`secret: true` for a secret place, or
 * content in which {@link holdsSecret} finds a token or key: `secret`), a file over
 * `maxFileBytes` (`too-large`) and a file that cannot be read (`unreadable`: permissions, a
 * socket or a device). The file is opened with `O_NOFOLLOW` and `O_NONBLOCK` (a FIFO put there
 * after the look never blocks the open) and measured with `fstat` on the same descriptor, so a
 * file swapped for a link or anything else between the look and the read is not followed and not
 * read: it is looked at again. `anyBytes` hashes a file's bytes whatever they hold (no look for a
 * secret in them): for a comparison with a state written before, never for bytes to keep.
 *
 * `seen` is the caller's own lstat of `abs` a moment before (its `mode` and `size`), when it has
 * one: a regular file within the limit and not secret is then opened at once, without a second
 * lstat (a system call a changed file, in every scan that reads what moved).
 */
export function readState(abs: string, opts: { blobs?: BlobStore; maxFileBytes: number; secret?: boolean; anyBytes?: boolean; seen?: { mode: number; size: number } }): ReadState {
  const seen = opts.seen;
  if (seen && (seen.mode & S_IFMT) === S_IFREG && !opts.secret && seen.size <= opts.maxFileBytes) {
    const r = readOpened(abs, opts);
    if (r) return r;
  }
  let st: Stats | undefined;
  try {
    st = lstatSync(abs, { throwIfNoEntry: false });
  } catch (e) {
    if (isNotFound(e)) return { state: { exists: false } };
    throw e;
  }
  if (!st) return { state: { exists: false } };
  const mode = st.mode & 0o7777;
  if (st.isSymbolicLink()) return { state: { exists: true, type: 'symlink', target: readlinkSync(abs), mode }, stat: st };
  if (st.isDirectory()) return { state: { exists: true, type: 'dir', mode }, stat: st };
  if (!st.isFile()) return { state: { exists: true, type: 'file', sha256: null, size: st.size, mode }, gap: 'unreadable', stat: st };
  if (opts.secret) return { state: { exists: true, type: 'file', sha256: null, size: st.size, mode }, gap: 'secret', stat: st };
  if (st.size > opts.maxFileBytes) return { state: { exists: true, type: 'file', sha256: null, size: st.size, mode }, gap: 'too-large', stat: st };
  let fd: number;
  try {
    fd = openSync(abs, OPEN_FLAGS);
  } catch (e) {
    if (isNotFound(e)) return { state: { exists: false } };
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') return readState(abs, { ...opts, seen: undefined }); // became a link: look again
    return { state: { exists: true, type: 'file', sha256: null, size: st.size, mode }, gap: 'unreadable', stat: st };
  }
  const r = readFile(fd, abs, opts);
  // Not a regular file any more (swapped since the lstat): looked at again.
  return r ?? readState(abs, { ...opts, seen: undefined });
}

/** How {@link readState} opens a file: read only, never through a link, never waiting on a FIFO. */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * {@link readState} of a path its caller saw as a regular file: opened at once. Null when the open
 * or the descriptor finds anything else (gone, a link, not a regular file, not readable): the
 * caller then looks from the start.
 */
function readOpened(abs: string, opts: { blobs?: BlobStore; maxFileBytes: number; anyBytes?: boolean }): ReadState | null {
  let fd: number;
  try {
    fd = openSync(abs, OPEN_FLAGS);
  } catch {
    return null;
  }
  return readFile(fd, abs, opts);
}

/**
 * The state of the file open on `fd` (closed here), measured by `fstat`: its bytes as
 * {@link readState} keeps them; null when it is not a regular file.
 */
function readFile(fd: number, abs: string, opts: { blobs?: BlobStore; maxFileBytes: number; anyBytes?: boolean }): ReadState | null {
  try {
    const fst = fstatSync(fd);
    if (!fst.isFile()) return null;
    if (fst.size > opts.maxFileBytes) {
      return { state: { exists: true, type: 'file', sha256: null, size: fst.size, mode: fst.mode & 0o7777 }, gap: 'too-large', stat: fst };
    }
    const bytes = readFd(fd, fst.size);
    if (!opts.anyBytes && holdsSecret(bytes, abs)) return { state: { exists: true, type: 'file', sha256: null, size: bytes.length, mode: fst.mode & 0o7777 }, gap: 'secret', stat: fst };
    const hash = opts.blobs ? opts.blobs.put(bytes) : sha256(bytes);
    return { state: { exists: true, type: 'file', sha256: hash, size: bytes.length, mode: fst.mode & 0o7777 }, bytes, stat: fst };
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads workspace path `path` (workspace-relative, `/`-separated) of workspace `ws` by the
 * workspace's rules, as {@link readState} does: bytes kept up to `ws.config.maxFileBytes`, none
 * of a secret place's. Every read of a workspace file that may keep its bytes goes through here,
 * so the rule of what is kept is in one place.
 *
 * `opts.abs` is the path on disk when the caller has it: then `path` is only the name the secret
 * rule looks at (absolute, for a file tool's path outside the workspace). `opts.blobs` stores the
 * bytes read; `opts.seen` is the caller's lstat of it a moment before, as {@link readState} takes
 * it. Throws `outside-workspace` when `path` (without `abs`) would leave the root.
 */
export function readWorkspaceState(ws: { root: string; config: { maxFileBytes: number } }, path: string, opts: { abs?: string; blobs?: BlobStore; seen?: { mode: number; size: number } } = {}): ReadState {
  const abs = opts.abs ?? fromWorkspacePath(ws.root, path);
  return readState(abs, { blobs: opts.blobs, maxFileBytes: ws.config.maxFileBytes, secret: isSecretPath(path), seen: opts.seen });
}

/**
 * The capture gap of `path` when one of `states` is a file whose bytes were not kept and its
 * record does not say why (`undefined` when every state is kept): a secret place's, else one
 * over the size limit — the two reasons {@link readWorkspaceState} keeps no bytes of a file it
 * could read.
 */
export function unkeptGap(path: string, ...states: FileState[]): GapReason | undefined {
  if (states.every(isKept)) return undefined;
  return isSecretPath(path) ? 'secret' : 'too-large';
}
