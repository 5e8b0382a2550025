import * as v from 'valibot';
import { NotificationType, RequestType } from 'vscode-jsonrpc';
import { maybe, Selector, StepDirection, StringList } from './selector.js';
import type { ApplyResult, CaptureBeginResult, CaptureEndResult, ChangeSetDetail, ListResult, PreviewResult, TurnBeginResult, TurnEndResult } from './types.js';

/*
 * The sidecar's methods: one namespace a method, each with its literal `method` name, its typed
 * `type` (vscode-jsonrpc), its `direction`, and the schema of its params (`params`, valibot),
 * from which the params' type is inferred: the sidecar checks what arrives with that schema and
 * answers `InvalidParams` naming the field. Results are the shapes of `types.ts`. Transport:
 * LSP's base protocol over stdio (`takeback serve`), after LSP's `initialize`. Errors are listed
 * per method; their codes are in `errors.ts`.
 */

/** Who sends a message. */
export type Direction = 'clientToServer' | 'serverToClient';

// ---------------------------------------------------------------------------------------------
// Changes

/** Params of `changes/list`. */
export const ChangesListParams = v.object({
  /** Only this turn (id `t3` or number `3`). */
  turn: maybe(v.string()),
  /** Every turn (not only the newest 20) and expired tombstones too. */
  all: maybe(v.boolean()),
  /** Only this agent's turns and sets (`claude-code`, `codex`, `gemini`, `cli`). */
  agent: maybe(v.string()),
  /**
   * A path (workspace-relative, or absolute inside the workspace): every listed set's summary of
   * this file carries its `hunks`, placed in the file as it is now (the client's document when it
   * is open). Only this file is read, with the kept copies of the sets that touch it; without it
   * no file is read. A path outside the workspace is `OutsideWorkspace`.
   */
  hunks: maybe(v.string()),
});
export type ChangesListParams = v.InferInput<typeof ChangesListParams>;

/**
 * `changes/list`: the change sets of the workspace, newest first, with their turns; with `hunks`,
 * the hunks of that file in each set. Errors: `NotFound`, `InvalidId` (a bad `turn`),
 * `InvalidParams`, `OutsideWorkspace`.
 */
export namespace ChangesListRequest {
  export const method = 'changes/list' as const;
  export const direction: Direction = 'clientToServer';
  /** The params' schema (absent or null params are `{}`). */
  export const params = v.optional(v.nullable(ChangesListParams, {}), {});
  export const type = new RequestType<ChangesListParams, ListResult, void>(method);
}

/** Params of `changes/show`. */
export const ChangesShowParams = v.object({
  /** The change set id (a decimal string). */
  id: v.string(),
});
export type ChangesShowParams = v.InferInput<typeof ChangesShowParams>;

/**
 * `changes/show`: one change set in full, with each file's states before and after and the set's
 * history. Errors: `InvalidId`, `NotFound`, `Expired`, `InvalidParams`.
 */
export namespace ChangesShowRequest {
  export const method = 'changes/show' as const;
  export const direction: Direction = 'clientToServer';
  /** The params' schema. */
  export const params = ChangesShowParams;
  export const type = new RequestType<ChangesShowParams, ChangeSetDetail, void>(method);
}

/** Why the journal changed. */
export const ChangeReason = v.picklist(['recorded', 'undone', 'redone', 'external']);
export type ChangeReason = v.InferOutput<typeof ChangeReason>;

/** Params of `changes/didChange`. */
export const ChangesDidChangeParams = v.object({
  /**
   * `recorded`: a capture or turn through this server recorded something; `undone`/`redone`: a
   * step through this server was recorded; `external`: another process (an agent's hook, the
   * command line) changed the journal.
   */
  reason: ChangeReason,
});
export type ChangesDidChangeParams = v.InferInput<typeof ChangesDidChangeParams>;

/**
 * `changes/didChange` (server → client): the journal changed, whichever process changed it.
 * Clients refresh what they show (lists, signs, lenses). The server also sends
 * `workspace/codeLens/refresh` when the client supports it.
 */
export namespace ChangesDidChangeNotification {
  export const method = 'changes/didChange' as const;
  export const direction: Direction = 'serverToClient';
  /** The params' schema. */
  export const params = ChangesDidChangeParams;
  export const type = new NotificationType<ChangesDidChangeParams>(method);
}

// ---------------------------------------------------------------------------------------------
// Undo and redo

/** Params of `undo/preview`. */
export const UndoPreviewParams = v.object({
  selector: Selector,
  /** Default `undo`. */
  direction: maybe(StepDirection),
});
export type UndoPreviewParams = v.InferInput<typeof UndoPreviewParams>;

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
  /** The params' schema. */
  export const params = UndoPreviewParams;
  export const type = new RequestType<UndoPreviewParams, PreviewResult, void>(method);
}

