import * as crypto from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, renameSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { syncAll } from '../durable.js';
import { TakebackError } from '../errors.js';

/** Node's one-shot hash (Node 20.12 and later; null before): about twice as fast on small inputs as a Hash object. Looked up once. */
let oneShot: typeof crypto.hash | null | undefined;

/** Hex SHA-256 of `bytes`. */
export function sha256(bytes: Uint8Array): string {
  if (oneShot === undefined) oneShot = typeof crypto.hash === 'function' ? crypto.hash : null;
  return oneShot ? oneShot('sha256', bytes, 'hex') : crypto.createHash('sha256').update(bytes).digest('hex');
}

const HEX64 = /^[0-9a-f]{64}$/;

/*
 * Compressed blobs: `TBZ1`, the raw length and the compressed length (u64 LE each), then raw
 * deflate at level 1. Blobs under 4 KB (one disk block either way) and blobs that do not shrink
 * by an eighth are stored raw. Level 1 keeps most of level 6's saving at three to five times the
 * speed (bench/RESULTS.md): on source text and versions of a text file, a third to a half of the
 * bytes on disk. A raw blob that happens to begin with the magic is still read right: a blob is
 * handed out only when its bytes hash to its name.
 */
const MAGIC = Buffer.from('TBZ1', 'latin1');
const HEADER = 20;
const COMPRESS_MIN = 4096;

function packed(bytes: Uint8Array): Uint8Array {
  if (bytes.length < COMPRESS_MIN) return bytes;
  const z = deflateRawSync(bytes, { level: 1 });
  if (z.length > bytes.length - bytes.length / 8) return bytes;
  const out = Buffer.allocUnsafe(HEADER + z.length);
  MAGIC.copy(out, 0);
  out.writeBigUInt64LE(BigInt(bytes.length), 4);
  out.writeBigUInt64LE(BigInt(z.length), 12);
  z.copy(out, HEADER);
  return out;
}

/** The raw bytes of a stored blob, or null when it is not a whole compressed blob. */
function unpacked(file: Buffer): Buffer | null {
  if (file.length < HEADER || !file.subarray(0, 4).equals(MAGIC)) return null;
  const raw = Number(file.readBigUInt64LE(4));
  if (Number(file.readBigUInt64LE(12)) !== file.length - HEADER) return null;
  try {
    const out = inflateRawSync(file.subarray(HEADER));
    return out.length === raw ? out : null;
  } catch {
    return null;
  }
}

/**
 * Where `BlobStore.get` reads a blob first (64 KB, shared: most blobs are smaller, and reading
 * them needs no buffer of their own until they are verified).
 */
const scratch = Buffer.allocUnsafe(64 * 1024);

/** The raw bytes the stored blob `file` holds when they hash to `hash` (`file` itself when stored raw), else null. */
function verified(file: Buffer, hash: string): Buffer | null {
  const inflated = unpacked(file);
  if (inflated && sha256(inflated) === hash) return inflated;
  return sha256(file) === hash ? file : null;
}

/** True when the file at `path` (of `size` bytes) is a whole blob of `rawLength` bytes, raw or compressed. */
function wholeBlob(path: string, size: number, rawLength: number): boolean {
  if (size === rawLength) return true;
  if (size < HEADER) return false;
  const head = Buffer.alloc(HEADER);
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile() || readSync(fd, head, 0, HEADER, 0) !== HEADER) return false;
  } finally {
    closeSync(fd);
  }
  return head.subarray(0, 4).equals(MAGIC) && Number(head.readBigUInt64LE(4)) === rawLength && Number(head.readBigUInt64LE(12)) === size - HEADER;
}

/** At most this many blob files are remembered as made durable by this process (the oldest forgotten first). */
const DURABLE_KNOWN_MAX = 8192;

/**
 * Blob files this process made durable (their bytes and the entry naming them synced), by path:
 * the file's inode and birth time then. A blob found again as that same file needs no sync
 * before a row names it; one replaced since (swept and stored again by any process, a torn one
 * renamed over) is another inode or was born later, and is synced again. Shared by every store
 * of this process, as the files are.
 */
const durableKnown = new Map<string, string>();

/** The identity of the file `st` describes for {@link durableKnown}, or null where the filesystem gives no birth time (then nothing is remembered). */
function fileIdentity(st: { ino: number; birthtimeMs: number }): string | null {
  return st.birthtimeMs > 0 ? `${st.ino}:${st.birthtimeMs}` : null;
}

