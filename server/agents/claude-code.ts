import { join } from 'node:path';
import { contextOf, str, toolBegin } from './actions.js';
import { claudeShapedEvents, type AgentAction, type AgentSpec, type EventContext, type HookEventBase } from './spec.js';

/**
 * One Claude Code hook event, as it arrives on the hook's stdin (recorded in
 * test/fixtures/claude-events/). Only the fields takeback reads are listed.
 */
export interface ClaudeHookEvent extends HookEventBase {
  tool_use_id?: string;
  /** The prompt's id (every event of a turn carries it; seen with 2.1.332). */
  prompt_id?: string;
}

/** Claude Code's file tools and the input field that names the file each one changes. */
export const FILE_TOOLS: Record<string, string> = {
  Write: 'file_path',
  Edit: 'file_path',
  MultiEdit: 'file_path',
  NotebookEdit: 'notebook_path',
};

const TOOLS = 'Write|Edit|MultiEdit|NotebookEdit|Bash';

/**
 * Claude Code: UserPromptSubmit begins a turn; PreToolUse of a file tool keeps its path (paired
 * by `tool_use_id`), of Bash snapshots the workspace; PostToolUse and PostToolUseFailure end the
 * capture; Stop ends the turn, and so does StopFailure (the prompt failed: an API error, and no
 * Stop comes); SessionStart makes sure a baseline snapshot exists.
 */
export const claudeCode: AgentSpec<ClaudeHookEvent> = {
  name: 'claude-code',
  // StopFailure is Claude Code's own: a prompt that fails (the model's API answers with an error)
  // sends it instead of Stop, and without it the turn stays open.
  events: [...claudeShapedEvents(TOOLS), { event: 'StopFailure' }],
  hookEntry: (command) => ({ type: 'command', command, timeout: 30 }),
  settingsFile: {
    project: ['.claude', 'settings.json'],
    // Claude Code keeps the user's settings in `$CLAUDE_CONFIG_DIR` when that is set.
    user: (env, home) => (env.CLAUDE_CONFIG_DIR ? [env.CLAUDE_CONFIG_DIR, 'settings.json'] : [home, '.claude', 'settings.json']),
    projectDir: 'workspace',
    dropEmpty: true,
  },
  // The files Claude Code reads hooks from: its settings for one person and the team's in the
  // project, and the user's. It asks for no trust of its own in them.
  checkHooks: (ctx) => [
    ctx.hooksIn('workspace', join(ctx.workspace, '.claude', 'settings.local.json')).check,
    ctx.hooksIn('workspace', join(ctx.workspace, '.claude', 'settings.json')).check,
    ctx.hooksIn('user', join(...claudeCode.settingsFile.user(ctx.env, ctx.home))).check,
  ],
  context: (ev, fallbackCwd) => contextOf('claude-code', ev, fallbackCwd),
  actions: (ev, ctx) => claudeActions(ev, ctx),
};

function claudeActions(ev: ClaudeHookEvent, ctx: EventContext): AgentAction[] {
  const tool = ev.tool_name ?? '';
  const pairing = { id: ev.tool_use_id ?? '' };
  switch (ev.hook_event_name) {
    case 'SessionStart':
      return [{ kind: 'session-start' }];
    case 'UserPromptSubmit':
      // The prompt's id names the turn: the same event handled twice (an http hook and the
      // command hook beside it, as a daemon starts or leaves) begins one turn, not two. Without
      // an id (Claude Code leaves it out at times), the session and the prompt's text tell it
      // while the turn holds nothing yet (journal/turns.ts `twinOf`).
      return [{ kind: 'turn-begin', prompt: str(ev.prompt), agentTurn: str(ev.prompt_id) }];
    case 'PreToolUse':
      return [toolBegin(ev, ctx, pairing, { files: FILE_TOOLS, shell: 'Bash' })];
    case 'PostToolUse':
    case 'PostToolUseFailure':
      return [{ kind: 'tool-end', pairing, tool }];
    case 'Stop':
    case 'StopFailure':
      return [{ kind: 'turn-end' }];
    default:
      return [{ kind: 'ignore', why: `${ev.hook_event_name}: ignored` }];
  }
}
