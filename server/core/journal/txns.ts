import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { syncFolder } from '../durable.js';
import type { FileState } from '../types.js';

// Loaded by the first write (an undo or redo): loading write-file-atomic loads worker_threads,
// which every command and hook that opens a journal would pay for otherwise.
const lazy = createRequire(import.meta.url);
const writeFileAtomic = () => lazy('write-file-atomic') as typeof import('write-file-atomic');

/** One file of an undo/redo transaction: the state found (`from`, kept in the blob store) and the state written (`to`). */
export interface TxnOp {
  path: string;
  from: FileState;
  to: FileState;
}

/** A transaction under way, written (and fsynced) before the first file is touched. */
export interface TxnRecord {
  id: string;
  created: number;
  ops: TxnOp[];
}

/**
 * Undo/redo transactions in flight, one file each (`txn-<id>.json` in the workspace's journal
 * folder). The file is written before the first file of the workspace is touched, while the
 * journal's write lock is held; the journal records `txn:<id>` as done in the same SQLite
 * transaction that records the step in the operation log. A file whose transaction is not
 * recorded as done belongs to a process that died mid-apply: it is rolled back the next time the
 * journal is opened.
 */
export class Txns {
  constructor(private readonly dir: string) {}

  /** Writes transaction `t`'s file whole and durably (the file synced, then its folder) before it returns. */
  put(t: TxnRecord): void {
    writeFileAtomic().sync(join(this.dir, `txn-${t.id}.json`), JSON.stringify(t), { mode: 0o600, fsync: true });
    syncFolder(this.dir);
  }

  /**
   * Removes transaction `id`'s file, durably (its folder synced): the journal's record that the
   * step is done may only go after it, or a power cut could bring the file back without that
   * record, and a finished step would be rolled back.
   */
  remove(id: string): void {
    try {
      unlinkSync(join(this.dir, `txn-${id}.json`));
    } catch {
      return; // already gone
    }
    syncFolder(this.dir);
  }

  /** Transactions whose file is still there (normally none). A torn file cannot exist: it is renamed into place whole. */
  all(): TxnRecord[] {
    const out: TxnRecord[] = [];
    for (const name of readdirSync(this.dir)) {
      if (!/^txn-[A-Za-z0-9_-]+\.json$/.test(name)) continue;
      try {
        out.push(JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as TxnRecord);
      } catch {
        // Unreadable: nothing was written under it that it could describe. Leave it for doctor.
      }
    }
    return out;
  }

  blobRefs(): string[] {
    const out: string[] = [];
    for (const t of this.all()) {
      for (const op of t.ops) {
        for (const s of [op.from, op.to]) if (s.exists && s.type === 'file' && s.sha256) out.push(s.sha256);
      }
    }
    return out;
  }
}
