import { createHash } from 'node:crypto';
import { accessSync, closeSync, constants, lstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { nativeGitTable } from './native.js';

// Loaded when a blob is read back only: child_process brings a dozen of Node's modules with it,
// and a hook that never reads from git should not pay for them.
const lazy = createRequire(import.meta.url);

/*
 * What git already keeps of a work tree. A tracked file whose stat still matches git's index has
 * its bytes in git's object store: the snapshot can name that blob instead of copying the file,
 * and read it back (`git cat-file`) only when a command changes the file. takeback only reads
 * here: it parses the index file itself and runs git with `--no-optional-locks`, so neither the
 * user's index nor the object store is ever written.
 */

/** One stage-0 regular file of git's index, as much of it as the stat match needs. */
export interface GitIndexEntry {
  /** The blob's object id (hex: 40 digits, or 64 in a SHA-256 repository). */
  oid: string;
  mtimeMs: number;
  ctimeMs: number;
  /** The low 32 bits of the inode number and of the size, as git keeps them. */
  ino32: number;
  size32: number;
}

/** The stat fields of a file that git's index is checked against. */
export type GitStat = { mtimeMs: number; ctimeMs: number; ino: number; size: number };

/**
 * A work tree's git index: its usable entries and the index file's own mtime (git's racy line).
 * `folders` maps a folder ('' for the root) to its files' names, each to where its entry starts
 * in the index file's bytes: an entry's fields are read from there when the path is looked up
 * ({@link GitIndex.vouches}), not for every path up front; a walk looks up a folder once and
 * then each child by its name ({@link GitIndex.vouchesIn}).
 */
export interface GitIndex {
  gitDir: string;
  folders: Map<string, Map<string, number>>;
  mtimeMs: number;
  /** The blob id of `path` when its entry matches the stat `st` (see {@link statMatchesGit}), else null. */
  vouches(path: string, st: GitStat): string | null;
  /** {@link vouches} for the children of folder `dir` by name; null when the index has no usable file there. */
  vouchesIn(dir: string): ((name: string, st: GitStat) => string | null) | null;
  /** What {@link trackedExcludedDirs} gives for the names {@link readGitIndex} was asked about (empty when none were). */
  trackedExcluded: string[];
}

/** Version control folders: never scanned, whatever git tracks. */
const VCS_NAMES = new Set(['.git', '.hg', '.svn', '.jj']);

/** git's index file, read whole: its version (2 to 4), entry count and object id length. */
interface IndexFile {
  buf: Buffer;
  version: number;
  count: number;
  hashLen: number;
}

/**
 * The index of the git work tree at `root` with its mtime (ms; an entry modified at or after it
 * is racy), as both readers take it: null without git, without the `git` program, or without an
 * index this reader follows.
 */
function openIndex(root: string): { gitDir: string; idx: IndexFile; indexMtime: number } | null {
  const gitDir = gitDirOf(root);
  if (!gitDir || !findGit()) return null;
  let indexMtime: number;
  try {
    indexMtime = lstatSync(join(gitDir, 'index')).mtimeMs;
  } catch {
    return null;
  }
  const idx = readIndexFile(gitDir);
  return idx ? { gitDir, idx, indexMtime } : null;
}

function readIndexFile(gitDir: string): IndexFile | null {
  let buf: Buffer;
  try {
    buf = readFileSync(join(gitDir, 'index'));
  } catch {
    return null;
  }
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  return { buf, version, count: buf.readUInt32BE(8), hashLen: objectFormat(gitDir) === 'sha256' ? 32 : 20 };
}

/**
 * Calls `fn` with each entry of the index: where it starts in `buf` (its stat fields and object
 * id are there), its path's bytes (`src[ps..pe)`: the index's own bytes, or in a version 4
 * index the path rebuilt), its flags and extended flags. Returns the offset just after the
 * entries (where the extensions begin); throws on a torn index.
 */
function walkIndex(idx: IndexFile, fn: (start: number, src: Buffer, ps: number, pe: number, flags: number, extended: number) => void): number {
  const { buf, version, count, hashLen } = idx;
  let o = 12;
  let prev: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const start = o;
    o += 40 + hashLen;
    const flags = buf.readUInt16BE(o);
    o += 2;
    let extended = 0;
    if (flags & 0x4000) {
      if (version < 3) throw new Error('extended flags in an index of version 2');
      extended = buf.readUInt16BE(o);
      o += 2;
    }
    if (version === 4) {
      // The name is the previous name less N bytes, plus a NUL-terminated suffix.
      let c = buf[o++]!;
      let strip = c & 127;
      while (c & 128) {
        c = buf[o++]!;
        strip = ((strip + 1) << 7) | (c & 127);
      }
      const end = buf.indexOf(0, o);
      if (end < 0) throw new Error('torn index');
      const path = Buffer.concat([prev.subarray(0, prev.length - strip), buf.subarray(o, end)]);
      o = end + 1;
      prev = path;
      fn(start, path, 0, path.length, flags, extended);
    } else {
      // The flags' low 12 bits hold the name's length (0xfff: that long or longer, found by its NUL).
      const len = flags & 0xfff;
      const end = len < 0xfff ? o + len : buf.indexOf(0, o);
      if (end < 0 || end >= buf.length || buf[end] !== 0) throw new Error('torn index');
      const ps = o;
      // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
      o = start + ((end - start + 8) & ~7);
      fn(start, buf, ps, end, flags, extended);
    }
  }
  return o;
}

