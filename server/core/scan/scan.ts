import { lstatSync, readdirSync, readlinkSync, type BigIntStats, type Dirent } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { readState } from '../fsstate.js';
import type { IndexEntry, ScanMeta } from '../journal/snapshot-index.js';
import { isSecretPath } from '../secrets.js';
import type { BlobStore } from '../store/blobs.js';
import type { FileState, FileType } from '../types.js';
import { ScanFilter } from './filter.js';

/** One path that differs between the last look and this one (`undefined`: absent). */
export interface ScanChange {
  path: string;
  before: IndexEntry | undefined;
  after: IndexEntry | undefined;
}

/**
 * The outcome of one scan.
 * - `ok`: `changes` lists what moved since the last scan.
 * - `baseline`: there was no usable last scan; nothing is reported as changed.
 * - `too-large`: the workspace is over the limits; the scan stopped early and reports nothing.
 */
export interface ScanOutcome {
  status: 'ok' | 'baseline' | 'too-large';
  reason?: string;
  changes: ScanChange[];
  entries: Map<string, IndexEntry>;
  meta: ScanMeta;
  /** Paths read and hashed in this scan (the rest matched their stat). */
  read: number;
}

/**
 * A file whose mtime is this close to (or after) the start of the scan that saw it is "racy":
 * it may change again within the same timestamp tick without its stat moving, so the next scan
 * reads it again whatever its stat says (git's racy-git rule). 2 s covers coarse clocks and
 * filesystems with second (or two-second) timestamps.
 */
export const RACY_WINDOW_NS = 2_000_000_000n;

/** The state an index entry stands for. */
export function entryState(e: IndexEntry | undefined): FileState {
  if (!e) return { exists: false };
  if (e.type === 'symlink') return { exists: true, type: 'symlink', target: e.target ?? '', mode: e.mode };
  if (e.type === 'dir') return { exists: true, type: 'dir', mode: e.mode };
  return { exists: true, type: 'file', sha256: e.sha256, size: e.size, mode: e.mode };
}

function entryChanged(a: IndexEntry, b: IndexEntry): boolean {
  if (a.type !== b.type || a.mode !== b.mode) return true;
  if (a.type === 'dir') return false;
  if (a.type === 'symlink') return a.target !== b.target;
  if (a.sha256 !== null && b.sha256 !== null) return a.sha256 !== b.sha256;
  // A file whose bytes were not kept on one side: judge by its stat.
  return a.sha256 !== b.sha256 || a.size !== b.size || a.mtime !== b.mtime;
}

function stamp(st: BigIntStats, type: FileType): Omit<IndexEntry, 'sha256' | 'target' | 'gap'> {
  return {
    type,
    size: Number(st.size),
    mtime: String(st.mtimeNs),
    ctime: String(st.ctimeNs),
    ino: String(st.ino),
    mode: Number(st.mode) & 0o7777,
  };
}

/**
 * Looks at every path the command scan covers under `root`, by stat first: a file whose size,
 * mtime, ctime, inode and mode match the last look (and that was not racy then) keeps its hash
 * unread; anything else is read, hashed and its bytes stored in `blobs` (unless it is a secret,
 * a link or over the size limit, kept as a gap entry so that it is never taken for a file the
 * agent created or deleted).
 *
 * Stops as soon as the workspace passes `config.maxWorkspaceFiles` files or
 * `config.maxWorkspaceBytes` kept bytes (status `too-large`). `onProgress(files)` is called every
 * 1,000 files. Does not write the index: the caller commits `entries` with the changes.
 */
