/**
 * The domain model of takeback: what the journal records and what the planner works on.
 *
 * This module (and everything under `server/core/`) is free of JSON-RPC and of the command
 * line; the protocol package (`protocol/`) and the CLI translate these shapes for the wire.
 */

/*
 * The vocabulary shared with the wire (gap reasons, change statuses, sources, set states,
 * history entries) is defined once, in the protocol package, with its documentation; the
 * engine's own shapes (states, changes, sets) are stricter and live here. Type-only imports:
 * nothing of the protocol package runs in the engine.
 */
import type { CaptureGap, ChangeSource, ChangeStatus, FileType, GapReason, HistoryEntry, SetState, TurnSummary } from '../../protocol/src/types.js';

export type { CaptureGap, ChangeSource, ChangeStatus, FileType, GapReason, HistoryEntry, SetState };

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

/**
 * A change set: everything one tool call, one command or one turn changed.
 * `id` is a decimal number, unique within the workspace's journal and never reused.
 */
export interface ChangeSet {
  id: string;
  turn: string | null;
  /** The agent that made it (`claude-code`, `codex`, `gemini`, `cli`), or null when unknown. */
  agent: string | null;
  /** The agent's session id, or null. */
  session: string | null;
  source: ChangeSource;
  /** When the change was recorded, ms since the epoch. */
  time: number;
  state: SetState;
  files: FileChange[];
  history: HistoryEntry[];
}

/** A turn: one prompt of an agent and everything it did until it stopped (the wire's `TurnSummary`). */
export type Turn = TurnSummary;

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
