import { lineStats } from '../diffs.js';
import type { BlobStore } from '../store/blobs.js';
import { sameState, statusOf, type FileChange, type FileState, type GapReason } from '../types.js';

function bytesOf(blobs: BlobStore, s: FileState, known?: Buffer): Buffer | null {
  if (!s.exists || s.type !== 'file' || s.sha256 === null) return null;
  if (known) return known;
  try {
    return blobs.get(s.sha256);
  } catch {
    return null;
  }
}

/**
 * The change of one path from `before` to `after`, with its line counts, or `null` when the path
 * came back to where it started (and no gap needs naming). `afterBytes` saves a read when the
 * caller holds the new bytes.
 */
export function makeChange(
  blobs: BlobStore,
  path: string,
  before: FileState,
  after: FileState,
  gap?: GapReason,
  afterBytes?: Buffer,
): FileChange | null {
  const same = sameState(before, after);
  // A link written through, or a folder whose contents are unknown or skipped, is named even when its own state is the same.
  if (same && gap !== 'symlink-target' && gap !== 'unreadable' && !(gap === 'excluded' && before.exists && before.type === 'dir')) return null;
  if (!same && !before.exists && !after.exists) return null;
  const status = same ? 'modified' : statusOf(before, after);
  const unkept = (s: FileState) => s.exists && s.type === 'file' && s.sha256 === null;
  const { added, removed } =
    status === 'modified' || status === 'created' || status === 'deleted'
      ? lineStats(bytesOf(blobs, before), bytesOf(blobs, after, afterBytes))
      : { added: 0, removed: 0 };
  const change: FileChange = { path, before, after, status, added, removed };
  // Bytes not kept on either side: the caller names why; a bare unkept file is over the size limit.
  const g = gap ?? (unkept(before) || unkept(after) ? 'too-large' : undefined);
  if (g) change.gap = g;
  return change;
}
