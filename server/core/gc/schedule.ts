import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// Loaded by the first stamp written, as txns.ts loads it: a hook that never claims a sweep does
// not pay for loading it.
const lazy = createRequire(import.meta.url);
const writeFileAtomic = () => lazy('write-file-atomic') as typeof import('write-file-atomic');

/*
 * When the retention rules run on their own: a sweep is due every GC_EVERY_MS under a home, one
 * process claims it (gc.json is the claim and, once the sweep is done, what it did), and a hook
 * starts it in a process of its own. The sweep itself is sweep.ts.
 */

/** How often the retention rules run on their own (the sidecar, an agent's session start). */
export const GC_EVERY_MS = 6 * 60 * 60 * 1000;

/** A claim (`gc.claim`) older than this belongs to a process that died while claiming: it is taken over. */
const CLAIM_STALE_MS = 60 * 1000;

/** `$TAKEBACK_HOME/gc.json`: when the last sweep was claimed (its mtime) and what it did. */
export function stampOf(home: string): string {
  return join(home, 'gc.json');
}

/** True when no sweep ran (or was claimed) under `home` for {@link GC_EVERY_MS} (or ever). `now` in ms since the epoch. */
export function gcDue(home: string, now = Date.now()): boolean {
  try {
    return statSync(stampOf(home)).mtimeMs < now - GC_EVERY_MS;
  } catch {
    return true;
  }
}

/**
 * Claims the sweep that is due under `home`, for the caller to run: true when one was due and this
 * process got it, false when none is due or another process claimed it first. The claim is the
 * stamp (`gc.json`, written at once with `{ claimed, pid }`), so that the next one is due in
 * {@link GC_EVERY_MS}; the check and the write are done under an exclusive file (`gc.claim`), so
 * that processes starting at the same moment (hooks, sidecars) claim one sweep between them.
 * `now` in ms since the epoch.
 */
export function claimSweep(home: string, now = Date.now()): boolean {
  if (!gcDue(home, now)) return false;
  const lock = join(home, 'gc.claim');
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    for (let attempt = 0; ; attempt++) {
      try {
        closeSync(openSync(lock, 'wx', 0o600));
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) return false;
        // Held: by a process claiming right now (it wins), or by one that died claiming (take it over).
        try {
          if (statSync(lock).mtimeMs >= now - CLAIM_STALE_MS) return false;
          unlinkSync(lock);
        } catch {
          // gone meanwhile: try once more
        }
      }
    }
    try {
      if (!gcDue(home, now)) return false; // another process claimed and let go between our two looks
      // Whole or not at all: doctor or the sweep's own end may read the stamp meanwhile.
      writeFileAtomic().sync(stampOf(home), `${JSON.stringify({ claimed: now, pid: process.pid })}\n`, { mode: 0o600, fsync: false });
      return true;
    } finally {
      try {
        unlinkSync(lock);
      } catch {
        // already gone
      }
    }
  } catch {
    return false;
  }
}

/**
 * Gives back a claim this process made ({@link claimSweep}) for a sweep it did not finish (a
 * sidecar leaving mid-sweep): the stamp's mtime is set back, so the sweep is due again at once
 * for the next hook or sidecar. A stamp another process wrote since is left alone.
 */
export function releaseSweep(home: string): void {
  try {
    const stamp = JSON.parse(readFileSync(stampOf(home), 'utf8')) as { claimed?: unknown; pid?: unknown; time?: unknown };
    if (stamp.pid !== process.pid || stamp.claimed === undefined || stamp.time !== undefined) return;
    const past = (Date.now() - GC_EVERY_MS) / 1000 - 1;
    utimesSync(stampOf(home), past, past);
  } catch {
    // no stamp, or not ours
  }
}

/**
 * Runs `takeback gc` in a process of its own that outlives the caller (a hook must not wait for
 * a sweep), when one is due and this process claims it ({@link claimSweep}). `bin` is the
 * takeback script. True when it started one.
 */
export function startGcIfDue(home: string, bin: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!claimSweep(home)) return false;
  try {
    const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
    spawn(process.execPath, [bin, 'gc'], { detached: true, stdio: 'ignore', env }).unref();
    return true;
  } catch {
    return false;
  }
}

/** What `gc.json` says of the last sweep under a home (see {@link lastSweep}). Times in ms since the epoch, durations in ms. */
export interface LastSweep {
  /** When the last sweep was claimed or run (the stamp's mtime): the next is due {@link GC_EVERY_MS} after. */
  at: number;
  /** When the last finished sweep began, or null while the last one claimed has not finished (or died). */
  time: number | null;
  /** When it finished, or null (not known for sweeps of older versions). */
  finished: number | null;
  /** The process that ran it. */
  pid: number | null;
  /** Sets it expired. */
  expired: { byAge: number; bySize: number } | null;
  /** Blobs it removed, and their bytes. */
  swept: { count: number; bytes: number } | null;
  /** How it ran: the number of steps, the longest (ms) and their sum (ms). Null for older stamps. */
  slices: { steps: number; longestMs: number; workMs: number } | null;
}

/** The last sweep under `home` as `gc.json` records it, or null when none was ever claimed. */
export function lastSweep(home: string): LastSweep | null {
  let at: number;
  let stamp: Record<string, unknown> = {};
  try {
    at = statSync(stampOf(home)).mtimeMs;
  } catch {
    return null;
  }
  try {
    stamp = JSON.parse(readFileSync(stampOf(home), 'utf8')) as Record<string, unknown>;
  } catch {
    // torn or unreadable: only its mtime says something
  }
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const obj = <T>(v: unknown) => (v && typeof v === 'object' ? (v as T) : null);
  return {
    at: Math.round(at),
    time: num(stamp.time),
    finished: num(stamp.finished),
    pid: num(stamp.pid),
    expired: obj<LastSweep['expired']>(stamp.expired),
    swept: obj<LastSweep['swept']>(stamp.swept),
    slices: obj<LastSweep['slices']>(stamp.slices),
  };
}
