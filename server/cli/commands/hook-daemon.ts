import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { BIN } from '../self.js';

/** `takeback hook-daemon` (hidden): the capture daemon, started by the hooks themselves. */
export function registerHookDaemon(p: Command, ctx: CommandContext): void {
  p.command('hook-daemon', { hidden: true })
    .description('serve hook events from a capture daemon (started by the hooks themselves)')
    .action(async () => {
      // Loaded here only: no other command needs it.
      const { runDaemon } = await import('../../daemon/lifecycle.js');
      const { handleHookText, hookEventPlan, prepareHookText } = await import('../hook.js');
      ctx.done(await runDaemon({ handle: handleHookText, prepare: prepareHookText, plan: hookEventPlan, bin: BIN }));
    });
}