/** The part of git's index {@link walkIndexPaths} reads at a time (bytes; grown for a longer entry). */
const INDEX_PART_BYTES = 1 << 20;

/**
 * Calls `fn` with the path of each entry of the index file `file` (`src[ps..pe)`, its bytes valid
 * during the call only), reading the file a part of `partBytes` at a time into one buffer: a
 * reader that needs the paths only holds neither the whole file (97 MB for a million files) nor
 * fresh memory for it. Throws on a torn index; null when the file cannot be opened or is not an
 * index this reader follows (version 2 to 4).
 */
function walkIndexPaths(file: string, hashLen: number, fn: (src: Buffer, ps: number, pe: number) => void, partBytes = INDEX_PART_BYTES): true | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    let buf = Buffer.allocUnsafe(Math.max(partBytes, 64));
    /** `buf[0..len)` holds the file's bytes from offset `base`; `o` is the next entry's place in `buf`. */
    let base = 0;
    let len = 0;
    let o = 0;
    let eof = false;
    /** Makes `buf[o..o+n)` hold the file's bytes (keeping those from `o` on); false at the end of the file. */
    const have = (n: number): boolean => {
      if (o + n <= len) return true;
      if (o > 0) {
        buf.copy(buf, 0, o, len);
        base += o;
        len -= o;
        o = 0;
      }
      if (n > buf.length) {
        const grown = Buffer.allocUnsafe(Math.max(n, 2 * buf.length));
        buf.copy(grown, 0, 0, len);
        buf = grown;
      }
      while (len < n && !eof) {
        const got = readSync(fd, buf, len, buf.length - len, base + len);
        if (got === 0) eof = true;
        len += got;
      }
      return len >= n;
    };
    /** Where the NUL at or after `buf[o + from]` is, relative to `o` (the window grown until it is there). */
    const nulFrom = (from: number): number => {
      for (;;) {
        const at = buf.indexOf(0, o + from);
        if (at >= 0 && at < len) return at - o;
        from = len - o;
        if (!have(len - o + 1)) throw new Error('torn index');
      }
    };
    if (!have(12) || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
    const version = buf.readUInt32BE(4);
    if (version < 2 || version > 4) return null;
    const count = buf.readUInt32BE(8);
    o = 12;
    let prev = Buffer.alloc(0);
    for (let i = 0; i < count; i++) {
      const fixed = 40 + hashLen + 2;
      if (!have(fixed + 2)) throw new Error('torn index');
      const flags = buf.readUInt16BE(o + fixed - 2);
      let at = fixed;
      if (flags & 0x4000) {
        if (version < 3) throw new Error('extended flags in an index of version 2');
        at += 2;
      }
      if (version === 4) {
        // The name is the previous name less N bytes, plus a NUL-terminated suffix.
        if (!have(at + 16)) throw new Error('torn index');
        let c = buf[o + at++]!;
        let strip = c & 127;
        while (c & 128) {
          c = buf[o + at++]!;
          strip = ((strip + 1) << 7) | (c & 127);
        }
        const end = nulFrom(at);
        const path = Buffer.concat([prev.subarray(0, prev.length - strip), buf.subarray(o + at, o + end)]);
        fn(path, 0, path.length);
        prev = path;
        o += end + 1;
      } else {
        // The flags' low 12 bits hold the name's length (0xfff: that long or longer, found by its NUL).
        const nameLen = flags & 0xfff;
        const end = nameLen < 0xfff ? at + nameLen : nulFrom(at);
        // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
        const size = (end + 8) & ~7;
        if (!have(size) || buf[o + end] !== 0) throw new Error('torn index');
        fn(buf, o + at, o + end);
        o += size;
      }
    }
    return true;
  } finally {
    closeSync(fd);
  }
}

