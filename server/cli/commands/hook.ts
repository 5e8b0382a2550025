import { Command } from 'commander';
import type { CommandContext } from '../context.js';

/** `takeback hook <agent>`: one agent hook event on stdin (see hook.ts). */
export function registerHook(p: Command, ctx: CommandContext): void {
  p.command('hook')
    .description('read one agent hook event on stdin (never fails, prints nothing)')
    .addArgument(new Command().createArgument('<agent>', 'claude-code | codex | gemini | qwen-code | copilot | cline | opencode | kilo'))
    .action(async (agent: string) => {
      const { runHook } = await import('../hook.js');
      ctx.done(runHook(agent));
    });
}
