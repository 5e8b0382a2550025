import type * as v from 'valibot';
import type { TurnBeginParams, TurnEndParams } from '../../protocol/src/methods.js';
import type * as W from '../../protocol/src/types.js';
import { labelFromPrompt } from '../core/journal/turns.js';
import { checkId } from '../core/errors.js';
import { turnBegin, turnEnd } from '../service/capture.js';
import { recordOrQueue } from './capture.js';
import type { Session } from './session.js';

/*
 * `turn/begin` and `turn/end`: an agent's prompt and its stop; each tells the client the journal
 * changed. As for `capture/begin` (capture.ts), an agent's event is never lost to a stuck lock:
 * it waits about a second, as a hook does, and when the journal cannot take it then it is queued
 * in the spill, folded in by the next process that holds the journal, and answered `queued`.
 */

/** `turn/begin`: a prompt was submitted (the session's previous turn, still open, is ended first). */
export function begin(s: Session, p: v.InferOutput<typeof TurnBeginParams>): W.TurnBeginResult {
  if (p.id != null) checkId(p.id, 'turn id');
  const who = { agent: p.agent ?? null, session: p.session ?? null, agentTurn: p.agentTurn ?? null };
  const op = () => ({ op: 'turn-begin' as const, label: labelFromPrompt(p.label), ...(p.id != null ? { id: p.id } : {}), ...who });
  const queued: W.TurnBeginResult = { turn: null, closed: null, queued: true };
  return recordOrQueue(s, op, queued, () => {
    const r = turnBegin(s.ws, p);
    s.client.journalChanged('recorded');
    return r;
  });
}

/** `turn/end`: the agent stopped; what changed during the turn that no tool call claimed is its own set. */
export function end(s: Session, p: v.InferOutput<typeof TurnEndParams>): W.TurnEndResult {
  if (p.id != null) checkId(p.id, 'turn id');
  const who = { agent: null, session: p.session ?? null, agentTurn: p.agentTurn ?? null };
  const op = () => ({ op: 'turn-end' as const, ...(p.id != null ? { id: p.id } : {}), ...who });
  const queued: W.TurnEndResult = { turn: p.id ?? null, set: null, queued: true };
  return recordOrQueue(s, op, queued, () => {
    const r = turnEnd(s.ws, p);
    s.client.journalChanged('recorded');
    return r;
  });
}