/** Params of `undo/apply`. */
export const UndoApplyParams = v.object({
  selector: Selector,
  /** Default `undo`. */
  direction: maybe(StepDirection),
  /** Replace later changes (on disk or unsaved in the editor) to the same files. */
  force: maybe(v.boolean()),
});
export type UndoApplyParams = v.InferInput<typeof UndoApplyParams>;

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
  /** The params' schema. */
  export const params = UndoApplyParams;
  export const type = new RequestType<UndoApplyParams, ApplyResult, void>(method);
}

// ---------------------------------------------------------------------------------------------
// Capture (agents and scripts)

/** Params of `capture/begin`. */
export const CaptureBeginParams = v.object({
  /** The tool call's id, `^[A-Za-z0-9_-]{1,64}$`; `capture/end` takes the same. */
  id: v.string(),
  /** A file tool: the paths it will change (absolute, or relative to `cwd`). Absent or empty: a command. */
  paths: maybe(StringList),
  /** The folder relative paths are resolved against (default: the workspace root). */
  cwd: maybe(v.string()),
  /** The turn (default: the session's open turn, else the newest open turn, else none). */
  turn: maybe(v.string()),
  /** The tool's name (`Write`, `Bash`). */
  tool: maybe(v.string()),
  /** The command line (for a command). */
  command: maybe(v.string()),
  /** The agent's session id. */
  session: maybe(v.string()),
  /** The agent (`claude-code`, `codex`, `gemini`); default: the turn's. */
  agent: maybe(v.string()),
});
export type CaptureBeginParams = v.InferInput<typeof CaptureBeginParams>;

/**
 * `capture/begin`: a tool call is about to run. With `paths`, their current states are kept;
 * without, the workspace snapshot is brought up to date (the first time, a full scan).
 * Errors: `InvalidId`, `NotFound` (a bad `turn`), `InvalidParams`.
 */
export namespace CaptureBeginRequest {
  export const method = 'capture/begin' as const;
  export const direction: Direction = 'clientToServer';
  /** The params' schema. */
  export const params = CaptureBeginParams;
  export const type = new RequestType<CaptureBeginParams, CaptureBeginResult, void>(method);
}

/** Params of `capture/end`. */
export const CaptureEndParams = v.object({
  /** The id given to `capture/begin`. */
  id: v.string(),
});
export type CaptureEndParams = v.InferInput<typeof CaptureEndParams>;

/**
 * `capture/end`: the tool call is over: compare and record its change set (then
 * `changes/didChange` with reason `recorded`). Errors: `InvalidId`, `NotFound` (no such capture).
 */
export namespace CaptureEndRequest {
  export const method = 'capture/end' as const;
  export const direction: Direction = 'clientToServer';
  /** The params' schema. */
  export const params = CaptureEndParams;
  export const type = new RequestType<CaptureEndParams, CaptureEndResult, void>(method);
}

/** Params of `turn/begin`. */
export const TurnBeginParams = v.object({
  /** The turn id (default `t<number>`). */
  id: maybe(v.string()),
  /** A label: the first line of the prompt. */
  label: maybe(v.string()),
  /** The agent (`claude-code`). */
  agent: maybe(v.string()),
  /** The agent's session id; the session's previous turn, if still open, is ended first. */
  session: maybe(v.string()),
  /** The agent's own id for the turn (Codex's `turn_id`); `turn/end` can name the turn by it. */
  agentTurn: maybe(v.string()),
});
export type TurnBeginParams = v.InferInput<typeof TurnBeginParams>;

/** `turn/begin`: a prompt was submitted. Errors: `InvalidId`, `InvalidParams`. */
export namespace TurnBeginRequest {
  export const method = 'turn/begin' as const;
  export const direction: Direction = 'clientToServer';
  /** The params' schema (absent or null params are `{}`). */
  export const params = v.optional(v.nullable(TurnBeginParams, {}), {});
  export const type = new RequestType<TurnBeginParams, TurnBeginResult, void>(method);
}

/** Params of `turn/end`. */
export const TurnEndParams = v.object({
  /** The turn (default: the session's open turn, else the newest open turn). */
  id: maybe(v.string()),
  /** The agent's session id. */
  session: maybe(v.string()),
  /** The agent's own id for the turn, as given to `turn/begin` (Codex's `turn_id`). */
  agentTurn: maybe(v.string()),
});
export type TurnEndParams = v.InferInput<typeof TurnEndParams>;

/**
 * `turn/end`: the agent stopped. What changed during the turn that no tool call claimed is
 * recorded as its own set. Errors: `InvalidId`, `NotFound` (no such turn, or none open).
 */
export namespace TurnEndRequest {
  export const method = 'turn/end' as const;
  export const direction: Direction = 'clientToServer';
  /** The params' schema (absent or null params are `{}`). */
  export const params = v.optional(v.nullable(TurnEndParams, {}), {});
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
