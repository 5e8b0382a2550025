import { captureId, runActions } from './actions.js';
import { claudeCode } from './claude-code.js';
import { cline } from './cline.js';
import { codex } from './codex.js';
import { copilot } from './copilot.js';
import { gemini } from './gemini.js';
import { qwenCode } from './qwen-code.js';
import { kilo, opencode } from './opencode.js';
import type { AgentSpec } from './spec.js';

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
 * Throws on an unknown agent, bad input or a journal error: the hook logs it and exits 0.
 */
export function handleAgentEvent(name: string, ev: { hook_event_name: string }, env: NodeJS.ProcessEnv = process.env): string {
  const spec = AGENTS[name];
  if (!spec) throw new Error(`unknown agent ${name} (known: ${Object.keys(AGENTS).join(', ')})`);
  const ctx = spec.context(ev, process.cwd());
  return runActions(ctx, spec.actions(ev, ctx), env);
}

/** How many file tool calls {@link eventMayScan} remembers between their begin and their end. */
const FILE_CALLS_KEPT = 256;

/** The capture ids of file tool calls begun in this process (oldest first), whose ends scan nothing. */
const fileCalls = new Set<string>();

/**
 * Whether acting on one hook event of agent `name` may scan the workspace (a command's begin or
 * end, a turn's begin or end), so that a long-lived process syncs its file watcher first. False
 * for an event that only keeps a file tool's paths, ends a file tool call whose begin came
 * through here (remembered for the last {@link FILE_CALLS_KEPT}), starts a session or is ignored.
 * A wrong false costs a walk, never a wrong scan (a scan without hints walks). Throws on an
 * unknown agent or bad input, as {@link handleAgentEvent}.
 */
export function eventMayScan(name: string, ev: { hook_event_name: string }): boolean {
  const spec = AGENTS[name];
  if (!spec) throw new Error(`unknown agent ${name}`);
  const ctx = spec.context(ev, process.cwd());
  let scans = false;
  for (const a of spec.actions(ev, ctx)) {
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
        if ('id' in a.pairing && fileCalls.delete(captureId(a.pairing.id))) break;
        scans = true;
        break;
      default:
        scans = true;
    }
  }
  return scans;
}
