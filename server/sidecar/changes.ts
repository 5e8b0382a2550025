import type * as M from '../../protocol/src/methods.js';
import type * as W from '../../protocol/src/types.js';
import { captureBegin, captureEnd, turnBegin, turnEnd } from '../service/capture.js';
import { listChanges, showChange } from '../service/changes.js';
import { previewStep } from '../service/undo.js';
import { bool, direction, object, selector, str, strings } from './params.js';
import type { Session } from './session.js';
import { runStep } from './undo-through-editor.js';

/*
 * The protocol's own requests: params checked, then the same service functions the command line
 * calls. Reads see the editor's unsaved text; what records something tells the client.
 */

export function list(s: Session, params: unknown): W.ListResult {
  const o = object('changes/list', params, true);
  return listChanges(s.engine, { turn: str('changes/list', o, 'turn'), all: bool('changes/list', o, 'all'), agent: str('changes/list', o, 'agent') });
}

export function show(s: Session, params: unknown): W.ChangeSetDetail {
  const o = object('changes/show', params);
  return showChange(s.engine, str('changes/show', o, 'id', true));
}

export function preview(s: Session, params: unknown): W.PreviewResult {
  const m = 'undo/preview';
  const o = object(m, params);
  const sel = selector(m, s.engine, o.selector);
  return previewStep(s.engine, sel, direction(m, o), {
    state: s.docs.stateReader(s.engine),
    bytes: s.docs.bytesReader(s.engine),
    unsaved: (p, t) => s.docs.unsaved(p, t),
  });
}

export function apply(s: Session, params: unknown): Promise<W.ApplyResult> {
  const m = 'undo/apply';
  const o = object(m, params);
  const sel = selector(m, s.engine, o.selector);
  return runStep(s, { selector: sel, direction: direction(m, o), force: bool(m, o, 'force') ?? false, origin: 'request' });
}

export function beginCapture(s: Session, params: unknown): W.CaptureBeginResult {
  const m = 'capture/begin';
  const o = object(m, params);
  const p: M.CaptureBeginParams = {
    id: str(m, o, 'id', true),
    paths: strings(m, o, 'paths'),
    cwd: str(m, o, 'cwd'),
    turn: str(m, o, 'turn'),
    tool: str(m, o, 'tool'),
    command: str(m, o, 'command'),
    session: str(m, o, 'session'),
    agent: str(m, o, 'agent'),
  };
  const r = captureBegin(s.engine, { ...p, cwd: p.cwd ?? s.engine.root });
  return r;
}

export function endCapture(s: Session, params: unknown): W.CaptureEndResult {
  const m = 'capture/end';
  const o = object(m, params);
  const r = captureEnd(s.engine, { id: str(m, o, 'id', true) });
  if (r.set) s.client.journalChanged('recorded');
  return r;
}

export function beginTurn(s: Session, params: unknown): W.TurnBeginResult {
  const m = 'turn/begin';
  const o = object(m, params, true);
  const r = turnBegin(s.engine, {
    id: str(m, o, 'id'),
    label: str(m, o, 'label'),
    agent: str(m, o, 'agent'),
    session: str(m, o, 'session'),
    agentTurn: str(m, o, 'agentTurn'),
  });
  s.client.journalChanged('recorded');
  return r;
}

export function endTurn(s: Session, params: unknown): W.TurnEndResult {
  const m = 'turn/end';
  const o = object(m, params, true);
  const r = turnEnd(s.engine, { id: str(m, o, 'id'), session: str(m, o, 'session'), agentTurn: str(m, o, 'agentTurn') });
  s.client.journalChanged('recorded');
  return r;
}
