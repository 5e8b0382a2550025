import { createHash, randomBytes } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { keepFiles } from '../core/capture/files.js';
import { foldSpill, queueOps, unkeptCause, type QueuedOp } from '../core/capture/queued.js';
import { repairLostEnds } from '../core/capture/repair.js';
import { loadConfig, takebackHome } from '../core/config.js';
import { workspaceRootOf, type Workspace } from '../core/open-workspace.js';
import { ID_PATTERN, TakebackError } from '../core/errors.js';
import { readHolder } from '../core/journal/holder.js';
import { HOOK_BUSY_MS, journalDirOf } from '../core/journal/journal.js';
import { hasQueued } from '../core/journal/spill.js';
import { labelFromPrompt, promptKey } from '../core/journal/turns.js';
import type { UnkeptCause } from '../core/journal/unkept.js';
import { BlobStore } from '../core/store/blobs.js';
import { acquireWorkspace, releaseWorkspace, stillKept } from '../daemon/kept-workspaces.js';
import { logHook } from '../daemon/log.js';
import { adoptUnrecorded } from '../daemon/unrecorded.js';
import { captureBegin, captureEnd, captureEndByOrder, ensureBaseline, turnBegin, turnEnd } from '../service/capture.js';
import type { AgentAction, AgentName, EventContext, HookEventBase, Pairing } from './spec.js';

/*
 * What an agent's hook event means to takeback, whatever the agent: every adapter
 * (claude-code.ts, codex.ts, gemini.ts) turns its own payload into the actions of spec.ts, and
 * `runActions` carries them out on the workspace's journal. Nothing here knows one agent's
 * field names.
 */

/** An absolute path for a tool's path argument (relative ones are the agent's `cwd`'s). */
export function absolutePath(cwd: string, p: string): string {
  return isAbsolute(p) ? resolve(p) : resolve(cwd, p);
}

/**
 * A capture id for an agent's tool call id: the id itself when it fits `ID_PATTERN`, else a
 * stable hash of it (`h` + 40 hex digits), so that any id an agent sends pairs begin and end.
 */
export function captureId(agentId: string): string {
  if (ID_PATTERN.test(agentId)) return agentId;
  return `h${createHash('sha256').update(agentId).digest('hex').slice(0, 40)}`;
}

/** The pairing key of a tool call without an id: its name and a hash of its input (stable key order). */
export function orderKey(tool: string, input: unknown): string {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v as object)
              .sort()
              .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
          )
        : v;
  return `${tool}:${createHash('sha256').update(JSON.stringify(canon(input ?? null))).digest('hex').slice(0, 32)}`;
}

/**
 * Begins the turn of `ctx`'s session — unless it has begun already: the agent names it
 * (`agentTurn`: Codex's turn_id, Claude Code's prompt_id) and a turn of that name exists (the same
 * event handled twice, or a tool call after its prompt); or, a prompt the agent gave no id,
 * the session's open turn was begun by that same prompt and holds nothing yet (journal/turns.ts
 * `twinOf`). Returns the turn's id and whether it is new. The look and the begin are one write
 * transaction: the same event handled by two processes at once (the capture daemon's http hook
 * and the command hook beside it, while the daemon starts) begins one turn, where the second
 * would otherwise end the first's turn and begin another.
 */
function beginTurnOnce(ws: Workspace, ctx: EventContext, agentTurn: string | null, prompt: string | null): { id: string; begun: boolean } {
  return ws.journal.write(() => {
    const { turns } = ws.journal;
    const key = agentTurn ? null : promptKey(prompt);
    const known = agentTurn ? turns.byAgentTurn(ctx.session, agentTurn) : key && ctx.session ? turns.twinOf(ctx.session, key) : null;
    if (known) return { id: known.id, begun: false };
    const { turn } = turnBegin(ws, { agent: ctx.agent, session: ctx.session, agentTurn, label: labelFromPrompt(prompt), promptKey: key });
    return { id: turn.id, begun: true };
  });
}

