import { readFileSync } from 'node:fs';
import { logHook } from '../agents/log.js';
import { AGENTS, handleAgentEvent } from '../agents/registry.js';
import { takebackHome } from '../core/config.js';
import { startGcIfDue } from '../core/store/gc.js';

/*
 * `takeback hook <agent>`, on its own: an agent runs it twice for every file tool call, so it is
 * bundled apart from the rest of the command line (bin/takeback.js loads it without commander,
 * the renderers or the planner) and starts as little as it can.
 */

function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

/**
 * `takeback hook <agent>` (`claude-code`, `codex`, `gemini`): reads one event on stdin; never
 * fails, never prints, always returns 0 (an exit code of 2 would block the agent's tool call).
 */
export function runHook(agent: string): number {
  const home = takebackHome();
  try {
    if (!AGENTS[agent]) {
      logHook(home, `hook: unknown agent ${agent}`);
      return 0;
    }
    const text = readStdin();
    let ev: { hook_event_name: string };
    try {
      ev = JSON.parse(text) as { hook_event_name: string };
    } catch {
      logHook(home, `hook ${agent}: input is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
      return 0;
    }
    if (!ev || typeof ev !== 'object' || typeof ev.hook_event_name !== 'string') {
      logHook(home, `hook ${agent}: no hook_event_name in input`);
      return 0;
    }
    const what = handleAgentEvent(agent, ev);
    // At a session's start, the retention rules when due (every 6 hours), in a process of their own.
    if (ev.hook_event_name === 'SessionStart' && process.argv[1]) startGcIfDue(home, process.argv[1]);
    if (process.env.TAKEBACK_LOG_LEVEL === 'debug') logHook(home, `${agent} ${ev.hook_event_name}: ${what}`);
  } catch (e) {
    logHook(home, `hook ${agent} failed: ${(e as Error).stack ?? String(e)}`);
  }
  return 0;
}
