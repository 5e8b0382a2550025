import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { TakebackError } from '../errors.js';

/** Hex SHA-256 of `bytes`. */
export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The content-addressed blob store: `blobs/<hex[0:2]>/<hex[2:]>`, each content once, shared by
 * every workspace, turn and session (the layout of pnpm's store). Folders 0700, files 0600.
 *
 * A blob is written to a temporary file named with the pid and a random suffix in the same
 * folder, then renamed into place: a reader never sees half a blob, and two processes storing
 * the same bytes at once both succeed. Every read re-hashes: a blob whose hash does not match
 * is never handed out (it would otherwise be written back into someone's file).
 *
 * Blobs are not fsynced: a killed process leaves the page cache intact, and the first scan of a
 * workspace stores thousands of them. After a power loss a torn blob fails the re-hash and is
 * named as damaged, never written back.
 */
export class BlobStore {
  readonly dir: string;
  private readonly madeDirs = new Set<string>();

  constructor(home: string) {
    this.dir = join(home, 'blobs');
  }

  /** The path of the blob for `hash` (which must be 64 lowercase hex digits). */
  pathOf(hash: string): string {
    if (!HEX64.test(hash)) throw new TakebackError('invalid-id', `not a sha256: ${hash}`);
    return join(this.dir, hash.slice(0, 2), hash.slice(2));
  }

  has(hash: string): boolean {
    try {
      statSync(this.pathOf(hash));
      return true;
    } catch {
      return false;
    }
  }

  /** Stores `bytes` (if not already there) and returns their SHA-256. */
  put(bytes: Uint8Array, knownHash?: string): string {
    const hash = knownHash ?? sha256(bytes);
    const file = this.pathOf(hash);
    try {
      const st = statSync(file);
      if (st.size === bytes.length) return hash;
      // A blob of the wrong size (a torn write from before a power loss): replace it.
    } catch {
      // Not there yet.
    }
    const sub = join(this.dir, hash.slice(0, 2));
    if (!this.madeDirs.has(sub)) {
      mkdirSync(sub, { recursive: true, mode: 0o700 });
      this.madeDirs.add(sub);
    }
    const tmp = join(sub, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    } finally {
      closeSync(fd);
    }
    try {
      renameSync(tmp, file);
    } catch (e) {
      try { unlinkSync(tmp); } catch { /* already gone */ }
      throw e;
    }
    return hash;
  }

  /**
   * The bytes of blob `hash`, verified. Throws `capture-gap` when the blob is missing or its
   * bytes do not hash to `hash`.
   */
  get(hash: string): Buffer {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.pathOf(hash));
    } catch {
      throw new TakebackError('capture-gap', `the kept copy ${hash.slice(0, 12)}… is missing from the journal`, { hash });
    }
    if (sha256(bytes) !== hash) {
      throw new TakebackError('capture-gap', `the kept copy ${hash.slice(0, 12)}… is damaged (its hash does not match)`, { hash });
    }
    return bytes;
  }

  /** Every blob hash in the store, with its size in bytes (for the sweep and `doctor`). */
  *list(): Generator<{ hash: string; size: number }> {
    let subs: string[];
    try {
      subs = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const sub of subs) {
      if (sub.length !== 2) continue;
      for (const name of readdirSync(join(this.dir, sub))) {
        if (name.startsWith('.tmp-')) continue;
        const hash = sub + name;
        if (!HEX64.test(hash)) continue;
        yield { hash, size: statSync(join(this.dir, sub, name)).size };
      }
    }
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