function begin(ws: Workspace, ctx: EventContext, a: Extract<AgentAction, { kind: 'files-begin' | 'command-begin' }>, fixed?: () => void): string {
  // An agent that names its turns and whose prompt event was missed still gets a turn: the
  // tool call begins one.
  if (a.agentTurn) beginTurnOnce(ws, ctx, a.agentTurn, null);
  const id = beginId(a.pairing);
  const pair = 'order' in a.pairing ? a.pairing.order : null;
  const who = { agent: ctx.agent, session: ctx.session, pair, tool: a.tool };
  if (a.kind === 'files-begin') {
    if (a.paths.length === 0) return `${a.tool} names no path: not captured`;
    captureBegin(ws, { id, paths: a.paths, cwd: ctx.cwd, ...who });
    return `capture ${id} begun (${a.tool} ${a.paths.join(' ')})`;
  }
  const r = captureBegin(ws, { id, command: a.command, ...who, fixed });
  return `capture ${id} begun (${a.tool}, scan ${r.scan?.status})`;
}

function end(ws: Workspace, ctx: EventContext, a: Extract<AgentAction, { kind: 'tool-end' }>): string {
  try {
    const r =
      'id' in a.pairing
        ? captureEnd(ws, { id: captureId(a.pairing.id) })
        : captureEndByOrder(ws, { agent: ctx.agent, session: ctx.session, pair: a.pairing.order, tool: a.tool });
    return `capture ${r.id} ended: ${r.set ? `set ${r.set.id}` : 'no change'}`;
  } catch (e) {
    if (e instanceof TakebackError && e.code === 'not-found') return `${a.tool}: no begin (tool not captured)`;
    throw e;
  }
}

/**
 * Carries out `actions` for one hook event on the journal of the workspace around `ctx.cwd`,
 * after the events queued in its spill (and, before them, what a capture daemon killed between
 * its answer and its record left: see daemon/unrecorded.ts). `fixed`: called once the last
 * action, a command's begin, has read what it must see (its scan done, before its writes and commit: see
 * AnswerPoint in registry.ts); not called otherwise. `opened`: that journal, opened ahead by
 * {@link openForActions} for these actions (given back here). When the journal cannot take them (its disk is full, its
 * lock is held for over {@link HOOK_BUSY_MS}, another process's undo or redo is under way, or
 * events queued earlier are still waiting) the actions not yet carried out are queued in the
 * spill instead (see `queue`). Returns one line for the log. Throws on bad input, another journal error, or an event that could not be queued
 * either; the hook logs it and still exits 0.
 */
export function runActions(ctx: EventContext, actions: AgentAction[], env: NodeJS.ProcessEnv = process.env, opts: { fixed?: () => void; opened?: Workspace | null } = {}): string {
  if (touchesNoJournal(actions)) return actions.map((a) => (a.kind === 'ignore' ? a.why : '')).join('; ');
  const said: string[] = [];
  let ws: Workspace | null = null;
  let done = 0;
  try {
    // Opened ahead, and kept open since (not closed to make room for another workspace's journal).
    ws = opts.opened && stillKept(opts.opened) ? opts.opened : openJournal(ctx, env);
    // Another process's undo or redo is under way, and opening waited that second for it already:
    // no second wait (for the spill, then for this event), the event is queued.
    if (ws.undoUnderWay) return queue(ctx, actions, 'journal-busy', env, ws, said);
    // Events queued earlier come first: folded in now, or this one is queued behind them.
    if (hasQueued(ws.journal.dir)) {
      foldSpill(ws);
      if (hasQueued(ws.journal.dir)) return queue(ctx, actions, 'journal-busy', env, ws, said);
    }
    // A session or a turn starting: the tool calls and turns an earlier one left open for good are closed first.
    if (actions.some((a) => a.kind === 'session-start' || a.kind === 'turn-begin')) {
      const lost = repairLostEnds(ws);
      if (lost.captures.length > 0) said.push(`closed tool calls left open (end never heard): ${lost.captures.join(' ')}`);
      if (lost.turns.length > 0) said.push(`closed turns left open at their last event (end never heard): ${lost.turns.join(' ')}`);
    }
    for (const a of actions) {
      switch (a.kind) {
        case 'session-start':
          said.push(`session start: snapshot ${ensureBaseline(ws).status}`);
          break;
        case 'turn-begin': {
          const t = beginTurnOnce(ws, ctx, a.agentTurn ?? null, a.prompt);
          said.push(`turn ${t.id} begun${t.begun ? '' : ' already'}`);
          break;
        }
        case 'turn-end':
          try {
            const r = turnEnd(ws, { session: ctx.session, agentTurn: a.agentTurn ?? null });
            said.push(`turn ${r.turn} ended${r.set ? `: set ${r.set.id} changed during the turn` : ''}`);
          } catch (e) {
            if (!(e instanceof TakebackError && e.code === 'not-found')) throw e;
            said.push('stop: no open turn');
          }
          break;
        case 'files-begin':
        case 'command-begin':
          said.push(begin(ws, ctx, a, done === actions.length - 1 ? opts.fixed : undefined));
          break;
        case 'tool-end':
          said.push(end(ws, ctx, a));
          break;
        case 'ignore':
          said.push(a.why);
          break;
      }
      done++;
    }
    return said.join('; ');
  } catch (e) {
    const cause = unkeptCause(e, takebackHome(env));
    if (cause === null) throw e;
    said.push(`the journal could not be written (${(e as Error).message})`);
    return queue(ctx, actions.slice(done), cause, env, ws, said);
  } finally {
    if (ws) releaseWorkspace(ws);
  }
}

