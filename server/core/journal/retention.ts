import type { Config } from '../config.js';
import type { FileChange } from '../types.js';
import type { Db } from './db.js';

/*
 * How long change sets are kept: `retentionDays` (default 30), and, past `maxJournalBytes` of kept
 * copies (default 1 GB, for all workspaces together: they share one blob store), the oldest sets
 * expire first. An expired set stays as a tombstone (see `Sets.expire`); the sweep (store/gc.ts)
 * then takes the copies nothing else refers to.
 */

/** One live set as the size rule sees it: when it was made and the copies it refers to. */
export interface SetRefs {
  /** Which journal (an index into the caller's list of workspaces). */
  journal: number;
  id: string;
  time: number;
  blobs: string[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The hashes a change's states refer to. */
export function changeRefs(files: FileChange[], out: string[] = []): string[] {
  for (const f of files) {
    for (const s of [f.before, f.after]) if (s.exists && s.type === 'file' && s.sha256) out.push(s.sha256);
  }
  return out;
}

/** Every set of `db` not yet expired, oldest first, with the copies it refers to. */
export function liveSets(db: Db, journal: number): SetRefs[] {
  const rows = db.prepare("SELECT id, created_at, files FROM sets WHERE state != 'expired' ORDER BY created_at, id").raw().all() as [number, number, string][];
  return rows.map(([id, time, files]) => ({ journal, id: String(id), time, blobs: changeRefs(JSON.parse(files) as FileChange[]) }));
}

/** Sets past `config.retentionDays` at `now`. */
export function pastRetention(sets: SetRefs[], config: Config, now: number): SetRefs[] {
  const cutoff = now - config.retentionDays * DAY_MS;
  return sets.filter((s) => s.time < cutoff);
}

/**
 * The oldest sets to expire so that what the store keeps fits `config.maxJournalBytes`.
 * `size` gives each blob's bytes; `pinned` blobs (the snapshot index, tool calls in flight,
 * unfinished undos) are kept whatever happens; `extra` is what is kept besides (blobs too young
 * to sweep). A blob goes when the last set that refers to it expires.
 */
export function overBudget(sets: SetRefs[], size: (hash: string) => number, pinned: Set<string>, extra: number, config: Config): SetRefs[] {
  const count = new Map<string, number>();
  for (const s of sets) for (const b of new Set(s.blobs)) count.set(b, (count.get(b) ?? 0) + 1);
  let kept = extra;
  for (const b of new Set([...count.keys(), ...pinned])) kept += size(b);
  const out: SetRefs[] = [];
  const ordered = [...sets].sort((a, b) => a.time - b.time || Number(a.id) - Number(b.id));
  for (const s of ordered) {
    if (kept <= config.maxJournalBytes) break;
    out.push(s);
    for (const b of new Set(s.blobs)) {
      const n = (count.get(b) ?? 1) - 1;
      count.set(b, n);
      if (n === 0 && !pinned.has(b)) kept -= size(b);
    }
  }
  return out;
}
