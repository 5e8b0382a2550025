import { ResponseError } from 'vscode-languageserver/node';
import { ErrorCodes } from '../../protocol/src/errors.js';
import { TakebackError, type ErrorCode } from '../core/errors.js';

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

/** A JSON-RPC error for anything a handler threw: the engine's errors by their named code, anything else as InternalError. */
export function toResponseError(e: unknown): ResponseError<unknown> {
  if (e instanceof ResponseError) return e;
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
 * the server goes on.
 */
export function guard<P, R>(log: (m: string) => void, fn: (params: P) => R | Promise<R>): (params: P) => Promise<R> {
  return async (params: P) => {
    try {
      return await fn(params);
    } catch (e) {
      const err = toResponseError(e);
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
