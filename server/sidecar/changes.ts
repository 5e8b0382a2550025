import type { ChangesListParams, ChangesShowParams } from '../../protocol/src/methods.js';
import type * as W from '../../protocol/src/types.js';
import type * as v from 'valibot';
import { listChanges, showChange } from '../service/history.js';
import type { Session } from './session.js';

/* `changes/list` and `changes/show`: the journal read through the same service functions as `takeback list` and `show`. */

/** `changes/list`: the change sets of the workspace, newest first, with their turns. */
export function list(s: Session, p: v.InferOutput<typeof ChangesListParams>): W.ListResult {
  return listChanges(s.ws, p);
}

/** `changes/show`: one change set in full. Throws the engine's `invalid-id`, `not-found`, `expired`. */
export function show(s: Session, p: v.InferOutput<typeof ChangesShowParams>): W.ChangeSetDetail {
  return showChange(s.ws, p.id);
}
