import { join } from 'node:path';
import { contextOf, str, toolBegin } from './actions.js';
import { claudeShapedEvents, type AgentAction, type AgentSpec, type EventContext, type HookCheck, type HookCheckContext, type HookEventBase } from './spec.js';

/**
 * One Qwen Code hook event, as it arrives on the hook's stdin (Claude Code's shape; see
 * test/fixtures/qwen-code-events/). Only the fields takeback reads are listed.
 */
export interface QwenHookEvent extends HookEventBase {
  /** Qwen Code's own id of the tool call, the same in PreToolUse and its PostToolUse or PostToolUseFailure. */
  tool_use_id?: string;
  /** The model's id of the tool call (present when the model gave one). */
  tool_call_id?: string;
  /**
   * The prompt's id, `<session>########<n>`, on every event of a turn. Qwen Code sends a
   * UserPromptSubmit with an empty prompt after every batch of tool results, with the same id.
   */
  prompt_id?: string;
}

/** Qwen Code's file tools and the input field that names the file each one changes. */
const FILE_TOOLS: Record<string, string> = { write_file: 'file_path', edit: 'file_path', notebook_edit: 'notebook_path' };
const SHELL_TOOL = 'run_shell_command';
const TOOLS = 'write_file|edit|notebook_edit|run_shell_command';

/**
 * Qwen Code (a Gemini CLI fork with Claude Code's hook events): UserPromptSubmit begins a turn
 * (its prompt id names it, so the empty UserPromptSubmit Qwen sends after each batch of tool
 * results begins nothing), Stop ends it; `write_file`, `edit` and `notebook_edit` are file tools
 * and `run_shell_command` is bracketed by snapshots, each paired with its end by `tool_use_id`.
 * Settings are read from `<cwd>/.qwen/settings.json` (the folder Qwen starts in) and
 * `$QWEN_HOME/settings.json` (`~/.qwen`), as JSON with comments; hook timeouts are in seconds.
 */
export const qwenCode: AgentSpec<QwenHookEvent> = {
  name: 'qwen-code',
  events: claudeShapedEvents(TOOLS),
  // Qwen Code denies the tool call when a hook exits with 2 or more and prints something, and a
  // shell that cannot find takeback (uninstalled since) exits 127 saying so: the command is kept
  // quiet and successful whatever happens.
  hookEntry: (command) => ({ type: 'command', command: `${command} 2>/dev/null || true`, timeout: 30 }),
  setupNote: (user) =>
    user
      ? 'Qwen Code runs these hooks in every folder (with security.folderTrust.enabled, project hooks only in trusted folders).'
      : 'Qwen Code runs these hooks only when started in this very folder; with security.folderTrust.enabled, only once the folder is trusted.',
  settingsFile: {
    project: ['.qwen', 'settings.json'],
    user: (env, home) => [env.QWEN_HOME || join(home, '.qwen'), 'settings.json'],
    projectDir: 'cwd',
    jsonc: true,
    dropEmpty: true,
  },
  checkHooks: (ctx) => qwenHookChecks(ctx),
  context: (ev, fallbackCwd) => contextOf('qwen-code', ev, fallbackCwd),
  actions: (ev, ctx) => qwenActions(ev, ctx),
};

/**
 * Qwen Code reads the hooks of the folder it starts in (doctor's folder, and the workspace
 * root's when that is another) and the user's. With folder trust turned on in the user's
 * settings (`security.folderTrust.enabled`) it runs a project's hooks only in a folder it
 * trusts, which takeback does not read: said, not judged.
 */
function qwenHookChecks(ctx: HookCheckContext): HookCheck[] {
  const user = join(...qwenCode.settingsFile.user(ctx.env, ctx.home));
  const settings = ctx.readConfig(user) as { security?: { folderTrust?: { enabled?: boolean } } } | null;
  const folderTrust = settings?.security?.folderTrust?.enabled === true;
  const project = [...new Set([ctx.cwd, ctx.workspace])].map((f) => {
    const c = ctx.hooksIn('workspace', join(f, '.qwen', 'settings.json')).check;
    return c.installed === 'none' || !folderTrust ? c : { ...c, trust: 'folder trust is on (security.folderTrust.enabled): Qwen Code runs these only in a folder it trusts' };
  });
  return [...project, ctx.hooksIn('user', user).check];
}

function qwenActions(ev: QwenHookEvent, ctx: EventContext): AgentAction[] {
  const tool = ev.tool_name ?? '';
  const pairing = { id: ev.tool_use_id ?? ev.tool_call_id ?? '' };
  const agentTurn = str(ev.prompt_id);
  switch (ev.hook_event_name) {
    case 'SessionStart':
      return [{ kind: 'session-start' }];
    case 'UserPromptSubmit':
      return [{ kind: 'turn-begin', prompt: str(ev.prompt), agentTurn }];
    case 'PreToolUse': {
      const a = toolBegin(ev, ctx, pairing, { files: FILE_TOOLS, shell: SHELL_TOOL });
      return [a.kind === 'files-begin' || a.kind === 'command-begin' ? { ...a, agentTurn } : a];
    }
    case 'PostToolUse':
    case 'PostToolUseFailure':
      if (!FILE_TOOLS[tool] && tool !== SHELL_TOOL) return [{ kind: 'ignore', why: `${tool}: not captured` }];
      return [{ kind: 'tool-end', pairing, tool }];
    case 'Stop':
      return [{ kind: 'turn-end', agentTurn }];
    default:
      return [{ kind: 'ignore', why: `${ev.hook_event_name}: ignored` }];
  }
}
