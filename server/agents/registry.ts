import { runActions } from './actions.js';
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