/** Whether `actions` are all ignored: nothing to do in any journal. */
function touchesNoJournal(actions: readonly AgentAction[]): boolean {
  return actions.every((a) => a.kind === 'ignore');
}

/**
 * The journal the actions of an event in context `ctx` act on, acquired as {@link runActions}
 * acquires it: the events a killed capture daemon answered and never recorded queued first (into
 * the spill), and a hook waiting about a second for another process's lock, never the agent's
 * whole timeout. Give it back with releaseWorkspace. Throws what acquireWorkspace throws.
 */
function openJournal(ctx: EventContext, env: NodeJS.ProcessEnv): Workspace {
  adoptUnrecorded(takebackHome(env), (m) => logHook(takebackHome(env), m));
  return acquireWorkspace({ cwd: ctx.cwd, env, busyMs: HOOK_BUSY_MS });
}

/**
 * The journal for {@link runActions} of `actions`, opened ahead of them (a capture daemon's
 * event, while its watcher syncs): pass it as their `opened`. Null when the actions touch no
 * journal, or it cannot be opened now (runActions then opens it itself, and says why). Never
 * throws.
 */
export function openForActions(ctx: EventContext, actions: AgentAction[], env: NodeJS.ProcessEnv = process.env): Workspace | null {
  if (touchesNoJournal(actions)) return null;
  try {
    return openJournal(ctx, env);
  } catch {
    return null;
  }
}

/** The capture id a begin takes: its tool call's, or a new one where calls pair by order. */
function beginId(pairing: Pairing): string {
  return 'id' in pairing ? captureId(pairing.id) : `o${randomBytes(8).toString('hex')}`;
}

/** The queued operation that ends tool call `a`: by its id, or by its order in the session. */
function endOp(ctx: EventContext, a: Extract<AgentAction, { kind: 'tool-end' }>): QueuedOp {
  return 'id' in a.pairing
    ? { op: 'end', id: captureId(a.pairing.id), tool: a.tool, found: null }
    : { op: 'end-by-order', agent: ctx.agent, session: ctx.session, pair: a.pairing.order, tool: a.tool };
}

/**
 * Queues `actions` in the spill of the workspace's journal, for `cause` (the journal cannot take
 * them now), as the capture operations they stand for; a file tool's paths are kept as they are
 * now, their bytes stored when the blob store can take them. `ws` is the opened workspace when it could
 * be opened (null: found from `ctx.cwd` without it). Returns the log's line; throws when nothing
 * could be queued (the hook logs it: the event is lost).
 */
