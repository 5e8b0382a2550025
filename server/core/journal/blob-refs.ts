import type { Db } from './db.js';

/*
 * What the storage sweep (server/core/gc/) reads of a journal to know which blobs it still refers
 * to, page by page so that the sweep can stop between pages. These are the journal's tables, read
 * here so that the sweep runs no SQL of its own; the working state's other references (tool calls
 * in flight, drift, unfinished undos) are Captures', Drift's and Txns' own `blobRefs`.
 */

/**
 * One change set as the sweep reads it: its id, its time (ms since the epoch), whether it
 * expired, its files as recorded (JSON), and the states the undos and redos that moved it found
 * and wrote at its paths (`op_paths`: a JSON array of `[found, wrote]`, each a FileState's JSON
 * text) — a merged undo's
 * merged bytes and the later edits it found, which its exact inverse gives back; both null once
 * expired.
 */
export type SetRefsRow = [id: number, createdAt: number, expired: number, files: string | null, opStates: string | null];

/** One row of the snapshot index: its folder, and its packed rows (server/core/scan/packed.ts). */
export type SnapshotRefsRow = [dir: string, data: Buffer];

/** The pages of a journal's tables that refer to blobs, in a stable order (prepared once per journal). */
export class BlobRefs {
  private readonly sets;
  private readonly firstRows;
  private readonly nextRows;

  constructor(db: Db) {
    this.sets = db
      .prepare(
        `SELECT s.id, s.created_at, s.state = 'expired', CASE WHEN s.state = 'expired' THEN NULL ELSE s.files END,
          CASE WHEN s.state = 'expired' THEN NULL ELSE (SELECT json_group_array(json_array(p.found, p.wrote)) FROM op_files m JOIN op_paths p ON p.op = m.op AND p.path = m.path WHERE m.set_id = s.id) END
         FROM sets s WHERE s.id > ? ORDER BY s.id LIMIT ?`,
      )
      .raw();
    this.firstRows = db.prepare('SELECT dir, data FROM snapshot_rows ORDER BY dir LIMIT ?').raw();
    this.nextRows = db.prepare('SELECT dir, data FROM snapshot_rows WHERE dir > ? ORDER BY dir LIMIT ?').raw();
  }

  /** Up to `limit` change sets whose id is above `after` (0: from the first), by id. */
  setsAfter(after: number, limit: number): SetRefsRow[] {
    return this.sets.all(after, limit) as SetRefsRow[];
  }

  /** Up to `limit` snapshot rows whose folder sorts after `after` (null: from the first), by folder. */
  snapshotRowsAfter(after: string | null, limit: number): SnapshotRefsRow[] {
    return (after === null ? this.firstRows.all(limit) : this.nextRows.all(after, limit)) as SnapshotRefsRow[];
  }
}
