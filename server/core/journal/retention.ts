import type { Config } from '../config.js';
import type { FileChange } from '../types.js';

/*
 * How long change sets are kept: `retentionDays` (default 30), and, past `maxJournalBytes` of kept
 * copies (default 1 GB, for all workspaces together: they share one blob store), the oldest sets
 * expire first. An expired set stays as a tombstone (see `Sets.expire`); the sweep (gc/sweep.ts)
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

/** The hashes a change's states refer to. */
export function changeRefs(files: FileChange[], out: string[] = []): string[] {
  for (const f of files) {
    for (const s of [f.before, f.after]) if (s.exists && s.type === 'file' && s.sha256) out.push(s.sha256);
  }
  return out;
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
