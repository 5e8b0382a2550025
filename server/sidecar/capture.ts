import type * as v from 'valibot';
import type { CaptureBeginParams, CaptureEndParams } from '../../protocol/src/methods.js';
import type * as W from '../../protocol/src/types.js';
import { keepFiles } from '../core/capture/files.js';
import { foldSpill, queueOps, unkeptCause, type QueuedOp } from '../core/capture/queued.js';
import { HOOK_BUSY_MS } from '../core/journal/journal.js';
import { hasQueued } from '../core/journal/spill.js';
import type { UnkeptCause } from '../core/journal/unkept.js';
import { captureBegin, captureEnd } from '../service/capture.js';
import type { Session } from './session.js';

/*
 * `capture/begin` and `capture/end`: a tool call captured for an agent or a script, as
 * `takeback capture` does. An agent's event is never lost to a stuck lock: it waits at most
 * {@link HOOK_BUSY_MS} for another process's lock, as a hook does (not the sidecar's longer wait
 * for the person's requests), and when the journal cannot take it (the lock still held, its disk
 * full) the event is queued in the spill as a hook's is, folded in by the next process that holds
 * the journal, and the answer says `queued`.
 */

/** `capture/begin`: keeps the states of `paths` (a file tool), or brings the workspace snapshot up to date (a command). */
export function begin(s: Session, p: v.InferOutput<typeof CaptureBeginParams>): W.CaptureBeginResult {
  const cwd = p.cwd ?? s.ws.root;
  const files = Boolean(p.paths && p.paths.length > 0);
  const who = { agent: p.agent ?? null, session: p.session ?? null, agentTurn: null };
  const tool = p.tool ?? (files ? 'tool' : 'command');
  const op = (): QueuedOp =>
    files ? { op: 'files-begin', id: p.id, tool, pair: null, files: keep(s, p.paths!, cwd), ...who } : { op: 'command-begin', id: p.id, tool, command: p.command ?? '', pair: null, ...who };
  const queued: W.CaptureBeginResult = { id: p.id, kind: files ? 'files' : 'command', turn: null, queued: true };
  return recordOrQueue(s, op, queued, () => captureBegin(s.ws, { ...p, cwd }));
}

/** `capture/end`: records the tool call's change set, and tells the client when there is one. */
export function end(s: Session, p: v.InferOutput<typeof CaptureEndParams>): W.CaptureEndResult {
  const op = (): QueuedOp => ({ op: 'end', id: p.id, tool: 'tool', found: null });
  const queued: W.CaptureEndResult = { id: p.id, set: null, queued: true };
  return recordOrQueue(s, op, queued, () => {
    const r = captureEnd(s.ws, p);
    if (r.set) s.client.journalChanged('recorded');
    return r;
  });
}

/**
 * An agent's event `fn` on the journal, or, when the journal cannot take it, the event `op`
 * queued in the spill and `queued` answered: behind events queued earlier that are still waiting
 * (in order), or when `fn` fails on a lock held past {@link HOOK_BUSY_MS} or a full disk. Throws
 * what `fn` throws otherwise, and when the event could not be queued either.
 */
export function recordOrQueue<T>(s: Session, op: () => QueuedOp, queued: T, fn: () => T): T {
  if (behindQueue(s) && spilled(s, 'journal-busy', op)) return queued;
  try {
    return agentWait(s, fn);
  } catch (e) {
    if (!spilled(s, unkeptCause(e, s.ws.home), op)) throw e;
    return queued;
  }
}

/** Runs `fn`, an agent's event on the journal, waiting at most {@link HOOK_BUSY_MS} for another process's lock. */
function agentWait<T>(s: Session, fn: () => T): T {
  return s.ws.journal.withBusyTimeout(HOOK_BUSY_MS, fn);
}

/**
 * True when events queued earlier are still waiting after they were folded in (the journal still
 * cannot take them): this one goes behind them, in order. Cheap when none is (one listing).
 */
function behindQueue(s: Session): boolean {
  const { journal } = s.ws;
  if (!hasQueued(journal.dir)) return false;
  if (foldSpill(s.ws) > 0) s.client.journalChanged('recorded');
  return hasQueued(journal.dir);
}

/** A file tool's paths as they are now, their bytes stored when the blob store can take them. */
function keep(s: Session, paths: string[], cwd: string) {
  const keeper = { root: s.ws.root, config: s.ws.config, blobs: s.ws.journal.blobs };
  try {
    return keepFiles(keeper, paths, cwd);
  } catch {
    return keepFiles({ ...keeper, blobs: null }, paths, cwd); // the blob store cannot take them either
  }
}

/** Queues `op()` in the spill for `cause` (the journal cannot take it now); false when `cause` is null (another error) or nothing could be queued. */
function spilled(s: Session, cause: UnkeptCause | null, op: () => QueuedOp): boolean {
  if (cause === null) return false;
  const { journal } = s.ws;
  return queueOps(journal.dir, { root: s.ws.root, config: s.ws.config, blobs: journal.blobs, pending: (id) => journal.captures.peek(id) }, cause, [op()]);
}
