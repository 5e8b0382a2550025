import { join } from 'node:path';
import { absolutePath, contextOf, str } from './actions.js';
import { patchPaths } from './codex-patch.js';
import type { AgentAction, AgentSpec, EventContext, HookCheck, HookCheckContext, HookEventBase } from './spec.js';

/**
 * One Codex CLI hook event (its hooks.json events, recorded in
 * test/fixtures/codex-events/). Only the fields takeback reads are listed.
 */
export interface CodexHookEvent extends HookEventBase {
  turn_id?: string;
  tool_use_id?: string;
}

/** The names Codex's shell tool has gone by; hooks see it as `Bash`. */
const SHELL_TOOLS = new Set(['Bash', 'shell', 'exec_command', 'local_shell', 'unified_exec']);
const PATCH_TOOL = 'apply_patch';

/** A shell call's command line: a string, or an argv array joined for people. */
function commandText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(String).join(' ');
  return '';
}

/**
 * Codex CLI: UserPromptSubmit begins a turn (its `turn_id` kept) and Stop ends it; a shell call
 * (`Bash`) is bracketed by snapshots; an `apply_patch` call is captured as a file tool of the paths
 * its patch names (update, add, delete, move), kept before the patch applies. Tool calls pair by
 * Codex's call id (`tool_use_id`). A patch that fails gets no PostToolUse: its capture is ended
 * at Stop. What a turn changed that no tool call claimed (a Codex that fired no hook for a patch)
 * is recorded at Stop as "changed during this turn". Hook timeouts are whole seconds.
 */
export const codex: AgentSpec<CodexHookEvent> = {
  name: 'codex',
  events: [
    { event: 'SessionStart' },
    { event: 'UserPromptSubmit' },
    // Codex matches the regex against the whole tool name (`apply_patch` also answers to Edit
    // and Write there); the shell tool is `Bash` in hooks.
    { event: 'PreToolUse', matcher: 'Bash|apply_patch' },
    { event: 'PostToolUse', matcher: 'Bash|apply_patch' },
    { event: 'Stop' },
  ],
  hookEntry: (command) => ({ type: 'command', command, timeout: 30 }),
  setupNote: (user) =>
    user
      ? 'Codex runs hooks only once you have trusted them: run `codex`, then review and trust them with /hooks. Until then it skips them without a word.'
      : 'Codex runs hooks only in a trusted project, and only once you have trusted them: run `codex` here, trust the folder, ' +
        'then review and trust the hooks with /hooks. Until then it skips them without a word.',
  settingsFile: {
    project: ['.codex', 'hooks.json'],
    user: (env, home) => [env.CODEX_HOME || join(home, '.codex'), 'hooks.json'],
    // Codex reads `.codex/` folders from the project root (git's top) down to where it runs.
    projectDir: 'workspace',
    dropEmpty: true,
  },
  checkHooks: (ctx) => codexHookChecks(ctx),
  context: (ev, fallbackCwd) => contextOf('codex', ev, fallbackCwd),
  actions: (ev, ctx) => codexActions(ev, ctx),
};

/** What `$CODEX_HOME/config.toml` says of trust: each trusted project, and each hook's trusted hash by its key. */
interface CodexTrust {
  projects?: Record<string, { trust_level?: string }>;
  hooks?: { state?: Record<string, { trusted_hash?: string }> };
}

/**
 * Codex runs a project's `.codex/hooks.json` only in a project it trusts, and any hook only once
 * it is trusted (its /hooks review): both are kept in `$CODEX_HOME/config.toml`, a hook's as
 * `[hooks.state."<file>:<event in snake case>:<group>:<index>"] trusted_hash = "sha256:…"`.
 * The hash is of the hook as Codex read it, which takeback does not compute: a hook `init`
 * rewrote since it was trusted still has its key, and Codex skips it until it is trusted again.
 */
function codexHookChecks(ctx: HookCheckContext): HookCheck[] {
  const home = ctx.env.CODEX_HOME || join(ctx.home, '.codex');
  const config = (ctx.readConfig(join(home, 'config.toml')) ?? {}) as CodexTrust;
  const state = config.hooks?.state ?? {};
  const projectTrusted = config.projects?.[ctx.workspace]?.trust_level === 'trusted';
  const snake = (event: string) => event.replace(/[A-Z]/g, (c, i: number) => `${i > 0 ? '_' : ''}${c.toLowerCase()}`);
  const check = (scope: HookCheck['scope'], file: string): HookCheck => {
    const { check: c, places } = ctx.hooksIn(scope, file);
    if (places.length === 0) return c;
    const untrusted = places.filter((p) => !state[`${file}:${snake(p.event)}:${p.group}:${p.index}`]?.trusted_hash).length;
    if (scope === 'workspace' && !projectTrusted) {
      return { ...c, trusted: false, trust: 'Codex does not trust this project yet: run `codex` here and trust the folder, then review and trust the hooks with /hooks' };
    }
    if (untrusted > 0) return { ...c, trusted: false, trust: `${untrusted} of takeback's hooks here are not trusted in Codex (it skips them without a word): review and trust them with /hooks` };
    return { ...c, trusted: true, trust: 'trusted in Codex (config.toml); after init rewrites a hook, trust it again with /hooks' };
  };
  return [check('workspace', join(ctx.workspace, '.codex', 'hooks.json')), check('user', join(home, 'hooks.json'))];
}

function codexActions(ev: CodexHookEvent, ctx: EventContext): AgentAction[] {
  const tool = ev.tool_name ?? '';
  const agentTurn = str(ev.turn_id);
  const pairing = { id: ev.tool_use_id ?? '' };
  switch (ev.hook_event_name) {
    case 'SessionStart':
      return [{ kind: 'session-start' }];
    case 'UserPromptSubmit':
      return [{ kind: 'turn-begin', prompt: str(ev.prompt), agentTurn }];
    case 'PreToolUse': {
      if (tool === PATCH_TOOL) {
        const patch = typeof ev.tool_input?.command === 'string' ? ev.tool_input.command : typeof ev.tool_input?.input === 'string' ? ev.tool_input.input : '';
        const paths = patchPaths(patch).map((p) => absolutePath(ctx.cwd, p));
        if (paths.length === 0) return [{ kind: 'ignore', why: 'apply_patch names no file: not captured' }];
        return [{ kind: 'files-begin', pairing, tool, paths, agentTurn }];
      }
      if (SHELL_TOOLS.has(tool)) {
        return [{ kind: 'command-begin', pairing, tool, command: commandText(ev.tool_input?.command ?? ev.tool_input?.cmd), agentTurn }];
      }
      return [{ kind: 'ignore', why: `${tool}: not captured` }];
    }
    case 'PostToolUse':
      if (tool !== PATCH_TOOL && !SHELL_TOOLS.has(tool)) return [{ kind: 'ignore', why: `${tool}: not captured` }];
      return [{ kind: 'tool-end', pairing, tool }];
    case 'Stop':
      return [{ kind: 'turn-end', agentTurn }];
    default:
      return [{ kind: 'ignore', why: `${ev.hook_event_name}: ignored` }];
  }
}
