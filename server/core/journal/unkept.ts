import type { Db } from './db.js';
import { statement } from '../statements.js';

/**
 * Why something could not be kept: the journal's disk was full, another process held its lock too
 * long, it could not be written for another reason, or the end of a tool call never came
 * (`end-lost`: the hook process killed, its event lost), so what it left was found only later,
 * or a capture daemon answered an event and was gone before recording it (`record-lost`).
 */
export type UnkeptCause = 'disk-full' | 'journal-busy' | 'journal-error' | 'end-lost' | 'record-lost';

/**
 * One change (or event) that could not be kept: when it happened (ms since the epoch), why, what
 * it was (`Write /w/a.txt`, `Bash npm test: what it found before`), and the tool call's capture
 * id when its changes are named as gaps when it ends (null for what is not a tool call's).
 */
export interface UnkeptEntry {
  at: number;
  cause: UnkeptCause;
  what: string;
  capture: string | null;
}

/** What `list` and doctor say of the changes that could not be kept: how many, why, and when the first and the last happened (ms since the epoch). */
export interface UnkeptSummary {
  count: number;
  causes: UnkeptCause[];
  first: number;
  last: number;
}

/**
 * The changes that could not be kept as they happened (`unkept` table): each one a hook queued
 * in the spill, or lost, when the journal could not take it, named here once the journal could.
 */
export class Unkept {
  constructor(private readonly db: Db) {}

  /** Records one change that could not be kept. */
  add(e: UnkeptEntry): void {
    this.db.prepare('INSERT INTO unkept (at, cause, what, capture) VALUES (?, ?, ?, ?)').run(e.at, e.cause, e.what, e.capture);
  }

  /** Every change that could not be kept, oldest first. */
  all(): UnkeptEntry[] {
    return this.db.prepare('SELECT at, cause, what, capture FROM unkept ORDER BY at, id').all() as UnkeptEntry[];
  }

  /** True when something of tool call `capture` could not be kept (its changes are then gaps). */
  hasCapture(capture: string): boolean {
    return statement(this.db, 'SELECT 1 FROM unkept WHERE capture = ?').get(capture) !== undefined;
  }

  /** How many changes could not be kept, why and when; null when none. */
  summary(): UnkeptSummary | null {
    const r = this.db.prepare('SELECT count(*) AS n, min(at) AS first, max(at) AS last, group_concat(DISTINCT cause) AS causes FROM unkept').get() as {
      n: number;
      first: number | null;
      last: number | null;
      causes: string | null;
    };
    if (r.n === 0) return null;
    return { count: r.n, causes: (r.causes ?? '').split(',').sort() as UnkeptCause[], first: r.first!, last: r.last! };
  }
}

const CAUSE_TEXT: Record<UnkeptCause, string> = {
  'disk-full': 'disk full',
  'journal-busy': 'journal busy',
  'journal-error': 'journal could not be written',
  'end-lost': 'end never heard',
  'record-lost': 'capture daemon gone before recording',
};

function minute(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The sentence `list` and doctor say of `s`: "3 changes could not be kept (disk full, at 2026-12-01 12:03)", with a span when they happened over more than a minute. */
export function unkeptText(s: UnkeptSummary): string {
  const when = minute(s.first) === minute(s.last) ? minute(s.first) : `${minute(s.first)} to ${minute(s.last)}`;
  return `${s.count} change${s.count === 1 ? '' : 's'} could not be kept (${s.causes.map((c) => CAUSE_TEXT[c]).join(', ')}, at ${when})`;
}
