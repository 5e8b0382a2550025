import { dirname, join, relative, isAbsolute } from 'node:path';
import { contextOf, orderKey, str, toolBegin } from './actions.js';
import type { AgentAction, AgentSpec, EventContext, HookCheck, HookCheckContext, HookEventBase } from './spec.js';

/**
 * One Gemini CLI hook event (settings.json `hooks`, recorded in
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
  // with 2 or more and says something; takeback's hook exits 0 and prints nothing, and the
  // command is kept quiet and successful whatever else happens (a Node that fails to start).
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
    dropEmpty: true,
    jsonc: true,
  },
  checkHooks: (ctx) => geminiHookChecks(ctx),
  context: (ev, fallbackCwd) => contextOf('gemini', ev, fallbackCwd),
  actions: (ev, ctx) => geminiActions(ev, ctx),
};

/** A rule of Gemini CLI's `trustedFolders.json`: a folder and its level. */
type TrustLevel = 'TRUST_FOLDER' | 'TRUST_PARENT' | 'DO_NOT_TRUST';

/**
 * Whether Gemini CLI trusts `folder`, as it decides (its trust.ts): `GEMINI_CLI_TRUST_WORKSPACE`,
 * then `security.folderTrust.enabled` of the user's settings (on unless false), then the longest
 * rule of `trustedFolders.json` (`$GEMINI_CLI_TRUSTED_FOLDERS_PATH`, else beside the user's
 * settings) whose folder holds `folder` (`TRUST_PARENT`: its parent). No rule: not trusted yet.
 */
function geminiTrust(ctx: HookCheckContext, cliHome: string, folder: string): { trusted: boolean; trust: string } {
  if (ctx.env.GEMINI_CLI_TRUST_WORKSPACE === 'true') return { trusted: true, trust: 'trusted: GEMINI_CLI_TRUST_WORKSPACE=true' };
  if (ctx.env.GEMINI_CLI_TRUST_WORKSPACE === 'false') return { trusted: false, trust: 'not trusted: GEMINI_CLI_TRUST_WORKSPACE=false' };
  const settings = ctx.readConfig(join(cliHome, '.gemini', 'settings.json')) as { security?: { folderTrust?: { enabled?: boolean } } } | null;
  if (settings?.security?.folderTrust?.enabled === false) return { trusted: true, trust: 'folder trust is off in the user settings' };
  const file = ctx.env.GEMINI_CLI_TRUSTED_FOLDERS_PATH || join(cliHome, '.gemini', 'trustedFolders.json');
  const rules = (ctx.readConfig(file) ?? {}) as Record<string, TrustLevel>;
  let best: { len: number; level: TrustLevel } | null = null;
  for (const [rule, level] of Object.entries(rules)) {
    const dir = level === 'TRUST_PARENT' ? dirname(rule) : rule;
    const rel = relative(dir, folder);
    if (rel.startsWith('..') || isAbsolute(rel)) continue;
    if (!best || rule.length > best.len) best = { len: rule.length, level };
  }
  if (!best) return { trusted: false, trust: `Gemini CLI does not trust ${folder} yet (it asks the first time it starts there; /permissions changes it)` };
  if (best.level === 'DO_NOT_TRUST') return { trusted: false, trust: `${file} says not to trust ${folder}: Gemini CLI runs no hooks there (/permissions changes it)` };
  return { trusted: true, trust: `trusted (${file})` };
}

/**
 * Gemini CLI reads the hooks of the folder it starts in (`<cwd>/.gemini/settings.json`: doctor's
 * folder, and the workspace root's when that is another) and the user's, and runs them only in a
 * folder it trusts.
 */
function geminiHookChecks(ctx: HookCheckContext): HookCheck[] {
  const cliHome = ctx.env.GEMINI_CLI_HOME || ctx.home;
  const folders = [...new Set([ctx.cwd, ctx.workspace])];
  const withTrust = (c: HookCheck, folder: string): HookCheck => (c.installed === 'none' ? c : { ...c, ...geminiTrust(ctx, cliHome, folder) });
  return [
    ...folders.map((f) => withTrust(ctx.hooksIn('workspace', join(f, '.gemini', 'settings.json')).check, f)),
    withTrust(ctx.hooksIn('user', join(cliHome, '.gemini', 'settings.json')).check, ctx.cwd),
  ];
}

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
