// The background baseline's worker thread (PendingReader in pending-reader.ts starts it by this
// module's path; scripts/bundle.mjs bundles it as its own file beside the command's bundles). For
// each request it reads the pending files named, keeps their bytes in the blob store (hashed,
// scanned for secrets, compressed, written and renamed into place) and answers what it read and
// the blob files a commit must sync first. It writes nothing else: the rows go into the journal
// on the thread that holds it.
import { parentPort } from 'node:worker_threads';
import { BlobStore } from '../store/blobs.js';
import { mainReader } from './stat-check.js';
import { readPending, type PendingItem, type PendingRead } from './pending.js';

/** One request: the files to read in workspace `root` and where their blobs go (a TAKEBACK_HOME). */
export interface PendingRequest {
  id: number;
  root: string;
  home: string;
  racyMs: number;
  maxFileBytes: number;
  items: PendingItem[];
}

/** Its answer: what was read of each item (null: left pending), the blob files to sync, or the error that stopped it. */
export interface PendingAnswer {
  id: number;
  reads: (PendingRead | null)[];
  unsynced: { files: string[]; dirs: string[] };
  error?: string;
}

const stores = new Map<string, BlobStore>();

parentPort!.on('message', (m: PendingRequest) => {
  let store = stores.get(m.home);
  if (!store) stores.set(m.home, (store = new BlobStore(m.home)));
  const reads: (PendingRead | null)[] = [];
  let error: string | undefined;
  try {
    const stat = mainReader();
    for (const it of m.items) {
      const rel = it.dir === '' ? it.entry.name : `${it.dir}/${it.entry.name}`;
      reads.push(readPending(m.root, rel, it.entry, m.racyMs, store, { maxFileBytes: m.maxFileBytes }, stat));
    }
  } catch (e) {
    // A full disk, a store gone: what was read so far stands, the rest is left pending.
    error = String((e as Error)?.stack ?? e);
  }
  const answer: PendingAnswer = { id: m.id, reads, unsynced: store.handOver(), ...(error ? { error } : {}) };
  parentPort!.postMessage(answer);
});
