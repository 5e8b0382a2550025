import { NotificationType, RequestType } from 'vscode-jsonrpc';
import type {
  ApplyResult,
  CaptureBeginResult,
  CaptureEndResult,
  ChangeSetDetail,
  ListResult,
  PreviewResult,
  Selector,
  TurnBeginResult,
  TurnEndResult,
} from './types.js';

/*
 * The sidecar's methods: one namespace a method, each with its literal `method` name, its typed
 * `type` (vscode-jsonrpc), its `direction`, and its params. Results are the shapes of
 * `types.ts`. Transport: LSP's base protocol over stdio (`takeback serve`), after LSP's
 * `initialize`. Errors are listed per method; their codes are in `errors.ts`.
 */

/** Who sends a message. */
export type Direction = 'clientToServer' | 'serverToClient';

// ---------------------------------------------------------------------------------------------
// Changes

/** Params of `changes/list`. */
export interface ChangesListParams {
  /** Only this turn (id `t3` or number `3`). */
  turn?: string;
  /** Every turn (not only the newest 20) and expired tombstones too. */
  all?: boolean;
  /** Only this agent's turns and sets (`claude-code`, `codex`, `gemini`, `cli`). */
  agent?: string;
}

/**
 * `changes/list`: the change sets of the workspace, newest first, with their turns.
 * Errors: `NotFound`, `InvalidId` (a bad `turn`), `InvalidParams`.
 */
export namespace ChangesListRequest {
  export const method = 'changes/list' as const;
  export const direction: Direction = 'clientToServer';
  export const type = new RequestType<ChangesListParams, ListResult, void>(method);
}

/** Params of `changes/show`. */
export interface ChangesShowParams {
  /** The change set id (a decimal string). */
  id: string;
}

/**
 * `changes/show`: one change set in full, with each file's states before and after and the set's
 * history. Errors: `InvalidId`, `NotFound`, `Expired`, `InvalidParams`.
 */
export namespace ChangesShowRequest {
  export const method = 'changes/show' as const;
  export const direction: Direction = 'clientToServer';
  export const type = new RequestType<ChangesShowParams, ChangeSetDetail, void>(method);
}

/** Why the journal changed. */
export type ChangeReason = 'recorded' | 'undone' | 'redone' | 'external';

/** Params of `changes/didChange`. */
export interface ChangesDidChangeParams {
  /**
   * `recorded`: a capture or turn through this server recorded something; `undone`/`redone`: a
   * step through this server was recorded; `external`: another process (an agent's hook, the
   * command line) changed the journal.
   */
  reason: ChangeReason;
}

/**
 * `changes/didChange` (server → client): the journal changed, whichever process changed it.
 * Clients refresh what they show (lists, signs, lenses). The server also sends
 * `workspace/codeLens/refresh` when the client supports it.
 */
export namespace ChangesDidChangeNotification {
  export const method = 'changes/didChange' as const;
  export const direction: Direction = 'serverToClient';
  export const type = new NotificationType<ChangesDidChangeParams>(method);
}

// ---------------------------------------------------------------------------------------------
// Undo and redo

/** Params of `undo/preview`. */
export interface UndoPreviewParams {
  selector: Selector;
  /** Default `undo`. */
  direction?: 'undo' | 'redo';
}

/**
 * `undo/preview`: what an undo (or redo) would do, from what is there now, writing nothing. What
 * is "there now" includes the client's open documents: unsaved text counts, and a document whose
 * text differs from the disk makes its path an `unsaved-in-editor` conflict.
 * Errors: `InvalidParams` (no selector, or several kinds), `InvalidId`, `NotFound`, `Expired`,
 * `OutsideWorkspace`.
 */
export namespace UndoPreviewRequest {
  export const method = 'undo/preview' as const;
  export const direction: Direction = 'clientToServer';
  export const type = new RequestType<UndoPreviewParams, PreviewResult, void>(method);
}

/** Params of `undo/apply`. */
export interface UndoApplyParams {
  selector: Selector;
  /** Default `undo`. */
  direction?: 'undo' | 'redo';
  /** Replace later changes (on disk or unsaved in the editor) to the same files. */
  force?: boolean;
}

/**
 * `undo/apply`: undo (or redo) the selected sets as one step. Conflicts without `force` are not
 * an error: the result has `written: false` and `conflicts`. When the client advertised
 * `workspace.applyEdit`, text files go through `workspace/applyEdit` (`applied[].via: 'editor'`)
 * and the rest is written by the server (`via: 'disk'`); the result then says what is `pending`
 * (in the editor, not yet saved) and what `failed`. Errors: `InvalidParams`, `InvalidId`,
 * `NotFound`, `Expired`, `OutsideWorkspace`, `CaptureGap`, `Busy`.
 */
