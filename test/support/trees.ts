// Trees for the end-to-end tests: every path of a workspace with its bytes, mode, type and link
// text, read from disk or computed by the test from what each tool does (never from takeback),
// and compared byte for byte.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** One path of a tree: a file (its bytes and their sha256), a symbolic link, or a folder. */
export type Entry =
  | { type: 'file'; mode: number; bytes: Buffer; sha256: string }
  | { type: 'symlink'; mode: number; target: string }
  | { type: 'dir'; mode: number };
/** A file's entry. */
export type FileEntry = Extract<Entry, { type: 'file' }>;
/** Workspace-relative paths ("/"-separated) to their entries. */
export type Tree = Map<string, Entry>;

/** The sha256 of `b`, in hex. */
export const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** A file entry holding `bytes`. */
export const fileEntry = (bytes: Buffer, mode: number): Entry => ({ type: 'file', mode, bytes, sha256: sha(bytes) });

/** The workspace as it is on disk, `.git` left out (takeback never touches it). */
export function readTree(root: string): Tree {
  const out: Tree = new Map();
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(root, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === '.git') continue;
      const abs = path.join(root, r);
      const st = fs.lstatSync(abs);
      const mode = st.mode & 0o7777;
      if (st.isSymbolicLink()) out.set(r, { type: 'symlink', mode, target: fs.readlinkSync(abs) });
      else if (st.isDirectory()) {
        out.set(r, { type: 'dir', mode });
        walk(r);
      } else if (st.isFile()) out.set(r, fileEntry(fs.readFileSync(abs), mode));
      else throw new Error(`unexpected file type at ${abs}`);
    }
  };
  walk('');
  return out;
}

/** An entry in a few words, for assertion messages ("absent" for none). */
export function describeEntry(e: Entry | undefined): string {
  if (!e) return 'absent';
  const mode = e.mode.toString(8).padStart(4, '0');
  if (e.type === 'file') return `file ${mode} ${e.bytes.length} bytes sha256 ${e.sha256.slice(0, 12)}`;
  if (e.type === 'symlink') return `symlink -> ${e.target}`;
  return `dir ${mode}`;
}

/** Are two entries the same: type, mode, and bytes (compared in full) or link text? */
export function sameEntry(a: Entry | undefined, b: Entry | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.type !== b.type || a.mode !== b.mode) return false;
  if (a.type === 'file' && b.type === 'file') return a.sha256 === b.sha256 && a.bytes.equals(b.bytes);
  if (a.type === 'symlink' && b.type === 'symlink') return a.target === b.target;
  return true;
}

/** The paths where two trees differ. */
export function changedPaths(a: Tree, b: Tree): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((p) => !sameEntry(a.get(p), b.get(p))).sort();
}

/** One line per difference: empty when `actual` is `expected` byte for byte. */
export function treeDiff(actual: Tree, expected: Tree): string[] {
  return changedPaths(expected, actual).map((p) => `${p}: expected ${describeEntry(expected.get(p))}, found ${describeEntry(actual.get(p))}`);
}

/** A copy of `t` with `changes` applied (undefined removes the path). */
export function withChanges(t: Tree, changes: Record<string, Entry | undefined>): Tree {
  const out = new Map(t);
  for (const [p, e] of Object.entries(changes)) {
    if (e) out.set(p, e);
    else out.delete(p);
  }
  return out;
}

/** `t` with the paths `paths` as they are in `from`. */
export function takePaths(t: Tree, from: Tree, paths: string[]): Tree {
  return withChanges(t, Object.fromEntries(paths.map((p) => [p, from.get(p)])));
}

/** The file at `p` in `t`, which must be a file. */
export function fileOf(t: Tree, p: string): FileEntry {
  const e = t.get(p);
  if (e?.type !== 'file') throw new Error(`${p} is not a file in the tree (${describeEntry(e)})`);
  return e;
}

/** The entry at `p` in `t`, which must be there (a new file's or folder's mode is the umask's: read from after). */
export function entryOf(t: Tree, p: string): Entry {
  const e = t.get(p);
  if (!e) throw new Error(`${p} is absent from the tree`);
  return e;
}

/** `file` in `t` with its text put through `f`, mode kept (or `mode`). */
export function edited(t: Tree, file: string, f: (s: string) => string, mode?: number): Entry {
  const e = fileOf(t, file);
  return fileEntry(Buffer.from(f(e.bytes.toString('utf8')), 'utf8'), mode ?? e.mode);
}

/** What `sed -i 's/FROM/TO/'` does: the first match on each line. */
export const sedLines = (from: string, to: string) => (s: string) =>
  s
    .split('\n')
    .map((l) => l.replace(from, to))
    .join('\n');

/** Exactly one replacement, which must be possible. */
export const replaceOnce = (from: string, to: string) => (s: string) => {
  if (s.split(from).length !== 2) throw new Error(`expected exactly one ${JSON.stringify(from)}`);
  return s.replace(from, to);
};

/** The status takeback should give a path that went from `a` to `b`. */
export function expectedStatus(a: Entry | undefined, b: Entry | undefined): string {
  if (!a) return 'created';
  if (!b) return 'deleted';
  if (a.type !== b.type) return 'type';
  if (a.type === 'file' && b.type === 'file' && a.sha256 === b.sha256) return 'mode';
  if (a.type === 'dir' || (a.type === 'symlink' && b.type === 'symlink' && a.target === b.target)) return 'mode';
  return 'modified';
}

/**
 * Does a journal FileState (show --json) describe this tree entry? A link's mode is compared
 * too unless `opts.linkMode` is false (a link's own mode is meaningless, always 0777 on Linux,
 * and takeback need not keep it).
 */
export function stateMatches(s: any, e: Entry | undefined, opts: { linkMode?: boolean } = {}): boolean {
  if (!s.exists) return e === undefined;
  if (!e || s.type !== e.type) return false;
  if ((e.type !== 'symlink' || opts.linkMode !== false) && s.mode !== e.mode) return false;
  if (e.type === 'file') return s.sha256 === e.sha256 && s.size === e.bytes.length;
  if (e.type === 'symlink') return s.target === e.target;
  return true;
}
