import { createHash } from 'node:crypto';
import { logHook } from '../daemon/log.js';
import { AGENTS, eventPlan, handleAgentEvent, prepareAgentEvent, type EventPlan, type PreparedEvent } from '../agents/registry.js';
import { takebackHome } from '../core/config.js';
import { startGcIfDue } from '../core/gc/schedule.js';
import { startHttpDaemonIfNeeded } from '../daemon/http-start.js';
import { readStdin } from './stdin.js';

/*
 * `takeback hook <agent>`, on its own: an agent runs it twice for every file tool call, so it is
 * bundled apart from the rest of the command line (bin/takeback.js loads it without commander,
 * the renderers or the planner) and starts as little as it can. When a capture daemon runs
 * (server/daemon/), bin/takeback.js forwards the event to it instead (server/cli/forward.ts), and
 * the daemon hands it to {@link handleHookText}, as this process would.
 */


/**
 * Handles one hook event of `agent` given as the text the agent wrote on stdin, with
 * `process.env` and the current folder as they are: checks the input, acts on the workspace's
 * journal, starts the retention sweep at a session's start (running `bin`, the takeback script,
 * when given). Never throws and never prints: anything wrong is logged to
 * `$TAKEBACK_HOME/logs/hook.log`. Returns true when the event was handled (or rightly ignored),
 * false when something failed or the input was unusable (and was logged). `fixed`: called where a
 * command's begin has read what it must see (the capture daemon's answer, see AnswerPoint in
 * agents/registry.ts). `prepared`: what {@link prepareHookText} did ahead for this same event.
 */
export function handleHookText(agent: string, text: string, bin: string | undefined = process.argv[1], fixed?: () => void, prepared?: PreparedHookEvent | null): boolean {
  const home = takebackHome();
  try {
    if (!AGENTS[agent]) {
      logHook(home, `hook: unknown agent ${agent}`);
      return false;
    }
    let ev: { hook_event_name: string } | null;
    try {
      ev = prepared?.ev ?? readEvent(agent, text);
    } catch {
      // Its length and digest, never its text: what an agent sends may hold a token or a key.
      logHook(home, `hook ${agent}: input is not JSON (${Buffer.byteLength(text)} bytes, sha256 ${createHash('sha256').update(text).digest('hex')})`);
      return false;
    }
    if (!ev || typeof ev !== 'object' || typeof ev.hook_event_name !== 'string') {
      logHook(home, `hook ${agent}: no hook_event_name in input`);
      return false;
    }
    const what = handleAgentEvent(agent, ev, process.env, { fixed, prepared: prepared?.event });
    // At a session's start, the retention rules when due (every 6 hours), in a process of their own.
    if (ev.hook_event_name === 'SessionStart' && bin) startGcIfDue(home, bin);
    if (process.env.TAKEBACK_LOG_LEVEL === 'debug') logHook(home, `${agent} ${ev.hook_event_name}: ${what}`);
    return true;
  } catch (e) {
    logHook(home, `hook ${agent} failed: ${(e as Error).stack ?? String(e)}`);
    return false;
  }
}

/** The event of `agent` in `text`, as its spec reads it (maybe not an event: the caller checks). Throws on text that is not JSON. */
function readEvent(agent: string, text: string): { hook_event_name: string } | null {
  const value: unknown = JSON.parse(text);
  const spec = AGENTS[agent]!;
  return spec.parse ? spec.parse(value) : (value as { hook_event_name: string });
}

/** A hook event read, and the journal its actions act on opened, ahead of {@link handleHookText}: see {@link prepareHookText}. */
export interface PreparedHookEvent {
  ev: { hook_event_name: string };
  event: PreparedEvent;
}

/**
 * What the capture daemon does for the hook event of `agent` given as `text` while its watcher
 * syncs for it, before it calls {@link handleHookText} with the result: the event read and the
 * journal its actions act on opened (prepareAgentEvent), in the current folder and with the
 * variables handleHookText will run with. Null when there is nothing to do ahead (text that is not
 * an event, an unknown agent: handleHookText then says why). Never throws.
 */
export function prepareHookText(agent: string, text: string): PreparedHookEvent | null {
  try {
    if (!AGENTS[agent]) return null;
    const ev = readEvent(agent, text);
    if (!ev || typeof ev !== 'object' || typeof ev.hook_event_name !== 'string') return null;
    return { ev, event: prepareAgentEvent(agent, ev, process.env) };
  } catch {
    return null;
  }
}

/**
 * What the capture daemon asks of the hook event of `agent` given as `text` before it handles it
 * (see eventPlan): whether it may scan the workspace (its file watcher is synced first) and when
 * it may be answered. For text that cannot be read as an event: it may scan, answered once
 * handled (the handler then says why). Never throws.
 */
export function hookEventPlan(agent: string, text: string): EventPlan {
  const unread: EventPlan = { scans: true, answer: 'recorded' };
  try {
    if (!AGENTS[agent]) return unread;
    const ev = readEvent(agent, text);
    if (!ev || typeof ev !== 'object' || typeof ev.hook_event_name !== 'string') return unread;
    return eventPlan(agent, ev);
  } catch {
    return unread;
  }
}

/**
 * `takeback hook <agent>` (`claude-code`, `codex`, `gemini`): reads one event on stdin (or takes
 * `text`, stdin already read by the caller); never fails, never prints, always returns 0 (an exit
 * code of 2 would block the agent's tool call). With `TAKEBACK_HOOK_HTTP_PORT` set, then starts
 * the capture daemon for that port when none is ready (see daemon/http-start.ts).
 */
export function runHook(agent: string, text?: string): number {
  handleHookText(agent, text ?? (AGENTS[agent] ? readStdin() : ''));
  // The hooks of `init claude-code --http` run this only when no daemon takes their http
  // events: once this event is recorded, one is started for the next ones.
  startHttpDaemonIfNeeded(takebackHome(), process.argv[1]);
  return 0;
}
