import { lstatSync, readdirSync, readlinkSync, type Dirent } from 'node:fs';
import type { Config } from '../config.js';
import { readWorkspaceState } from '../fsstate.js';
import type { IndexEntry, ScanMeta } from './snapshot-index.js';
import { holdsSecret, isSecretPath } from '../secrets.js';
import type { BlobStore } from '../store/blobs.js';
import type { FileState, FileType } from '../types.js';
import { INFO_EXCLUDE, ruleStamp, ScanFilter } from './filter.js';
import { gitBlobId, gitIndexStamp, readGitBlobs, readGitIndex, statMatchesGit, trackedExcludedDirs, type GitIndex } from './git-index.js';
import {
  decodeRow,
  encodeRow,
  isCopied,
  rowCounts,
  rowStamp,
  toIndexEntry,
  UNKNOWN_STAMP,
  type DirStamp,
  type PackedEntry,
} from './packed.js';
import { S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from './lstat.js';
import { checkIndex, type ChangeHints } from './checker.js';
import { mainReader, type StatWorker } from './stat-check.js';

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
export const RACY_WINDOW_MS = 2000;

/** A warm scan with this many files to read looks them up in git's index first. */
const GIT_LOOKUP_MIN = 200;

/** The state an index entry stands for. */
export function entryState(e: IndexEntry | undefined): FileState {
  if (!e) return { exists: false };
  if (e.type === 'symlink') return { exists: true, type: 'symlink', target: e.target ?? '', mode: e.mode };
  if (e.type === 'dir') return { exists: true, type: 'dir', mode: e.mode };
  return { exists: true, type: 'file', sha256: e.sha256, size: e.size, mode: e.mode };
}

/** Two times that are the same stat (Node's `*Ms` values, or one rebuilt from nanoseconds). */
function near(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) < 0.001;
}

function entryChanged(a: PackedEntry, b: PackedEntry): boolean {
  if (a.type !== b.type || a.mode !== b.mode) return true;
  if (a.type === 'dir') return false;
  if (a.type === 'symlink') return a.target !== b.target;
  if (a.sha256 !== null && b.sha256 !== null) return a.sha256 !== b.sha256;
  if (a.git !== null && b.git !== null) return a.git !== b.git;
  // A file whose bytes were not kept on one side: judge by its stat.
  return a.sha256 !== b.sha256 || a.size !== b.size || !near(a.mtimeMs, b.mtimeMs);
}

/** `200 MB`, or `1000 bytes` under a megabyte (a limit set that low must not read "0 MB"). */
function sizeText(n: number): string {
  return n >= 1048576 ? `${Math.round(n / 1048576)} MB` : `${n} bytes`;
}