function queue(ctx: EventContext, actions: AgentAction[], cause: UnkeptCause, env: NodeJS.ProcessEnv, ws: Workspace | null, said: string[]): string {
  const home = ws?.home ?? takebackHome(env);
  const root = ws?.root ?? workspaceRootOf(home, { cwd: ctx.cwd });
  const config = ws?.config ?? loadConfig(home, env);
  const blobs = ws?.journal.blobs ?? new BlobStore(home);
  const keeper = { root, config, blobs, pending: ws ? (id: string) => ws.journal.captures.peek(id) : undefined };
  const who = (agentTurn: string | null | undefined) => ({ agent: ctx.agent, session: ctx.session, agentTurn: agentTurn ?? null });
  const ops: QueuedOp[] = [];
  for (const a of actions) {
    switch (a.kind) {
      case 'session-start':
        ops.push({ op: 'baseline' });
        break;
      case 'turn-begin':
        ops.push({ op: 'turn-begin', label: labelFromPrompt(a.prompt), promptKey: a.agentTurn ? null : promptKey(a.prompt), ...who(a.agentTurn) });
        break;
      case 'turn-end':
        ops.push({ op: 'turn-end', ...who(a.agentTurn) });
        break;
      case 'files-begin':
      case 'command-begin': {
        const id = beginId(a.pairing);
        const pair = 'order' in a.pairing ? a.pairing.order : null;
        if (a.kind === 'command-begin') ops.push({ op: 'command-begin', id, tool: a.tool, command: a.command, pair, ...who(a.agentTurn) });
        else if (a.paths.length > 0) {
          let files;
          try {
            files = keepFiles(keeper, a.paths, ctx.cwd);
          } catch {
            files = keepFiles({ ...keeper, blobs: null }, a.paths, ctx.cwd); // the blob store cannot take them either
          }
          ops.push({ op: 'files-begin', id, tool: a.tool, pair, files, ...who(a.agentTurn) });
        }
        break;
      }
      case 'tool-end':
        ops.push(endOp(ctx, a));
        break;
      case 'ignore':
        break;
    }
  }
  if (ops.length === 0) return said.join('; ');
  const dir = journalDirOf(home, root);
  const holder = cause === 'journal-busy' ? readHolder(dir) : null;
  const by = `${holder && holder.pid !== process.pid ? `, its lock last taken by pid ${holder.pid}` : ''}${ws?.undoUnderWay ? ', an undo or redo under way' : ''}`;
  if (!queueOps(dir, keeper, cause, ops)) throw new Error(`the journal cannot take the event (${cause}${by}) and it could not be queued either: lost`);
  // Said in the log whatever the log level: the event waits in the spill, and doctor counts it.
  logHook(home, `hook ${ctx.agent}: the journal cannot take the event now (${cause}${by}): queued ${ops.map((o) => o.op).join(', ')}`);
  said.push(`queued (${cause}): ${ops.map((o) => o.op).join(', ')}`);
  return said.join('; ');
}

/**
 * The capture operations that stand for `actions` should their record be lost after the hook was
 * answered (a capture daemon killed between the two): a command's begin, a tool call's end, a
 * turn's end, as the spill queues them (the actions answered early, see AnswerPoint in
 * registry.ts); null when another action is among them (answered once recorded, never lost so).
 */
export function plannedOps(ctx: EventContext, actions: AgentAction[]): QueuedOp[] | null {
  const who = (agentTurn: string | null | undefined) => ({ agent: ctx.agent, session: ctx.session, agentTurn: agentTurn ?? null });
  const ops: QueuedOp[] = [];
  for (const a of actions) {
    switch (a.kind) {
      case 'turn-end':
        ops.push({ op: 'turn-end', ...who(a.agentTurn) });
        break;
      case 'command-begin': {
        const id = beginId(a.pairing);
        ops.push({ op: 'command-begin', id, tool: a.tool, command: a.command, pair: 'order' in a.pairing ? a.pairing.order : null, ...who(a.agentTurn) });
        break;
      }
      case 'tool-end':
        ops.push(endOp(ctx, a));
        break;
      case 'ignore':
        break;
      default:
        return null;
    }
  }
  return ops;
}

/** A string field of an event, or null. */
export function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** Who and where for an event of `agent`, from the fields every agent sends (`session_id`, `cwd`). */
export function contextOf(agent: AgentName, ev: HookEventBase, fallbackCwd: string): EventContext {
  return { agent, session: str(ev.session_id), cwd: str(ev.cwd) ?? fallbackCwd };
}

/**
 * A tool call about to run, for an agent whose file tools name their one path in an input field
 * (`files`: tool → field) and whose shell tool (`shell`) takes `command` (Claude Code, Gemini CLI).
 */
export function toolBegin(ev: HookEventBase, ctx: EventContext, pairing: Pairing, tools: { files: Record<string, string>; shell: string }): AgentAction {
  const tool = ev.tool_name ?? '';
  const field = tools.files[tool];
  if (field) {
    const p = str(ev.tool_input?.[field]);
    if (!p) return { kind: 'ignore', why: `${tool} without a path: ignored` };
    return { kind: 'files-begin', pairing, tool, paths: [absolutePath(ctx.cwd, p)] };
  }
  if (tool === tools.shell) return { kind: 'command-begin', pairing, tool, command: str(ev.tool_input?.command) ?? '' };
  return { kind: 'ignore', why: `${tool}: not captured` };
}
