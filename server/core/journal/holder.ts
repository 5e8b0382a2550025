import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { processExists, processState } from '../proc.js';

/*
 * Who holds a journal's write lock: each write transaction, once it has the lock, writes its
 * process id, its command line and the time into `holder` beside the database. SQLite says only
 * "database is locked", never by whom; this record lets doctor name a holder that is stuck
 * (stopped, or hung), and the hooks' log say whom they queued their events behind. The file has
 * a fixed size and is written in place, so that writing it needs no new blocks on a full disk.
 */

/** Bytes of the holder record (padded with spaces). */
const HOLDER_BYTES = 512;

/** The last writer to take a journal's lock: its process id, command line (cut to fit) and when it took the lock (ms since the epoch). */
export interface LockHolder {
  pid: number;
  command: string;
  since: number;
}

/** The holder record's file in journal folder `journalDir`. */
export function holderFile(journalDir: string): string {
  return join(journalDir, 'holder');
}

/** Makes the holder record's file under `journalDir` (0600, its full size) when it is missing. Throws what the file system throws. */
export function reserveHolder(journalDir: string): void {
  const fd = openSync(holderFile(journalDir), 'wx', 0o600);
  try {
    writeSync(fd, Buffer.alloc(HOLDER_BYTES, 0x20), 0, HOLDER_BYTES, 0);
  } finally {
    closeSync(fd);
  }
}

/** The record of this process as the lock's holder, from `now` (ms since the epoch). */
export function holderRecord(now = Date.now()): Buffer {
  // Node's own options too: `node -e …` has no script in argv.
  const command = [...process.execArgv, ...process.argv.slice(1)].join(' ');
  const buf = Buffer.alloc(HOLDER_BYTES, 0x20);
  let json = JSON.stringify({ pid: process.pid, command, since: now });
  // A long command line is cut so that the record fits (with its newline).
  for (let cut = command.length; Buffer.byteLength(json) > HOLDER_BYTES - 1 && cut > 0; cut = Math.floor(cut / 2)) {
    json = JSON.stringify({ pid: process.pid, command: command.slice(0, cut), since: now });
  }
  buf.write(`${json}\n`, 0, 'utf8');
  return buf;
}

/**
 * Writes this process's record ({@link holderRecord}) over the holder file of one journal, in
 * place, through a descriptor opened at the first write and kept until {@link close}: one write
 * call a transaction. Never throws: the record is for diagnosis only (without it, doctor names
 * the lock held without naming whom).
 */
export class HolderWriter {
  private fd: number | null | undefined;
  /** The record with `since` left out, made at the first write: the pid and command stay. */
  private head: string | null = null;
  private readonly buf = Buffer.alloc(HOLDER_BYTES);

  constructor(private readonly journalDir: string) {}

  /** Records this process as the lock's holder from `now` (ms since the epoch). */
  write(now = Date.now()): void {
    if (this.fd === undefined) {
      try {
        this.fd = openSync(holderFile(this.journalDir), 'r+');
      } catch {
        this.fd = null; // no holder file (a full disk when the journal was made)
      }
    }
    if (this.fd === null) return;
    // Cut to fit with a time of today's length (13 digits until the year 2286).
    this.head ??= holderRecord(now).toString('utf8').trimEnd().replace(/\d+\}$/, '');
    this.buf.fill(0x20);
    this.buf.write(`${this.head}${now}}\n`, 0, 'utf8');
    try {
      writeSync(this.fd, this.buf, 0, HOLDER_BYTES, 0);
    } catch {
      // not recorded this time
    }
  }

  close(): void {
    if (typeof this.fd === 'number') closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The last writer recorded for the journal in `journalDir`, or null when none is. */
export function readHolder(journalDir: string): LockHolder | null {
  try {
    const v = JSON.parse(readFileSync(holderFile(journalDir), 'utf8').trim()) as Partial<LockHolder>;
    if (typeof v.pid !== 'number' || typeof v.since !== 'number') return null;
    return { pid: v.pid, command: typeof v.command === 'string' ? v.command : '', since: v.since };
  } catch {
    return null;
  }
}

/**
 * Who holds a journal's lock, in words: "pid 123 (node undo.js) for 40 s, stopped (SIGSTOP: kill
 * -CONT it, or end it)", the command on one line, at most 120 characters; "another process that
 * names itself nowhere" when the holder is not known (`h` null).
 */
export function holderText(h: LockState['holder'], now = Date.now()): string {
  if (!h) return 'another process that names itself nowhere';
  const secs = Math.max(0, Math.round((now - h.since) / 1000));
  const state = h.stopped ? ', stopped (SIGSTOP: kill -CONT it, or end it)' : '';
  const command = h.command.replace(/\s+/g, ' ').trim();
  const shown = command.length > 120 ? `${command.slice(0, 119)}…` : command;
  return `pid ${h.pid} (${shown}) for ${secs} s${state}`;
}

/** The holder of the journal in `journalDir` as {@link lockState} names it, read from its record alone (for a process that has just been refused the lock): null when the record names no live process. */
export function liveHolder(journalDir: string): LockState['holder'] {
  const h = readHolder(journalDir);
  return h && h.pid !== process.pid && processExists(h.pid) ? { ...h, stopped: stoppedProcess(h.pid) } : null;
}

/** A journal's write lock as doctor sees it: held by another process or not, and the holder when its record names a live process (`stopped`: by SIGSTOP or a debugger). */
export interface LockState {
  held: boolean;
  holder: (LockHolder & { stopped: boolean }) | null;
}

function stoppedProcess(pid: number): boolean {
  const state = processState(pid);
  return state === 'T' || state === 't';
}

/**
 * Whether another process holds the write lock of the journal `db` (in folder `journalDir`) now:
 * asked of SQLite without waiting (`BEGIN IMMEDIATE` with no busy timeout, rolled back at once),
 * and who, from the holder record, when the process it names is alive. Call outside a transaction.
 */
export function lockState(db: { pragma(s: string, o?: { simple: boolean }): unknown; exec(s: string): unknown }, journalDir: string): LockState {
  const was = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return { held: false, holder: null };
  } catch (e) {
    if (!String((e as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY')) throw e;
    return { held: true, holder: liveHolder(journalDir) };
  } finally {
    db.pragma(`busy_timeout = ${was}`);
  }
}
