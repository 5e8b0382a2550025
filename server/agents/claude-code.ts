import { isAbsolute, resolve } from 'node:path';
import { openEngine } from '../core/engine.js';
import { TakebackError } from '../core/errors.js';
import { labelFromPrompt } from '../core/journal/turns.js';
import { captureBegin, captureEnd, ensureBaseline, turnBegin, turnEnd } from '../service/capture.js';

/**
 * One Claude Code hook event, as it arrives on the hook's stdin (see `shared/notes/agents.md`
 * and test/fixtures/claude-events/). Only the fields takeback reads are listed.
 */
export interface ClaudeHookEvent {
  hook_event_name: string;
  session_id?: string;
  cwd?: string;
  prompt?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  tool_use_id?: string;
}

/** Claude Code's file tools and the input field that names the file each one changes. */
export const FILE_TOOLS: Record<string, string> = {
  Write: 'file_path',
  Edit: 'file_path',
  MultiEdit: 'file_path',
  NotebookEdit: 'notebook_path',
};

/** The hook events takeback listens to, with the tool matcher where one applies. */
export const CLAUDE_HOOK_EVENTS: { event: string; matcher?: string }[] = [
  { event: 'SessionStart' },
  { event: 'UserPromptSubmit' },
  { event: 'PreToolUse', matcher: 'Write|Edit|MultiEdit|NotebookEdit|Bash' },
  { event: 'PostToolUse', matcher: 'Write|Edit|MultiEdit|NotebookEdit|Bash' },
  { event: 'PostToolUseFailure', matcher: 'Write|Edit|MultiEdit|NotebookEdit|Bash' },
  { event: 'Stop' },
];

/**
 * Acts on one event: UserPromptSubmit begins a turn; PreToolUse of a file tool begins a file
 * capture of its path (keyed by `tool_use_id`), of Bash a command capture; PostToolUse and
 * PostToolUseFailure end the capture; Stop ends the turn; SessionStart makes sure a baseline
 * snapshot exists. Returns a short description for the log. Throws on bad input; the caller
 * logs and swallows.
 */
export function handleClaudeEvent(ev: ClaudeHookEvent, env: NodeJS.ProcessEnv = process.env): string {
  const cwd = typeof ev.cwd === 'string' && ev.cwd ? ev.cwd : process.cwd();
  const session = typeof ev.session_id === 'string' ? ev.session_id : null;
  const engine = openEngine({ cwd, env });
  try {
    switch (ev.hook_event_name) {
      case 'SessionStart': {
        const s = ensureBaseline(engine);
        return `session start: snapshot ${s.status}`;
      }
      case 'UserPromptSubmit': {
        const { turn } = turnBegin(engine, { agent: 'claude-code', session, label: labelFromPrompt(ev.prompt) });
        return `turn ${turn.id} begun`;
      }
      case 'PreToolUse': {
        const tool = ev.tool_name ?? '';
        const id = ev.tool_use_id ?? '';
        const field = FILE_TOOLS[tool];
        if (field) {
          const p = ev.tool_input?.[field];
          if (typeof p !== 'string' || p === '') return `${tool} without a path: ignored`;
          const abs = isAbsolute(p) ? p : resolve(cwd, p);
          captureBegin(engine, { id, paths: [abs], cwd, session, tool });
          return `capture ${id} begun (${tool} ${abs})`;
        }
        if (tool === 'Bash') {
          const command = typeof ev.tool_input?.command === 'string' ? ev.tool_input.command : '';
          const r = captureBegin(engine, { id, command, tool, session });
          return `capture ${id} begun (Bash, scan ${r.scan?.status})`;
        }
        return `${tool}: not captured`;
      }
      case 'PostToolUse':
      case 'PostToolUseFailure': {
        const id = ev.tool_use_id ?? '';
        try {
          const r = captureEnd(engine, { id });
          return `capture ${id} ended: ${r.set ? `set ${r.set.id}` : 'no change'}`;
        } catch (e) {
          if (e instanceof TakebackError && e.code === 'not-found') return `capture ${id}: no begin (tool not captured)`;
          throw e;
        }
      }
      case 'Stop': {
        try {
          const r = turnEnd(engine, { session });
          return `turn ${r.turn} ended${r.set ? `: set ${r.set.id} changed during the turn` : ''}`;
        } catch (e) {
          if (e instanceof TakebackError && e.code === 'not-found') return 'stop: no open turn';
          throw e;
        }
      }
      default:
        return `${ev.hook_event_name}: ignored`;
    }
  } finally {
    engine.journal.close();
  }
}
