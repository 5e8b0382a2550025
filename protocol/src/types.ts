/**
 * The JSON shapes takeback puts on the wire: the results of the sidecar's methods and the
 * `--json` output of the command line are the same objects. This file holds no code of the
 * server; the server converts its own model to these shapes.
 *
 * Units: times are milliseconds since the Unix epoch; sizes are bytes; `mode` is the permission
 * bits as a number (`0o644` is 420); paths are workspace-relative with `/` separators, or
 * absolute for a path outside the workspace.
 */

/** A file's type as takeback keeps it. */
export type FileType = 'file' | 'symlink' | 'dir';

/**
 * One path's state at one moment. `exists: false` alone means nothing was there. For a file,
 * `sha256` is null when its bytes were not kept (see {@link GapReason}).
 */
export interface FileState {
  exists: boolean;
  type?: FileType;
  /** Hex SHA-256 of the bytes (files only); null when not kept. */
  sha256?: string | null;
  /** Bytes (files only). */
  size?: number;
  /** Permission bits. */
  mode?: number;
  /** Raw link text (links only; never followed). */
  target?: string;
}

/**
 * Why something was not kept or cannot be written back:
 * `too-large` (over the size limit, 5 MB by default), `secret` (keys, `.ssh`, `.gnupg`,
 * credential stores), `symlink-target` (content behind a link), `excluded` (not scanned),
 * `outside-workspace` (never written), `workspace-too-large` (commands not captured),
 * `unreadable` (a file that could not be read, a folder that could not be listed), `not-kept` (the
 * journal could not take it when it changed: a full disk, a lock held too long), `name-not-utf8`
 * (a name that is not valid UTF-8: never captured; its path shows U+FFFD for the bytes it cannot
 * spell), `baseline-incomplete` (the workspace's first copy was still being made in the background
 * and had not kept this file's bytes yet when it changed: the change is named, its "before" not kept).
 */
export type GapReason = 'too-large' | 'secret' | 'symlink-target' | 'excluded' | 'outside-workspace' | 'workspace-too-large' | 'unreadable' | 'not-kept' | 'name-not-utf8' | 'baseline-incomplete';

/** A capture gap: a path, the reason, and a sentence for people. */
export interface CaptureGap {
  path: string;
  reason: GapReason;
  detail: string;
}

/** How a path changed: `created`, `modified`, `deleted`, `mode` (permission bits only) or `type` (e.g. a link became a file). */
export type ChangeStatus = 'created' | 'modified' | 'deleted' | 'mode' | 'type';

/**
 * What produced a change set: a file tool call, a command (maybe run by a tool call), or the turn
 * itself ("changed during this turn").
 *
 * `replaced`: what a forced undo or redo (`sets`, the sets it moved) wrote over — the later
 * changes it replaced, kept as a set of their own that is already taken back (state `undone`):
 * the redo of that undo gives them back with the step (this set applied with it), and `--last`
 * never names it.
 *
 * `person`: a save the person made in an editor connected to the sidecar (`editor`: its name for
 * people, `Neovim`, `Helix`), recorded as theirs and outside any turn, so that no turn's undo
 * takes it.
 *
 * `pairedBy: 'order'` is set when the agent gave no tool call id (Gemini CLI) and the end of the
 * call was matched with its beginning by order within the session (same tool and input first,
 * then the oldest still open); absent when the agent's own id paired them.
 */
export type ChangeSource =
  | { kind: 'tool'; tool: string; toolCallId: string; pairedBy?: 'order' }
  | { kind: 'command'; command: string; tool?: string; toolCallId?: string; pairedBy?: 'order' }
  | { kind: 'turn' }
  | { kind: 'replaced'; direction: 'undo' | 'redo'; sets: string[] }
  | { kind: 'person'; editor: string };

/**
 * `applied`: in place; `undone`: taken back (can be redone); `partial`: some of its files, or
 * some hunks of a file (`lines` in the selector), were undone on their own; `expired`: a
 * tombstone, its copies are gone.
 */
export type SetState = 'applied' | 'undone' | 'partial' | 'expired';

/** A change's state at one path by what the disk holds (see {@link FileSummary.state}). */
export type FileChangeState = 'applied' | 'partial' | 'undone' | 'overwritten';

