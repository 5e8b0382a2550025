import type { ConflictFile } from './types.js';

/**
 * takeback's error codes. JSON-RPC reserves -32768..-32000 and LSP -32899..-32800, so these live
 * at 3001 and up. Every error is a JSON-RPC error `{ code, message, data }`: `message` is a
 * sentence for people, `data` has the shape named below (see {@link ErrorData}).
 */
export const ErrorCodes = {
  /**
   * A named change set, turn or capture does not exist, or there is nothing to act on
   * (`last` with nothing to undo). `data: { id? }`.
   */
  NotFound: 3001,
  /** A named change set has expired: its copies are gone, a tombstone remains. `data: { id }`. */
  Expired: 3002,
  /**
   * Later changes stand in the way (only from `workspace/executeCommand`: `undo/apply` answers
   * conflicts in its result instead). `data: { conflicts: ConflictFile[] }`.
   */
  Conflicts: 3003,
  /** An id that is not `^[A-Za-z0-9_-]{1,64}$` (checked before anything is read). `data: { id }`. */
  InvalidId: 3004,
  /** A path outside the workspace (or through a symbolic link out of it): never written. `data: { path }`. */
  OutsideWorkspace: 3005,
  /** A kept copy is missing or damaged: nothing was written. `data: { hash? , path? }`. */
  CaptureGap: 3006,
  /**
   * The step could not be carried out: a write failed (and what was written was put back), the
   * files moved while the editor was applying the edits, or another process held the journal's
   * lock past the server's wait (nothing written; the message names the holder). `data: { failures? }`.
   */
  Busy: 3007,
  /** Malformed params (JSON-RPC's own code). `data: { field? }`. */
  InvalidParams: -32602,
  /**
   * Not a request JSON-RPC allows (JSON-RPC's own code), answered with `id: null`: an id that is
   * an object, an array or a boolean, a message that is not one JSON object. Also a second
   * `initialize` on one connection (answered with its id).
   */
  InvalidRequest: -32600,
  /** A message body that is not JSON (JSON-RPC's own code), answered with `id: null`. */
  ParseError: -32700,
  /** A request before `initialize` (LSP's code). */
  ServerNotInitialized: -32002,
  /** A bug in the sidecar; the request failed, the server goes on (JSON-RPC's own code). */
  InternalError: -32603,
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** The `data` of each error code. */
export interface ErrorData {
  [ErrorCodes.NotFound]: { id?: string };
  [ErrorCodes.Expired]: { id: string };
  [ErrorCodes.Conflicts]: { conflicts: ConflictFile[] };
  [ErrorCodes.InvalidId]: { id: unknown };
  [ErrorCodes.OutsideWorkspace]: { path: string };
  [ErrorCodes.CaptureGap]: { hash?: string; path?: string };
  [ErrorCodes.Busy]: { failures?: string[] };
  [ErrorCodes.InvalidParams]: { field?: string };
  [ErrorCodes.InvalidRequest]: null;
  [ErrorCodes.ParseError]: null;
  [ErrorCodes.ServerNotInitialized]: null;
  [ErrorCodes.InternalError]: null;
}

/** The name of a code, for messages: `NotFound`. */
export function errorName(code: number): string | undefined {
  for (const [name, value] of Object.entries(ErrorCodes)) if (value === code) return name;
  return undefined;
}
