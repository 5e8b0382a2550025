import type { ChangesListParams, ChangesShowParams } from '../../protocol/src/methods.js';
import type * as W from '../../protocol/src/types.js';
import type * as v from 'valibot';
import { TakebackError } from '../core/errors.js';
import { toWorkspacePath } from '../core/workspace.js';
import { listChanges, showChange } from '../service/history.js';
import { hunkInPlace } from '../service/in-place.js';
import { withHunks } from '../service/list-hunks.js';
import type { Session } from './session.js';

/* `changes/list` and `changes/show`: the journal read through the same service functions as `takeback list` and `show`. */

/**
 * `changes/list`: the change sets of the workspace, newest first, with their turns; with `hunks`
 * (a path), that file's hunks placed in its open document's text, or the disk's when it is not
 * open. Throws `outside-workspace` for a `hunks` path outside.
 */
export function list(s: Session, p: v.InferOutput<typeof ChangesListParams>): W.ListResult {
  const opts = { turn: p.turn, all: p.all, agent: p.agent, inPlace: hunkInPlace(s.ws) };
  if (p.hunks === undefined) return listChanges(s.ws, opts);
  const rel = p.hunks.includes('\0') ? null : toWorkspacePath(s.ws.root, p.hunks);
  if (rel === null) throw new TakebackError('outside-workspace', `changes/list: ${p.hunks} is outside the workspace ${s.ws.root}`, { path: p.hunks });
  return withHunks(s.ws, listChanges(s.ws, opts), rel, s.docs.bytesReader(s.ws));
}

/** `changes/show`: one change set in full. Throws the engine's `invalid-id`, `not-found`, `expired`. */
export function show(s: Session, p: v.InferOutput<typeof ChangesShowParams>): W.ChangeSetDetail {
  return showChange(s.ws, p.id, hunkInPlace(s.ws));
}
