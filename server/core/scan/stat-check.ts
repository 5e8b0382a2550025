import { lstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { MessagePort, Worker } from 'node:worker_threads';
import { workerFile } from '../worker-file.js';
import { statReader, type StatReader } from './lstat.js';

// Loaded for a large index only: most scans (and every file tool hook) never start a thread.
const lazy = createRequire(import.meta.url);
const threads = () => lazy('node:worker_threads') as typeof import('node:worker_threads');

/*
 * The warm scan's hot loop: for every row of the packed index (see packed.ts), is the folder's
 * listing still what it was, and does each child still have its stat? Runs on the main thread
 * and, for a large index, on one worker thread at once: both take rows from a shared counter, so
 * the work balances itself (the worker starts late; the main thread never waits for it to boot).
 * Nothing is read but stats; the main thread looks again at what this reports. Where `npm ci`
 * built native/scan-check.c, the scan runs that instead (native.ts): the same rules, from C, on
 * threads of its own; this file stays the reference it is tested against, and the fallback.
 */

/** All rows of the index in one buffer: row `i` is `data[offsets[i]..offsets[i + 1]]`. */
export interface CheckInput {
  root: string;
  dirs: string[];
  data: Uint8Array;
  offsets: Int32Array;
  /** Entries modified at or after this time (ms) are "racy": looked at again whatever their stat. */
  racyMs: number;
}

/** Rows whose folder must be listed again, and `[row, entry]` pairs (flattened) to look at again. */
export interface CheckResult {
  dirty: number[];
  suspects: number[];
}

/**
 * Checks rows claimed one at a time from `state[1]` (an `Atomics` counter), on this thread or on
 * the stat worker (stat-worker.ts), which imports it.
 */
export function checkRows(read: StatReader, input: CheckInput, state: Int32Array, out: CheckResult): void {
  const { root, dirs, data, offsets, racyMs } = input;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength) as Buffer & { utf8Slice(start: number, end: number): string };
  const near = (a: number, b: number) => a === b || Math.abs(a - b) < 0.001;
  const n = dirs.length;
  for (;;) {
    const i = Atomics.add(state, 1, 1);
    if (i >= n) break;
    const base = offsets[i]!;
    const dir = dirs[i]!;
    const abs = dir === '' ? root : `${root}/${dir}`;
    const smt = view.getFloat64(base + 8, true);
    const sct = view.getFloat64(base + 16, true);
    const sino = view.getFloat64(base + 24, true);
    const dst = read(abs); // [mode, size, ino, mtimeMs, ctimeMs]
    if (!dst || (dst[0]! & 0o170000) !== 0o040000 || !(smt < racyMs) || !near(dst[3]!, smt) || !near(dst[4]!, sct) || dst[2] !== sino) {
      out.dirty.push(i);
      continue;
    }
    const count = view.getUint32(base + 32, true);
    let o = base + 56;
    for (let j = 0; j < count; j++) {
      const type = view.getUint8(o);
      const flags = view.getUint8(o + 1);
      const mode = view.getUint32(o + 4, true);
      const size = view.getFloat64(o + 8, true);
      const mt = view.getFloat64(o + 16, true);
      const ct = view.getFloat64(o + 24, true);
      const ino = view.getFloat64(o + 32, true);
      const nameLen = view.getUint16(o + 40, true);
      const name = bytes.utf8Slice(o + 42, o + 42 + nameLen);
      o += 42 + nameLen;
      if (flags & 1) o += 32;
      if (flags & 2) o += 20;
      if (flags & 4) o += 32;
      if (flags & 8) o += 4 + view.getUint32(o, true);
      const st = read(`${abs}/${name}`);
      if (!st) {
        out.suspects.push(i, j);
        continue;
      }
      const fmt = st[0]! & 0o170000;
      const t = fmt === 0o040000 ? 2 : fmt === 0o120000 ? 1 : 0;
      if (t !== type || (st[0]! & 0o7777) !== mode) {
        out.suspects.push(i, j);
        continue;
      }
      if (t === 2) continue; // a folder: its own row says whether its listing moved
      if (st[1] !== size || !near(st[3]!, mt) || !near(st[4]!, ct) || st[2] !== ino || !(mt < racyMs)) out.suspects.push(i, j);
    }
  }
}