/** One path of a change set, as `changes/list` and `takeback list --json` give it. */
export interface FileSummary {
  path: string;
  status: ChangeStatus;
  /** Lines added (0 for binary files and gaps, and for either path of a rename). */
  added: number;
  /** Lines removed (0 for either path of a rename). */
  removed: number;
  /**
   * On a path the change created with the same bytes and mode as a path it deleted (a `mv`): that
   * old path. The set's `added`/`removed` count the rename as no lines. Absent otherwise.
   */
  renamedFrom?: string;
  /** On the deleted path of such a rename: the new path. Absent otherwise. */
  renamedTo?: string;
  /** False when a capture gap keeps this path from being undone. */
  undoable: boolean;
  gap: GapReason | null;
  /** True when this path's change is undone (`state` is `undone`). */
  undone: boolean;
  /** True when only some hunks of this path's change are undone (the others in place); absent otherwise. */
  partial?: boolean;
  /**
   * This path's change as the disk has it: `applied` (what it left is there, or a later change
   * over it), `partial` (some of its hunks taken back, the others in place: `partial` is true),
   * `undone` (taken back, by takeback or by hand), `overwritten` (no longer in place: written
   * over since). An editor's own undo and a save that give the agent's bytes back make it
   * `applied` again.
   */
  state: FileChangeState;
  /** What the path is (after the change, or before it when deleted). */
  type: FileType;
  /**
   * The change's hunks of this path, only for the path `changes/list` names in `hunks` (or
   * `takeback list --hunks PATH`), and only when both sides are text; absent otherwise.
   */
  hunks?: FileHunk[];
}

/**
 * A run of lines: the first (1-based) and how many. `lines: 0` is a place with no line of its
 * own, just before line `start` (where lines go in, or where they were taken out).
 */
export interface LineSpan {
  start: number;
  lines: number;
}

/**
 * One hunk of a change to a file: a hunk of the change's own unified diff (3 lines of context,
 * as `diff` shows), by its changed lines without the context.
 */
export interface FileHunk {
  /** Its lines in the file as the change found it. */
  before: LineSpan;
  /** Its lines in the file as the change left it. */
  after: LineSpan;
  /**
   * Its lines in the file as it is now (the client's document when it is open): the lines of
   * `after` still there, moved by the later edits above them; null when none is (changed since,
   * or taken back). A hunk that only took lines out has its place (`lines: 0`) while the lines on
   * both sides of it are still next to each other.
   */
  now: LineSpan | null;
}

/** One change set in a listing. */
export interface ChangeSetSummary {
  /** A decimal number, unique in the workspace's journal. */
  id: string;
  turn: string | null;
  /** The agent whose tool call or turn made it (`claude-code`, `codex`, `gemini`, `cli`), or null when unknown. */
  agent: string | null;
  /** The agent's session id, or null. */
  session: string | null;
  source: ChangeSource;
  /** One line for people: `Edit src/a.ts`, `Bash: sed -i …`, `changed during this turn`. */
  label: string;
  state: SetState;
  /** When it was recorded (ms). */
  time: number;
  added: number;
  removed: number;
  files: FileSummary[];
}

/** A turn: one prompt of an agent and everything it did until it stopped. Times in ms. */
export interface TurnSummary {
  /** `t<seq>` unless the caller named it. */
  id: string;
  /** 1, 2, 3… in the order turns began in this workspace. */
  seq: number;
  /** The agent: `claude-code`, `codex`, `gemini`, `cli` (the command line), or another name a script gave; null when unknown. */
  agent: string | null;
  /** The agent's session id, when known. */
  session: string | null;
  /** The agent's own id for this turn (Codex's `turn_id`, Claude Code's `prompt_id`), when it gives one. */
  agentTurn: string | null;
  /** The first line of the prompt, shortened. */
  label: string | null;
  start: number;
  /** Null while the turn is open. */
  end: number | null;
  /**
   * True when the turn's end was never heard (the agent killed, its stop event lost) and takeback
   * closed it at a later start: `end` is then the time of its last event, and nothing seen after
   * it was taken for the turn's.
   */
  endLost: boolean;
}

/** Whether commands are captured in this workspace, and if not, why. */
export interface CaptureStatus {
  /** False when the workspace is over the scan limits: file tools only. */
  commands: boolean;
  reason: string | null;
  /**
   * The baseline copy of a workspace past `maxWorkspaceFiles` (outside git), which the capture
   * daemon or the sidecar makes in the background: the files whose bytes are kept so far (`kept`)
   * of the files the snapshot holds (`files`, links included); null once every file is kept, or
   * before there is a snapshot. Until it is complete, a command's change to a file not yet kept is
   * a `baseline-incomplete` gap.
   */
  baseline: { kept: number; files: number } | null;
}

/** The result of `changes/list` and `takeback list --json`. Sets and turns newest first. */
export interface ListResult {
  workspace: string;
  capture: CaptureStatus;
  turns: TurnSummary[];
  sets: ChangeSetSummary[];
  /** Older turns left out (only the newest 20 are listed unless `all` is asked for); 0 when none. */
  omittedTurns: number;
}