export function scanWorkspace(opts: {
  root: string;
  prev: Map<string, IndexEntry>;
  prevMeta: ScanMeta | null;
  blobs: BlobStore;
  config: Config;
  onProgress?: (files: number) => void;
}): ScanOutcome {
  const { root, prev, prevMeta, blobs, config } = opts;
  const startedNs = BigInt(Date.now()) * 1_000_000n;
  const racyLine = prevMeta ? BigInt(prevMeta.startedNs) - RACY_WINDOW_NS : 0n;
  const filter = new ScanFilter(root, config.excludeNames);
  const entries = new Map<string, IndexEntry>();
  const changes: ScanChange[] = [];
  const baseline = !prevMeta || prevMeta.status !== 'ok';
  let files = 0;
  let bytes = 0;
  let read = 0;

  const tooLarge = (reason: string): ScanOutcome => ({
    status: 'too-large',
    reason,
    changes: [],
    entries: new Map(),
    meta: { status: 'too-large', startedNs: String(startedNs), files, bytes, reason },
    read,
  });

  const stack: { rel: string; parents: string[] }[] = [{ rel: '', parents: [] }];
  while (stack.length > 0) {
    const { rel: dirRel, parents } = stack.pop()!;
    const here = [...parents, dirRel];
    let dirents: Dirent[];
    try {
      dirents = readdirSync(dirRel === '' ? root : join(root, dirRel), { withFileTypes: true });
    } catch {
      continue; // unreadable or vanished folder
    }
    for (const d of dirents) {
      const name = d.name;
      if (filter.isExcludedName(name)) continue;
      const rel = dirRel === '' ? name : `${dirRel}/${name}`;
      if (filter.ignoredBy(rel, d.isDirectory(), here)) continue;
      const abs = join(root, rel);
      let st: BigIntStats;
      try {
        st = lstatSync(abs, { bigint: true });
      } catch {
        continue; // vanished between readdir and lstat
      }
      if (st.isDirectory()) {
        entries.set(rel, { ...stamp(st, 'dir'), size: 0, sha256: null, target: null, gap: null });
        stack.push({ rel, parents: here });
        continue;
      }
      files++;
      if (files > config.maxWorkspaceFiles) return tooLarge(`over ${config.maxWorkspaceFiles} files`);
      if (opts.onProgress && files % 1000 === 0) opts.onProgress(files);
      const type: FileType = st.isSymbolicLink() ? 'symlink' : 'file';
      const s = stamp(st, type);
      const p = prev.get(rel);
      let e: IndexEntry;
      if (
        p &&
        p.type === s.type &&
        p.size === s.size &&
        p.mtime === s.mtime &&
        p.ctime === s.ctime &&
        p.ino === s.ino &&
        p.mode === s.mode &&
        BigInt(p.mtime) < racyLine
      ) {
        e = p;
      } else if (type === 'symlink') {
        let target = '';
        try {
          target = readlinkSync(abs);
        } catch {
          continue;
        }
        e = { ...s, sha256: null, target, gap: null };
      } else {
        read++;
        const r = readState(abs, { blobs, maxFileBytes: config.maxFileBytes, secret: isSecretPath(rel) });
        if (!r.state.exists) continue;
        const sha = r.state.type === 'file' ? r.state.sha256 : null;
        // Stamp with the descriptor's stat when we have it: it describes the bytes we hashed.
        const fst = r.stat;
        e = {
          ...s,
          size: fst ? fst.size : s.size,
          sha256: sha,
          target: null,
          gap: r.gap ?? null,
        };
      }
      if (e.type === 'file' && e.sha256 !== null) {
        bytes += e.size;
        if (bytes > config.maxWorkspaceBytes) return tooLarge(`over ${Math.round(config.maxWorkspaceBytes / 1048576)} MB`);
      }
      entries.set(rel, e);
    }
  }

  if (!baseline) {
    for (const [path, after] of entries) {
      const before = prev.get(path);
      if (!before || entryChanged(before, after)) changes.push({ path, before, after });
    }
    for (const [path, before] of prev) if (!entries.has(path)) changes.push({ path, before, after: undefined });
    changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
  return {
    status: baseline ? 'baseline' : 'ok',
    changes,
    entries,
    meta: { status: 'ok', startedNs: String(startedNs), files, bytes },
    read,
  };
}
