import { readFileSync } from 'node:fs';
import type { Workspace } from '../core/open-workspace.js';
import { hunksMayBeInPlace, type HunkInPlace } from '../core/plan/in-step.js';
import { diffHunks, placeHunks } from '../core/plan/hunks.js';
import { isMergeableText } from '../core/plan/merge.js';
import type { FileState } from '../core/types.js';

/*
 * Whether a change to a text file written over since is still in place in part: the one question
 * of a listing that needs a diff, in a module of its own, loaded only when a file holds neither
 * what a change left nor what it found (see core/plan/in-step.ts).
 */

/**
 * The check of {@link HunkInPlace} for workspace `ws`: how many hunks of change `f` (a text file
 * changed, both sides kept) are still in the text file at `abs`, each one's changed lines as the
 * change left them all there, next to each other (plan/hunks.ts's `intact`): `all`, `some` or
 * `none`. `none` for anything else: a binary file, a link, a file made or removed, one over the
 * size limit, bytes not kept.
 */
export function hunkInPlace(ws: Workspace): HunkInPlace {
  return (f, abs, now) => {
    if (!hunksMayBeInPlace(f, now, ws.config.maxFileBytes)) return 'none';
    const before = keptText(ws, f.before);
    const after = keptText(ws, f.after);
    const bytes = before && after ? textAt(ws, abs, now) : null;
    if (!before || !after || !bytes) return 'none';
    const placed = placeHunks(diffHunks(after, before), after, bytes);
    const intact = placed.filter((h) => h.intact).length;
    return intact === 0 ? 'none' : intact === placed.length ? 'all' : 'some';
  };
}

/** The bytes of the text file at `abs` (state `now`), or null for anything else (a link, binary, over the size limit, gone). */
function textAt(ws: Workspace, abs: string, now: FileState): Buffer | null {
  if (!now.exists || now.type !== 'file' || now.size > ws.config.maxFileBytes) return null;
  try {
    const b = readFileSync(abs);
    return isMergeableText(b) ? b : null;
  } catch {
    return null;
  }
}

/** The bytes of kept text file state `s` from the blob store, or null. */
function keptText(ws: Workspace, s: FileState): Buffer | null {
  if (!s.exists || s.type !== 'file' || !s.sha256) return null;
  try {
    const b = ws.journal.blobs.get(s.sha256);
    return isMergeableText(b) ? b : null;
  } catch {
    return null;
  }
}
