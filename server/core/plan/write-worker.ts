// The write pool's worker thread (jobs.ts starts it by this module's path; scripts/bundle.mjs
// bundles it as its own file beside the command's bundles). It imports only the steps
// (job-steps.ts) and Node's own modules.
import fs from 'node:fs';
import { workerData } from 'node:worker_threads';
import {
  callSyncWith,
  DONE,
  FAILED,
  FINISHED,
  jobAbandon,
  jobFinish,
  NEXT,
  NOT_RUN,
  PREPARED,
  READY,
  runAsync,
  STATUS,
  STOP,
  type Batch,
  type Call,
  type ErrorData,
  type WorkerData,
} from './job-steps.js';

/**
 * Makes call `c` for a second stage: the calls that wait on the kernel (rename, unlink, rmdir: an
 * inode freed, its blocks perhaps discarded right then) through libuv's thread pool, as a
 * promise, so that several of them are under way at once; the others (lstat, realpath) are quick
 * and made in line.
 */
function call(c: Call): unknown {
  if (c.call === 'rename') {
    const { from, to } = c;
    return new Promise<void>((resolve, reject) => fs.rename(from, to, (e) => (e ? reject(e) : resolve())));
  }
  if (c.call === 'unlink' || c.call === 'rmdir') {
    const { path } = c;
    return new Promise<void>((resolve, reject) => (c.call === 'unlink' ? fs.unlink : fs.rmdir)(path, (e) => (e ? reject(e) : resolve())));
  }
  return callSyncWith(fs, c);
}

// Atomics.waitAsync (V8 8.7, Node 16) is not in TypeScript's ES2023 library.
const atomics = Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: unknown } };

/**
 * For each batch posted to it, `lanes` loops, each taking the next job, waiting for its first
 * stage (made by the thread that posted the batch), and running its second. Its listening port
 * keeps it alive until that thread closes it.
 */
function serve({ port, lanes }: WorkerData): void {
  port.on('message', ({ batch, jobs, shared }: Batch) => {
    const s = new Int32Array(shared);
    const n = jobs.length;
    const lane = async () => {
      for (;;) {
        const i = Atomics.add(s, NEXT, 1);
        if (i >= n) return;
        while (Atomics.load(s, STATUS + i) === 0) {
          const w = atomics.waitAsync(s, STATUS + i, 0);
          if (w.async) await w.value;
        }
        if (Atomics.load(s, STATUS + i) === PREPARED) {
          if (Atomics.load(s, STOP) !== 0) {
            await runAsync(jobAbandon(jobs[i]!), call);
            Atomics.store(s, STATUS + i, NOT_RUN);
          } else {
            try {
              const note = await runAsync(jobFinish(jobs[i]!), call);
              if (note !== null) port.postMessage({ batch, i, note });
              Atomics.store(s, STATUS + i, DONE);
            } catch (e) {
              Atomics.store(s, STOP, 1);
              const err = e as { message?: unknown; code?: unknown; refuse?: unknown; changed?: unknown };
              const error: ErrorData = { message: String(err?.message ?? e) };
              if (typeof err?.code === 'string') error.code = err.code;
              if (typeof err?.refuse === 'string') error.refuse = err.refuse;
              if (err?.changed === true) error.changed = true;
              port.postMessage({ batch, i, error });
              Atomics.store(s, STATUS + i, FAILED);
            }
          }
        }
        Atomics.add(s, FINISHED, 1);
        Atomics.notify(s, FINISHED);
      }
    };
    Atomics.store(s, READY, 1);
    Atomics.notify(s, READY);
    void Promise.all(Array.from({ length: lanes }, lane));
  });
}

serve(workerData as WorkerData);
