import { Worker } from 'node:worker_threads';
import { workerFile } from '../worker-file.js';
import type { PendingAnswer, PendingRequest } from './pending-worker.js';

/**
 * The worker thread that reads a background baseline's pending files (pending-worker.ts): their
 * reading, hashing, secret scan and compression, and their blobs' writes, off the thread that
 * serves hooks. One request at a time is the caller's rule; each answers in turn. Never keeps the
 * process alive.
 */
export class PendingReader {
  private seq = 0;
  private readonly waiting = new Map<number, (a: PendingAnswer | null) => void>();
  private broken = false;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (a: PendingAnswer) => {
      const done = this.waiting.get(a.id);
      this.waiting.delete(a.id);
      done?.(a);
    });
    // A worker that fails (its module missing from a broken install, killed) answers nothing more:
    // every request waiting, and every later one, gets null, and the caller reads on its own thread.
    const fail = () => {
      this.broken = true;
      for (const done of this.waiting.values()) done(null);
      this.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    worker.unref();
  }

  /** A reader with its worker started, or null when threads cannot be had here. */
  static start(): PendingReader | null {
    try {
      return new PendingReader(new Worker(workerFile(import.meta.url, 'core/scan/pending-worker'), { stdout: true, stderr: true }));
    } catch {
      return null;
    }
  }

  /** True once the worker has failed or was closed: {@link read} answers null. */
  get failed(): boolean {
    return this.broken;
  }

  /** Reads `req`'s files on the worker: its answer, or null when the worker failed (nothing of it can be trusted to be kept). Never rejects. */
  read(req: Omit<PendingRequest, 'id'>): Promise<PendingAnswer | null> {
    if (this.broken) return Promise.resolve(null);
    const id = ++this.seq;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      try {
        this.worker.postMessage({ ...req, id });
      } catch {
        this.waiting.delete(id);
        resolve(null);
      }
    });
  }

  /** Stops the worker (a request in flight answers null). */
  close(): void {
    void this.worker.terminate().catch(() => {});
  }
}
