import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { MAX_SOCKET_PATH, socketPath } from './address.js';
import { hasUnrecorded } from './unrecorded-marker.js';

/*
 * What a process that is about to read or write a journal asks first (the command line's
 * commands, the sidecar): that the capture daemon of its TAKEBACK_HOME finish recording what it
 * answered early (see AnswerPoint in agents/registry.ts), so that it sees every event an agent
 * was answered for, and records nothing of its own (an undo, a person's save) ahead of them.
 * Hooks never ask: the daemon orders their events itself. Nothing is asked while no daemon has
 * an event answered and unrecorded (no marker in `run/`, see unrecorded.ts): a reader then pays
 * one folder listing, and never waits behind an event the daemon answers once recorded.
 */

/** How long a reader waits for the daemon to settle (ms) before it goes on without. */
export const SETTLE_TIMEOUT_MS = 5000;

/**
 * How the wait went: `settled` (nothing answered is unrecorded), `none` (no daemon answers on this
 * home's socket: what a killed one left is queued), `timeout` (it did not settle within the wait:
 * stopped, or a record that takes longer).
 */
export type SettleResult = 'settled' | 'none' | 'timeout';

/**
 * Asks the capture daemon of `home` (this install's socket) to finish recording what it answered
 * early, and waits for it at most `ms`; then queues what a daemon killed between an answer and
 * its record left (see unrecorded.ts), so that the caller's journal folds it in first. `log`
 * hears what was queued. Never rejects.
 */
export async function settleCapture(home: string, opts: { ms?: number; log?: (message: string) => void } = {}): Promise<SettleResult> {
  if (!hasUnrecorded(home)) return 'settled';
  const r = await askToSettle(home, opts.ms ?? SETTLE_TIMEOUT_MS);
  // Loaded only here: what queues a killed daemon's events holds the capture code.
  (await import('./unrecorded.js')).adoptUnrecorded(home, opts.log);
  return r;
}

/**
 * {@link settleCapture} when a daemon of `home` has an event answered and not recorded (its
 * marker is there); null when none has (nothing to wait for), at the cost of one folder listing.
 * Never throws.
 */
export function settleIfRunning(home: string, opts: { ms?: number; log?: (message: string) => void } = {}): Promise<SettleResult> | null {
  if (!hasUnrecorded(home)) return null;
  return settleCapture(home, opts);
}

/** True when this install's daemon socket of `home` is there (a daemon runs, or one was killed and left it). */
function socketThere(home: string): boolean {
  if (process.platform === 'win32') return false;
  const path = socketPath(home);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) return false;
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function askToSettle(home: string, ms: number): Promise<SettleResult> {
  if (!socketThere(home)) return Promise.resolve('none');
  const path = socketPath(home);
  return new Promise((resolve) => {
    let done = false;
    const sock = connect(path);
    const finish = (r: SettleResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish('timeout'), ms);
    sock.setEncoding('utf8');
    let buf = '';
    sock.on('connect', () => sock.write('{"settle":true}\n'));
    sock.on('data', (chunk: string) => {
      buf += chunk;
      if (buf.includes('\n')) finish(buf.startsWith('{"settled":true}') ? 'settled' : 'none');
    });
    // No daemon (a stale socket), or one that went away: nothing is left to wait for.
    sock.on('error', () => finish('none'));
    sock.on('close', () => finish('none'));
  });
}
