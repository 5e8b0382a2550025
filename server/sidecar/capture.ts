import type * as v from 'valibot';
import type { CaptureBeginParams, CaptureEndParams } from '../../protocol/src/methods.js';
import type * as W from '../../protocol/src/types.js';
import { captureBegin, captureEnd } from '../service/capture.js';
import type { Session } from './session.js';

/* `capture/begin` and `capture/end`: a tool call captured for an agent or a script, as `takeback capture` does. */

/** `capture/begin`: keeps the states of `paths` (a file tool), or brings the workspace snapshot up to date (a command). */
export function begin(s: Session, p: v.InferOutput<typeof CaptureBeginParams>): W.CaptureBeginResult {
  return captureBegin(s.ws, { ...p, cwd: p.cwd ?? s.ws.root });
}

/** `capture/end`: records the tool call's change set, and tells the client when there is one. */
export function end(s: Session, p: v.InferOutput<typeof CaptureEndParams>): W.CaptureEndResult {
  const r = captureEnd(s.ws, p);
  if (r.set) s.client.journalChanged('recorded');
  return r;
}