/** Adds to `kept` each folder along `dir` (a folder's path, `/`-separated) whose own name is one of `asked`. */
function keepNamedFolders(dir: string, asked: ReadonlySet<string>, kept: Set<string>): void {
  let from = 0;
  for (let slash = dir.indexOf('/'); ; slash = dir.indexOf('/', from)) {
    const end = slash < 0 ? dir.length : slash;
    if (asked.has(dir.slice(from, end))) kept.add(dir.slice(0, end));
    if (slash < 0) break;
    from = slash + 1;
  }
}

/**
 * Folders named like build output or dependencies (`names`: the scan's excluded names, version
 * control folders aside) that hold files git tracks: `dist`, `pkg/build`. The scan looks into
 * these after all: git keeps their files, so an agent's change to them must be undoable. Sorted;
 * empty outside git or for an index this reader does not follow. Reads only the index's paths, a
 * part of the file at a time ({@link walkIndexPaths}: no map, no object ids, a string a run of
 * entries in one folder): the warm scan that finds the index moved (a `git status` of the user's
 * rewrites it) pays about a read of the file, in a buffer of a megabyte. `partBytes`: that buffer's size.
 */
export function trackedExcludedDirs(root: string, names: readonly string[], partBytes = INDEX_PART_BYTES): string[] {
  const asked = new Set(names.filter((n) => !VCS_NAMES.has(n)));
  const gitDir = gitDirOf(root);
  if (!gitDir || asked.size === 0) return [];
  const kept = new Set<string>();
  // The index is sorted: entries of one folder come in runs, and only the first of a run is
  // looked at (its folder's bytes compared with the last run's, kept in a copy of their own: the
  // part they were read in is read over).
  let last = Buffer.alloc(0);
  try {
    const walked = walkIndexPaths(
      join(gitDir, 'index'),
      objectFormat(gitDir) === 'sha256' ? 32 : 20,
      (src, ps, pe) => {
        let slash = pe - ps - 1;
        while (slash >= 0 && src[ps + slash] !== 0x2f) slash--;
        if (slash < 0 || (slash === last.length && src.compare(last, 0, slash, ps, ps + slash) === 0)) return;
        last = Buffer.from(src.subarray(ps, ps + slash));
        keepNamedFolders(last.toString('utf8'), asked, kept);
      },
      partBytes,
    );
    if (!walked) return [];
  } catch {
    return [];
  }
  return [...kept].sort();
}

