import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { SYNC_EACH_MAX, syncAll } from '../durable.js';
import { processExists } from '../proc.js';

/*
 * The spill: a small durable queue of events beside a workspace's journal, for the moments the
 * journal cannot take them (its disk is full, another process holds its lock). A hook that
 * cannot write the journal queues its event here and exits; the next process that holds the
 * journal folds the queue in first, in order (capture/queued.ts).
 *
 * Its space is set aside when the journal is opened, so that queueing works on a full disk:
 * {@link SPILL_SLOTS} files of {@link SLOT_BYTES} zeros (written out, not sparse). A record is
 * written into a slot in place, which needs no new blocks, and a slot goes from free to claimed
 * to queued by renames within the folder, which are atomic: two hooks never take one slot, and
 * a reader never sees a slot being written. (A temporary file renamed into place, as
 * write-file-atomic does, needs new blocks, which a full disk does not have.) A record holds its
 * length and its SHA-256, so one cut short (a process killed while writing it, a power cut) is
 * told from a whole one and dropped. Slot names:
 *
 * - `f.<n>`: free (zeros);
 * - `c.<n>.<pid>.<rand>`: claimed by process `pid`, being written;
 * - `q.<ms>.<seq>.<pid>.<n>`: queued at `ms` (ms since the epoch), `seq` the writer's count,
 *   folded in name order.
 */

/** Bytes of one slot: the most one record (its header and JSON) may take. */
export const SLOT_BYTES = 8192;

/** How many slots a workspace's spill has: the most events it can hold at once (256 KiB in all). */
export const SPILL_SLOTS = 32;

const MAGIC = 'TBQ1';

/** A record read back from the spill: its slot's name, when it was queued (ms since the epoch), and the value queued. */
export interface SpillEntry<T> {
  name: string;
  at: number;
  value: T;
}

let seq = 0;

/** The spill folder of the journal in folder `journalDir`. */
export function spillDir(journalDir: string): string {
  return join(journalDir, 'spill');
}