/** Below this many indexed paths a second thread costs more to start than it saves. */
export const PARALLEL_MIN_PATHS = 20_000;

/**
 * One worker thread that helps with {@link checkRows}; start it early, it boots while the index
 * loads. It serves every scan of the process (a sidecar scans many times), and never keeps the
 * process alive.
 */
export class StatWorker {
  private readonly worker: Worker;
  private readonly port: MessagePort;

  private constructor() {
    const { MessageChannel, Worker } = threads();
    const { port1, port2 } = new MessageChannel();
    this.worker = new Worker(workerFile(import.meta.url, 'core/scan/stat-worker'), { workerData: { port: port2 }, transferList: [port2] });
    // A worker that fails (its module missing from a broken install) never takes rows, or loses
    // those it took, which run() then checks here: its failure is not the process's.
    this.worker.on('error', () => {});
    this.worker.unref();
    this.port = port1;
  }

  private static shared: StatWorker | null = null;
  /** The rows' buffer, shared with the worker and reused by every scan (a new one a scan would pile up until the idle worker collects garbage). */
  private data: SharedArrayBuffer | null = null;

  /** A buffer of `size` bytes both threads see, for {@link CheckInput.data}. */
  buffer(size: number): Uint8Array {
    if (!this.data || this.data.byteLength < size) this.data = new SharedArrayBuffer(Math.ceil(size * 1.25));
    return new Uint8Array(this.data, 0, size);
  }

  /** The process's worker (started on first use), or null when threads cannot be had. */
  static start(): StatWorker | null {
    try {
      StatWorker.shared ??= new StatWorker();
      return StatWorker.shared;
    } catch {
      return null;
    }
  }

  /**
   * Checks every row, here and on the worker at once. Blocks until both are done (the scan runs
   * inside a synchronous database transaction). If the worker has not started by the time this
   * thread ran out of rows, it is told to do nothing and is not waited for.
   */
  run(input: CheckInput): CheckResult {
    const state = new Int32Array(new SharedArrayBuffer(12));
    let shipped = input;
    if (!(input.data.buffer instanceof SharedArrayBuffer)) {
      const shared = new Uint8Array(new SharedArrayBuffer(input.data.byteLength));
      shared.set(input.data);
      shipped = { ...input, data: shared };
    }
    this.port.postMessage({ state: state.buffer, input: shipped });
    const out: CheckResult = { dirty: [], suspects: [] };
    checkRows(mainReader(), shipped, state, out);
    if (Atomics.compareExchange(state, 0, 0, 2) !== 0) {
      // The worker took rows: wait for its answer (it has no more work left than this thread had).
      Atomics.wait(state, 2, 0, 30_000);
      const msg = threads().receiveMessageOnPort(this.port)?.message as (CheckResult & { error?: string }) | undefined;
      // A worker that failed or never answered lost the rows it took: check everything here
      // (and do without it from now on).
      if (!msg || msg.error) {
        this.close();
        return checkAll(input);
      }
      for (const x of msg.dirty) out.dirty.push(x);
      for (const x of msg.suspects) out.suspects.push(x);
    }
    return out;
  }

  close(): void {
    if (StatWorker.shared === this) StatWorker.shared = null;
    this.port.close();
    void this.worker.terminate();
  }
}

let reader: StatReader | null = null;

/** This thread's {@link StatReader}. */
export function mainReader(): StatReader {
  reader ??= statReader({ lstatSync });
  return reader;
}

/** Checks every row on this thread alone. */
export function checkAll(input: CheckInput): CheckResult {
  const out: CheckResult = { dirty: [], suspects: [] };
  checkRows(mainReader(), input, new Int32Array(3), out);
  return out;
}