/**
 * The content-addressed blob store: `blobs/<hex[0:2]>/<hex[2:]>`, each content once, shared by
 * every workspace, turn and session (the layout of pnpm's store). Folders 0700, files 0600.
 *
 * A blob is written to a temporary file named with the pid and a random suffix in the same
 * folder, then renamed into place: a reader never sees half a blob, and two processes storing
 * the same bytes at once both succeed. Every read re-hashes: a blob whose hash does not match
 * is never handed out (it would otherwise be written back into someone's file).
 *
 * Blobs of 4 KB and more are stored compressed when that saves an eighth or more (see `packed`).
 *
 * Durability: `put` does not sync (a first scan stores thousands of blobs); it notes each blob
 * it stored or found, and {@link sync} makes them all durable at once — the journal calls it
 * before every commit, so no row on the disk names a blob that a power cut could take away.
 * A blob torn anyway (a disk that lies) fails the re-hash and is named as damaged, never
 * written back.
 */
export class BlobStore {
  readonly dir: string;
  private readonly madeDirs = new Set<string>();
  /** Blobs stored or found since the last {@link sync}, and the folders whose entries name them. */
  private readonly unsynced = new Set<string>();
  private readonly unsyncedDirs = new Set<string>();
  /** The identity of each unsynced blob file when it was stored or found, for {@link durableKnown} once synced. */
  private readonly unsyncedIds = new Map<string, string>();
  /** A blob was stored or found since the last {@link sync}, synced or known durable: the commit naming it is to be durable. */
  private named = false;

  constructor(home: string) {
    this.dir = join(home, 'blobs');
  }

  /** The path of the blob for `hash` (which must be 64 lowercase hex digits). */
  pathOf(hash: string): string {
    if (!HEX64.test(hash)) throw new TakebackError('invalid-id', `not a sha256: ${hash}`);
    return join(this.dir, hash.slice(0, 2), hash.slice(2));
  }

  /** True when blob `hash` is in the store as a regular file (its bytes are verified when read, not here). */
  has(hash: string): boolean {
    try {
      return lstatSync(this.pathOf(hash)).isFile();
    } catch {
      return false;
    }
  }