export namespace UndoApplyRequest {
  export const method = 'undo/apply' as const;
  export const direction: Direction = 'clientToServer';
  export const type = new RequestType<UndoApplyParams, ApplyResult, void>(method);
}

// ---------------------------------------------------------------------------------------------
// Capture (agents and scripts)

/** Params of `capture/begin`. */
export interface CaptureBeginParams {
  /** The tool call's id, `^[A-Za-z0-9_-]{1,64}$`; `capture/end` takes the same. */
  id: string;
  /** A file tool: the paths it will change (absolute, or relative to `cwd`). Absent or empty: a command. */
  paths?: string[];
  /** The folder relative paths are resolved against (default: the workspace root). */
  cwd?: string;
  /** The turn (default: the session's open turn, else the newest open turn, else none). */
  turn?: string;
  /** The tool's name (`Write`, `Bash`). */
  tool?: string;
  /** The command line (for a command). */
  command?: string;
  /** The agent's session id. */
  session?: string;
  /** The agent (`claude-code`, `codex`, `gemini`); default: the turn's. */
  agent?: string;
}

/**
 * `capture/begin`: a tool call is about to run. With `paths`, their current states are kept;
 * without, the workspace snapshot is brought up to date (the first time, a full scan).
 * Errors: `InvalidId`, `NotFound` (a bad `turn`), `InvalidParams`.
 */
export namespace CaptureBeginRequest {
  export const method = 'capture/begin' as const;
  export const direction: Direction = 'clientToServer';
  export const type = new RequestType<CaptureBeginParams, CaptureBeginResult, void>(method);
}

/** Params of `capture/end`. */
export interface CaptureEndParams {
  /** The id given to `capture/begin`. */
  id: string;
}

/**
 * `capture/end`: the tool call is over: compare and record its change set (then
 * `changes/didChange` with reason `recorded`). Errors: `InvalidId`, `NotFound` (no such capture).
 */
export namespace CaptureEndRequest {
  export const method = 'capture/end' as const;
  export const direction: Direction = 'clientToServer';
  export const type = new RequestType<CaptureEndParams, CaptureEndResult, void>(method);
}

/** Params of `turn/begin`. */
export interface TurnBeginParams {
  /** The turn id (default `t<number>`). */
  id?: string;
  /** A label: the first line of the prompt. */
  label?: string;
  /** The agent (`claude-code`). */
  agent?: string;
  /** The agent's session id; the session's previous turn, if still open, is ended first. */
  session?: string;
  /** The agent's own id for the turn (Codex's `turn_id`); `turn/end` can name the turn by it. */
  agentTurn?: string;
}

/** `turn/begin`: a prompt was submitted. Errors: `InvalidId`, `InvalidParams`. */
export namespace TurnBeginRequest {
  export const method = 'turn/begin' as const;
  export const direction: Direction = 'clientToServer';
  export const type = new RequestType<TurnBeginParams, TurnBeginResult, void>(method);
}

/** Params of `turn/end`. */
export interface TurnEndParams {
  /** The turn (default: the session's open turn, else the newest open turn). */
  id?: string;
  /** The agent's session id. */
  session?: string;
  /** The agent's own id for the turn, as given to `turn/begin` (Codex's `turn_id`). */
  agentTurn?: string;
}

/**
 * `turn/end`: the agent stopped. What changed during the turn that no tool call claimed is
 * recorded as its own set. Errors: `InvalidId`, `NotFound` (no such turn, or none open).
 */
export namespace TurnEndRequest {
  export const method = 'turn/end' as const;
  export const direction: Direction = 'clientToServer';
  export const type = new RequestType<TurnEndParams, TurnEndResult, void>(method);
}

/** Every custom method of the protocol, by name. */
export const Methods = {
  [ChangesListRequest.method]: ChangesListRequest,
  [ChangesShowRequest.method]: ChangesShowRequest,
  [UndoPreviewRequest.method]: UndoPreviewRequest,
  [UndoApplyRequest.method]: UndoApplyRequest,
  [CaptureBeginRequest.method]: CaptureBeginRequest,
  [CaptureEndRequest.method]: CaptureEndRequest,
  [TurnBeginRequest.method]: TurnBeginRequest,
  [TurnEndRequest.method]: TurnEndRequest,
  [ChangesDidChangeNotification.method]: ChangesDidChangeNotification,
} as const;

export type MethodName = keyof typeof Methods;