/** What the scan keeps of a path's stat. */
interface Stat {
  mode: number;
  size: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** The stat of `abs` (never following a link), or null when it cannot be looked at (gone, no permission). */
function lstatOrNull(abs: string): Stat | null {
  const v = mainReader()(abs);
  return v ? { mode: v[0]!, size: v[1]!, ino: v[2]!, mtimeMs: v[3]!, ctimeMs: v[4]! } : null;
}

function typeOf(st: Stat): FileType {
  const fmt = st.mode & S_IFMT;
  return fmt === S_IFDIR ? 'dir' : fmt === S_IFLNK ? 'symlink' : 'file';
}

const isRegular = (st: Stat) => (st.mode & S_IFMT) === S_IFREG;

/** The folders from the root down to `dir` ('' first), for the rules that apply under `dir`. */
function ancestors(dir: string): string[] {
  if (dir === '') return [''];
  const out = [''];
  let i = dir.indexOf('/');
  while (i >= 0) {
    out.push(dir.slice(0, i));
    i = dir.indexOf('/', i + 1);
  }
  out.push(dir);
  return out;
}

/** What a scan of the packed index gives: the outcome, and the rows to write back. */
export interface RowScanOutcome {
  status: ScanOutcome['status'];
  reason?: string;
  changes: ScanChange[];
  meta: ScanMeta;
  read: number;
  /** Rows to write (new or changed), and rows to delete. */
  put: Map<string, Buffer>;
  del: string[];
}

/** Thrown inside a warm scan that finds the ignore rules moved: the scan starts again, whole. */
class RulesMoved extends Error {}

/**
 * Scans the workspace against its packed index (one row a folder, see packed.ts), by stat first.
 *
 * Warm, only what may have moved is looked at: a folder whose stat is the one its row was listed
 * with (and not racy) still has the same children, so it is not listed again, and only its
 * children's stats are checked (on two threads when `worker` is given and the index is large). A
 * file whose size, mtime, ctime, inode and mode match and that was not racy keeps its hash
 * unread; anything else is read, hashed and its bytes stored in `blobs` (unless it is a secret, a
 * link or over the size limit: a gap entry, so that it is never taken for a file the agent
 * created or deleted). Every folder is listed (`full`) on a first scan, when the ignore rules or
 * the excluded names moved, and when asked.
 *
 * In a git work tree, a full scan reads git's index: a tracked file whose stat matches it refers
 * to git's blob (`git`) instead of being copied, and only the rest counts against
 * `config.maxWorkspaceFiles`; a change to such a file reads the blob back for its "before".
 *
 * Stops as soon as the workspace passes `config.maxWorkspaceFiles` copied files or
 * `config.maxWorkspaceBytes` kept bytes (status `too-large`), before reading anything.
 * `onProgress(files)` is called every 1,000 files of a full scan. Writes nothing but blobs.
 */
export function scanRows(opts: {
  root: string;
  rows: Map<string, Uint8Array>;
  prevMeta: ScanMeta | null;
  blobs: BlobStore;
  config: Config;
  onProgress?: (files: number) => void;
  /** Refer to git's blobs for files git's index vouches for (default true). */
  git?: boolean;
  /** List every folder (default: only those whose listing may have moved). */
  full?: boolean;
  /** A stat worker thread to check a large index with (see checker.ts). */
  worker?: StatWorker | null;
  /** What a watcher says may have moved: a warm scan checks only those rows (see ChangeHints). */
  hints?: ChangeHints;
}): RowScanOutcome {
  try {
    return scanOnce(opts, Boolean(opts.full));
  } catch (e) {
    if (e instanceof RulesMoved) return scanOnce(opts, true);
    throw e;
  }
}

function scanOnce(opts: Parameters<typeof scanRows>[0], forceFull: boolean): RowScanOutcome {
  const { root, rows, prevMeta, blobs, config } = opts;
  const startedMs = Date.now();
  const startedNs = String(BigInt(startedMs) * 1_000_000n);
  const baseline = !prevMeta || prevMeta.status !== 'ok';
  const racyMs = prevMeta ? Number(BigInt(prevMeta.startedNs) / 1_000_000n) - RACY_WINDOW_MS : -Infinity;
  // Folders of excluded names that hold tracked files are scanned after all (git keeps their
  // files): known from git's index, read again whenever the index file moved.
  const gitIndex = opts.git !== false ? gitIndexStamp(root) : '';
  const indexMoved = forceFull || baseline || gitIndex !== prevMeta?.gitIndex;
  const trackedExcluded = gitIndex === '' ? [] : indexMoved ? trackedExcludedDirs(root, config.excludeNames) : (prevMeta?.trackedExcluded ?? []);
  // A change of the names, of the folders kept or of the paths skipped always lists every folder again.
  const filter = new ScanFilter(root, config.excludeNames, trackedExcluded, config.excludePaths);
  const excludes = JSON.stringify(config.excludeNames) + (trackedExcluded.length > 0 ? JSON.stringify(trackedExcluded) : '') + (filter.excludedPaths.length > 0 ? JSON.stringify(filter.excludedPaths) : '');
  const knownRules = prevMeta?.rules ? new Map(Object.entries(prevMeta.rules)) : null;
  const full = forceFull || baseline || rows.size === 0 || prevMeta.excludes !== excludes || !knownRules || rulesMoved(root, knownRules);
  // git's index: read up front by a full scan; by a warm one only when it can save reads.
  let git: GitIndex | null = full && opts.git !== false ? readGitIndex(root) : null;

  /** Rows rewritten by this scan (folder → its stamp and children). */
  const next = new Map<string, { stamp: DirStamp; entries: PackedEntry[] }>();
  /** Rows of the last scan whose folder is gone (or now left out). */
  const gone = new Set<string>();
  const decoded = new Map<string, PackedEntry[]>();
  const prevOf = (dir: string): PackedEntry[] | null => {
    let d = decoded.get(dir);
    if (d) return d;
    const buf = rows.get(dir);
    if (!buf) return null;
    decoded.set(dir, (d = decodeRow(buf)));
    return d;
  };
  const changes: ScanChange[] = [];
  /** Files to read: the entry that waits for their hash → where and what they are. */
  const toRead = new Map<PackedEntry, { rel: string; abs: string; st: Stat; prev: PackedEntry | undefined; secret: boolean; racyOnly: boolean }>();
  const dropped = new Set<PackedEntry>();
  const queue: string[] = [];
  let listedFiles = 0;
  let copied = 0;
  let keptBytes = 0;
  let read = 0;

  const tooLarge = (reason: string): RowScanOutcome => ({
    status: 'too-large',
    reason,
    changes: [],
    meta: { status: 'too-large', startedNs, files: listedFiles, bytes: keptBytes, reason },
    read,
    put: new Map(),
    del: [],
  });
  const overFiles = () => copied > config.maxWorkspaceFiles;
  const overBytes = () => keptBytes > config.maxWorkspaceBytes;

  /** A path that was there and is not any more (a path still on disk, now left out by a rule, was not deleted). */
  const removed = (rel: string, p: PackedEntry) => {
    if (baseline) return;
    if (lstatOrNull(`${root}/${rel}`)) return;
    changes.push({ path: rel, before: toIndexEntry(p), after: undefined });
  };
  /** Forgets the rows of folder `dir` and everything under it. */
  const dropTree = (dir: string) => {
    const prefix = `${dir}/`;
    for (const k of rows.keys()) {
      if ((k !== dir && !(dir === '' || k.startsWith(prefix))) || gone.has(k) || next.has(k)) continue;
      gone.add(k);
      for (const p of prevOf(k) ?? []) removed(k === '' ? p.name : `${k}/${p.name}`, p);
    }
  };

  /**
   * The entry for `rel` now, given its stat and the last one (`p`): the last one when nothing
   * moved, else a new one (a file's hash is filled in when it is read, after the limits).
   */
  const look = (name: string, rel: string, abs: string, st: Stat, p: PackedEntry | undefined): PackedEntry | null => {
    const type = typeOf(st);
    const mode = st.mode & 0o7777;
    if (type === 'dir') {
      if (p && p.type === 'dir' && p.mode === mode) return p;
      return { name, type, mode, size: 0, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: null, git: null, target: null, gap: null };
    }
    const sameStat = p && p.type === type && p.mode === mode && p.size === st.size && near(p.mtimeMs, st.mtimeMs) && near(p.ctimeMs, st.ctimeMs) && p.ino === st.ino;
    if (sameStat && p.mtimeMs < racyMs) return p;
    const e: PackedEntry = { name, type, mode, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: null, git: null, target: null, gap: null };
    if (type === 'symlink') {
      try {
        e.target = readlinkSync(abs);
      } catch {
        return null;
      }
      return e;
    }
    const secret = isSecretPath(rel);
    const g = git && !secret && isRegular(st) ? git.entries.get(rel) : undefined;
    if (g && statMatchesGit(st, g)) {
      e.git = g.oid;
      return e;
    }
    toRead.set(e, { rel, abs, st, prev: p, secret, racyOnly: Boolean(sameStat && p?.git) });
    return e;
  };

  /** Adds an entry to the limits' counts (a file about to be read counts with the bytes it would keep). */
  const count = (e: PackedEntry) => {
    if (e.type !== 'dir') listedFiles++;
    if (isCopied(e)) copied++;
    if (e.type !== 'file') return;
    const t = toRead.get(e);
    if (e.sha256 || (t && isRegular(t.st) && !t.secret && e.size <= config.maxFileBytes)) keptBytes += e.size;
  };

  /** Lists folder `dir` again: its children now, against its last row. */
  const list = (dir: string): string | null => {
    const abs = dir === '' ? root : `${root}/${dir}`;
    const dst = lstatOrNull(abs);
    if (!dst || typeOf(dst) !== 'dir') {
      dropTree(dir);
      return null;
    }
    // The folder's stat is taken before its listing: a child added after it moves the stat again.
    const stamp: DirStamp = { mtimeMs: dst.mtimeMs, ctimeMs: dst.ctimeMs, ino: dst.ino };
    const prev = prevOf(dir);
    let dirents: Dirent[];
    try {
      dirents = readdirSync(abs, { withFileTypes: true });
    } catch {
      // Unreadable: keep what was known, and list it again next time.
      next.set(dir, { stamp: UNKNOWN_STAMP, entries: prev ?? [] });
      if (full) for (const e of prev ?? []) count(e);
      return null;
    }
    const byName = prev ? new Map(prev.map((e) => [e.name, e])) : null;
    // Most folders have no .gitignore: say so rather than let the filter try to read one.
    if (dir !== '' && !dirents.some((d) => d.name === '.gitignore')) filter.noRulesIn(dir);
    const chain = filter.chainFor(ancestors(dir));
    const out: PackedEntry[] = [];
    const seen = new Set<string>();
    for (const d of dirents) {
      const name = d.name;
      if (name === '.gitignore' && knownRules && !full && !knownRules.has(dir === '' ? name : `${dir}/${name}`)) throw new RulesMoved();
      const rel = dir === '' ? name : `${dir}/${name}`;
      if (filter.isExcluded(name, rel)) continue;
      if (chain.length > 0 && filter.ignoredIn(chain, rel, d.isDirectory())) continue;
      const cabs = `${abs}/${name}`;
      const st = lstatOrNull(cabs);
      if (!st) continue;
      const p = byName?.get(name);
      const e = look(name, rel, cabs, st, p);
      if (!e) continue;
      seen.add(name);
      if (p && p.type === 'dir' && e.type !== 'dir') dropTree(rel);
      if (e.type === 'dir' && (full || !rows.has(rel) || gone.has(rel))) queue.push(rel);
      if (full) count(e);
      out.push(e);
      if (opts.onProgress && full && e.type !== 'dir' && listedFiles % 1000 === 0) opts.onProgress(listedFiles);
    }
    for (const p of prev ?? []) {
      if (seen.has(p.name)) continue;
      const rel = dir === '' ? p.name : `${dir}/${p.name}`;
      removed(rel, p);
      if (p.type === 'dir') dropTree(rel);
    }
    next.set(dir, { stamp, entries: out });
    return dir;
  };

  const drain = (): RowScanOutcome | null => {
    while (queue.length > 0) {
      list(queue.pop()!);
      if (overFiles()) return tooLarge(`over ${config.maxWorkspaceFiles} files`);
      if (overBytes()) return tooLarge(`over ${sizeText(config.maxWorkspaceBytes)}`);
    }
    return null;
  };

  if (full) {
    queue.push('');
    const stop = drain();
    if (stop) return stop;
    for (const k of rows.keys()) if (!next.has(k) && !gone.has(k)) dropTree(k);
  } else {
    // Warm: check the rows' stats (all, or those a watcher's hints name), then look again at what moved.
    const { dirs, result } = checkIndex({ root, rows, racyMs, worker: opts.worker, hints: opts.hints });
    const dirty = new Set(result.dirty.map((i) => dirs[i]!));
    const suspects = new Map<string, number[]>();
    for (let k = 0; k < result.suspects.length; k += 2) {
      const dir = dirs[result.suspects[k]!]!;
      let list = suspects.get(dir);
      if (!list) suspects.set(dir, (list = []));
      list.push(result.suspects[k + 1]!);
    }
    for (const dir of [...dirty].sort()) {
      if (gone.has(dir) || next.has(dir)) continue;
      list(dir);
    }
    for (const [dir, idx] of suspects) {
      if (gone.has(dir) || next.has(dir)) continue;
      const buf = rows.get(dir)!;
      const entries = [...prevOf(dir)!];
      const abs = dir === '' ? root : `${root}/${dir}`;
      for (const j of idx) {
        const p = entries[j]!;
        const rel = dir === '' ? p.name : `${dir}/${p.name}`;
        const st = lstatOrNull(`${abs}/${p.name}`);
        const e = st ? look(p.name, rel, `${abs}/${p.name}`, st, p) : null;
        if (!e) {
          removed(rel, p);
          if (p.type === 'dir') dropTree(rel);
          dropped.add(p);
          continue;
        }
        if (p.type === 'dir' && e.type !== 'dir') dropTree(rel);
        if (e.type === 'dir' && !rows.has(rel)) queue.push(rel);
        entries[j] = e;
      }
      next.set(dir, { stamp: rowStamp(buf), entries: entries.filter((e) => !dropped.has(e)) });
    }
    while (queue.length > 0) list(queue.pop()!); // new folders, and what is under them
    // A file git's index vouches for needs no read: worth reading that index when a tracked file is
    // only racy, or when many files moved (a checkout, a pull).
    if (opts.git !== false && ([...toRead.values()].some((t) => t.racyOnly) || toRead.size >= GIT_LOOKUP_MIN)) {
      git = readGitIndex(root);
      if (git) {
        for (const [e, t] of toRead) {
          const g = !t.secret && isRegular(t.st) ? git.entries.get(t.rel) : undefined;
          if (g && statMatchesGit(t.st, g)) {
            e.git = g.oid;
            toRead.delete(e);
          }
        }
      }
    }
    // The limits count the whole workspace: what moved, and the rows nothing moved in.
    for (const row of next.values()) for (const e of row.entries) count(e);
    for (const [dir, buf] of rows) {
      if (next.has(dir) || gone.has(dir)) continue;
      const c = rowCounts(buf);
      listedFiles += c.files;
      copied += c.copied;
      keptBytes += c.keptBytes;
    }
    if (overFiles()) return tooLarge(`over ${config.maxWorkspaceFiles} files`);
    if (overBytes()) return tooLarge(`over ${sizeText(config.maxWorkspaceBytes)}`);
  }

  // Read what moved (the limits allow it).
  for (const [e, t] of toRead) {
    read++;
    const r = readWorkspaceState({ root, config }, t.rel, { abs: t.abs, blobs });
    if (!r.state.exists) {
      // Gone between its stat and its read.
      dropped.add(e);
      if (t.prev) removed(t.rel, t.prev);
      continue;
    }
    if (r.state.type === 'file') {
      e.sha256 = r.state.sha256;
      e.size = r.stat ? r.stat.size : e.size;
    }
    e.gap = r.gap ?? null;
    // Same bytes as the git blob it referred to: still that blob (nothing changed).
    if (t.prev?.git && r.bytes && gitBlobId(r.bytes, t.prev.git) === t.prev.git) e.git = t.prev.git;
  }

  // What moved: new, changed and gone paths, row by row.
  if (!baseline) {
    for (const c of movedIn(next, prevOf, dropped, racyMs)) changes.push(c);
    materializeGit(root, blobs, changes);
    changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  const { put, files, bytes, copied: copiedAll } = rowsToWrite(rows, next, gone, dropped);
  if (bytes > config.maxWorkspaceBytes) return tooLarge(`over ${sizeText(config.maxWorkspaceBytes)}`);
  const rules: Record<string, string> = Object.fromEntries(full ? filter.sources : knownRules!);
  return {
    status: baseline ? 'baseline' : 'ok',
    changes: baseline ? [] : changes,
    meta: {
      status: 'ok',
      startedNs,
      files,
      bytes,
      copied: copiedAll,
      excludes,
      rules,
      ...(gitIndex !== '' ? { gitIndex } : {}),
      ...(trackedExcluded.length > 0 ? { trackedExcluded } : {}),
    },
    read,
    put,
    del: [...gone].filter((d) => !next.has(d)),
  };
}

/**
 * The rows a scan writes back — each folder it listed or looked into (`next`, less the entries
 * `dropped`), encoded, where it differs from the row it had in `rows` — and the workspace's
 * totals over those and the rows it left as they were (not `gone`).
 */
function rowsToWrite(
  rows: Map<string, Uint8Array>,
  next: Map<string, { stamp: DirStamp; entries: PackedEntry[] }>,
  gone: Set<string>,
  dropped: Set<PackedEntry>,
): { put: Map<string, Buffer>; files: number; bytes: number; copied: number } {
  const put = new Map<string, Buffer>();
  let files = 0;
  let bytes = 0;
  let copied = 0;
  const add = (buf: Uint8Array) => {
    const c = rowCounts(buf);
    files += c.files;
    bytes += c.keptBytes;
    copied += c.copied;
  };
  for (const [dir, row] of next) {
    const entries = dropped.size > 0 ? row.entries.filter((e) => !dropped.has(e)) : row.entries;
    const buf = encodeRow(row.stamp, entries);
    const old = rows.get(dir);
    if (!old || !Buffer.from(old.buffer, old.byteOffset, old.byteLength).equals(buf)) put.set(dir, buf);
    add(buf);
  }
  for (const [dir, buf] of rows) if (!next.has(dir) && !gone.has(dir)) add(buf);
  return { put, files, bytes, copied };
}

/**
 * The new and changed paths of the rows a scan listed or looked into (`next`) against their last
 * rows (`prevOf`), less the entries `dropped`. A path the last scan did not cover may have been
 * there all along, left out by a rule (a `.gitignore` line a command just removed): when its inode
 * has not changed since well before that scan began (`racyMs`), it was not created since — unless
 * it lies in a folder reported created (a folder moved in brings its children with their inodes).
 */
function movedIn(
  next: Map<string, { stamp: DirStamp; entries: PackedEntry[] }>,
  prevOf: (dir: string) => PackedEntry[] | null,
  dropped: Set<PackedEntry>,
  racyMs: number,
): ScanChange[] {
  const out: ScanChange[] = [];
  /** Folders reported created: what is in them is new too, whatever its inode's age. */
  const created = new Set<string>();
  // A folder is in `next` before the folders listed under it.
  for (const [dir, row] of next) {
    const prev = prevOf(dir);
    const byName = prev ? new Map(prev.map((e) => [e.name, e])) : null;
    // A folder moved in keeps its children's inodes as they were: they came with it.
    const inCreated = prev === null && created.has(dir);
    for (const e of row.entries) {
      if (dropped.has(e)) continue;
      const p = byName?.get(e.name);
      if (p === e) continue;
      if (!p && !inCreated && e.ctimeMs < racyMs) continue;
      const rel = dir === '' ? e.name : `${dir}/${e.name}`;
      if (e.type === 'dir' && (!p || p.type !== 'dir')) created.add(rel);
      if (!p || entryChanged(p, e)) out.push({ path: rel, before: p ? toIndexEntry(p) : undefined, after: toIndexEntry(e) });
    }
  }
  return out;
}

/** True when a rule file the last scan used moved or went, or `.git/info/exclude` appeared. */
function rulesMoved(root: string, known: Map<string, string>): boolean {
  for (const [file, stamp] of known) {
    let st;
    try {
      st = lstatSync(`${root}/${file}`);
    } catch {
      return true;
    }
    if (ruleStamp(st) !== stamp) return true;
  }
  return !known.has(INFO_EXCLUDE) && lstatOrNull(`${root}/${INFO_EXCLUDE}`) !== null;
}

/**
 * Changes whose file refers to a git blob only get that blob's bytes into the blob store (their
 * "before", usually: the first time a command changes a tracked file). A blob that cannot be read
 * back as the file's bytes leaves the state unkept, named `unreadable`; one that holds a secret
 * (see secrets.ts) is left unkept too, named `secret`.
 */
function materializeGit(root: string, blobs: BlobStore, changes: ScanChange[]): void {
  const want: { e: IndexEntry; oid: string; path: string; size: number }[] = [];
  for (const c of changes) {
    for (const e of [c.before, c.after]) {
      if (e && e.type === 'file' && e.sha256 === null && e.git && !e.gap) want.push({ e, oid: e.git, path: c.path, size: e.size });
    }
  }
  if (want.length === 0) return;
  const got = readGitBlobs(root, want);
  for (const w of want) {
    const bytes = got.get(`${w.oid} ${w.path}`);
    if (bytes && holdsSecret(bytes, w.path)) w.e.gap = 'secret'; // committed, but never copied into takeback's store
    else if (bytes) w.e.sha256 = blobs.put(bytes);
    else w.e.gap = 'unreadable';
  }
}