/** The stat of the git index file as a string (`size:mtime:ino`), or '' when there is none: when it moves, the index may have. */
export function gitIndexStamp(root: string): string {
  const gitDir = gitDirOf(root);
  if (!gitDir) return '';
  try {
    const st = lstatSync(join(gitDir, 'index'));
    return `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch {
    return '';
  }
}

const TWO32 = 4294967296;

/** The git folder of work tree `root` (`root/.git`, or where a `.git` file points), or null. */
export function gitDirOf(root: string): string | null {
  const dotGit = join(root, '.git');
  let st;
  try {
    st = lstatSync(dotGit);
  } catch {
    return null;
  }
  if (st.isDirectory()) return dotGit;
  if (!st.isFile()) return null;
  try {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
    if (!m) return null;
    return isAbsolute(m[1]!) ? m[1]! : resolve(root, m[1]!);
  } catch {
    return null;
  }
}

let gitBinary: string | null | undefined;

/** The `git` program on PATH, or null (then nothing refers to git's objects). */
export function findGit(): string | null {
  if (gitBinary !== undefined) return gitBinary;
  gitBinary = null;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, 'git'), constants.X_OK);
      gitBinary = join(dir, 'git');
      break;
    } catch {
      // not here
    }
  }
  return gitBinary;
}

/**
 * Reads git's index of the work tree at `root` (versions 2 to 4). Returns null when there is no
 * git here, no `git` program to read blobs back with, or an index this reader does not follow
 * (a split or sparse index): the scan then copies files as it does outside git.
 *
 * Only entries git itself would trust are kept: stage 0, a regular file, not assumed unchanged,
 * not skip-worktree or intent-to-add, and not "racy" (modified at or after the index was written,
 * when a stat match proves nothing).
 *
 * With `excludeNames`, the same reading also finds {@link trackedExcludedDirs} of them (a first
 * scan needs both, and a second pass over the index costs as much as the first): the folders of
 * every entry, looked at once per run of entries in the same folder (the index is sorted).
 */
export function readGitIndex(root: string, excludeNames: readonly string[] = []): GitIndex | null {
  const opened = openIndex(root);
  if (!opened) return null;
  const { gitDir, idx, indexMtime } = opened;
  const { buf, hashLen } = idx;
  const folders = new Map<string, Map<string, number>>();
  const asked = new Set(excludeNames.filter((n) => !VCS_NAMES.has(n)));
  const kept = new Set<string>();
  // The folder of the last entry (its bytes `src[ps..ps+len)`, len -1 at the root; -2 before the
  // first) and its names (null: a folder whose path cannot be named on cat-file's input).
  const last = { src: buf, ps: 0, len: -2 };
  let names: Map<string, number> | null = null;
  let o: number;
  try {
    o = walkIndex(idx, (start, src, ps, pe, flags, extended) => {
      let slash = pe - ps - 1;
      while (slash >= 0 && src[ps + slash] !== 0x2f) slash--;
      let same = slash === last.len;
      for (let k = 0; same && k < slash; k++) same = src[ps + k] === last.src[last.ps + k];
      if (!same) {
        // The index is sorted: a folder's entries come in runs, and only a run's first makes strings.
        last.src = src;
        last.ps = ps;
        last.len = slash;
        const dir = slash < 0 ? '' : src.toString('utf8', ps, ps + slash);
        if (asked.size > 0 && slash > 0) keepNamedFolders(dir, asked, kept);
        if (dir.includes('\n')) names = null;
        else if (!(names = folders.get(dir) ?? null)) folders.set(dir, (names = new Map()));
      }
      const stage = (flags >> 12) & 3;
      const assumeValid = flags & 0x8000;
      const skipOrIntent = extended & 0x6000;
      if (stage !== 0 || assumeValid || skipOrIntent) return;
      const mode = buf.readUInt32BE(start + 24);
      if (mode >>> 12 !== 0b1000) return; // links and submodules are not blobs of a file
      const mtimeMs = buf.readUInt32BE(start + 8) * 1000 + buf.readUInt32BE(start + 12) / 1e6;
      const size32 = buf.readUInt32BE(start + 36);
      if (mtimeMs >= indexMtime || size32 === 0) return; // racy, or smudged by git as racy
      if (!names) return;
      const name = src.toString('utf8', ps + slash + 1, pe);
      if (name.includes('\n')) return; // cannot be named on cat-file's input
      names.set(name, start);
    });
    // Extensions: a split index ("link") or sparse folders ("sdir") leave entries out.
    while (o + 8 <= buf.length - hashLen) {
      const sig = buf.toString('latin1', o, o + 4);
      const size = buf.readUInt32BE(o + 4);
      if (sig === 'link' || sig === 'sdir') return null;
      o += 8 + size;
    }
  } catch {
    return null; // a torn or foreign index: do without it
  }
  /** The blob id of the entry at `start` when it matches the stat `st`: its fields read where they are, the id made only for a match. */
  const matchAt = (start: number, st: GitStat): string | null =>
    statMatches(
      st,
      buf.readUInt32BE(start + 36),
      buf.readUInt32BE(start + 20),
      buf.readUInt32BE(start + 8) * 1000 + buf.readUInt32BE(start + 12) / 1e6,
      buf.readUInt32BE(start) * 1000 + buf.readUInt32BE(start + 4) / 1e6,
    )
      ? buf.toString('hex', start + 40, start + 40 + hashLen)
      : null;
  return {
    gitDir,
    folders,
    mtimeMs: indexMtime,
    trackedExcluded: [...kept].sort(),
    vouches(path, st) {
      const slash = path.lastIndexOf('/');
      const start = folders.get(slash < 0 ? '' : path.slice(0, slash))?.get(path.slice(slash + 1));
      return start === undefined ? null : matchAt(start, st);
    },
    vouchesIn(dir) {
      const names = folders.get(dir);
      if (!names) return null;
      return (name, st) => {
        const start = names.get(name);
        return start === undefined ? null : matchAt(start, st);
      };
    },
  };
}

/**
 * git's index read natively (native/git-index.c) for a full walk's native listing, which matches
 * each folder's children against it as it lists them (listing.ts): `table` holds the same entries
 * as {@link readGitIndex} keeps, and `trackedExcluded` is its {@link GitIndex.trackedExcluded} for
 * `excludeNames`. Null where {@link readGitIndex} gives null (no git, no `git` program, an index
 * this reader does not follow); undefined when the native module is not there or fails (the
 * caller reads the index with {@link readGitIndex}).
 */
export function readGitTable(root: string, excludeNames: readonly string[] = []): { table: object; trackedExcluded: string[] } | null | undefined {
  const opened = openIndex(root);
  if (!opened) return null;
  const { idx, indexMtime } = opened;
  const got = nativeGitTable(idx.buf, idx.hashLen, indexMtime, [...new Set(excludeNames.filter((n) => !VCS_NAMES.has(n)))]);
  if (!got) return got;
  // Each folder found is NUL-terminated; one may come more than once.
  const kept = new Set<string>();
  const b = got.trackedExcluded;
  for (let from = 0, nul = b.indexOf(0); nul >= 0; from = nul + 1, nul = b.indexOf(0, from)) kept.add(b.toString('utf8', from, nul));
  return { table: got.table, trackedExcluded: [...kept].sort() };
}

function objectFormat(gitDir: string): 'sha1' | 'sha256' {
  for (const dir of [gitDir, commonDir(gitDir)]) {
    try {
      if (/^\s*objectformat\s*=\s*sha256\s*$/im.test(readFileSync(join(dir, 'config'), 'utf8'))) return 'sha256';
    } catch {
      // no config here
    }
  }
  return 'sha1';
}

function commonDir(gitDir: string): string {
  try {
    const c = readFileSync(join(gitDir, 'commondir'), 'utf8').trim();
    return isAbsolute(c) ? c : resolve(gitDir, c);
  } catch {
    return gitDir;
  }
}

/** True when a (non-BigInt) lstat of a file matches git's entry for it. */
export function statMatchesGit(st: { mtimeMs: number; ctimeMs: number; ino: number; size: number }, g: GitIndexEntry): boolean {
  return statMatches(st, g.size32, g.ino32, g.mtimeMs, g.ctimeMs);
}

/** {@link statMatchesGit} against an entry's fields: the low 32 bits of size and inode, times in ms. */
function statMatches(st: { mtimeMs: number; ctimeMs: number; ino: number; size: number }, size32: number, ino32: number, mtimeMs: number, ctimeMs: number): boolean {
  return st.size % TWO32 === size32 && st.ino % TWO32 === ino32 && Math.abs(st.mtimeMs - mtimeMs) < 0.001 && Math.abs(st.ctimeMs - ctimeMs) < 0.001;
}

/** The git object id `bytes` would have as a blob (SHA-1, or SHA-256 when `oid` is 64 digits long). */
export function gitBlobId(bytes: Uint8Array, like: string): string {
  const h = createHash(like.length === 64 ? 'sha256' : 'sha1');
  h.update(`blob ${bytes.length}\0`);
  h.update(bytes);
  return h.digest('hex');
}

function git(root: string, args: string[], input?: string): Buffer | null {
  const bin = findGit();
  if (!bin) return null;
  const { spawnSync } = lazy('node:child_process') as typeof import('node:child_process');
  const r = spawnSync(bin, ['--no-optional-locks', '-C', root, ...args], {
    input,
    maxBuffer: 2 ** 31,
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' },
  });
  if (r.error || r.status !== 0) return null;
  return r.stdout;
}

/**
 * The bytes of git blobs, read back for the files they stood for: `items` name each blob and the
 * work-tree path and size the file had. Blobs are read in one `git cat-file --batch`; a blob whose
 * size is not the file's (an end-of-line or other filter applies to that path) is read again
 * through the path's filters, and left out (null) if it still does not match: takeback never
 * hands out bytes it is not sure of.
 */
export function readGitBlobs(root: string, items: { oid: string; path: string; size: number }[]): Map<string, Buffer | null> {
  const out = new Map<string, Buffer | null>();
  if (items.length === 0) return out;
  const oids = [...new Set(items.map((i) => i.oid))];
  const raw = git(root, ['cat-file', '--batch'], `${oids.join('\n')}\n`);
  const blobs = new Map<string, Buffer>();
  if (raw) {
    let o = 0;
    while (o < raw.length) {
      const nl = raw.indexOf(10, o);
      if (nl < 0) break;
      const head = raw.toString('latin1', o, nl).split(' ');
      o = nl + 1;
      if (head[1] !== 'blob') continue; // "<oid> missing"
      const size = Number(head[2]);
      blobs.set(head[0]!, raw.subarray(o, o + size));
      o += size + 1;
    }
  }
  for (const it of items) {
    const b = blobs.get(it.oid);
    if (b && b.length === it.size) {
      out.set(`${it.oid} ${it.path}`, b);
      continue;
    }
    const filtered = b ? git(root, ['cat-file', '--filters', `--path=${it.path}`, it.oid]) : null;
    out.set(`${it.oid} ${it.path}`, filtered && filtered.length === it.size ? filtered : null);
  }
  return out;
}