  /** Stores `bytes` (if not already there) and returns their SHA-256. */
  put(bytes: Uint8Array, knownHash?: string): string {
    const hash = knownHash ?? sha256(bytes);
    const file = this.pathOf(hash);
    try {
      const st = lstatSync(file);
      if (st.isFile() && wholeBlob(file, st.size, bytes.length)) {
        // Already there: freshen its mtime, so that a sweep running now leaves it to the row about
        // to refer to it (gc/sweep.ts). Gone in between (swept): store it again below.
        const now = new Date();
        utimesSync(file, now, now);
        // Stored by a process that may not have synced it: a row about to name it needs it
        // durable, unless this process synced this very file already.
        const id = fileIdentity(st);
        if (id === null || durableKnown.get(file) !== id) this.noteUnsynced(file, id);
        this.named = true;
        return hash;
      }
      // A blob of the wrong size (a torn write from before a power loss), or something other than
      // a file in its place (a link, a FIFO): replaced by the rename below.
    } catch {
      // Not there yet.
    }
    const sub = join(this.dir, hash.slice(0, 2));
    if (!this.madeDirs.has(sub)) {
      // A folder made here is named by the one above it: those entries must be durable too.
      if (mkdirSync(sub, { recursive: true, mode: 0o700 }) !== undefined) this.unsyncedDirs.add(this.dir).add(dirname(this.dir));
      this.madeDirs.add(sub);
    }
    const tmp = join(sub, `.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
    const data = packed(bytes);
    const fd = openSync(tmp, 'wx', 0o600);
    let id: string | null = null;
    try {
      let off = 0;
      while (off < data.length) off += writeSync(fd, data, off, data.length - off);
      id = fileIdentity(fstatSync(fd));
    } finally {
      closeSync(fd);
    }
    try {
      renameSync(tmp, file);
    } catch (e) {
      try { unlinkSync(tmp); } catch { /* already gone */ }
      throw e;
    }
    this.noteUnsynced(file, id);
    return hash;
  }

  /** Notes blob file `file` (of identity `id`, see fileIdentity) for the next {@link sync}, with the folder whose entry names it. */
  private noteUnsynced(file: string, id: string | null): void {
    this.unsynced.add(file);
    this.unsyncedDirs.add(dirname(file));
    if (id === null) this.unsyncedIds.delete(file);
    else this.unsyncedIds.set(file, id);
  }

  /**
   * The blob files (and folders) stored or found since the last {@link sync} that a sync would
   * make durable, forgotten here: for another thread's store of the same folder, which syncs them
   * with its own before its commit names them ({@link adopt}).
   */
  handOver(): { files: string[]; dirs: string[] } {
    const out = { files: [...this.unsynced], dirs: [...this.unsyncedDirs] };
    this.unsynced.clear();
    this.unsyncedDirs.clear();
    this.unsyncedIds.clear();
    return out;
  }

  /** Takes what another store of this folder {@link handOver handed over}: synced by this one's next {@link sync}. */
  adopt(u: { files: readonly string[]; dirs: readonly string[] }): void {
    for (const f of u.files) this.unsynced.add(f);
    for (const d of u.dirs) this.unsyncedDirs.add(d);
  }

  /** How many blob files the next {@link sync} would sync (those this process made durable already are not counted). */
  get unsyncedFiles(): number {
    return this.unsynced.size;
  }

  /**
   * Makes every blob stored or found by {@link put} since the last call durable (see
   * durable.ts: all at once, or one syncfs for many), but those this process made durable
   * already. Returns true when any blob was stored or found, synced here or not: the commit that
   * names it must be durable in turn (Journal.write). When every sync succeeded, the files are
   * remembered as durable (see durableKnown).
   */
  sync(): boolean {
    const named = this.named;
    this.named = false;
    if (this.unsynced.size === 0) return named;
    if (syncAll(this.unsynced, this.unsyncedDirs, this.dir)) {
      for (const [file, id] of this.unsyncedIds) {
        durableKnown.delete(file);
        durableKnown.set(file, id);
      }
      for (const file of durableKnown.keys()) {
        if (durableKnown.size <= DURABLE_KNOWN_MAX) break;
        durableKnown.delete(file);
      }
    }
    this.unsynced.clear();
    this.unsyncedDirs.clear();
    this.unsyncedIds.clear();
    return true;
  }

  /**
   * The bytes of blob `hash`, verified. Throws `capture-gap` when the blob is missing, when it is
   * not a regular file (a link, a FIFO, a device put in its place) or when its bytes do not hash
   * to `hash`.
   *
   * The blob is opened with `O_NOFOLLOW|O_NONBLOCK` and measured on the same descriptor: a link
   * is refused rather than followed (to `/dev/zero` it would read without end), a FIFO is opened
   * without waiting for a writer and refused, and no more than the file's size at that moment is
   * read. Most blobs are small: they are read into a shared scratch buffer, and what it holds is
   * handed out (copied) when it hashes to `hash`; larger ones are read into a buffer of their own.
   */
  get(hash: string): Buffer {
    const missing = () => new TakebackError('capture-gap', `the kept copy ${hash.slice(0, 12)}… is missing from the journal`, { hash });
    const damaged = (why: string) => new TakebackError('capture-gap', `the kept copy ${hash.slice(0, 12)}… is damaged (${why})`, { hash });
    let fd: number;
    try {
      fd = openSync(this.pathOf(hash), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw damaged('a link in its place');
      throw missing();
    }
    let file: Buffer;
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw damaged('not a regular file');
      file = st.size <= scratch.length ? scratch.subarray(0, st.size) : Buffer.allocUnsafe(st.size);
      let n = 0;
      while (n < file.length) {
        const got = readSync(fd, file, n, file.length - n, n);
        if (got === 0) break;
        n += got;
      }
      file = file.subarray(0, n);
    } catch (e) {
      if (e instanceof TakebackError) throw e;
      throw missing();
    } finally {
      closeSync(fd);
    }
    const bytes = verified(file, hash);
    if (!bytes) throw damaged('its hash does not match');
    // Raw bytes in the scratch buffer are copied out; inflated ones and a buffer of their own are new.
    return bytes.buffer === scratch.buffer ? Buffer.from(bytes) : bytes;
  }

  /** Removes blob `hash` if present. */
  remove(hash: string): void {
    try {
      unlinkSync(this.pathOf(hash));
    } catch {
      // Already gone.
    }
  }
}
