/**
 * Errors the engine raises on purpose. Each has a stable `code` that the CLI maps to an exit
 * code and the sidecar to a JSON-RPC error code; `data` carries what a client needs to act.
 */
export type ErrorCode =
  | 'not-found'
  | 'expired'
  | 'invalid-id'
  | 'conflicts'
  | 'outside-workspace'
  | 'capture-gap'
  | 'usage'
  | 'busy';

export class TakebackError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'TakebackError';
  }
}

/**
 * What a turn id or a capture id (a tool call's) may be: 1 to 64 of `A-Z a-z 0-9 _ -`, checked
 * before anything touches the disk. An agent's own id that does not fit is mapped to one that does.
 */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Throws `invalid-id` unless `id` matches {@link ID_PATTERN}. Called before any disk access. */
export function checkId(id: unknown, what = 'id'): string {
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    throw new TakebackError('invalid-id', `invalid ${what}: ${JSON.stringify(id)} (expected 1-64 of A-Z a-z 0-9 _ -)`, { id });
  }
  return id;
}
