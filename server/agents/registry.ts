import { captureId, openForActions, plannedOps, runActions } from './actions.js';
import type { QueuedOp } from '../core/capture/queued.js';
import type { AnswerPoint } from '../daemon/server.js';
import { claudeCode } from './claude-code.js';
import { cline } from './cline.js';
import { codex } from './codex.js';
import { copilot } from './copilot.js';
import { gemini } from './gemini.js';
import { qwenCode } from './qwen-code.js';
import { kilo, opencode } from './opencode.js';
import type { AgentAction, AgentSpec, EventContext } from './spec.js';
import type { Workspace } from '../core/open-workspace.js';

/** Every agent takeback has hooks for, by the name `takeback hook NAME` and `init NAME` take. */
export const AGENTS: Record<string, AgentSpec<{ hook_event_name: string }>> = {
  'claude-code': claudeCode as AgentSpec<{ hook_event_name: string }>,
  codex: codex as AgentSpec<{ hook_event_name: string }>,
  gemini: gemini as AgentSpec<{ hook_event_name: string }>,
  'qwen-code': qwenCode as AgentSpec<{ hook_event_name: string }>,
  copilot: copilot as AgentSpec<{ hook_event_name: string }>,
  cline: cline as AgentSpec<{ hook_event_name: string }>,
  opencode: opencode as AgentSpec<{ hook_event_name: string }>,
  kilo: kilo as AgentSpec<{ hook_event_name: string }>,
};

/**
 * Acts on one hook event of agent `name` (its payload parsed from JSON) on the journal of the
 * workspace around the event's `cwd` (else the current folder). Returns one line for the log.
 * `opts.fixed`: see runActions (a capture daemon's answer at `fixed`, {@link AnswerPoint}).
 * Throws on an unknown agent, bad input or a journal error: the hook logs it and exits 0.
 */
export function handleAgentEvent(name: string, ev: { hook_event_name: string }, env: NodeJS.ProcessEnv = process.env, opts: { fixed?: () => void; prepared?: PreparedEvent } = {}): string {
  const { ctx, actions, opened } = opts.prepared ?? readAgentEvent(name, ev);
  return runActions(ctx, actions, env, { fixed: opts.fixed, opened });
}

/**
 * An event read ahead of its handling by {@link prepareAgentEvent}: its context, its actions and
 * the journal they act on, opened (null: opened when they run).
 */
export interface PreparedEvent {
  ctx: EventContext;
  actions: AgentAction[];
  opened: Workspace | null;
}

function readAgentEvent(name: string, ev: { hook_event_name: string }): PreparedEvent {
  const spec = AGENTS[name];
  if (!spec) throw new Error(`unknown agent ${name} (known: ${Object.keys(AGENTS).join(', ')})`);
  const ctx = spec.context(ev, process.cwd());
  return { ctx, actions: spec.actions(ev, ctx), opened: null };
}

/**
 * Does ahead of {@link handleAgentEvent} what the event of agent `name` needs before its actions
 * run (a capture daemon's event, while its watcher syncs): reads it, and opens the journal its
 * actions act on (see openForActions). Pass the result as handleAgentEvent's `prepared`, in the
 * same folder and with the same variables. Throws on an unknown agent or bad input, as
 * handleAgentEvent does.
 */
export function prepareAgentEvent(name: string, ev: { hook_event_name: string }, env: NodeJS.ProcessEnv = process.env): PreparedEvent {
  const read = readAgentEvent(name, ev);
  return { ...read, opened: openForActions(read.ctx, read.actions, env) };
}

/** How many file tool calls {@link eventMayScan} remembers between their begin and their end. */
const FILE_CALLS_KEPT = 256;

/** The capture ids of file tool calls begun in this process (oldest first), whose ends scan nothing. */
const fileCalls = new Set<string>();

