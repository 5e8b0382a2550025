import type { Db } from './db.js';

/*
 * What `doctor` asks of one journal beyond what its tables' classes answer (`Sets.counts`), asked
 * here so that no caller outside the journal runs SQL on them.
 */

/** The number of turns of `db`, and of those not ended. */
export function turnCounts(db: Db): { total: number; open: number; endLost: number } {
  const turns = db.prepare('SELECT count(*) AS total, sum(ended_at IS NULL) AS open, sum(end_lost = 1) AS lost FROM turns').get() as {
    total: number;
    open: number | null;
    lost: number | null;
  };
  return { total: turns.total, open: turns.open ?? 0, endLost: turns.lost ?? 0 };
}

/** SQLite's quick check of `db`: `ok`, or the first problem it found. */
export function quickCheck(db: Db): string {
  return String(db.pragma('quick_check', { simple: true }));
}
