import { join } from 'node:path';
import { absolutePath, contextOf, str } from './actions.js';
import { patchPaths } from './codex-patch.js';
import { checkPlugin } from './opencode-plugin.js';
import type { AgentAction, AgentName, AgentSpec, EventContext, HookEventBase } from './spec.js';

/**
 * One event as takeback's opencode plugin (clients/opencode/takeback.js) hands it over: the
 * plugin hook's name as `hook_event_name` (`session.created`, `chat.message`,
 * `tool.execute.before`, `tool.execute.after`, `session.idle`), the session, the project folder
 * as `cwd`, and for a tool call its tool, its arguments as `tool_input` and opencode's `callID`.
 * The Kilo Code CLI, built on opencode, sends the same.
 */
export interface OpencodeEvent extends HookEventBase {
  /** The tool call's id (opencode's `callID`: the model's tool call id). */
  call_id?: string;
  /** The user message that begins a turn. */
  message_id?: string;
}

/** opencode's file tools that name their one file in `filePath`. */
const FILE_TOOLS = new Set(['write', 'edit', 'multiedit']);
/** opencode's patch tools (for some models, in place of edit and write): the paths are in the patch's text, Codex's format. */
const PATCH_TOOLS = new Set(['apply_patch', 'patch']);
const SHELL_TOOL = 'bash';

function toolBegin(ev: OpencodeEvent, ctx: EventContext): AgentAction {
  const tool = ev.tool_name ?? '';
  const pairing = { id: ev.call_id ?? '' };
  if (FILE_TOOLS.has(tool)) {
    const p = str(ev.tool_input?.filePath);
    if (!p) return { kind: 'ignore', why: `${tool} without a path: ignored` };
    return { kind: 'files-begin', pairing, tool, paths: [absolutePath(ctx.cwd, p)] };
  }
  if (PATCH_TOOLS.has(tool)) {
    const text = str(ev.tool_input?.patchText);
    return { kind: 'files-begin', pairing, tool, paths: text ? patchPaths(text).map((p) => absolutePath(ctx.cwd, p)) : [] };
  }
  if (tool === SHELL_TOOL) return { kind: 'command-begin', pairing, tool, command: str(ev.tool_input?.command) ?? '' };
  return { kind: 'ignore', why: `${tool}: not captured` };
}

function opencodeActions(ev: OpencodeEvent, ctx: EventContext): AgentAction[] {
  const tool = ev.tool_name ?? '';
  switch (ev.hook_event_name) {
    case 'session.created':
      return [{ kind: 'session-start' }];
    case 'chat.message':
      // The user message's id names the turn: the same prompt handed over twice begins one turn.
      return [{ kind: 'turn-begin', prompt: str(ev.prompt), agentTurn: str(ev.message_id) }];
    case 'tool.execute.before':
      return [toolBegin(ev, ctx)];
    case 'tool.execute.after':
      if (!FILE_TOOLS.has(tool) && !PATCH_TOOLS.has(tool) && tool !== SHELL_TOOL) return [{ kind: 'ignore', why: `${tool}: not captured` }];
      return [{ kind: 'tool-end', pairing: { id: ev.call_id ?? '' }, tool }];
    case 'session.idle':
      return [{ kind: 'turn-end' }];
    default:
      return [{ kind: 'ignore', why: `${ev.hook_event_name}: ignored` }];
  }
}

/**
 * The spec of an agent built on opencode (`name`, its folder name `dir`: `.opencode` in a
 * project and `$XDG_CONFIG_HOME/opencode` for the user, or Kilo's `.kilo` and `kilo`). Such an
 * agent runs no hook command: it loads takeback's plugin from its plugins folder, which `init`
 * copies there (see opencode-install.ts). A prompt (`chat.message`) begins a turn and the session
 * going idle ends it; `write`, `edit` and `multiedit` are file tools of their `filePath`,
 * `apply_patch` of the paths its patch names; `bash` is bracketed by snapshots; begin and end
 * are paired by opencode's `callID`. A tool call that fails has no `tool.execute.after` (opencode
 * calls it on success only): the turn's end records what it changed.
 */
function opencodeLike(name: AgentName, dir: { project: string; user: string }, product: string): AgentSpec<OpencodeEvent> {
  const plugin = (user: boolean, env: NodeJS.ProcessEnv, home: string) =>
    user ? [env.XDG_CONFIG_HOME || join(home, '.config'), dir.user, 'plugins', 'takeback.js'] : [dir.project, 'plugins', 'takeback.js'];
  return {
    name,
    events: [
      { event: 'session.created' },
      { event: 'chat.message' },
      { event: 'tool.execute.before' },
      { event: 'tool.execute.after' },
      { event: 'session.idle' },
    ],
    // No hook entries: the plugin is the hook (see `plugin`).
    hookEntry: (command) => ({ type: 'plugin', command }),
    settingsFile: {
      project: plugin(false, {}, ''),
      user: (env, home) => plugin(true, env, home),
      projectDir: 'workspace',
    },
    plugin: true,
    // doctor: the plugin in the project and for the user, each as init writes it now.
    checkHooks: (ctx) => [checkPlugin(name, 'workspace', join(ctx.workspace, ...plugin(false, ctx.env, ctx.home))), checkPlugin(name, 'user', join(...plugin(true, ctx.env, ctx.home)))],
    setupNote: () =>
      `${product} loads the plugin when it starts: restart it. It asks for no trust first. At start it installs its own ` +
      `plugin package into the plugins folder's parent (with no network, it retries for about a minute each start, then goes on).`,
    context: (ev, fallbackCwd) => contextOf(name, ev, fallbackCwd),
    actions: (ev, ctx) => opencodeActions(ev, ctx),
  };
}

/** opencode (`opencode-ai`): `.opencode/plugins/takeback.js`, or `$XDG_CONFIG_HOME/opencode/plugins/takeback.js` with `--user`. */
export const opencode = opencodeLike('opencode', { project: '.opencode', user: 'opencode' }, 'opencode');

/** The Kilo Code CLI (`@kilocode/cli`), built on opencode: `.kilo/plugins/takeback.js`, or `$XDG_CONFIG_HOME/kilo/plugins/takeback.js`. */
export const kilo = opencodeLike('kilo', { project: '.kilo', user: 'kilo' }, 'Kilo Code');
