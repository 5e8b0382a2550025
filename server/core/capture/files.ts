import { lstatSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';
import type { Workspace } from '../open-workspace.js';
import { checkId } from '../errors.js';
import { readState, readWorkspaceState, unkeptGap, type ReadState } from '../fsstate.js';
import type { PendingCapture } from '../journal/captures.js';
import type { BlobStore } from '../store/blobs.js';
import type { ChangeSet, FileChange, GapReason } from '../types.js';
import { toWorkspacePath } from '../workspace.js';
import { notUtf8Names } from '../scan/scan.js';
import { makeChange } from './file-change.js';
import { syncIndex } from './index-sync.js';

/** Folders above `abs` that do not exist yet, nearest first (a Write into new nested folders creates them). */
function missingDirs(abs: string): string[] {
  const out: string[] = [];
  for (let d = dirname(abs); dirname(d) !== d; d = dirname(d)) {
    try {
      lstatSync(d);
      break;
    } catch {
      out.push(d);
    }
  }
  return out;
}

/**
 * The states of a file tool's `paths` (absolute, or relative to `cwd`) before it runs, as a
 * pending capture keeps them: the bytes of each path inside workspace `ws` stored in `ws.blobs`
 * (by the workspace's rules: secrets and files over the size limit are kept without their bytes,
 * with their gap), a path outside only hashed, paths under the journal's home
 * (`config.excludePaths`) left out. With `ws.blobs` null nothing is stored: a file's bytes are not
 * kept (`sha256` null, gap `not-kept`), what else a state holds (a link's target, a folder's
 * mode, an absence) is. Throws what the file system throws (a full disk storing a blob).
 */
export function keepFiles(
  ws: { root: string; config: { maxFileBytes: number; excludePaths: string[] }; blobs: BlobStore | null },
  paths: string[],
  cwd: string,
): PendingCapture['files'] {
  const seen = new Set<string>();
  const files: PendingCapture['files'] = [];
  for (const p of paths) {
    const abs = isAbsolute(p) ? resolve(p) : resolve(cwd, p);
    if (seen.has(abs)) continue;
    seen.add(abs);
    // takeback's own store (a journal home inside the workspace) is never captured.
    if (ws.config.excludePaths.some((x) => abs === x || abs.startsWith(`${x}${sep}`))) continue;
    // A path outside the workspace is hashed (its change is named, as a gap) but never kept.
    const inside = toWorkspacePath(ws.root, abs) !== null;
    const r = ws.blobs ? readWorkspaceState(ws, abs, { abs, blobs: inside ? ws.blobs : undefined }) : readState(abs, { maxFileBytes: 0 });
    let { state, gap } = r;
    if (!ws.blobs && state.exists && state.type === 'file') {
      state = { ...state, sha256: null };
      gap = 'not-kept';
    }
    files.push({ path: abs, state, missingDirs: state.exists ? [] : missingDirs(abs), ...(gap ? { gap } : {}) });
  }
  return files;
}

/**
 * True when `abs` names a file whose name is not valid UTF-8: its name as given holds U+FFFD (or a
 * lone surrogate, which becomes U+FFFD on the way to the disk) and its folder holds a name of
 * bytes that are not UTF-8 and decode to it. Such a path cannot be looked at through a string.
 */
function notUtf8Path(abs: string): boolean {
  if (!/[\uFFFD\uD800-\uDFFF]/.test(abs)) return false;
  return notUtf8Names(dirname(abs)).has(Buffer.from(basename(abs), 'utf8').toString('utf8'));
}

/**
 * A file tool is about to run: keeps the bytes (or the absence, or the link) of each of `paths`
 * (absolute, or relative to `cwd`), inside or outside the workspace. `id` is the tool call's id;
 * ending the capture with the same id records the change set. Secrets and files over the size
 * limit are kept without their bytes and named as gaps; paths under the journal's home
 * (`config.excludePaths`) are left out.
 */
export function beginFiles(
  ws: Workspace,
  opts: {
    id: string;
    paths: string[];
    cwd?: string;
    turn?: string | null;
    tool?: string | null;
    agent?: string | null;
    session?: string | null;
    pair?: string | null;
    now?: number;
  },
): PendingCapture {
  checkId(opts.id, 'capture id');
  const { journal } = ws;
  const files = keepFiles({ root: ws.root, config: ws.config, blobs: journal.blobs }, opts.paths, opts.cwd ?? ws.root);
  const turn = opts.turn === undefined ? (journal.turns.open()?.id ?? null) : opts.turn;
  const pending: PendingCapture = {
    id: opts.id,
    kind: 'files',
    turn,
    tool: opts.tool ?? null,
    command: null,
    start: opts.now ?? Date.now(),
    files,
    agent: opts.agent ?? null,
    session: opts.session ?? null,
    pair: opts.pair ?? null,
  };
  journal.captures.put(pending);
  return pending;
}

/**
 * A file tool has run (or failed: a failed tool may still have changed files): compares each
 * kept path with what is there now and records the change set. Returns the set, or `null` when
 * nothing changed. `opts.found`: the state each path was found in when the tool ended, kept then
 * (an end queued in the spill, folded in later), instead of what is there now; `opts.late`: the
 * end was queued and what it found was not kept, so what is there now may hold later changes:
 * every change is a `not-kept` gap (never undone over what came after).
 */
export function endFiles(ws: Workspace, pending: PendingCapture, opts: { found?: Map<string, ReadState>; late?: boolean } = {}): ChangeSet | null {
  const { journal, root } = ws;
  const changes: FileChange[] = [];
  const indexed: { path: string; state: import('../types.js').FileState; gap?: GapReason }[] = [];
  for (const f of pending.files) {
    const rel = toWorkspacePath(root, f.path);
    const shown = rel ?? f.path;
    const r = opts.found?.get(f.path) ?? readWorkspaceState(ws, f.path, { abs: f.path, blobs: rel === null ? undefined : journal.blobs });
    // Bytes not kept at begin: the reason kept then (a secret by content), else the path's.
    const unkept = unkeptGap(f.path, f.state);
    let gap: GapReason | undefined = r.gap ?? (unkept && (f.gap ?? unkept));
    if (f.state.exists && f.state.type === 'symlink' && r.state.exists && r.state.type === 'symlink' && f.state.target === r.state.target) {
      gap = 'symlink-target'; // the tool wrote through the link: the target's content is not kept
    }
    if (rel === null) gap ??= 'outside-workspace';
    if (opts.late) gap ??= 'not-kept';
    // Folders the tool created on the way, outermost first.
    for (const d of [...f.missingDirs].reverse()) {
      const dr = readState(d, { maxFileBytes: 0 });
      if (!dr.state.exists || dr.state.type !== 'dir') continue;
      const drel = toWorkspacePath(root, d);
      const c = makeChange(journal.blobs, drel ?? d, { exists: false }, dr.state, drel === null ? 'outside-workspace' : opts.late ? 'not-kept' : undefined);
      if (c && !changes.some((x) => x.path === c.path)) {
        changes.push(c);
        if (drel) indexed.push({ path: drel, state: dr.state });
      }
    }
    // A name that is not UTF-8 was looked at as another name (absent both times): named, never invisible.
    if (!f.state.exists && !r.state.exists && notUtf8Path(f.path)) {
      changes.push({ path: shown, before: f.state, after: r.state, status: 'modified', added: 0, removed: 0, gap: 'name-not-utf8' });
      continue;
    }
    const c = makeChange(journal.blobs, shown, f.state, r.state, gap, r.bytes);
    if (c) changes.push(c);
    if (rel !== null) indexed.push({ path: rel, state: r.state, gap: r.gap });
  }
  const set = journal.sets.add({
    turn: pending.turn,
    agent: pending.agent ?? null,
    session: pending.session ?? null,
    source: { kind: 'tool', tool: pending.tool ?? 'tool', toolCallId: pending.id, ...(pending.pairedBy ? { pairedBy: pending.pairedBy } : {}) },
    files: changes,
  });
  syncIndex(ws, indexed);
  return set;
}
