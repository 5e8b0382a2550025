import { contextOf, orderKey, str, toolBegin } from './actions.js';
import type { AgentAction, AgentSpec, EventContext, HookEventBase } from './spec.js';

/**
 * One Gemini CLI hook event (settings.json `hooks`; see `shared/notes/agents.md` and
 * test/fixtures/gemini-events/). Only the fields takeback reads are listed. Gemini gives no tool
 * call id and no turn id.
 */
export type GeminiHookEvent = HookEventBase;

/** Gemini CLI's file tools and the input field that names the file. */
const FILE_TOOLS: Record<string, string> = { write_file: 'file_path', replace: 'file_path' };
const SHELL_TOOL = 'run_shell_command';
const TOOLS = 'write_file|replace|run_shell_command';

/**
 * Gemini CLI: BeforeAgent begins a turn and AfterAgent ends it; `write_file` and `replace` are file
 * tools; `run_shell_command` is bracketed by snapshots. With no tool call id, each AfterTool is
 * paired with its BeforeTool by order within the session (same tool and input first), and the set
 * says so (`pairedBy: "order"`).
 */
export const gemini: AgentSpec<GeminiHookEvent> = {
  name: 'gemini',
  events: [
    { event: 'SessionStart' },
    { event: 'BeforeAgent' },
    { event: 'BeforeTool', matcher: TOOLS },
    { event: 'AfterTool', matcher: TOOLS },
    { event: 'AfterAgent' },
  ],
  // Gemini's hook timeouts are in milliseconds. Gemini blocks the tool call when a hook exits
  // with 2 or more and says something, and a shell that cannot find takeback (uninstalled since)
  // exits 127 saying so: the command is kept quiet and successful whatever happens.
  hookEntry: (command) => ({ name: 'takeback', type: 'command', command: `${command} 2>/dev/null || true`, timeout: 30_000 }),
  setupNote: (user) =>
    user
      ? 'Gemini CLI runs settings hooks only in trusted folders (it asks the first time it opens one; /permissions changes it).'
      : 'Gemini CLI runs these hooks only when started in this very folder, and only if the folder is trusted ' +
        '(it asks the first time; /permissions changes it).',
  settingsFile: {
    // Gemini CLI reads `<cwd>/.gemini/settings.json` only (not the git top's), and
    // `$GEMINI_CLI_HOME/.gemini` instead of `~/.gemini` when that is set; both as JSON with comments.
    project: ['.gemini', 'settings.json'],
    user: (env, home) => [env.GEMINI_CLI_HOME || home, '.gemini', 'settings.json'],
    projectDir: 'cwd',
    jsonc: true,
  },
  context: (ev, fallbackCwd) => contextOf('gemini', ev, fallbackCwd),
  actions: (ev, ctx) => geminiActions(ev, ctx),
};

function geminiActions(ev: GeminiHookEvent, ctx: EventContext): AgentAction[] {
  const tool = ev.tool_name ?? '';
  const pairing = { order: orderKey(tool, ev.tool_input) };
  switch (ev.hook_event_name) {
    case 'SessionStart':
      return [{ kind: 'session-start' }];
    case 'BeforeAgent':
      return [{ kind: 'turn-begin', prompt: str(ev.prompt) }];
    case 'BeforeTool':
      return [toolBegin(ev, ctx, pairing, { files: FILE_TOOLS, shell: SHELL_TOOL })];
    case 'AfterTool':
      if (!FILE_TOOLS[tool] && tool !== SHELL_TOOL) return [{ kind: 'ignore', why: `${tool}: not captured` }];
      return [{ kind: 'tool-end', pairing, tool }];
    case 'AfterAgent':
      return [{ kind: 'turn-end' }];
    default:
      return [{ kind: 'ignore', why: `${ev.hook_event_name}: ignored` }];
  }
}
