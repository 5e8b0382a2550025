/**
 * The domain model of takeback: what the journal records and what the planner works on.
 *
 * This module (and everything under `server/core/`) is free of JSON-RPC and of the command
 * line; the protocol package (`protocol/`) and the CLI translate these shapes for the wire.
 */

/** The kind of a file system entry takeback keeps. */
export type FileType = 'file' | 'symlink' | 'dir';

/**
 * The state of one path at one moment.
 *
 * - `{ exists: false }`: nothing at the path.
 * - a regular file: `sha256` is the hex SHA-256 of its bytes, whose copy is in the blob store;
 *   `sha256` is `null` when the bytes were not kept (a capture gap: too large, a secret place).
 * - a symbolic link: kept as a link (`target` is the raw link text, never followed).
 * - a folder: only its mode.
 *
 * `mode` is the permission bits (`st_mode & 0o7777`); `size` is in bytes.
 */
export type FileState =
  | { exists: false }
  | { exists: true; type: 'file'; sha256: string | null; size: number; mode: number }
  | { exists: true; type: 'symlink'; target: string; mode: number }
  | { exists: true; type: 'dir'; mode: number };

/** The missing state, shared. */
export const ABSENT: FileState = Object.freeze({ exists: false }) as FileState;

/**
 * Why takeback could not keep something. A capture gap is named wherever it shows up
 * (list, preview, undo) and the change it touches is never undone blindly.
 *
 * - `too-large`: a file over the size limit (default 5 MB); its bytes are not kept.
 * - `secret`: a secret place (private keys, `.ssh`, `.gnupg`, credential stores).
 * - `symlink-target`: the content behind a symbolic link (the link itself is kept).
 * - `excluded`: a path the command scan skips (`.gitignore`, `.git`, `node_modules`, build output).
 * - `outside-workspace`: a path outside the workspace root; recorded, never written.
 * - `workspace-too-large`: the workspace is over the scan limits; commands are not captured.
 * - `unreadable`: the file could not be read (permissions, a special file).
 */
export type GapReason =
  | 'too-large'
  | 'secret'
  | 'symlink-target'
  | 'excluded'
  | 'outside-workspace'
  | 'workspace-too-large'
  | 'unreadable';

/** A capture gap with the path it concerns and a sentence for people. */
export interface CaptureGap {
  path: string;
  reason: GapReason;
  detail: string;
}

/** How a path changed in one change set. */
export type ChangeStatus = 'created' | 'modified' | 'deleted' | 'mode' | 'type';

/**
 * One path in a change set.
 *
 * `path` is workspace-relative with `/` separators, or absolute for a path outside the
 * workspace. `added`/`removed` count lines (0 for binary files and gaps).
 */
export interface FileChange {
  path: string;
  before: FileState;
  after: FileState;
  status: ChangeStatus;
  added: number;
  removed: number;
  /** Set when this change cannot be undone or redone; the reason is a capture gap. */
  gap?: GapReason;
  /** True when this path's change is undone (a whole set, or this file alone). */
  undone?: boolean;
}

/** What produced a change set. */
export type ChangeSource =
  | { kind: 'tool'; tool: string; toolCallId: string }
  | { kind: 'command'; command: string; toolCallId?: string; tool?: string }
  | { kind: 'turn' };

/**
 * Where a change set stands: in place, taken back, taken back for some of its files only
 * (`partial`: one file was undone on its own), or gone past its retention (`expired`).
 */
export type SetState = 'applied' | 'undone' | 'partial' | 'expired';

/** One entry of a set's history. `time` is ms since the epoch. */
export interface HistoryEntry {
  action: 'applied' | 'undone' | 'redone';
  time: number;
  /** True when later changes were replaced (`--force`). */
  forced?: boolean;
  /** The paths concerned, when not the whole set. */
  paths?: string[];
}

/**
 * A change set: everything one tool call, one command or one turn changed.
 * `id` is a decimal number, unique within the workspace's journal and never reused.
 */
export interface ChangeSet {
  id: string;
  turn: string | null;
  source: ChangeSource;
  /** When the change was recorded, ms since the epoch. */
  time: number;
  state: SetState;
  files: FileChange[];
  history: HistoryEntry[];
}

/** A turn: one prompt of an agent and everything it did until it stopped. Times in ms. */
export interface Turn {
  id: string;
  /** 1, 2, 3… in the order turns began in this workspace. */
  seq: number;
  agent: string | null;
  session: string | null;
  /** The first line of the prompt, shortened. */
  label: string | null;
  start: number;
  end: number | null;
}

/** Ids checked before anything touches the disk (Conch ADR 0030). */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** True when the state's bytes (or its absence, link, folder) are kept and can be written back. */
export function isKept(s: FileState): boolean {
  return !s.exists || s.type !== 'file' || s.sha256 !== null;
}

/** True when two states are the same for undo's purposes: type, bytes, mode, link text. */
export function sameState(a: FileState, b: FileState): boolean {
  if (!a.exists || !b.exists) return a.exists === b.exists;
  if (a.type !== b.type || a.mode !== b.mode) return false;
  if (a.type === 'file' && b.type === 'file') return a.sha256 === b.sha256 && a.size === b.size && a.sha256 !== null;
  if (a.type === 'symlink' && b.type === 'symlink') return a.target === b.target;
  return true;
}

/** How `before` became `after`: created, deleted, a type change, new content, or only a new mode. */
export function statusOf(before: FileState, after: FileState): ChangeStatus {
  if (!before.exists) return 'created';
  if (!after.exists) return 'deleted';
  if (before.type !== after.type) return 'type';
  if (before.type === 'file' && after.type === 'file') {
    if (before.sha256 === after.sha256 && before.sha256 !== null && before.size === after.size) return 'mode';
    return 'modified';
  }
  if (before.type === 'symlink' && after.type === 'symlink' && before.target !== after.target) return 'modified';
  return 'mode';
}
