import { lstatSync, readdirSync, readlinkSync, type Dirent } from 'node:fs';
import type { Config } from '../config.js';
import { readWorkspaceState } from '../fsstate.js';
import type { IndexEntry, ScanMeta } from './snapshot-index.js';
import { holdsSecret, isSecretPath, secretName, secretPlace, secretPlaceIn, secretsIn, type SecretPlace } from '../secrets.js';
import type { BlobStore } from '../store/blobs.js';
import type { FileState, FileType } from '../types.js';
import { excludedIn, INFO_EXCLUDE, ruleStamp, ScanFilter, type ChildRules, type FolderRules } from './filter.js';
import { gitBlobId, gitIndexStamp, readGitBlobs, readGitIndex, readGitTable, trackedExcludedDirs, type GitIndex } from './git-index.js';
import {
  addRowTotals,
  decodeRow,
  encodeRow,
  HEADER_BYTES,
  isCopied,
  noTotals,
  rowStamp,
  toIndexEntry,
  UNKNOWN_STAMP,
  UNLISTED_STAMP,
  isUnlisted,
  type DirStamp,
  type PackedEntry,
  type RowTotals,
} from './packed.js';
import { S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from './lstat.js';
import { checkIndex, type ChangeHints, type RowsUnder } from './checker.js';
import { mainReader, type StatWorker } from './stat-check.js';
import { decodeListing, LIST_BATCH, ListedNames, listFolders, type ListedRow, type ListedStat, type Listing } from './listing.js';
import { haveNativeList } from './native.js';

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

/** No rule file above a folder: nothing ignores it. */
const NO_RULES_ABOVE: readonly boolean[] = Object.freeze([]);

/** A name the native listing met is one of the excluded names (see ScanWalk.nameFlagsFor). */
const NAME_EXCLUDED = 1;
/** A file of that name is a secret by its name alone. */
const NAME_SECRET = 2;
/** Whether a file of that name is a secret depends on its folder (see secretName): asked there. */
const NAME_ASK = 4;

/** A warm scan with this many files to read looks them up in git's index first. */
const GIT_LOOKUP_MIN = 200;

/**
 * Whether a warm scan looks the files it is to read up in git's index first (a file the index
 * vouches for is then git's blob, unread): when there are `files` ≥ {@link GIT_LOOKUP_MIN} of
 * them (a checkout, a pull: reading and keeping each costs more), or when the bytes of those
 * that are tracked and only racy (`racyBytes`: their stat is the snapshot's, but too recent for
 * it to vouch for them) outweigh git's index file (`indexBytes`, NaN when there is none). Reading
 * the index costs the whole tree (97 MB and about 1.5 s of CPU for a million files) while reading
 * a few racy files costs what moved: a command that rewrote files with the same bytes (a `sed -i`
 * that matched nothing, a formatter) leaves them racy for the next scan, which would otherwise
 * read the whole index for them.
 */
export function looksUpInGit(files: number, racyBytes: number, indexBytes: number): boolean {
  return files >= GIT_LOOKUP_MIN || racyBytes > indexBytes;
}

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
  // Not read yet by the baseline (pending): only its stat says whether it moved since (a racy
  // file read again with the same stat did not).
  if (a.gap === 'baseline-incomplete') return a.size !== b.size || !near(a.mtimeMs, b.mtimeMs) || !near(a.ctimeMs, b.ctimeMs) || a.ino !== b.ino;
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
type Stat = ListedStat;

/** The stat of `abs` (never following a link), or null when it cannot be looked at (gone, no permission). */
function lstatOrNull(abs: string): Stat | null {
  const v = mainReader()(abs);
  return v ? { mode: v[0]!, size: v[1]!, ino: v[2]!, mtimeMs: v[3]!, ctimeMs: v[4]! } : null;
}

/** How many folders below a skipped folder its stamp looks at, at most, and how deep (levels below it). */
export const SKIPPED_PROBE = { folders: 128, depth: 3 };

/** FNV-1a over the stats of `subs` (paths below `abs`, relative to it): a skipped folder's below-stamp. */
function stampOf(abs: string, subs: readonly string[]): string {
  let h = 0x811c9dc5;
  for (const sub of subs) {
    const st = lstatOrNull(`${abs}/${sub}`);
    const s = `${sub}:${st ? `${st.mtimeMs}:${st.ctimeMs}:${st.ino}` : '-'};`;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  }
  return (h >>> 0).toString(16);
}

/**
 * The folders below skipped folder `abs` that its stamp looks at: breadth first in name order, at
 * most {@link SKIPPED_PROBE} of them, as paths relative to it; folders of `excludePaths`
 * (absolute: takeback's own store) and below left out. One listing a folder.
 */
function foldersBelow(abs: string, excludePaths: readonly string[]): string[] {
  const out: string[] = [];
  let level = [''];
  for (let depth = 1; depth <= SKIPPED_PROBE.depth && level.length > 0 && out.length < SKIPPED_PROBE.folders; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      let names: string[];
      try {
        names = readdirSync(dir === '' ? abs : `${abs}/${dir}`, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
      } catch {
        continue; // not listable: its own stat says what is known
      }
      for (const name of names) {
        if (out.length >= SKIPPED_PROBE.folders) break;
        const sub = dir === '' ? name : `${dir}/${name}`;
        if (excludePaths.includes(`${abs}/${sub}`)) continue;
        out.push(sub);
        next.push(sub);
      }
    }
    level = next;
  }
  return out;
}

/**
 * The stamp of the folders below skipped folder `abs` (hex) and the folders it looks at. `known`:
 * those the last scan looked at: while their stats give the same stamp as then (`was`), nothing
 * is listed (a stat a folder); else they are found again by listing. An entry made, removed or
 * renamed in one moves it, which the skipped folder's own stat does not show
 * (`node_modules/x/y/z.js` made or removed moves `y` alone); a file rewritten in place moves no
 * folder, and is not seen.
 */
function belowStamp(abs: string, excludePaths: readonly string[], known: string[] | undefined, was: string | undefined): { stamp: string; below: string[] } {
  if (known && was !== undefined) {
    const stamp = stampOf(abs, known);
    if (stamp === was) return { stamp, below: known };
  }
  const below = foldersBelow(abs, excludePaths);
  return { stamp: stampOf(abs, below), below };
}

function typeOf(st: Stat): FileType {
  const fmt = st.mode & S_IFMT;
  return fmt === S_IFDIR ? 'dir' : fmt === S_IFLNK ? 'symlink' : 'file';
}

const isRegular = (st: Stat) => (st.mode & S_IFMT) === S_IFREG;

/**
 * The names in folder `abs` that are not valid UTF-8, by the name Node gives them (U+FFFD for
 * each byte it cannot decode) → their absolute paths as bytes (the first, when two decode alike).
 * Empty when the folder cannot be listed again.
 */
export function notUtf8Names(abs: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  let raw: Buffer[];
  try {
    raw = readdirSync(abs, { encoding: 'buffer' });
  } catch {
    return out;
  }
  for (const b of raw) {
    const name = b.toString('utf8');
    if (!Buffer.from(name, 'utf8').equals(b) && !out.has(name)) out.set(name, Buffer.concat([Buffer.from(`${abs}/`), b]));
  }
  return out;
}

/**
 * The entry of a path whose name is not valid UTF-8 (`absBytes`: its absolute path as bytes;
 * `name`: as Node decodes it): its type, mode and stat, never its bytes (gap `name-not-utf8`);
 * the last one (`p`) when its stat did not move; null when it is gone.
 */
function notUtf8Entry(name: string, absBytes: Buffer, p: PackedEntry | undefined): PackedEntry | null {
  let st;
  try {
    st = lstatSync(absBytes);
  } catch {
    return null;
  }
  const type: FileType = st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'file';
  const mode = st.mode & 0o7777;
  const size = type === 'dir' ? 0 : st.size;
  if (p && p.gap === 'name-not-utf8' && p.type === type && p.mode === mode && p.size === size && near(p.mtimeMs, st.mtimeMs) && p.ino === st.ino) return p;
  return { name, type, mode, size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: null, git: null, target: null, gap: 'name-not-utf8' };
}

/** The index entry of a folder with stat `st`. */
function dirIndexEntry(st: Stat): IndexEntry {
  const ns = (ms: number) => String(BigInt(Math.round(ms * 1e6)));
  return { type: 'dir', size: 0, mtime: ns(st.mtimeMs), ctime: ns(st.ctimeMs), ino: String(st.ino), mode: st.mode & 0o7777, sha256: null, target: null, gap: null };
}

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
  /**
   * How long the look took (ms, monotonic): the walk or the check of what may have moved, before
   * anything that moved is read. Set by a scan that got that far.
   */
  lookMs?: number;
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
 * `config.maxWorkspaceBytes` kept bytes (status `too-large`), before reading anything. With
 * `background` (a long-lived process will keep the bytes later), or against a snapshot whose
 * baseline was made so, the limits are `config.maxBackgroundFiles` and `maxBackgroundBytes`
 * instead, and a baseline past the first two reads nothing: each file it would read is kept by its
 * stat alone, named `baseline-incomplete` (pending), for `keepPending` (pending.ts) to read later. A
 * later scan reads a pending file only when its stat moved (its change names the gap), and leaves
 * it pending otherwise.
 * `onProgress(files)` is called every 1,000 files of a full scan. Writes nothing but blobs.
 */
export function scanRows(opts: ScanRowsOptions): RowScanOutcome {
  try {
    return scanOnce(opts, Boolean(opts.full), false);
  } catch (e) {
    if (e instanceof RulesMoved) return scanOnce(opts, true, true);
    throw e;
  }
}

/** What {@link scanRows} scans: the workspace, its last look, where the bytes go, and how. */
export interface ScanRowsOptions {
  /** The workspace root (a real path). */
  root: string;
  /** The last look's packed rows (folder → row), as the snapshot index keeps them. */
  rows: ReadonlyMap<string, Uint8Array>;
  /**
   * The counts of every row of `rows` summed, when the caller keeps them (the snapshot index's
   * `totals()`): a warm scan then takes away the rows it touched instead of summing the others.
   * Only read.
   */
  totals?: RowTotals;
  /** The folders of the rows under a folder, when the caller keeps them sorted (the snapshot index's `rowsUnder`): a hinted folder then costs the rows under it. */
  under?: RowsUnder;
  /** The last look's meta (null: none, a baseline). */
  prevMeta: ScanMeta | null;
  /** Where the bytes of the files read go. */
  blobs: BlobStore;
  /** The limits and the excluded names. */
  config: Config;
  /** Called every 1,000 files of a full scan with the files listed so far. */
  onProgress?: (files: number) => void;
  /** Refer to git's blobs for files git's index vouches for (default true). */
  git?: boolean;
  /** List every folder (default: only those whose listing may have moved). */
  full?: boolean;
  /** A stat worker thread to check a large index with (see checker.ts). */
  worker?: StatWorker | null;
  /** What a watcher says may have moved: a warm scan checks only those rows (see ChangeHints). */
  hints?: ChangeHints;
  /** A long-lived process keeps a large baseline's bytes later, in the background (see {@link scanRows}). */
  background?: boolean;
}

/**
 * What a scan keeps in its meta of what it leaves out (`ScanMeta.excludes`): the excluded names,
 * the folders of those names kept for git's files, the paths skipped always. When it moves, every
 * folder is listed again.
 */
function excludesOf(names: readonly string[], trackedExcluded: readonly string[], excludedPaths: readonly string[]): string {
  return JSON.stringify(names) + (trackedExcluded.length > 0 ? JSON.stringify(trackedExcluded) : '') + (excludedPaths.length > 0 ? JSON.stringify(excludedPaths) : '');
}

/**
 * Whether a warm scan of workspace `root` (with `config`; `background`: in a process that keeps
 * baselines in the background) against the snapshot `meta` describes would look at its rows
 * alone: the snapshot complete and under the limits, git's index file where it was, the same
 * excluded names and paths, no ignore rule file moved (nor `.git/info/exclude` made) — what
 * {@link ScanWalk}'s constructor weighs before it lists every folder. A scan given hints that
 * name nothing then finds nothing and reads nothing: a long-lived process answers a command's
 * begin on such a snapshot (see command.ts beginCommand). A few stats; never throws.
 */
export function snapshotStands(root: string, config: Config, meta: ScanMeta, background: boolean): boolean {
  if (meta.status !== 'ok' || meta.pending || !meta.rules || meta.excludes === undefined) return false;
  const bg = background || meta.background === true;
  if ((meta.copied ?? meta.files) > (bg ? config.maxBackgroundFiles : config.maxWorkspaceFiles)) return false;
  if (meta.bytes > (bg ? config.maxBackgroundBytes : config.maxWorkspaceBytes)) return false;
  try {
    if (gitIndexStamp(root) !== (meta.gitIndex ?? '')) return false;
    const tracked = meta.gitIndex ? (meta.trackedExcluded ?? []) : [];
    if (excludesOf(config.excludeNames, tracked, excludedIn(root, config.excludePaths)) !== meta.excludes) return false;
    return !rulesMoved(root, new Map(Object.entries(meta.rules)));
  } catch {
    return false;
  }
}

function scanOnce(opts: ScanRowsOptions, forceFull: boolean, rulesFound: boolean): RowScanOutcome {
  return new ScanWalk(opts, forceFull, rulesFound).run();
}

/**
 * What {@link ScanWalk.look} asks of a folder's children, worked out once a folder: whether a
 * name is a secret there, and git's blob for the `k`th child of its listing, named `name`, of stat
 * `st` (null: git's index has nothing there).
 */
interface FolderLook {
  secretOf: (name: string) => boolean;
  vouch: ((name: string, st: Stat, k: number) => string | null) | null;
}

/** Where a file to be read is, its stat, and what it was (see {@link ScanWalk.look}). */
interface ToRead {
  rel: string;
  abs: string;
  st: Stat;
  prev: PackedEntry | undefined;
  secret: boolean;
  /** Its stat is the last one, but the last look was racy; git's index may vouch for it. */
  racyOnly: boolean;
}

/**
 * One folder's row as a scan rewrites it: its stamp and its children, or (`packed`) the row
 * already encoded, its `entries` then empty (see {@link ScanWalk.list}).
 */
type NextRow = { stamp: DirStamp; entries: PackedEntry[]; packed?: Buffer };

/**
 * One scan of the workspace against its packed index (see {@link scanRows}), in phases: the
 * rules and whether every folder is to be listed ({@link ScanWalk.constructor}); the look at the
 * tree, either a listing of every folder ({@link ScanWalk.walkAll}) or a check of the rows that
 * may have moved ({@link ScanWalk.checkWarm}); the reading of the files that moved
 * ({@link ScanWalk.readMoved}); and the outcome ({@link ScanWalk.outcome}). A walk is used once.
 * Throws {@link RulesMoved} from a warm look that finds a new ignore rule file.
 */
class ScanWalk {
  private readonly root: string;
  private readonly rows: ReadonlyMap<string, Uint8Array>;
  private readonly config: Config;
  private readonly startedNs: string;
  /** No usable last scan: nothing is reported as changed. */
  private readonly baseline: boolean;
  /** The last scan's racy line (ms since the epoch): a file modified after it is read again. */
  private readonly racyMs: number;
  /** git's index file stamp ('' outside git, or with git's blobs turned off). */
  private readonly gitIndex: string;
  /** Folders of excluded names that hold tracked files (scanned after all). */
  private readonly trackedExcluded: string[];
  private readonly filter: ScanFilter;
  /** The fingerprint of the excluded names, the folders kept and the paths skipped. */
  private readonly excludes: string;
  /** The rule files the last scan used (path → stamp), or null. */
  private readonly knownRules: Map<string, string> | null;
  /** Every folder is listed. */
  private readonly full: boolean;
  /** The ignore rules or the excluded names moved since the last scan (what is skipped may differ). */
  private readonly rulesChanged: boolean;
  /** git's index: read up front by a full scan; by a warm one only when it can save reads. */
  private git: GitIndex | null = null;
  /**
   * git's index as the native listing matches children against it (a full scan that lists
   * natively reads it so, instead of {@link git}); null when not read so.
   */
  private gitTable: object | null = null;
  /** The limits are the background ones (see {@link scanRows}). */
  private readonly background: boolean;
  /** Copied files and kept bytes past which the workspace is `too-large`. */
  private readonly maxFiles: number;
  private readonly maxBytes: number;

  /** Rows rewritten by this scan (folder → its stamp and children). */
  private readonly next = new Map<string, NextRow>();
  /** Rows of the last scan whose folder is gone (or now left out). */
  private readonly gone = new Set<string>();
  private readonly decoded = new Map<string, PackedEntry[]>();
  private readonly changes: ScanChange[] = [];
  /** Files to read: the entry that waits for their hash → where and what they are. */
  private readonly toRead = new Map<PackedEntry, ToRead>();
  /** Entries of `next` that turned out gone (between a stat and a read, or on a second look). */
  private readonly dropped = new Set<PackedEntry>();
  /** Folders to list (new ones, and every one in a full walk). */
  private readonly queue: string[] = [];
  /**
   * Folders listed now whose contents before are not known (one that could not be listed last
   * time, and the folders found under it): nothing in them is reported created.
   */
  private readonly unknownBefore = new Set<string>();
  /** Folders named as a capture gap by this scan (`unreadable`: what was in them is not known). */
  private readonly folderGaps = new Map<string, PackedEntry>();
  /** The skipped folders the last scan met (path → stamp), and those of this one (see ScanMeta.skipped). */
  private readonly prevSkipped: Map<string, string>;
  private readonly skipped = new Map<string, string>();
  /** The folders below each skipped folder its stamp looked at, last scan's and this one's (see ScanMeta.skippedBelow). */
  private readonly prevBelow: Record<string, string[]>;
  private readonly skippedBelow = new Map<string, string[]>();
  /**
   * Folders a first scan's walk is to list, each with the rule files above it (its folder's
   * chain: see ScanFilter.chainFor) and whether each ignores it itself (see ChildRules.ownOf), as
   * its folder's listing found: its own listing then asks the filter nothing more about it.
   */
  private readonly aboveOf = new Map<string, { chain: [string, FolderRules][]; rules: ChildRules | null; own: readonly boolean[]; place: SecretPlace }>();
  /** See {@link nameFlagsFor}: the flags of the first `nameFlagsKnown` names of the walk's listings. */
  private nameFlags = new Uint8Array(0);
  private nameFlagsKnown = 0;
  /** Folders listed by this scan (their skipped children were met again, or are gone). */
  private readonly listed = new Set<string>();
  /** Skipped folders whose stat moved, came or went: path → before and after (null: absent). */
  private readonly skipGaps = new Map<string, { before: Stat | null; after: Stat | null }>();
  /** List folders natively (listing.ts) while the module answers; TAKEBACK_NATIVE_LIST=0 turns it off. */
  private nativeList = process.env.TAKEBACK_NATIVE_LIST !== '0' && haveNativeList();
  /** The totals of the rows a warm look left as they were (counted once, for the limits and the meta). */
  private untouched: RowTotals | null = null;
  private listedFiles = 0;
  private copied = 0;
  private keptBytes = 0;
  private read = 0;

  constructor(
    private readonly opts: ScanRowsOptions,
    forceFull: boolean,
    rulesFound = false,
  ) {
    const { root, rows, prevMeta, config } = opts;
    this.root = root;
    this.rows = rows;
    this.config = config;
    this.startedNs = String(BigInt(Date.now()) * 1_000_000n);
    this.baseline = !prevMeta || prevMeta.status !== 'ok';
    this.racyMs = prevMeta ? Number(BigInt(prevMeta.startedNs) / 1_000_000n) - RACY_WINDOW_MS : -Infinity;
    // Folders of excluded names that hold tracked files are scanned after all (git keeps their
    // files): known from git's index, read again whenever the index file moved.
    this.gitIndex = opts.git !== false ? gitIndexStamp(root) : '';
    const indexMoved = forceFull || this.baseline || this.gitIndex !== prevMeta?.gitIndex;
    // A walk known to be full from here reads git's index once, for both.
    const early = (forceFull || this.baseline) && this.gitIndex !== '' ? this.readGit(config.excludeNames) : null;
    this.trackedExcluded = this.gitIndex === '' ? [] : early ? early.trackedExcluded : indexMoved ? trackedExcludedDirs(root, config.excludeNames) : (prevMeta?.trackedExcluded ?? []);
    // A change of the names, of the folders kept or of the paths skipped always lists every folder again.
    this.filter = new ScanFilter(root, config.excludeNames, this.trackedExcluded, config.excludePaths);
    this.excludes = excludesOf(config.excludeNames, this.trackedExcluded, this.filter.excludedPaths);
    this.knownRules = prevMeta?.rules ? new Map(Object.entries(prevMeta.rules)) : null;
    this.rulesChanged = rulesFound || !prevMeta || prevMeta.excludes !== this.excludes || !this.knownRules || rulesMoved(root, this.knownRules);
    this.full = forceFull || this.baseline || rows.size === 0 || this.rulesChanged;
    const git = this.full && opts.git !== false ? (early ?? this.readGit([])) : null;
    if (git) {
      this.git = git.git;
      this.gitTable = git.table;
    }
    this.prevSkipped = new Map(this.baseline ? [] : Object.entries(prevMeta?.skipped ?? {}));
    this.background = Boolean(opts.background) || (!this.baseline && prevMeta?.background === true);
    this.maxFiles = this.background ? config.maxBackgroundFiles : config.maxWorkspaceFiles;
    this.maxBytes = this.background ? config.maxBackgroundBytes : config.maxWorkspaceBytes;
    this.prevBelow = (this.baseline ? undefined : prevMeta?.skippedBelow) ?? {};
  }

  /**
   * A skipped folder `rel` met by a listing, or looked at again (`st`: its stat, null when gone):
   * kept with its stamp, and a gap when that moved since the last scan. git's own data (`.git`)
   * is git's: the agent's git commands change it all the time, and it is not the workspace's
   * contents, so it is neither kept nor named.
   */
  private metSkipped(rel: string, st: Stat | null): void {
    const was = this.prevSkipped.get(rel) ?? null;
    // Its own stat, then the stamp of the folders below it (belowStamp).
    let stamp: string | null = null;
    if (st) {
      const own = `${st.mtimeMs}:${st.ctimeMs}:${st.ino}:${st.mode & 0o7777}`;
      // The folders below it are found again when its own stat moved (a folder made in it). One
      // the last scan found none below (none kept in `skippedBelow`) is a leaf while its own stat
      // holds: not listed again (its stamp of no folders is checked against the last one all the same).
      const known = was?.startsWith(`${own}:`) ? (this.prevBelow[rel] ?? []) : undefined;
      const b = belowStamp(`${this.root}/${rel}`, this.config.excludePaths, known, was?.split(':')[4]);
      stamp = `${own}:${b.stamp}`;
      if (b.below.length > 0) this.skippedBelow.set(rel, b.below);
    }
    if (stamp) this.skipped.set(rel, stamp);
    if (this.baseline) return;
    if (was === stamp) return;
    // A stamp of the folder's own stat alone (four fields) is compared with that part only.
    if (was !== null && stamp !== null && was.split(':').length === 4 && stamp.startsWith(`${was}:`)) return;
    // With new rules a folder may be skipped now, or no longer, without anything made or removed in it.
    if ((was === null || stamp === null) && this.rulesChanged) return;
    // Before, only its mode is known (from its stamp): the folder as a state, named as a gap.
    const mode = was === null ? 0 : Number(was.split(':')[3] ?? 0o755);
    this.skipGaps.set(rel, { before: was === null ? null : { mode: S_IFDIR | mode, size: 0, ino: 0, mtimeMs: 0, ctimeMs: 0 }, after: st });
  }

  /**
   * git's index for a full walk and the folders of `excludeNames` it holds files in: as a native
   * table where the walk lists natively (the module answering), else read in JavaScript; null
   * where there is none to use.
   */
  private readGit(excludeNames: readonly string[]): { git: GitIndex | null; table: object | null; trackedExcluded: string[] } | null {
    if (this.nativeList) {
      const t = readGitTable(this.root, excludeNames);
      if (t !== undefined) return t && { git: null, table: t.table, trackedExcluded: t.trackedExcluded };
    }
    const g = readGitIndex(this.root, excludeNames);
    return g && { git: g, table: null, trackedExcluded: g.trackedExcluded };
  }

  /** Before a folder of a full walk is listed in JavaScript: git's index read so, when the walk read it as a native table. */
  private gitForJavaScript(): void {
    if (this.gitTable === null) return;
    this.gitTable = null;
    this.git = readGitIndex(this.root);
  }

  /** The scan, start to end. */
  run(): RowScanOutcome {
    const started = performance.now();
    const stop = this.full ? this.walkAll() : this.checkWarm();
    if (stop) return stop;
    const lookMs = performance.now() - started;
    const { config } = this;
    // A baseline past the limits of reading at once leaves the bytes to the background.
    if (this.background && this.baseline && (this.copied > config.maxWorkspaceFiles || this.keptBytes > config.maxWorkspaceBytes)) this.leavePending();
    else this.readMoved();
    return { ...this.outcome(), lookMs };
  }

  /** The last scan's entries of folder `dir` (decoded once), or null when it had no row. */
  private prevOf(dir: string): PackedEntry[] | null {
    let d = this.decoded.get(dir);
    if (d) return d;
    const buf = this.rows.get(dir);
    if (!buf) return null;
    this.decoded.set(dir, (d = decodeRow(buf)));
    return d;
  }

  /** The outcome of a workspace over the limits: nothing reported, nothing to write. */
  private tooLarge(reason: string): RowScanOutcome {
    return {
      status: 'too-large',
      reason,
      changes: [],
      meta: { status: 'too-large', startedNs: this.startedNs, files: this.listedFiles, bytes: this.keptBytes, reason },
      read: this.read,
      put: new Map(),
      del: [],
    };
  }

  /** {@link tooLarge} when the counts so far pass a limit, else null. */
  private overLimits(): RowScanOutcome | null {
    if (this.copied > this.maxFiles) return this.tooLarge(`over ${this.maxFiles} files`);
    if (this.keptBytes > this.maxBytes) return this.tooLarge(`over ${sizeText(this.maxBytes)}`);
    return null;
  }

  /** A path that was there and is not any more (a path still on disk, now left out by a rule, was not deleted). */
  private removed(rel: string, p: PackedEntry): void {
    if (this.baseline) return;
    if (lstatOrNull(`${this.root}/${rel}`)) return;
    this.changes.push({ path: rel, before: toIndexEntry(p), after: undefined });
  }

  /** Forgets the rows of folder `dir` and everything under it. */
  private dropTree(dir: string): void {
    const prefix = `${dir}/`;
    for (const k of this.rows.keys()) {
      if ((k !== dir && !(dir === '' || k.startsWith(prefix))) || this.gone.has(k) || this.next.has(k)) continue;
      this.gone.add(k);
      for (const p of this.prevOf(k) ?? []) this.removed(k === '' ? p.name : `${k}/${p.name}`, p);
    }
  }

  /**
   * The entry for `rel` (named `name`, in the folder at absolute `dirAbs`) now, given its stat and
   * the last one (`p`): the last one when nothing moved, else a new one (a file's hash is filled in
   * when it is read, after the limits). `folder`: what the caller worked out once for its folder
   * (a walk's listing, of which this is the `k`th child), else each is asked about the whole path.
   */
  private look(name: string, rel: string, dirAbs: string, st: Stat, p: PackedEntry | undefined, folder?: FolderLook, k = -1): PackedEntry | null {
    const type = typeOf(st);
    const mode = st.mode & 0o7777;
    if (type === 'dir') {
      if (p && p.type === 'dir' && p.mode === mode) return p;
      return { name, type, mode, size: 0, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: null, git: null, target: null, gap: null };
    }
    const sameStat = p && p.type === type && p.mode === mode && p.size === st.size && near(p.mtimeMs, st.mtimeMs) && near(p.ctimeMs, st.ctimeMs) && p.ino === st.ino;
    if (sameStat && p.mtimeMs < this.racyMs) return p;
    const e: PackedEntry = { name, type, mode, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: null, git: null, target: null, gap: null };
    if (type === 'symlink') {
      try {
        e.target = readlinkSync(`${dirAbs}/${name}`);
      } catch {
        return null;
      }
      return e;
    }
    const secret = folder ? folder.secretOf(name) : isSecretPath(rel);
    const oid = secret || !isRegular(st) ? null : folder ? (folder.vouch?.(name, st, k) ?? null) : this.git ? this.git.vouches(rel, st) : null;
    if (oid) {
      e.git = oid;
      return e;
    }
    this.toRead.set(e, { rel, abs: `${dirAbs}/${name}`, st, prev: p, secret, racyOnly: Boolean(sameStat && p?.git) });
    return e;
  }

  /** Adds an entry to the limits' counts (a file about to be read counts with the bytes it would keep). */
  private count(e: PackedEntry): void {
    if (e.type !== 'dir') this.listedFiles++;
    if (isCopied(e)) this.copied++;
    if (e.type !== 'file') return;
    const t = this.toRead.get(e);
    if (e.sha256 || (t && isRegular(t.st) && !t.secret && e.size <= this.config.maxFileBytes)) this.keptBytes += e.size;
  }

  /**
   * Lists folder `dir` again: its children now, against its last row. `pre`: its listing already
   * taken (natively, with every child's lstat: see listing.ts), else it is listed here.
   */
  private list(dir: string, pre?: Listing): void {
    const { root, filter, knownRules, full, rows, gone, queue, opts } = this;
    const abs = dir === '' ? root : `${root}/${dir}`;
    const dst = pre ? pre.stat : lstatOrNull(abs);
    if (!dst || typeOf(dst) !== 'dir') {
      this.dropTree(dir);
      return;
    }
    // The folder's stat is taken before its listing: a child added after it moves the stat again.
    const stamp: DirStamp = { mtimeMs: dst.mtimeMs, ctimeMs: dst.ctimeMs, ino: dst.ino };
    const prev = this.prevOf(dir);
    const prevRow = rows.get(dir);
    const wasUnlisted = prevRow !== undefined && isUnlisted(rowStamp(prevRow));
    let names: string[];
    /** Whether each of `names` is a folder (by the listing's type, or by the child's lstat). */
    let isDir: (k: number) => boolean;
    /** The lstat of `names[k]` (null: gone since the listing). */
    let statOf: (k: number) => Stat | null;
    try {
      if (pre) {
        if (!pre.names) throw new Error('not listed');
        names = pre.names;
        const stats = pre.stats;
        isDir = (k) => stats[k] !== null && (stats[k]!.mode & S_IFMT) === S_IFDIR;
        statOf = (k) => stats[k]!;
      } else {
        const dirents: Dirent[] = readdirSync(abs, { withFileTypes: true });
        names = dirents.map((d) => d.name);
        isDir = (k) => dirents[k]!.isDirectory();
        statOf = (k) => lstatOrNull(`${abs}/${names[k]}`);
      }
    } catch {
      // Unreadable: keep what was known, and list it again next time. A folder never listed is
      // a capture gap when it is first seen (changes in it cannot be seen) — at the baseline,
      // doctor names it.
      const known = prev !== null && !wasUnlisted;
      this.next.set(dir, { stamp: known ? UNKNOWN_STAMP : UNLISTED_STAMP, entries: prev ?? [] });
      if (!known && !wasUnlisted && !this.unknownBefore.has(dir)) this.folderGap(dir, dst);
      if (full) for (const e of prev ?? []) this.count(e);
      return;
    }
    // Listed at last after it could not be: what it holds was there or not before, nobody knows.
    if (wasUnlisted) {
      this.unknownBefore.add(dir);
      this.folderGap(dir, dst);
    }
    this.listed.add(dir);
    const byName = prev ? new Map(prev.map((e) => [e.name, e])) : null;
    const badNames = names.some((n) => n.includes('\uFFFD')) ? notUtf8Names(abs) : null;
    // Most folders have no .gitignore: say so rather than let the filter try to read one.
    if (dir !== '' && !names.includes('.gitignore')) filter.noRulesIn(dir);
    const chain = filter.chainFor(ancestors(dir));
    const testers = chain.length > 0 ? filter.childTesters(chain, dir) : null;
    const oids = pre?.oids;
    const folder: FolderLook = { secretOf: secretsIn(dir), vouch: oids ? (_name, _st, k) => oids[k] ?? null : (this.git?.vouchesIn(dir) ?? null) };
    const out: PackedEntry[] = [];
    // The names met, for the last row's entries not met again and for names that decode alike:
    // neither is there in a folder listed for the first time with every name valid UTF-8.
    const seen = prev !== null || badNames !== null ? new Set<string>() : null;
    const readBefore = this.toRead.size;
    for (let k = 0; k < names.length; k++) {
      const name = names[k]!;
      if (name === '.gitignore' && knownRules && !full && !knownRules.has(dir === '' ? name : `${dir}/${name}`)) throw new RulesMoved();
      const rel = dir === '' ? name : `${dir}/${name}`;
      if (filter.isExcluded(name, rel) || (testers !== null && filter.ignoredChild(testers, name, isDir(k)))) {
        if (isDir(k) && name !== '.git' && !filter.excludedPaths.includes(rel)) this.metSkipped(rel, statOf(k));
        continue;
      }
      const p = byName?.get(name);
      const raw = badNames?.get(name);
      if (raw) {
        // Not valid UTF-8: its path cannot be spelled (Node decoded it lossily), so its entry is a gap.
        if (seen!.has(name)) continue;
        const e = notUtf8Entry(name, raw, p);
        if (!e) continue;
        seen!.add(name);
        if (full) this.count(e);
        out.push(e);
        continue;
      }
      const st = statOf(k);
      if (!st) continue;
      const e = this.look(name, rel, abs, st, p, folder, k);
      if (!e) continue;
      seen?.add(name);
      if (p && p.type === 'dir' && e.type !== 'dir') this.dropTree(rel);
      if (e.type === 'dir' && (full || !rows.has(rel) || gone.has(rel))) queue.push(rel);
      if (e.type === 'dir' && this.unknownBefore.has(dir)) this.unknownBefore.add(rel);
      if (full) this.count(e);
      out.push(e);
      if (opts.onProgress && full && e.type !== 'dir' && this.listedFiles % 1000 === 0) opts.onProgress(this.listedFiles);
    }
    for (const p of prev ?? []) {
      if (seen!.has(p.name)) continue;
      const rel = dir === '' ? p.name : `${dir}/${p.name}`;
      this.removed(rel, p);
      if (p.type === 'dir') this.dropTree(rel);
    }
    // A baseline's folder with nothing to read is final: encoded now, so that its entries die
    // young instead of living (and being copied by the collector) until the end of the walk.
    // Nothing later looks at a baseline's entries but to encode them.
    if (this.baseline && full && this.toRead.size === readBefore) this.next.set(dir, { stamp, entries: [], packed: encodeRow(stamp, out) });
    else this.next.set(dir, { stamp, entries: out });
  }

  /**
   * A first scan's folder `dir` as the native listing handed it back (`l`, its row there): the row
   * kept as it came, less the children the excluded names and the ignore rules leave out, when
   * every child kept is a folder or a file git's index vouches for that is not a secret by its
   * name (a file git keeps needs no reading); else its children looked at one by one
   * ({@link list}), to the same row. Per child this asks only the names (the rules' verdicts on
   * a name repeat across folders): no entry made, nothing encoded again.
   */
  private listRow(dir: string, l: ListedRow, listed: ListedNames): void {
    const { filter, queue, opts } = this;
    const row = l.row!;
    // Most folders have no .gitignore: say so rather than let the filter try to read one.
    if (dir !== '' && !l.rules) filter.noRulesIn(dir);
    // The rules above it and their own verdicts on it, as its folder's listing left them.
    const above = this.aboveOf.get(dir);
    let chain: [string, FolderRules][];
    let rules: ChildRules | null;
    if (!above) {
      chain = filter.chainFor(ancestors(dir));
      rules = chain.length > 0 ? filter.childRules(chain, dir) : null;
    } else {
      this.aboveOf.delete(dir);
      const mine = l.rules ? filter.rulesOf(dir) : null;
      chain = mine ? [...above.chain, [dir, mine]] : above.chain;
      // Under rule files that answered its folder's children by name alone, and that do not ignore
      // it, its own children are answered by the same rules (deeper, no anchored line reaches them).
      rules = chain.length === 0 ? null : !mine && above.rules?.byId && !above.own.includes(true) ? above.rules : filter.childRules(chain, dir, above.own);
    }
    const excludedOf = filter.excludedChildren(dir);
    const place = above ? above.place : secretPlace(dir);
    const secretOf = place === 'names' ? null : secretsIn(dir);
    const prefix = dir === '' ? '' : `${dir}/`;
    const count = row.readUInt32LE(32);
    /** The entries left out, as [start, end) offsets, and the folders among them (offset and index). */
    let left: number[] | null = null;
    let skipped: number[] | null = null;
    /** The folders kept: each path, and its index. */
    const folders: (string | number)[] = [];
    let files = 0;
    // What is asked of each child is asked once a name (its id: see ListedNames), in typed arrays.
    const names = listed.names;
    const ids = l.ids!;
    const nameFlags = this.nameFlagsFor(names);
    const verdicts = rules?.byId?.fit(names.length) ?? null;
    for (let k = 0, o = HEADER_BYTES; k < count; k++) {
      // The listing's entries hold no hash and no link text: a name, and a git id for a file it matched.
      const flags = row[o + 1]!;
      const end = o + 42 + (row[o + 40]! | (row[o + 41]! << 8)) + (flags & 2 ? 20 : flags & 4 ? 32 : 0);
      const id = ids[k]!;
      const isDir = row[o] === 2;
      const nf = nameFlags[id]!;
      let out = excludedOf !== null ? excludedOf(names[id]!) : (nf & NAME_EXCLUDED) !== 0 && filter.isExcluded(names[id]!, prefix + names[id]!);
      if (!out && rules !== null) {
        if (verdicts !== null) {
          const at = 2 * id + (isDir ? 1 : 0);
          let v = verdicts[at]!;
          if (v === 0) verdicts[at] = v = rules.ignored(names[id]!, isDir) ? 2 : 1;
          out = v === 2;
        } else {
          out = rules.ignored(names[id]!, isDir);
        }
      }
      if (out) {
        (left ??= []).push(o, end);
        if (isDir && names[id] !== '.git' && !filter.excludedPaths.includes(prefix + names[id]!)) (skipped ??= []).push(o, k);
      } else if (row[o + 3] !== 0 || (!isDir && (secretOf !== null ? secretOf(names[id]!) : (nf & NAME_SECRET) !== 0 || ((nf & NAME_ASK) !== 0 && secretsIn(dir)(names[id]!))))) {
        // A child to look at itself (a link, a file to read, an odd name, a secret): the folder is.
        this.list(dir, decodeListing(l, this.gitTable !== null, listed));
        return;
      } else if (isDir) {
        folders.push(prefix + names[id]!, k);
      } else {
        files++;
      }
      o = end;
    }
    this.listed.add(dir);
    for (let i = 0; skipped !== null && i < skipped.length; i += 2) {
      const o = skipped[i]!;
      const name = names[ids[skipped[i + 1]!]!]!;
      const st: Stat = { mode: S_IFDIR | row.readUInt32LE(o + 4), size: 0, mtimeMs: row.readDoubleLE(o + 16), ctimeMs: row.readDoubleLE(o + 24), ino: row.readDoubleLE(o + 32) };
      this.metSkipped(prefix + name, st);
    }
    const unknown = this.unknownBefore.has(dir);
    for (let i = 0; i < folders.length; i += 2) {
      const rel = folders[i] as string;
      queue.push(rel);
      if (unknown) this.unknownBefore.add(rel);
      const name = names[ids[folders[i + 1] as number]!]!;
      this.aboveOf.set(rel, { chain, rules, own: rules ? rules.ownOf(name) : NO_RULES_ABOVE, place: secretPlaceIn(place, name) });
    }
    // A file git vouches for counts as listed, not as copied, and keeps no bytes of its own.
    const was = this.listedFiles;
    this.listedFiles += files;
    if (opts.onProgress) for (let m = Math.floor(was / 1000) + 1; m * 1000 <= this.listedFiles; m++) opts.onProgress(m * 1000);
    const stamp: DirStamp = { mtimeMs: l.stat!.mtimeMs, ctimeMs: l.stat!.ctimeMs, ino: l.stat!.ino };
    this.next.set(dir, { stamp, entries: [], packed: left ? withoutEntries(row, left, count - left.length / 2, files) : row });
  }

  /**
   * What the excluded names and the secrets by name say of each name the native listing has met
   * ({@link NAME_EXCLUDED}, {@link NAME_SECRET}, {@link NAME_ASK}), by its id in `names`: worked
   * out once a name.
   */
  private nameFlagsFor(names: readonly string[]): Uint8Array {
    if (this.nameFlags.length < names.length) {
      const grown = new Uint8Array(Math.max(names.length, 2 * this.nameFlags.length));
      grown.set(this.nameFlags);
      this.nameFlags = grown;
    }
    for (let id = this.nameFlagsKnown; id < names.length; id++) {
      const name = names[id]!;
      const secret = secretName(name);
      this.nameFlags[id] = (this.filter.isExcludedName(name) ? NAME_EXCLUDED : 0) | (secret === 'yes' ? NAME_SECRET : secret === 'ask' ? NAME_ASK : 0);
    }
    this.nameFlagsKnown = names.length;
    return this.nameFlags;
  }

  /** Names folder `dir` (its stat `st`) as a capture gap of this scan: what is in it is not known. */
  private folderGap(dir: string, st: Stat): void {
    if (this.baseline || dir === '') return;
    const mode = st.mode & 0o7777;
    this.folderGaps.set(dir, { name: dir, type: 'dir', mode, size: 0, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: null, git: null, target: null, gap: 'unreadable' });
  }

  /** Lists every folder from the root down, stopping at the limits; forgets the rows of folders gone. */
  private walkAll(): RowScanOutcome | null {
    const { queue, next, gone } = this;
    queue.push('');
    // Natively where it can: a level of folders at a time (parts of LIST_BATCH), each folder
    // listed and its children stated in C on several threads, then taken in order here (a
    // folder before those under it, as when listed one at a time).
    const names = this.nativeList ? ListedNames.make() : null;
    if (!names) this.nativeList = false;
    while (names && this.nativeList && queue.length > 0) {
      const level = queue.splice(0, LIST_BATCH);
      const listings = listFolders(this.root, level, this.gitTable, names);
      if (!listings) {
        this.nativeList = false;
        queue.unshift(...level);
        break;
      }
      for (let i = 0; i < level.length; i++) {
        const l = listings[i];
        if (!l) {
          // Left to this thread (a path too long for the module).
          this.gitForJavaScript();
          this.list(level[i]!);
        } else if (l.row && this.baseline && !this.rows.has(level[i]!)) {
          this.listRow(level[i]!, l, names);
        } else {
          this.list(level[i]!, decodeListing(l, this.gitTable !== null, names));
        }
        const stop = this.overLimits();
        if (stop) return stop;
      }
    }
    if (queue.length > 0) this.gitForJavaScript();
    while (queue.length > 0) {
      this.list(queue.pop()!);
      const stop = this.overLimits();
      if (stop) return stop;
    }
    for (const k of this.rows.keys()) if (!next.has(k) && !gone.has(k)) this.dropTree(k);
    return null;
  }

  /**
   * Warm: checks the rows' stats (all, or those a watcher's hints name), lists again the folders
   * whose stat moved and looks again at the entries whose stat moved, lists the new folders, and
   * counts the whole workspace against the limits (what moved, and the rows nothing moved in).
   */
  private checkWarm(): RowScanOutcome | null {
    const { root, rows, next, gone, opts } = this;
    const { dirs, result } = checkIndex({ root, rows, racyMs: this.racyMs, worker: opts.worker, hints: opts.hints, under: opts.under });
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
      this.list(dir);
    }
    for (const [dir, idx] of suspects) {
      if (gone.has(dir) || next.has(dir)) continue;
      this.lookAgain(dir, idx);
    }
    while (this.queue.length > 0) this.list(this.queue.pop()!); // new folders, and what is under them
    this.vouchByGit();
    for (const row of next.values()) for (const e of row.entries) this.count(e);
    const rest = untouchedTotals(rows, next, gone, opts.totals);
    this.listedFiles += rest.files;
    this.copied += rest.copied;
    this.keptBytes += rest.bytes;
    this.untouched = rest;
    return this.overLimits();
  }

  /** Looks again at the entries `idx` of folder `dir`'s row (their stat moved; the folder's did not). */
  private lookAgain(dir: string, idx: number[]): void {
    const { root, rows, dropped } = this;
    const buf = rows.get(dir)!;
    const entries = [...this.prevOf(dir)!];
    const abs = dir === '' ? root : `${root}/${dir}`;
    let badNames: Map<string, Buffer> | null = null;
    for (const j of idx) {
      const p = entries[j]!;
      const rel = dir === '' ? p.name : `${dir}/${p.name}`;
      let e: PackedEntry | null;
      if (p.gap === 'name-not-utf8') {
        // Its entry's name does not spell it: looked up by its bytes.
        badNames ??= notUtf8Names(abs);
        const raw = badNames.get(p.name);
        e = raw ? notUtf8Entry(p.name, raw, p) : null;
      } else {
        const st = lstatOrNull(`${abs}/${p.name}`);
        e = st ? this.look(p.name, rel, abs, st, p) : null;
      }
      if (!e) {
        this.removed(rel, p);
        if (p.type === 'dir') this.dropTree(rel);
        dropped.add(p);
        continue;
      }
      if (p.type === 'dir' && e.type !== 'dir') this.dropTree(rel);
      if (e.type === 'dir' && !rows.has(rel)) this.queue.push(rel);
      entries[j] = e;
    }
    this.next.set(dir, { stamp: rowStamp(buf), entries: entries.filter((e) => !dropped.has(e)) });
  }

  /**
   * A file git's index vouches for needs no read: worth reading that index in a warm scan when
   * many files moved, or tracked files only racy weigh more than it (see {@link looksUpInGit}).
   */
  private vouchByGit(): void {
    const { toRead } = this;
    if (this.opts.git === false) return;
    let racyBytes = 0;
    for (const t of toRead.values()) if (t.racyOnly) racyBytes += t.st.size;
    // The index's size from the stamp taken at the start (`size:mtime:ino`; '' without one).
    if (!looksUpInGit(toRead.size, racyBytes, Number(this.gitIndex.split(':')[0] || NaN))) return;
    this.git = readGitIndex(this.root);
    if (!this.git) return;
    for (const [e, t] of toRead) {
      const oid = !t.secret && isRegular(t.st) ? this.git.vouches(t.rel, t.st) : null;
      if (oid) {
        e.git = oid;
        toRead.delete(e);
      }
    }
  }

  /**
   * Marks every file to be read pending (gap `baseline-incomplete`), reading none: a file over
   * the size limit is named `too-large` at once (its stat says so), and nothing else is known
   * of the rest until `keepPending` (pending.ts) reads them.
   */
  private leavePending(): void {
    const { maxFileBytes } = this.config;
    for (const [e, t] of this.toRead) e.gap = isRegular(t.st) && !t.secret && t.st.size > maxFileBytes ? 'too-large' : 'baseline-incomplete';
  }

  /** Reads and hashes the files that moved (the limits allow it), keeping their bytes in the blob store. */
  private readMoved(): void {
    const { root, config, dropped } = this;
    const { blobs } = this.opts;
    for (const [e, t] of this.toRead) {
      this.read++;
      const r = readWorkspaceState({ root, config }, t.rel, { abs: t.abs, blobs, seen: t.st });
      if (!r.state.exists) {
        // Gone between its stat and its read.
        dropped.add(e);
        if (t.prev) this.removed(t.rel, t.prev);
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
  }

  /**
   * The skipped folders of the last scan not met by this one's listings: looked at again by their
   * stat when their folder was not listed, gone when it was. Cheap (a stat a skipped folder, and
   * a listing and a stat for each of the folders below it that its stamp looks at): an entry
   * made, removed or renamed in one, or up to {@link SKIPPED_PROBE} levels below, moves its stamp;
   * a file rewritten in place does not, and is not seen.
   */
  private checkSkipped(): void {
    for (const rel of this.prevSkipped.keys()) {
      if (this.skipped.has(rel)) continue;
      const slash = rel.lastIndexOf('/');
      const parent = slash < 0 ? '' : rel.slice(0, slash);
      const st = this.listed.has(parent) || this.gone.has(parent) ? null : lstatOrNull(`${this.root}/${rel}`);
      this.metSkipped(rel, st && typeOf(st) === 'dir' ? st : null);
    }
    this.heardInSkipped();
    for (const [rel, g] of this.skipGaps) {
      const entry = (st: Stat): IndexEntry => ({ ...dirIndexEntry(st), gap: 'excluded' });
      this.changes.push({ path: rel, before: g.before ? entry(g.before) : undefined, after: g.after ? entry(g.after) : undefined });
    }
  }

  /**
   * The skipped folders a watcher heard something in since the last scan (its hints: a file
   * rewritten in place deep inside, which no stamp shows), each named as a gap like one whose
   * stamp moved: one per skipped folder, however many paths were heard in it. Only with hints
   * that vouch for this scan (a long-lived process's watcher); without, a rewrite in place there
   * is not seen. Cheap: a lookup for each folder above each hinted path.
   */
  private heardInSkipped(): void {
    const hints = this.opts.hints;
    if (this.baseline || !hints || !(hints.sinceMs <= this.racyMs) || this.prevSkipped.size === 0) return;
    for (const path of hints.paths) {
      for (let k = path.indexOf('/'); k > 0; k = path.indexOf('/', k + 1)) {
        const rel = path.slice(0, k);
        if (!this.prevSkipped.has(rel)) continue;
        if (!this.skipGaps.has(rel)) {
          const st = lstatOrNull(`${this.root}/${rel}`);
          const mode = Number(this.prevSkipped.get(rel)!.split(':')[3] ?? 0o755);
          this.skipGaps.set(rel, { before: { mode: S_IFDIR | mode, size: 0, ino: 0, mtimeMs: 0, ctimeMs: 0 }, after: st && typeOf(st) === 'dir' ? st : null });
        }
        break;
      }
    }
  }

  /** What moved (new, changed and gone paths, in path order), the rows to write, and the new meta. */
  private outcome(): RowScanOutcome {
    const { root, rows, next, gone, dropped, changes, baseline } = this;
    this.checkSkipped();
    if (!baseline) {
      for (const c of movedIn(next, (dir) => this.prevOf(dir), dropped, this.racyMs, this.unknownBefore)) changes.push(c);
      // A folder named as a gap carries it on its own change (a mode change, say), or on one of its own.
      for (const [dir, e] of this.folderGaps) {
        const c = changes.find((x) => x.path === dir);
        if (c?.after) c.after.gap = 'unreadable';
        else if (!c) changes.push({ path: dir, before: toIndexEntry(e), after: toIndexEntry(e) });
      }
      materializeGit(root, this.opts.blobs, changes);
      changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    }
    const { put, files, bytes, copied, pending } = rowsToWrite(rows, next, gone, dropped, this.untouched);
    if (bytes > this.maxBytes) return this.tooLarge(`over ${sizeText(this.maxBytes)}`);
    const rules: Record<string, string> = Object.fromEntries(this.full ? this.filter.sources : this.knownRules!);
    return {
      status: baseline ? 'baseline' : 'ok',
      changes: baseline ? [] : changes,
      meta: {
        status: 'ok',
        startedNs: this.startedNs,
        files,
        bytes,
        copied,
        ...(this.background ? { background: true as const } : {}),
        ...(pending > 0 ? { pending } : {}),
        excludes: this.excludes,
        rules,
        ...(this.gitIndex !== '' ? { gitIndex: this.gitIndex } : {}),
        ...(this.trackedExcluded.length > 0 ? { trackedExcluded: this.trackedExcluded } : {}),
        ...(this.skipped.size > 0 ? { skipped: Object.fromEntries(this.skipped) } : {}),
        ...(this.skippedBelow.size > 0 ? { skippedBelow: Object.fromEntries(this.skippedBelow) } : {}),
      },
      read: this.read,
      put,
      del: [...gone].filter((d) => !next.has(d)),
    };
  }
}

/**
 * Row `row` less its entries at the offsets `left` ([start, end) pairs, in order), in a buffer of
 * its own: `entries` entries are left, `files` of them files, every one a folder or a file
 * whose bytes are git's (nothing copied, pending or kept).
 */
function withoutEntries(row: Buffer, left: number[], entries: number, files: number): Buffer {
  let len = row.length;
  for (let i = 0; i < left.length; i += 2) len -= left[i + 1]! - left[i]!;
  const out = Buffer.allocUnsafeSlow(len);
  let at = row.copy(out, 0, 0, HEADER_BYTES);
  let from = HEADER_BYTES;
  for (let i = 0; i < left.length; i += 2) {
    at += row.copy(out, at, from, left[i]!);
    from = left[i + 1]!;
  }
  row.copy(out, at, from);
  out.writeUInt32LE(entries, 32);
  out.writeUInt32LE(files, 36);
  out.writeUInt32LE(0, 40);
  out.writeUInt32LE(0, 44);
  out.writeDoubleLE(0, 48);
  return out;
}

/**
 * The totals of the rows of `rows` that a warm look left as they were (neither in `next` nor
 * `gone`): `all` (every row's, summed) less the rows it touched, when the caller keeps it, else
 * summed over the others.
 */
function untouchedTotals(rows: ReadonlyMap<string, Uint8Array>, next: Map<string, NextRow>, gone: Set<string>, all: RowTotals | undefined): RowTotals {
  if (!all) {
    const t = noTotals();
    for (const [dir, buf] of rows) if (!next.has(dir) && !gone.has(dir)) addRowTotals(t, buf);
    return t;
  }
  const t = { ...all };
  for (const dir of next.keys()) {
    const buf = rows.get(dir);
    if (buf) addRowTotals(t, buf, -1);
  }
  for (const dir of gone) {
    const buf = rows.get(dir);
    if (buf && !next.has(dir)) addRowTotals(t, buf, -1);
  }
  return t;
}

/**
 * The rows a scan writes back — each folder it listed or looked into (`next`, less the entries
 * `dropped`), encoded, where it differs from the row it had in `rows` — and the workspace's
 * totals over those and the rows it left as they were (not `gone`): `untouched`, when the caller
 * summed those already (a warm look, which must not pay a pass over every row twice).
 */
function rowsToWrite(
  rows: ReadonlyMap<string, Uint8Array>,
  next: Map<string, NextRow>,
  gone: Set<string>,
  dropped: Set<PackedEntry>,
  untouched: RowTotals | null,
): { put: Map<string, Buffer> } & RowTotals {
  const put = new Map<string, Buffer>();
  const t = untouched ? { ...untouched } : untouchedTotals(rows, next, gone, undefined);
  for (const [dir, row] of next) {
    const entries = dropped.size > 0 ? row.entries.filter((e) => !dropped.has(e)) : row.entries;
    const buf = row.packed ?? encodeRow(row.stamp, entries);
    const old = rows.get(dir);
    if (!old || !Buffer.from(old.buffer, old.byteOffset, old.byteLength).equals(buf)) put.set(dir, buf);
    addRowTotals(t, buf);
  }
  return { put, ...t };
}

/**
 * The new and changed paths of the rows a scan listed or looked into (`next`) against their last
 * rows (`prevOf`), less the entries `dropped`. A path the last scan did not cover may have been
 * there all along, left out by a rule (a `.gitignore` line a command just removed): when its inode
 * has not changed since well before that scan began (`racyMs`), it was not created since — unless
 * it lies in a folder reported created (a folder moved in brings its children with their inodes).
 * Nothing is reported in the folders of `unknownBefore` (their contents before are not known).
 */
function movedIn(
  next: Map<string, NextRow>,
  prevOf: (dir: string) => PackedEntry[] | null,
  dropped: Set<PackedEntry>,
  racyMs: number,
  unknownBefore: Set<string>,
): ScanChange[] {
  const out: ScanChange[] = [];
  /** Folders reported created: what is in them is new too, whatever its inode's age. */
  const created = new Set<string>();
  // A folder is in `next` before the folders listed under it.
  for (const [dir, row] of next) {
    // Contents whose state before is unknown are neither created nor changed (the folder is a gap).
    if (unknownBefore.has(dir)) continue;
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
export function materializeGit(root: string, blobs: BlobStore, changes: ScanChange[]): void {
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
