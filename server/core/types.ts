/**
 * The domain model of takeback: what the journal records and what the planner works on.
 *
 * This module (and everything under `server/core/`) is free of JSON-RPC and of the command
 * line, and imports nothing of the protocol package (`protocol/`): `server/wire.ts` translates
 * these shapes to the wire's, and checks at compile time that the vocabularies both share (gap
 * reasons, statuses, sources, set states, actions, conflict reasons) stay equal.
 */

/** What a path is: a regular file, a symbolic link, or a folder. */
export type FileType = 'file' | 'symlink' | 'dir';

/**
 * Why a path's bytes were not kept, or why it cannot be written back:
 * - `too-large`: over the size limit (`maxFileBytes`, 5 MB by default);
 * - `secret`: a secret place or a file that holds a secret (keys, `.ssh`, credential stores);
 * - `symlink-target`: the content behind a link (links are kept as links, never followed);
 * - `excluded`: not scanned (ignored; a skipped folder whose entries were made, removed or renamed);
 * - `outside-workspace`: recorded, never written;
 * - `workspace-too-large`: over the scan limits, so commands are not captured;
 * - `unreadable`: the file could not be read, or the folder listed (what it held is not known);
 * - `not-kept`: the journal could not take it when it changed (its disk was full, its lock held
 *   too long): the change is named, its bytes were not kept;
 * - `name-not-utf8`: its name is not valid UTF-8 (its path shows U+FFFD for the bytes it cannot
 *   spell): the change is named, nothing is kept nor written there;
 * - `baseline-incomplete`: the workspace's baseline copy (made in the background by a long-lived
 *   process, past `maxWorkspaceFiles`) had not kept this file's bytes yet when it changed: the
 *   change is named, its "before" was not kept.
 */
export type GapReason = 'too-large' | 'secret' | 'symlink-target' | 'excluded' | 'outside-workspace' | 'workspace-too-large' | 'unreadable' | 'not-kept' | 'name-not-utf8' | 'baseline-incomplete';

/** A capture gap: the path, why, and a sentence for people. */
export interface CaptureGap {
  path: string;
  reason: GapReason;
  detail: string;
}

/** How `before` became `after`: `created`, `modified`, `deleted`, `mode` (permission bits only) or `type` (a link became a file, …). */
export type ChangeStatus = 'created' | 'modified' | 'deleted' | 'mode' | 'type';

/**
 * What produced a change set:
 * - `tool`: a file tool call (`Write`, `Edit`) with the agent's tool call id;
 * - `command`: a command (`Bash`, `takeback run`), maybe run by a tool call;
 * - `turn`: the turn itself, what changed during it that no tool call claimed;
 * - `replaced`: what a forced undo or redo (`sets`, the sets it moved) wrote over, kept as a set
 *   of its own that is already taken back, so that redoing the step and then this set gives the
 *   replaced changes back;
 * - `person`: a save the person made in an editor connected to the sidecar (`editor`: its name,
 *   `Neovim`, `Helix`), recorded as theirs, outside any turn: never the agent's, never taken by a
 *   turn's undo.
 *
 * `pairedBy: 'order'`: the agent gave no tool call id (Gemini CLI) and the call's end was paired
 * with its beginning by order within the session.
 */
export type ChangeSource =
  | { kind: 'tool'; tool: string; toolCallId: string; pairedBy?: 'order' }
  | { kind: 'command'; command: string; tool?: string; toolCallId?: string; pairedBy?: 'order' }
  | { kind: 'turn' }
  | { kind: 'replaced'; direction: 'undo' | 'redo'; sets: string[] }
  | { kind: 'person'; editor: string };

/** The kinds of {@link ChangeSource}. */
export type SourceKind = ChangeSource['kind'];

/**
 * A change set's state: `applied` (in place), `undone` (taken back; can be redone), `partial`
 * (some of its files undone on their own), `expired` (a tombstone: its copies are gone).
 */
export type SetState = 'applied' | 'undone' | 'partial' | 'expired';

/** One entry of a set's history: what happened to it, when (ms since the epoch). */
export interface HistoryEntry {
  action: 'applied' | 'undone' | 'redone';
  time: number;
  /** True when later changes were replaced. */
  forced?: boolean;
  /** The paths concerned, when not the whole set. */
  paths?: string[];
}

/**
 * Which change sets an undo, redo or preview is about: exactly one of `ids`, `turn`, `last`,
 * `afterTurn`; `paths` (workspace-relative) narrows any of them to those files.
 */
export interface Selector {
  /** Change set ids (decimal strings). */
  ids?: string[];
  /** Every set of a turn: its id (`t3`) or its number (`3`). */
  turn?: string;
  /** Undo: the newest set still applied. Redo: what the most recent undo step took back. */
  last?: boolean;
  /** Everything after a turn. */
  afterTurn?: string;
  /**
   * With `turn` or `afterTurn`: take a turn's edits that no tool call claimed too (its "changed
   * during this turn"), which are left as they are when the turn's agent reported its tool calls.
   */
  includeUnclaimed?: boolean;
  /** Only these files of the selected sets. */
  paths?: string[];
  /**
   * With exactly one path: only the hunks of the selected changes that touch these lines
   * (1-based, inclusive) of the file as it is now.
   */
  lines?: { start: number; end: number };
}

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
  /**
   * True when only some hunks of this path's change are undone (`undo --lines`): the change is
   * then both partly in place and partly undone, and an undo or a redo can take either part.
   */
  partial?: boolean;
  /**
   * For a change undone by a step that took only its last hunks (`undo --lines`), or left partly
   * undone by an undo of some of its hunks: that step's operation, whose inverse (what it found,
   * over what it wrote) is what a redo puts back (a redo narrowed to lines of a change partly
   * undone goes by the change itself).
   */
  undoneBy?: number;
  /** What the disk says of this path's change, when it was asked (see plan/in-step.ts); never stored. */
  state?: FileChangeState;
}

/**
 * A change's state at one path by what the disk holds: `applied` (what the change left, or a
 * later change over it), `partial` (some of its hunks taken back, the others in place),
 * `undone` (taken back), `overwritten` (no longer in place: written over since, by neither the
 * change nor its undo).
 */
export type FileChangeState = 'applied' | 'partial' | 'undone' | 'overwritten';

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

/** A turn: one prompt of an agent and everything it did until it stopped. Times in ms since the epoch. */
export interface Turn {
  /** `t<seq>` unless the caller named it. */
  id: string;
  /** 1, 2, 3… in the order turns began in this workspace. */
  seq: number;
  /** The agent (`claude-code`, `codex`, `gemini`, `cli`, or a script's name), or null when unknown. */
  agent: string | null;
  /** The agent's session id, or null. */
  session: string | null;
  /** The agent's own id for the turn (Codex's `turn_id`, Claude Code's `prompt_id`), or null. */
  agentTurn: string | null;
  /** The first line of the prompt, shortened. */
  label: string | null;
  start: number;
  /** Null while the turn is open. */
  end: number | null;
  /**
   * True when the turn's end was never heard (the agent killed, its stop event lost) and it was
   * closed at a later start: `end` is then the time of its last event, and nothing seen after it
   * was taken for the turn's.
   */
  endLost: boolean;
}

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
