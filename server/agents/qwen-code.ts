import { dirname, join, sep } from 'node:path';
import { isWithin, pathForms } from './trust-paths.js';
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
    // Qwen Code adds its settings format's number to a settings file it loads.
    agentMembers: ['$version'],
  },
  checkHooks: (ctx) => qwenHookChecks(ctx),
  context: (ev, fallbackCwd) => contextOf('qwen-code', ev, fallbackCwd),
  actions: (ev, ctx) => qwenActions(ev, ctx),
};

/** A rule of Qwen Code's `trustedFolders.json`: a folder and its level. */
type TrustLevel = 'TRUST_FOLDER' | 'TRUST_PARENT' | 'DO_NOT_TRUST';

/** How many names `p` has below the root of the file system (`/a/b`: 2). */
function depth(p: string): number {
  return p.split(sep).filter(Boolean).length;
}

/**
 * Whether Qwen Code trusts `folder`, as it decides when folder trust is on: the rules of
 * `$QWEN_CODE_TRUSTED_FOLDERS_PATH` (else `$QWEN_HOME/trustedFolders.json`), where a rule
 * covers its folder and everything below (TRUST_PARENT: its parent's), the deepest rule that
 * covers the folder decides, DO_NOT_TRUST winning a tie; with no rule the folder is not trusted
 * (Qwen Code asks in its interactive mode, and `qwen -p` takes it as not trusted).
 */
function qwenTrust(ctx: HookCheckContext, qwenHome: string, folder: string): { trusted: boolean; trust: string } {
  const file = ctx.env.QWEN_CODE_TRUSTED_FOLDERS_PATH || join(qwenHome, 'trustedFolders.json');
  const rules = (ctx.readConfig(file) ?? {}) as Record<string, TrustLevel>;
  let best: { depth: number; level: TrustLevel } | null = null;
  for (const [rule, level] of Object.entries(rules)) {
    if (level !== 'TRUST_FOLDER' && level !== 'TRUST_PARENT' && level !== 'DO_NOT_TRUST') continue;
    for (const dir of pathForms(level === 'TRUST_PARENT' ? dirname(rule) : rule)) {
      if (!isWithin(folder, dir)) continue;
      const d = depth(dir);
      if (!best || d > best.depth || (d === best.depth && level === 'DO_NOT_TRUST')) best = { depth: d, level };
    }
  }
  const how = 'run qwen there and trust the folder with /trust';
  if (!best) return { trusted: false, trust: `folder trust is on and Qwen Code does not trust ${folder} yet: it leaves this folder's settings out, hooks included (${how})` };
  if (best.level === 'DO_NOT_TRUST') return { trusted: false, trust: `${file} says not to trust ${folder}: Qwen Code leaves this folder's settings out, hooks included (${how})` };
  return { trusted: true, trust: `trusted (${file})` };
}

/**
 * Qwen Code reads the hooks of the folder it starts in (doctor's folder, and the workspace
 * root's when that is another) and the user's. With folder trust turned on in the user's
 * settings (`security.folderTrust.enabled`) it reads a folder's own settings, and so runs its
 * hooks, only where it trusts the folder (see {@link qwenTrust}); the user's hooks run anywhere.
 */
function qwenHookChecks(ctx: HookCheckContext): HookCheck[] {
  const qwenHome = qwenCode.settingsFile.user(ctx.env, ctx.home)[0]!;
  const user = join(qwenHome, 'settings.json');
  const settings = ctx.readConfig(user) as { security?: { folderTrust?: { enabled?: boolean } } } | null;
  const folderTrust = settings?.security?.folderTrust?.enabled === true;
  const project = [...new Set([ctx.cwd, ctx.workspace])].map((f) => {
    const c = ctx.hooksIn('workspace', join(f, '.qwen', 'settings.json')).check;
    return c.installed === 'none' || !folderTrust ? c : { ...c, ...qwenTrust(ctx, qwenHome, f) };
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
