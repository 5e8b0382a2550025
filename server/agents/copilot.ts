import { join } from 'node:path';
import { isWithin } from './trust-paths.js';
import { contextOf, orderKey, str, toolBegin } from './actions.js';
import { claudeShapedEvents, type AgentAction, type AgentSpec, type EventContext, type HookCheckContext, type HookEventBase } from './spec.js';

/**
 * One GitHub Copilot CLI hook event of a hook file with Claude Code's event names (PascalCase),
 * for which Copilot sends Claude Code's payload shape: `hook_event_name`, `session_id`, `cwd`,
 * and for tool events `tool_name` (Claude Code's tool names: Write, Edit, Bash) and `tool_input`
 * (see test/fixtures/copilot-events/). Only the fields takeback reads are listed. No tool call
 * id and no turn id.
 */
export type CopilotHookEvent = HookEventBase;

/** Copilot CLI's file tools, by the names its hooks see, and the input field that names the file. */
const FILE_TOOLS: Record<string, string> = { Write: 'path', Edit: 'path' };
const SHELL_TOOL = 'Bash';
const TOOLS = 'Write|Edit|Bash';

/**
 * GitHub Copilot CLI: hooks in a file of takeback's own, `.github/hooks/takeback.json` of the
 * repository (or `$COPILOT_HOME/hooks/takeback.json`, `~/.copilot/hooks`, with `--user`), with
 * Claude Code's event names. UserPromptSubmit begins a turn and Stop ends it; `Write` (Copilot's
 * `create`) and `Edit` are file tools; `Bash` is bracketed by snapshots. With no tool call id,
 * each PostToolUse is paired with its PreToolUse by order within the session (the same tool and
 * input first), and the set says so (`pairedBy: "order"`).
 */
export const copilot: AgentSpec<CopilotHookEvent> = {
  name: 'copilot',
  events: claudeShapedEvents(TOOLS),
  // Copilot CLI denies the tool call when a PreToolUse hook fails (exits with 2, or errs), and a
  // shell that cannot find takeback (uninstalled since) exits 127: the command is kept quiet and
  // successful whatever happens. Timeouts are in seconds.
  hookEntry: (command) => ({ type: 'command', command: `${command} 2>/dev/null || true`, timeout: 30 }),
  setupNote: (user) =>
    user
      ? 'Copilot CLI runs the hooks of ~/.copilot/hooks in every folder.'
      : "Copilot CLI runs a repository's hooks only in a trusted folder: answer its trust question when it first opens this folder " +
        '(copilot -p runs them once the folder is trusted, or for one run with --trust-folder). Until then it skips them without a word.',
  settingsFile: {
    project: ['.github', 'hooks', 'takeback.json'],
    user: (env, home) => [env.COPILOT_HOME || join(home, '.copilot'), 'hooks', 'takeback.json'],
    projectDir: 'workspace',
    dropEmpty: true,
  },
  // The repository's hook file and the user's. Copilot runs the repository's only in a folder it
  // trusts (see copilotTrust), the user's anywhere.
  checkHooks: (ctx) => {
    const project = ctx.hooksIn('workspace', join(ctx.workspace, ...copilot.settingsFile.project)).check;
    return [
      project.installed === 'none' ? project : { ...project, ...copilotTrust(ctx, ctx.cwd) },
      ctx.hooksIn('user', join(...copilot.settingsFile.user(ctx.env, ctx.home))).check,
    ];
  },
  context: (ev, fallbackCwd) => contextOf('copilot', ev, fallbackCwd),
  actions: (ev, ctx) => copilotActions(ev, ctx),
};

/**
 * Whether Copilot CLI trusts `folder` (the folder it starts in: doctor's), and so runs the
 * repository's hooks there: `COPILOT_ALLOW_ALL=true` trusts every folder for the run; else a
 * folder is trusted when it is, or is inside, one of the `trustedFolders` of
 * `$COPILOT_HOME/config.json` (`~/.copilot`, JSON with comments; where Copilot keeps the answer
 * "Yes, and remember this folder" to its trust question) or of its `settings.json` beside it.
 */
function copilotTrust(ctx: HookCheckContext, folder: string): { trusted: boolean; trust: string } {
  if (ctx.env.COPILOT_ALLOW_ALL === 'true') return { trusted: true, trust: 'trusted: COPILOT_ALLOW_ALL=true' };
  const home = copilot.settingsFile.user(ctx.env, ctx.home)[0]!;
  for (const name of ['config.json', 'settings.json']) {
    const file = join(home, name);
    const trusted = (ctx.readConfig(file) as { trustedFolders?: unknown } | null)?.trustedFolders;
    if (!Array.isArray(trusted)) continue;
    if (trusted.some((t) => typeof t === 'string' && isWithin(folder, t))) return { trusted: true, trust: `trusted (${file})` };
  }
  return {
    trusted: false,
    trust: `Copilot CLI does not trust ${folder} yet, and skips the repository's hooks there without a word: run copilot there and answer its trust question with "Yes, and remember this folder"`,
  };
}

function copilotActions(ev: CopilotHookEvent, ctx: EventContext): AgentAction[] {
  const tool = ev.tool_name ?? '';
  const pairing = { order: orderKey(tool, ev.tool_input) };
  switch (ev.hook_event_name) {
    case 'SessionStart':
      return [{ kind: 'session-start' }];
    case 'UserPromptSubmit':
      return [{ kind: 'turn-begin', prompt: str(ev.prompt) }];
    case 'PreToolUse':
      return [toolBegin(ev, ctx, pairing, { files: FILE_TOOLS, shell: SHELL_TOOL })];
    case 'PostToolUse':
    case 'PostToolUseFailure':
      if (!FILE_TOOLS[tool] && tool !== SHELL_TOOL) return [{ kind: 'ignore', why: `${tool}: not captured` }];
      return [{ kind: 'tool-end', pairing, tool }];
    case 'Stop':
      return [{ kind: 'turn-end' }];
    default:
      return [{ kind: 'ignore', why: `${ev.hook_event_name}: ignored` }];
  }
}
