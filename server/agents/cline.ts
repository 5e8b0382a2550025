import { join } from 'node:path';
import { absolutePath, str } from './actions.js';
import { patchPaths } from './codex-patch.js';
import type { AgentAction, AgentSpec, EventContext } from './spec.js';

/**
 * One Cline CLI hook event, as its hook programs get it on stdin (see
 * test/fixtures/cline-events/), with `hook_event_name` set from Cline's own `hookName` (see
 * {@link cline}'s `parse`). Only the fields takeback reads are listed.
 */
export interface ClineHookEvent {
  /** Cline's `hookName`: agent_start, agent_resume, tool_call, tool_result, agent_end, agent_abort, agent_error, … */
  hook_event_name: string;
  taskId?: string;
  /** `rootSessionId`: the session, the same for every task of it. */
  sessionContext?: { rootSessionId?: string };
  workspaceRoots?: string[];
  workspaceInfo?: { rootPath?: string };
  /** A tool call about to run (tool_call): Cline's id of the call, its tool and input. */
  tool_call?: { id?: string; name?: string; input?: Record<string, unknown> | string };
  /** A tool call that ended (tool_result), with the same id. */
  tool_result?: { id?: string; name?: string; input?: Record<string, unknown> };
}

/** The file tool, and the field of its input that names the file. */
const FILE_TOOLS: Record<string, string> = { editor: 'path' };
/** The shell tool: `commands`, a list of command lines run one after the other. */
const SHELL_TOOL = 'run_commands';
/** The patch tool Cline offers some models instead of `editor`: Codex's patch format, as the input itself or its `input`. */
const PATCH_TOOL = 'apply_patch';

/** A shell call's command lines, as one line for people: `a; b`. */
function commandsText(v: unknown): string {
  if (Array.isArray(v)) return v.map(String).join('; ');
  return typeof v === 'string' ? v : '';
}

/**
 * The hook program `init cline` writes for each event: a POSIX shell script that hands the event
 * on stdin to `command` and exits 0 printing nothing, whatever happens (Cline reads a hook's
 * stdout as its answer, and takeback gone must not stand in its way). The marker line is how
 * init and `--remove` know the script is takeback's.
 */
export function clineHookScript(command: string): string {
  return `#!/bin/sh\n# takeback: records this Cline event in takeback's journal (takeback init cline --remove takes it out).\n${command} >/dev/null 2>&1\nexit 0\n`;
}

/**
 * Cline CLI: one hook program per event, named after it, in `.cline/hooks/` of the folder Cline
 * runs in (or `$CLINE_DIR/hooks`, `~/.cline/hooks`, with `--user`). A task's run is a turn: its
 * start (agent_start, or agent_resume) begins it, its end (agent_end, agent_abort, agent_error)
 * ends it; `editor` is a file tool, and so is `apply_patch` (of the paths its patch names),
 * `run_commands` is bracketed by snapshots, each paired with its
 * end by Cline's tool call id. The session is Cline's `rootSessionId`.
 */
export const cline: AgentSpec<ClineHookEvent> = {
  name: 'cline',
  events: [
    { event: 'TaskStart' },
    { event: 'TaskResume' },
    { event: 'PreToolUse' },
    { event: 'PostToolUse' },
    { event: 'TaskComplete' },
    { event: 'TaskCancel' },
    { event: 'TaskError' },
  ],
  hookEntry: (command) => ({ type: 'program', command }),
  hookProgram: clineHookScript,
  parse: (v) => {
    const o = v as { hookName?: unknown } | null;
    return o && typeof o === 'object' && typeof o.hookName === 'string' ? { ...(o as object), hook_event_name: o.hookName } : null;
  },
  setupNote: (user) =>
    user
      ? 'Cline CLI runs the programs of ~/.cline/hooks for every task, in the terminal and with a prompt on the command line.'
      : 'Cline CLI runs these hook programs only when it works in this very folder (its --cwd).',
  settingsFile: {
    project: ['.cline', 'hooks'],
    user: (env, home) => [env.CLINE_DIR || join(home, '.cline'), 'hooks'],
    projectDir: 'cwd',
  },
  // The hooks folder of the folder doctor runs in (and the workspace root's) and the user's: each
  // program of takeback's there is current when it is the very script init writes now.
  checkHooks: (ctx) => [
    ...[...new Set([ctx.cwd, ctx.workspace])].map((f) => ctx.programsIn('workspace', join(f, ...cline.settingsFile.project))),
    ctx.programsIn('user', join(...cline.settingsFile.user(ctx.env, ctx.home))),
  ],
  context: (ev, fallbackCwd) => ({
    agent: 'cline',
    session: str(ev.sessionContext?.rootSessionId) ?? str(ev.taskId),
    cwd: str(ev.workspaceInfo?.rootPath) ?? str(ev.workspaceRoots?.[0]) ?? fallbackCwd,
  }),
  actions: (ev, ctx) => clineActions(ev, ctx),
};

function clineActions(ev: ClineHookEvent, ctx: EventContext): AgentAction[] {
  switch (ev.hook_event_name) {
    case 'agent_start':
    case 'agent_resume':
      return [{ kind: 'turn-begin', prompt: null }];
    case 'tool_call': {
      const call = ev.tool_call ?? {};
      const tool = str(call.name) ?? '';
      const pairing = { id: str(call.id) ?? '' };
      const fields = typeof call.input === 'object' && call.input !== null ? call.input : {};
      const field = FILE_TOOLS[tool];
      if (field) {
        const p = str(fields[field]);
        if (!p) return [{ kind: 'ignore', why: `${tool} without a path: ignored` }];
        return [{ kind: 'files-begin', pairing, tool, paths: [absolutePath(ctx.cwd, p)] }];
      }
      if (tool === SHELL_TOOL) return [{ kind: 'command-begin', pairing, tool, command: commandsText(fields.commands) }];
      if (tool === PATCH_TOOL) {
        const input: unknown = call.input;
        const patch = typeof input === 'string' ? input : str((input as { input?: unknown } | undefined)?.input) ?? '';
        const paths = patchPaths(patch).map((p) => absolutePath(ctx.cwd, p));
        if (paths.length === 0) return [{ kind: 'ignore', why: 'apply_patch names no file: not captured' }];
        return [{ kind: 'files-begin', pairing, tool, paths }];
      }
      return [{ kind: 'ignore', why: `${tool}: not captured` }];
    }
    case 'tool_result': {
      const tool = str(ev.tool_result?.name) ?? '';
      if (!FILE_TOOLS[tool] && tool !== SHELL_TOOL && tool !== PATCH_TOOL) return [{ kind: 'ignore', why: `${tool}: not captured` }];
      return [{ kind: 'tool-end', pairing: { id: str(ev.tool_result?.id) ?? '' }, tool }];
    }
    case 'agent_end':
    case 'agent_abort':
    case 'agent_error':
      return [{ kind: 'turn-end' }];
    default:
      return [{ kind: 'ignore', why: `${ev.hook_event_name}: ignored` }];
  }
}