/** One path of a change set in full: its states before and after. */
export interface FileDetail extends FileSummary {
  before: FileState;
  after: FileState;
}

/** One entry of a set's history. */
export interface HistoryEntry {
  action: 'applied' | 'undone' | 'redone';
  time: number;
  /** True when later changes were replaced. */
  forced?: boolean;
  /** The paths concerned, when not the whole set. */
  paths?: string[];
}

/** The result of `changes/show` and `takeback show ID --json`. */
export interface ChangeSetDetail extends Omit<ChangeSetSummary, 'files'> {
  files: FileDetail[];
  history: HistoryEntry[];
}

/**
 * What an undo or redo does to a path, from what is there now: `put-back` (write the kept
 * bytes), `remove` (the agent created it), `bring-back` (the agent deleted it), `restore-mode`,
 * `restore-link`, or `none` (already in place).
 */
export type Action = 'put-back' | 'remove' | 'bring-back' | 'restore-mode' | 'restore-link' | 'none';

/**
 * Why a path would replace later work: `changed-since` (its bytes, mode or type differ from what
 * the change left), `interleaved` (another change still in place touched it in between),
 * `unsaved-in-editor` (an editor buffer holds unsaved text for it).
 */
export interface Conflict {
  reason: 'changed-since' | 'interleaved' | 'unsaved-in-editor';
  /**
   * For people: what differs and who changed it since — a later recorded change
   * (`changed since by #5 (prettier --write ., turn 3): …`), the person's editor (`unsaved in
   * Neovim`, a save recorded as `saved in Helix`), or `outside takeback`.
   */
  detail: string;
  /** `interleaved`: the sets in between; `changed-since`: the later changes still in place that touched the path, oldest first. */
  sets?: string[];
  /**
   * `changed-since` in an undo with later changes in `sets`: the set ids, ascending, of the one
   * undo that takes those back too (every set the step selected, not only those on this path,
   * and `sets`). A client words it as its own
   * command (`takeback undo 2 5`, `:Takeback undo 2 5`); `detail` does not say it. Absent otherwise.
   */
  combined?: string[];
}

/** One path of a preview. */
export interface PreviewFile {
  path: string;
  action: Action;
  conflict: Conflict | null;
  /** Unified diff (3 lines of context) from now to after the step; null when there is nothing to show. */
  diff: string | null;
  /** Said instead of a diff: `binary files differ`, `too large to show a diff`, `mode 0755 → 0644`. */
  note: string | null;
  gap: CaptureGap | null;
  /** The change sets that touched this path. */
  sets: string[];
  /**
   * True when the step writes a three-way merge: the change taken back (redo: made again) while
   * the later edits to the file, which do not overlap it, are kept ("put back, keeping later
   * changes"); `diff` then goes from the file now to the merged text. Absent otherwise.
   */
  merged?: boolean;
  /**
   * With the selector narrowed to files (`paths`): the selected changes' hunks of this path still
   * in the file, so that an editor can place them. Absent otherwise, and for a path that is not
   * text (binary, a link, created or deleted by the change).
   */
  hunks?: Hunk[];
}

/**
 * One hunk of a change in a file as it is now: a hunk of the change's unified diff (3 lines of
 * context, as `diff` shows), placed by its changed lines through any later edits.
 */
export interface Hunk {
  /** The change set it is of. */
  set: string;
  /** Its first changed line in the file now (1-based). */
  start: number;
  /** Its last changed line; `end < start` when it has none there (lines the step puts in just before `start`). */
  end: number;
  /** How many changed lines it has there (`end - start + 1`; 0: none, lines go in just before `start`). */
  lines: number;
  /** Its changed lines in the file as the change found it. */
  before: LineSpan;
  /** Its changed lines in the file as the change left it. */
  after: LineSpan;
  /** True when the step moves it: every hunk without `lines`, those touching the lines with. */
  taken: boolean;
}

/** The result of `undo/preview` and `takeback preview --json`. Writes nothing. */
export interface PreviewResult {
  direction: 'undo' | 'redo';
  /** The sets the step would move, in walk order. */
  sets: string[];
  /** Selected sets already in the wanted state. */
  skipped: { id: string; reason: string }[];
  files: PreviewFile[];
  /** How many files conflict. */
  conflicts: number;
  gaps: CaptureGap[];
}

/** A path an undo or redo wrote (or found already in place). */
export interface AppliedFile {
  path: string;
  action: Action;
  /** Where it landed: `disk`, or `editor` (text edits through an editor's buffer, saved or not yet). */
  via?: 'disk' | 'editor';
  /** True when what was written is a three-way merge that keeps later edits (see `PreviewFile.merged`). Absent otherwise. */
  merged?: boolean;
}

