import { closeSync, constants, fdatasyncSync, fstatSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';

/*
 * The rows image: every row of a large snapshot index written once into one file beside the
 * journal's database, so that a new process reads them in one read instead of one SQLite step a
 * folder. A million-file workspace has about 55,000 rows (76 MB): SQLite hands them out at a few
 * microseconds each (a result row, a string, a buffer copied, each collected later), which was a
 * quarter of a command scan's CPU time there, beside the stats. The database stays the record:
 * the image stands only for the generation named beside it (snapshot-index.ts keeps that, and the
 * folders whose rows were written since), and a process that finds it missing, torn, of another
 * token or of an older generation reads the database as before.
 *
 * Layout (little-endian): MAGIC; the token's length (u32) and its bytes (ASCII); the row count
 * (u32); then each row: its folder's length (u32) and bytes (UTF-8), its data's length (u32) and
 * bytes; MAGIC again, the last bytes of the file.
 */

const MAGIC = Buffer.from('TBROWS1\n', 'latin1');

/** A UTF-16 surrogate not in a pair: a string that UTF-8 cannot carry unchanged. */
const LONE_SURROGATE = /\p{Cs}/u;

/** An image larger than this is not read (the rows of about 25 million files): the database is read instead. */
const MAX_IMAGE_BYTES = 2 ** 31 - 1;

/** The rows of an image: `dirs[i]`'s row is `rows[i]`, a view of the one buffer read. */
export interface RowsImage {
  dirs: string[];
  rows: Buffer[];
}

/** The image is written through a buffer of this size (rows larger go as they are): no copy of the whole image is made. */
const WRITE_CHUNK = 1 << 20;

/**
 * Writes `rows` (folder → its packed row) as the image at `path` with `token`, 0600, atomically:
 * into `<path>.tmp` (made anew, never through a link), every byte written and synced, then
 * renamed over `path` (a link there is replaced, never followed). False, and nothing left but
 * what was there, when it cannot be written (a full disk, a folder gone), a folder's name is not
 * well-formed text (it could not be read back as the same key), or the image would pass
 * {@link MAX_IMAGE_BYTES}. Call it holding the journal's write lock, which every writer of the
 * image holds (one writer, one `.tmp`). Never throws.
 *
 * Not write-file-atomic, which the project uses for small files elsewhere: it resolves links in
 * the path it is given (an image path made a link would have the link's target rewritten), takes
 * one write's count as the whole file (a full disk's short write would be renamed in), and wants
 * the whole file in one buffer (77 MB more at the peak for a million files).
 */
export function writeRowsImage(path: string, token: string, rows: ReadonlyMap<string, Uint8Array>): boolean {
  const tokenBytes = Buffer.from(token, 'latin1');
  let size = MAGIC.length + 4 + tokenBytes.length + 4 + MAGIC.length;
  for (const [dir, row] of rows) {
    if (LONE_SURROGATE.test(dir)) return false;
    size += 8 + Buffer.byteLength(dir, 'utf8') + row.length;
  }
  if (size > MAX_IMAGE_BYTES) return false;
  const tmp = `${path}.tmp`;
  let fd = -1;
  try {
    try {
      unlinkSync(tmp); // a writer killed midway left it
    } catch {
      // none there
    }
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    const out = new ImageWriter(fd);
    out.put(MAGIC);
    out.u32(tokenBytes.length);
    out.put(tokenBytes);
    out.u32(rows.size);
    for (const [dir, row] of rows) {
      out.u32(Buffer.byteLength(dir, 'utf8'));
      out.text(dir);
      out.u32(row.length);
      out.put(row);
    }
    out.put(MAGIC);
    out.flush();
    fdatasyncSync(fd);
    closeSync(fd);
    fd = -1;
    renameSync(tmp, path);
    return true;
  } catch {
    if (fd >= 0) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // never made, or gone
    }
    return false;
  }
}

/** Bytes written to a file through one buffer of {@link WRITE_CHUNK}; every byte, or it throws. */
class ImageWriter {
  private readonly buf = Buffer.allocUnsafe(WRITE_CHUNK);
  private at = 0;

  constructor(private readonly fd: number) {}

  u32(n: number): void {
    if (this.at + 4 > this.buf.length) this.flush();
    this.at = this.buf.writeUInt32LE(n, this.at);
  }

  text(s: string): void {
    if (this.at + Buffer.byteLength(s, 'utf8') > this.buf.length) {
      this.flush();
      if (Buffer.byteLength(s, 'utf8') > this.buf.length) return this.put(Buffer.from(s, 'utf8'));
    }
    this.at += this.buf.write(s, this.at, 'utf8');
  }

  put(bytes: Uint8Array): void {
    if (this.at + bytes.length > this.buf.length) {
      this.flush();
      if (bytes.length > this.buf.length) return writeAll(this.fd, bytes);
    }
    this.buf.set(bytes, this.at);
    this.at += bytes.length;
  }

  flush(): void {
    writeAll(this.fd, this.buf.subarray(0, this.at));
    this.at = 0;
  }
}

/** Writes every byte of `bytes` to `fd` (a write may take fewer); throws when one takes none. */
function writeAll(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length; ) {
    const n = writeSync(fd, bytes, at, bytes.length - at);
    if (n <= 0) throw new Error('the image could not be written whole');
    at += n;
  }
}

/**
 * The image at `path`, when it is whole and written with `token`; null otherwise (missing,
 * another token, torn, not an image, too large, not a regular file). Never follows a link and
 * never waits on a FIFO put there. Never throws.
 */
export function readRowsImage(path: string, token: string): RowsImage | null {
  let buf: Buffer;
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const st = fstatSync(fd);
      if (!st.isFile() || st.size > MAX_IMAGE_BYTES || st.size < 2 * MAGIC.length + 8) return null;
      buf = Buffer.allocUnsafeSlow(st.size);
      for (let at = 0; at < buf.length; ) {
        const n = readSync(fd, buf, at, buf.length - at, at);
        if (n === 0) return null;
        at += n;
      }
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  return parseRowsImage(buf, token);
}

/** The rows of image bytes `buf` when they are whole and of `token`; null otherwise. */
export function parseRowsImage(buf: Buffer, token: string): RowsImage | null {
  const end = buf.length - MAGIC.length;
  if (end < MAGIC.length + 8 || !buf.subarray(0, MAGIC.length).equals(MAGIC) || !buf.subarray(end).equals(MAGIC)) return null;
  let at = MAGIC.length;
  const tokenLen = buf.readUInt32LE(at);
  at += 4;
  if (tokenLen > end - at - 4 || buf.toString('latin1', at, at + tokenLen) !== token) return null;
  at += tokenLen;
  const count = buf.readUInt32LE(at);
  at += 4;
  // Each row takes at least 8 bytes: a count past that is not of a whole image.
  if (count > (end - at) / 8) return null;
  const dirs = new Array<string>(count);
  const rows = new Array<Buffer>(count);
  for (let i = 0; i < count; i++) {
    if (end - at < 8) return null;
    const nameLen = buf.readUInt32LE(at);
    at += 4;
    if (nameLen > end - at - 4) return null;
    dirs[i] = buf.toString('utf8', at, at + nameLen);
    at += nameLen;
    const rowLen = buf.readUInt32LE(at);
    at += 4;
    if (rowLen > end - at) return null;
    rows[i] = buf.subarray(at, at + rowLen);
    at += rowLen;
  }
  return at === end ? { dirs, rows } : null;
}
