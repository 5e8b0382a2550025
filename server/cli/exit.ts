import type { ErrorCode } from '../core/errors.js';

/**
 * Exit codes (README.md): 0 done; 1 conflicts, nothing written; 2 usage error (bad arguments, a
 * malformed id, a path outside the workspace); 3 not found; 4 expired; 5 anything else; 6 an undo
 * or redo that left capture gaps (files it could not take back, each named): never success.
 */
export const EXIT: Record<ErrorCode | 'ok' | 'internal' | 'incomplete', number> = {
  ok: 0,
  conflicts: 1,
  usage: 2,
  'invalid-id': 2,
  'outside-workspace': 2,
  'not-found': 3,
  expired: 4,
  'capture-gap': 5,
  busy: 5,
  internal: 5,
  incomplete: 6,
};