/** A path that conflicts. */
export interface ConflictFile {
  path: string;
  reason: Conflict['reason'];
  detail: string;
  /** As `Conflict.combined`: the ids of the one undo that takes the later changes back too. Absent when there is none. */
  combined?: string[];
}

/**
 * A path of an undo or redo that went through an editor and did not land: the editor answered
 * but its text (or the disk) does not hold what was sent. Nothing is recorded as undone while
 * any path failed.
 */
export interface FailedFile {
  path: string;
  /** A sentence for people: `the editor did not apply the edit`, `still on disk`, ... */
  reason: string;
}

/** The result of `undo/apply` and `takeback undo|redo --json`. */
export interface ApplyResult {
  direction: 'undo' | 'redo';
  /**
   * The sets the step moves. Empty when nothing was written. Through an editor they are recorded
   * as undone (redo: applied again) once every path is in place on disk: at once when `pending`
   * and `failed` are empty, else when the editor saves (see `pending`).
   */
  sets: string[];
  applied: AppliedFile[];
  /** Without `force`, any conflict means nothing was written. */
  conflicts: ConflictFile[];
  /** Paths of the selected sets the step could not take back (or apply again): left as they are. */
  gaps: CaptureGap[];
  skipped: { id: string; reason: string }[];
  written: boolean;
  forced: boolean;
  /**
   * False when capture gaps are left (`gaps` is not empty): the step did not give back everything
   * selected, however much it wrote, and a client says so rather than report success
   * (`takeback undo` exits 6). True otherwise.
   */
  complete: boolean;
  /** Things left as they were on purpose (a folder that is not empty). */
  notes: string[];
  /**
   * Only when the step went through an editor (`workspace/applyEdit`): paths whose new text is in
   * the editor's document but not yet on disk. The sets are recorded when the editor saves them
   * (then `changes/didChange` with reason `undone`/`redone` is sent). Absent or empty: nothing waits.
   */
  pending?: string[];
  /**
   * Only when the step went through an editor: paths that did not land. When not empty, nothing
   * is recorded as undone, the sidecar wrote nothing to disk, and edits that did land stay in the
   * editor's documents (the editor's own undo takes them back).
   */
  failed?: FailedFile[];
}

/**
 * How a command capture's scan went: `ok`; `baseline` (the first look at the workspace: nothing
 * to compare with yet); `too-large` (over the scan limits: commands are not captured, `reason`
 * says which limit).
 */
export interface CaptureScan {
  status: 'ok' | 'baseline' | 'too-large';
  reason?: string;
}

/** The result of `capture/begin` and `takeback capture begin --json`. */
export interface CaptureBeginResult {
  /** The capture id given. */
  id: string;
  /** `files` when paths were given (a file tool), else `command`. */
  kind: 'files' | 'command';
  /** The turn the capture belongs to, or null. */
  turn: string | null;
  /** For a command: how the scan went. */
  scan?: CaptureScan;
  /**
   * True when the journal could not take the event now (another process held its lock past about
   * a second, or its disk is full): it is queued beside the journal and folded in by the
   * next process that holds it (`turn` is then null: the turn is found then). Absent otherwise.
   */
  queued?: boolean;
}

/** The result of `capture/end` and `takeback capture end --json`. */
export interface CaptureEndResult {
  id: string;
  /** The set recorded, or null when nothing changed (or the end was queued: `queued`). */
  set: ChangeSetSummary | null;
  /** For a command: how the scan went. */
  scan?: CaptureScan;
  /** True when the end is queued, as `CaptureBeginResult.queued`: its set is recorded when it is folded in. */
  queued?: boolean;
}

/** The result of `turn/begin`. */
export interface TurnBeginResult {
  /** The turn begun; null when the begin was queued (`queued`): the turn is begun when it is folded in. */
  turn: TurnSummary | null;
  /** The set recorded for the session's previous turn when it was still open and is ended now ("changed during this turn"), else null. */
  closed: ChangeSetSummary | null;
  /**
   * True when the journal could not take the event now (another process held its lock past about
   * a second, or its disk is full): it is queued beside the journal and folded in, in order, by
   * the next process that holds it. Absent otherwise.
   */
  queued?: boolean;
}

/** The result of `turn/end`. */
export interface TurnEndResult {
  /** The id of the turn ended; when the end was queued, the id given, else null. */
  turn: string | null;
  /** What changed during the turn that no tool call claimed, as its own set; null when nothing (or the end was queued). */
  set: ChangeSetSummary | null;
  /** True when the end is queued, as `TurnBeginResult.queued`: its set is recorded when it is folded in. */
  queued?: boolean;
}
