import type * as v from 'valibot';
import type { TurnBeginParams, TurnEndParams } from '../../protocol/src/methods.js';
import type * as W from '../../protocol/src/types.js';
import { turnBegin, turnEnd } from '../service/capture.js';
import type { Session } from './session.js';

/* `turn/begin` and `turn/end`: an agent's prompt and its stop; each tells the client the journal changed. */

/** `turn/begin`: a prompt was submitted (the session's previous turn, still open, is ended first). */
export function begin(s: Session, p: v.InferOutput<typeof TurnBeginParams>): W.TurnBeginResult {
  const r = turnBegin(s.ws, p);
  s.client.journalChanged('recorded');
  return r;
}

/** `turn/end`: the agent stopped; what changed during the turn that no tool call claimed is its own set. */
export function end(s: Session, p: v.InferOutput<typeof TurnEndParams>): W.TurnEndResult {
  const r = turnEnd(s.ws, p);
  s.client.journalChanged('recorded');
  return r;
}
