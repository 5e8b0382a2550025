import type { FileState } from '../types.js';
import { statement } from '../statements.js';
import type { Db } from './db.js';

/** A change seen during a turn that no tool call claimed: the first state seen and the latest. */
export interface DriftEntry {
  path: string;
  before: FileState;
  after: FileState;
}

/**
 * Changes seen between tool calls while a turn is open (by a scan at a command's start, or at
 * the turn's end). At the end of the turn what no tool call claimed becomes the set
 * "changed during this turn".
 */
export class Drift {
  constructor(private readonly db: Db) {}

  /** Adds changes for `turn`: a path seen again keeps its first `before` and takes the new `after`. */
  add(turn: string, changes: DriftEntry[]): void {
    const get = statement(this.db, 'SELECT before FROM drift WHERE path = ? AND turn = ?');
    const put = statement(this.db, 'INSERT OR REPLACE INTO drift (path, turn, before, after) VALUES (?, ?, ?, ?)');
    for (const c of changes) {
      const prev = get.get(c.path, turn) as { before: string } | undefined;
      put.run(c.path, turn, prev ? prev.before : JSON.stringify(c.before), JSON.stringify(c.after));
    }
  }

  /**
   * Removes and returns the drift of `turn`. Drift of turns already ended (stale: an agent killed
   * before its Stop) is dropped too; that of other open turns (another agent at work) stays.
   */
  take(turn: string): DriftEntry[] {
    const rows = this.db.prepare('SELECT path, before, after FROM drift WHERE turn = ?').all(turn) as {
      path: string;
      before: string;
      after: string;
    }[];
    this.db.prepare('DELETE FROM drift WHERE turn = ? OR turn NOT IN (SELECT id FROM turns WHERE ended_at IS NULL)').run(turn);
    return rows.map((r) => ({ path: r.path, before: JSON.parse(r.before) as FileState, after: JSON.parse(r.after) as FileState }));
  }

  /** Hashes of blobs that drift entries refer to. */
  blobRefs(): string[] {
    const out: string[] = [];
    for (const r of this.db.prepare('SELECT before, after FROM drift').all() as { before: string; after: string }[]) {
      for (const s of [JSON.parse(r.before), JSON.parse(r.after)] as FileState[]) {
        if (s.exists && s.type === 'file' && s.sha256) out.push(s.sha256);
      }
    }
    return out;
  }
}