function isMissing(e: unknown): boolean {
  return (e as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * Sets the spill's space aside under `journalDir` when it is not there yet ({@link SPILL_SLOTS}
 * slots of zeros, 0600, the folder 0700) and tops it up when slots went missing. Cheap when it is
 * there (one folder listing). Returns true when the spill holds a queued record. Throws what the
 * file system throws (a full disk: the spill is then made at a later open).
 */
export function reserveSpill(journalDir: string): boolean {
  const dir = spillDir(journalDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if (!isMissing(e)) throw e;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    names = [];
  }
  // A slot left half made (`.new`) by this process or by one that is gone holds no record and
  // no space to count on: removed, and made again below, so that a reservation a full disk cut
  // short does not leave its slots missing for as long as a long-lived process runs.
  names = names.filter((n) => {
    if (!n.startsWith('c.') || !n.endsWith('.new')) return true;
    const pid = Number(n.split('.')[2]);
    if (pid !== process.pid && processExists(pid)) return true;
    rmSync(join(dir, n), { force: true });
    return false;
  });
  const anyQueued = names.some((n) => n.startsWith('q.'));
  if (names.length >= SPILL_SLOTS) return anyQueued;
  const have = new Set(names.map((n) => n.split('.')[1]));
  const zeros = Buffer.alloc(SLOT_BYTES);
  const made: { tmp: string; slot: string }[] = [];
  try {
    for (let n = 0; n < SPILL_SLOTS; n++) {
      const num = String(n).padStart(2, '0');
      if (have.has(num)) continue;
      // Written as `c.` first, so that a slot half made by a full disk is never taken as free.
      const tmp = join(dir, `c.${num}.${process.pid}.new`);
      made.push({ tmp, slot: join(dir, `f.${num}`) });
      const fd = openSync(tmp, 'w', 0o600);
      try {
        writeSync(fd, zeros, 0, SLOT_BYTES, 0);
      } finally {
        closeSync(fd);
      }
    }
    // Every slot's zeros on the disk before any is named free: synced a batch at a time, each
    // batch's syncs in flight together (a new journal's 32 slots, one after the other, were a
    // commit of the filesystem's journal each), never a syncfs of the whole filesystem.
    for (let i = 0; i < made.length; i += SYNC_EACH_MAX) {
      if (!syncAll(made.slice(i, i + SYNC_EACH_MAX).map((m) => m.tmp), [], dir)) throw new Error(`the spill's slots in ${dir} could not be synced`);
    }
  } catch (e) {
    // None is named free: the half made ones go, and the next reservation makes them again.
    for (const m of made) rmSync(m.tmp, { force: true });
    throw e;
  }
  for (const m of made) renameSync(m.tmp, m.slot);
  syncDir(dir);
  return anyQueued;
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The bytes of one record: `TBQ1 <length> <sha256 of the JSON>\n<JSON>`. */
function encode(value: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  const head = Buffer.from(`${MAGIC} ${body.length} ${createHash('sha256').update(body).digest('hex')}\n`, 'latin1');
  return Buffer.concat([head, body]);
}

/** The value of a slot's bytes, or undefined when they hold no whole record. */
function decode(bytes: Buffer): unknown {
  const nl = bytes.indexOf(0x0a);
  if (nl < 0 || nl > 100) return undefined;
  const m = /^TBQ1 (\d+) ([0-9a-f]{64})$/.exec(bytes.subarray(0, nl).toString('latin1'));
  if (!m) return undefined;
  const len = Number(m[1]);
  if (nl + 1 + len > bytes.length) return undefined;
  const body = bytes.subarray(nl + 1, nl + 1 + len);
  if (createHash('sha256').update(body).digest('hex') !== m[2]) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** How many bytes `value` takes as a record; over {@link SLOT_BYTES} it cannot be queued. */
export function recordBytes(value: unknown): number {
  return encode(value).length;
}

/**
 * Queues `value` (anything JSON can hold, at most {@link SLOT_BYTES} as a record) in the spill of
 * the journal in `journalDir`, durably (the slot and its folder synced) before it returns.
 * Returns false when it cannot: no spill set aside, every slot taken, or a record too large.
 * Never throws.
 */
export function spill(journalDir: string, value: unknown): boolean {
  const dir = spillDir(journalDir);
  const bytes = encode(value);
  if (bytes.length > SLOT_BYTES) return false;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return false;
  }
  const free = names.filter((n) => n.startsWith('f.'));
  // From a random place, so that parallel hooks seldom reach for the same slot first.
  const start = free.length > 0 ? randomBytes(1)[0]! % free.length : 0;
  for (let i = 0; i < free.length; i++) {
    const name = free[(start + i) % free.length]!;
    const num = name.slice(2);
    const claimed = join(dir, `c.${num}.${process.pid}.${randomBytes(4).toString('hex')}`);
    try {
      renameSync(join(dir, name), claimed);
    } catch {
      continue; // another process took it first
    }
    try {
      const fd = openSync(claimed, 'r+');
      try {
        writeSync(fd, bytes, 0, bytes.length, 0);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      const at = Date.now();
      renameSync(claimed, join(dir, `q.${String(at).padStart(13, '0')}.${String(seq++).padStart(6, '0')}.${process.pid}.${num}`));
      syncDir(dir);
      return true;
    } catch {
      // The slot stays claimed; {@link queued} frees it once this process is gone.
      return false;
    }
  }
  return false;
}

/** True when the spill of the journal in `journalDir` holds a queued record (one folder listing). */
export function hasQueued(journalDir: string): boolean {
  try {
    return readdirSync(spillDir(journalDir)).some((n) => n.startsWith('q.'));
  } catch {
    return false;
  }
}

/**
 * The records queued in the spill of the journal in `journalDir`, oldest first, and the number
 * of slots dropped on the way: a queued slot that holds no whole record, and a slot claimed by a
 * process that is gone (it was killed while writing), are freed, never read as a record.
 */
export function queued<T>(journalDir: string): { entries: SpillEntry<T>[]; dropped: number } {
  const dir = spillDir(journalDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { entries: [], dropped: 0 };
  }
  let dropped = 0;
  for (const name of names) {
    if (!name.startsWith('c.')) continue;
    const pid = Number(name.split('.')[2]);
    if (pid !== process.pid && !processExists(pid)) {
      release(journalDir, name);
      // A slot being made (`.new`) held no record; any other claimed slot held one cut short.
      if (!name.endsWith('.new')) dropped++;
    }
  }
  const entries: SpillEntry<T>[] = [];
  for (const name of names.filter((n) => n.startsWith('q.')).sort()) {
    const value = readSlot(join(dir, name));
    if (value === undefined) {
      release(journalDir, name);
      dropped++;
      continue;
    }
    entries.push({ name, at: Number(name.split('.')[1]), value: value as T });
  }
  return { entries, dropped };
}

function readSlot(file: string): unknown {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(SLOT_BYTES);
    const n = readSync(fd, buf, 0, SLOT_BYTES, 0);
    return decode(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}

/**
 * Frees slot `name` of the spill of the journal in `journalDir`: zeros written over it in place
 * (no new blocks) and renamed back to free. A slot that cannot be zeroed is removed (the next
 * open makes it again). Never throws.
 */
export function release(journalDir: string, name: string): void {
  const dir = spillDir(journalDir);
  const file = join(dir, name);
  const num = name.startsWith('q.') ? name.split('.')[4] : name.split('.')[1];
  try {
    const fd = openSync(file, 'r+');
    try {
      writeSync(fd, Buffer.alloc(SLOT_BYTES), 0, SLOT_BYTES, 0);
    } finally {
      closeSync(fd);
    }
    renameSync(file, join(dir, `f.${num}`));
  } catch {
    try {
      rmSync(file, { force: true });
    } catch {
      // gone already
    }
  }
}