/**
 * When the capture daemon may answer a hook event (let the agent go on) relative to its record,
 * by what the event does (see {@link eventPlan}):
 * - `claimed`: at once. A command's end (the end of a shell tool call, or of any tool call not
 *   known here as a file tool's) and a turn's end. What their record reads — what the workspace
 *   holds after the command, or at the turn's end — the agent no longer changes: its next tool
 *   call's hooks queue behind the record (the daemon claims one event at a time, and each
 *   record is done before the next is claimed), and so does its next prompt. What can still land
 *   in the window is what moves without a hook: a person's save, another program, a tool of the
 *   agent's that takeback has no hook for (an MCP server's write). It is counted as the command's
 *   or the turn's, as it is when it lands between the command's end and its hook: the record
 *   reads the workspace at the same moment either way; only the agent no longer waits for it.
 * - `fixed`: once the record has read what the event must see and only its writes and syncs are
 *   left. A command's begin: its "before" is the snapshot brought up to date, whose bytes are read
 *   (and stored) before the answer, since the command may change them once it runs; the journal's
 *   writes (the snapshot's rows, the open tool call), the blobs' syncs and the commit come after
 *   the answer, in their order (blobs first: a row on the disk
 *   never names a blob a power cut took away). What a power cut in that window (a commit's
 *   syncs, a few ms) takes is the begin itself: what the command changed before the cut is then not
 *   named as its own, but as its turn's when the same session goes on, or as the person's (left on
 *   the disk, not kept) when a new session's first turn begins; a killed daemon loses nothing
 *   unsaid (daemon/unrecorded.ts).
 * - `recorded`: once recorded, as a hook run in-process. A session's start (its first snapshot),
 *   a turn's begin (what moved before it is the person's, and must be told from what the agent
 *   does next), a file tool's begin and its end (cheap, and an editor's view of the file goes by
 *   them), and anything ignored.
 * An event of several actions answers at the latest of theirs (`fixed` only as its last).
 */
export type { AnswerPoint };

/** {@link AnswerPoint} by action; a tool call's end is `claimed` unless it ends a known file tool call. */
const ANSWER_AT: Record<AgentAction['kind'], AnswerPoint> = {
  'tool-end': 'claimed',
  'turn-end': 'claimed',
  'command-begin': 'fixed',
  'session-start': 'recorded',
  'turn-begin': 'recorded',
  'files-begin': 'recorded',
  ignore: 'recorded',
};

const ORDER: AnswerPoint[] = ['claimed', 'fixed', 'recorded'];

/** What a long-lived process asks of a hook event before it handles it (see {@link eventPlan}). */
export interface EventPlan {
  /** Acting on it may scan the workspace: sync the file watcher first. */
  scans: boolean;
  /** When the capture daemon may answer its hook. */
  answer: AnswerPoint;
  /**
   * For an event answered before its record: the folder it names (its `cwd`) and the capture
   * operations that stand for it should the record be lost (see plannedOps in actions.ts).
   */
  lost?: { cwd: string; ops: QueuedOp[] };
}

/**
 * What acting on one hook event of agent `name` needs before it runs:
 *
 * - whether it may scan the workspace (a command's begin or end, a turn's begin or end), so that
 *   a long-lived process syncs its file watcher first. False for an event that only keeps a file
 *   tool's paths, ends a file tool call whose begin came through here (remembered for the last
 *   {@link FILE_CALLS_KEPT}), starts a session or is ignored. A wrong false costs a walk, never a
 *   wrong scan (a scan without hints walks);
 * - when the capture daemon may answer it ({@link AnswerPoint}); a file tool call's end is
 *   `recorded` when its begin was remembered, `claimed` otherwise (an agent without tool call
 *   ids: no harm beyond a command's end's, see AnswerPoint).
 *
 * Throws on an unknown agent or bad input, as {@link handleAgentEvent}.
 */
export function eventPlan(name: string, ev: { hook_event_name: string }): EventPlan {
  const spec = AGENTS[name];
  if (!spec) throw new Error(`unknown agent ${name}`);
  const ctx = spec.context(ev, process.cwd());
  const actions = spec.actions(ev, ctx);
  let scans = false;
  let answer = 0;
  actions.forEach((a, i) => {
    let at = ANSWER_AT[a.kind];
    switch (a.kind) {
      case 'ignore':
      case 'session-start':
        // A session's start scans only to make a first baseline, which no hint can shorten.
        break;
      case 'files-begin':
        if ('id' in a.pairing) {
          fileCalls.add(captureId(a.pairing.id));
          if (fileCalls.size > FILE_CALLS_KEPT) fileCalls.delete(fileCalls.values().next().value as string);
        }
        break;
      case 'tool-end':
        if ('id' in a.pairing && fileCalls.delete(captureId(a.pairing.id))) {
          at = 'recorded';
          break;
        }
        scans = true;
        break;
      default:
        scans = true;
    }
    if (at === 'fixed' && i < actions.length - 1) at = 'recorded';
    answer = Math.max(answer, ORDER.indexOf(at));
  });
  const at = actions.length === 0 ? 'recorded' : ORDER[answer]!;
  const ops = at === 'recorded' ? null : plannedOps(ctx, actions);
  return ops ? { scans, answer: at, lost: { cwd: ctx.cwd, ops } } : { scans, answer: 'recorded' };
}

/**
 * Whether acting on one hook event of agent `name` may scan the workspace: {@link eventPlan}'s
 * `scans`. Throws as it does.
 */
export function eventMayScan(name: string, ev: { hook_event_name: string }): boolean {
  return eventPlan(name, ev).scans;
}
