import { ResponseError } from 'vscode-languageserver/node';
import { ErrorCodes } from '../../protocol/src/errors.js';
import { TakebackError, type ErrorCode } from '../core/errors.js';
import { holderText, liveHolder } from '../core/journal/holder.js';

/** The protocol's code for each of the engine's error codes. */
const CODES: Record<ErrorCode, number> = {
  'not-found': ErrorCodes.NotFound,
  expired: ErrorCodes.Expired,
  conflicts: ErrorCodes.Conflicts,
  'invalid-id': ErrorCodes.InvalidId,
  'outside-workspace': ErrorCodes.OutsideWorkspace,
  'capture-gap': ErrorCodes.CaptureGap,
  usage: ErrorCodes.InvalidParams,
  busy: ErrorCodes.Busy,
};

/** True when `e` is SQLite's refusal of a lock another process holds (past the busy timeout). */
export function isJournalBusy(e: unknown): boolean {
  const code = String((e as { code?: unknown } | null)?.code ?? '');
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

/**
 * The error an editor gets when another process held the journal's lock past the sidecar's wait
 * (`SIDECAR_BUSY_MS`): `Busy`, naming the holder from the journal's holder record in `journalDir`
 * (its pid, command, for how long, whether it is stopped). Nothing was written.
 */
export function journalBusyError(journalDir: string | null): ResponseError<{ failures?: string[] }> {
  const who = holderText(journalDir ? liveHolder(journalDir) : null);
  return new ResponseError(ErrorCodes.Busy, `takeback: the journal is locked by ${who}: nothing was done; try again once it lets go (takeback doctor names it)`, {});
}

/**
 * A JSON-RPC error for anything a handler threw: the engine's errors by their named code, a lock
 * held by another process as `Busy` naming its holder (`journalDir`: the journal's folder, when a
 * workspace is open), anything else as InternalError.
 */
export function toResponseError(e: unknown, journalDir: string | null = null): ResponseError<unknown> {
  if (e instanceof ResponseError) return e;
  if (isJournalBusy(e)) return journalBusyError(journalDir);
  if (e instanceof TakebackError) return new ResponseError(CODES[e.code], e.message, e.data ?? null);
  const message = e instanceof Error ? e.message : String(e);
  return new ResponseError(ErrorCodes.InternalError, `takeback: internal error: ${message}`, null);
}

/** Malformed params. */
export function invalidParams(method: string, message: string, field?: string): ResponseError<{ field?: string }> {
  return new ResponseError(ErrorCodes.InvalidParams, `${method}: ${message}`, field ? { field } : {});
}

/**
 * Wraps a request handler so that whatever it throws becomes a JSON-RPC error (a ResponseError,
 * which vscode-jsonrpc sends as the response) for that request alone, logged when it is a bug;
 * the server goes on. `journalDir`: the open workspace's journal folder (null before initialize),
 * whose holder record names the process a lock error waited for.
 */
export function guard<P, R>(log: (m: string) => void, fn: (params: P) => R | Promise<R>, journalDir: () => string | null = () => null): (params: P) => Promise<R> {
  return async (params: P) => {
    try {
      return await fn(params);
    } catch (e) {
      const err = toResponseError(e, journalDir());
      if (err.code === ErrorCodes.InternalError) log(`takeback: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      throw err;
    }
  };
}

/** Wraps a notification handler: a throw is logged, never raised. */
export function guardNote<P>(log: (m: string) => void, fn: (params: P) => void | Promise<void>): (params: P) => void {
  return (params: P) => {
    Promise.resolve()
      .then(() => fn(params))
      .catch((e: unknown) => log(`takeback: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
  };
}
