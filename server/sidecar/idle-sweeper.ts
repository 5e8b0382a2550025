import { performance } from 'node:perf_hooks';
import { loadConfig } from '../core/config.js';
import { claimSweep, releaseSweep } from '../core/gc/schedule.js';
import { GcSweep } from '../core/gc/sweep.js';
import type { Activity } from './server.js';

/** The work of one slice of the sweep (ms): a slice ends after the unit of work that passes it. */
const SLICE_MS = 5;

/** A slice runs only once no request has been in flight for this long (ms). */
const IDLE_MS = 20;

/** How long to wait before trying again when a slice found a journal locked by a writer (ms). */
const LOCKED_RETRY_MS = 100;

/**
 * A request in flight with nothing started or ended for this long (ms) is waiting on the client
 * (an edit it was asked to apply), not on the sidecar: slices run again, lest a client that never
 * answers hold the sweep, and the read transaction it may have open, for ever.
 */
const STUCK_MS = 30_000;

/**
 * Runs the retention rules' sweep (gc/sweep.ts) inside the sidecar, in slices of about
 * {@link SLICE_MS} ms, each only when no request is in flight and none started or ended in the
 * last {@link IDLE_MS} ms (or nothing moved for {@link STUCK_MS}). Slices are queued with
 * `setImmediate`/`setTimeout`, so the event loop reads and answers a request arriving mid-sweep
 * before the next slice: a request waits one slice at most. The sweep never waits for a
 * journal's write lock (it tries again later), so a slice never blocks on another process.
 */
export class IdleSweeper implements Activity {
  private inFlight = 0;
  private lastActivity = -Infinity;
  private sweep: GcSweep | null = null;
  private pending: NodeJS.Timeout | NodeJS.Immediate | null = null;

  constructor(
    private readonly home: string,
    private readonly log: (m: string) => void,
  ) {}

  begin(): void {
    this.inFlight++;
    this.lastActivity = performance.now();
  }

  end(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.lastActivity = performance.now();
  }

  /** Starts a sweep when one is due and this process claims it (the claim is shared with hooks and `takeback gc`'s callers). */
  startIfDue(): void {
    if (this.sweep || !claimSweep(this.home)) return;
    try {
      this.sweep = new GcSweep({ home: this.home, config: loadConfig(this.home), nonBlocking: true });
    } catch (e) {
      this.log(`takeback: the storage sweep could not start: ${(e as Error).message}`);
      return;
    }
    this.schedule(0);
  }

  /** Gives up a sweep under way (the sidecar is leaving), and gives its claim back: the next process sweeps. */
  stop(): void {
    if (this.pending) {
      clearTimeout(this.pending as NodeJS.Timeout);
      clearImmediate(this.pending as NodeJS.Immediate);
      this.pending = null;
    }
    if (!this.sweep) return;
    const unfinished = !this.sweep.done;
    this.sweep.close();
    this.sweep = null;
    if (unfinished) releaseSweep(this.home);
  }

  private schedule(delayMs: number): void {
    // An unref'd immediate would not stop the event loop from sleeping in its poll until some other
    // event: immediates stay ref'd (the sidecar lives on stdin anyway), timers need not be.
    this.pending = delayMs > 0 ? setTimeout(this.tick, delayMs).unref() : setImmediate(this.tick);
  }

  private readonly tick = (): void => {
    this.pending = null;
    const s = this.sweep;
    if (!s) return;
    const quiet = performance.now() - this.lastActivity;
    if ((this.inFlight > 0 && quiet < STUCK_MS) || quiet < IDLE_MS) {
      this.schedule(Math.max(1, Math.ceil(IDLE_MS - Math.max(0, quiet))));
      return;
    }
    let r;
    try {
      r = s.step(SLICE_MS);
    } catch (e) {
      this.log(`takeback: the storage sweep failed: ${(e as Error).message}`);
      this.sweep = null; // over: its claim stands, the next try is in 6 hours
      return;
    }
    if (r === 'done') this.sweep = null;
    else this.schedule(r === 'wait' ? LOCKED_RETRY_MS : 0);
  };
}
