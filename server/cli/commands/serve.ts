import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { VERSION } from '../self.js';

/** `takeback serve`: the sidecar for editors and scripts, over stdio. */
export function registerServe(p: Command, ctx: CommandContext): void {
  p.command('serve')
    .description('run the sidecar for editors and scripts: JSON-RPC (LSP framing) over stdio')
    .option('--stdio', 'talk over stdio (the default; accepted because language clients pass it)')
    .allowUnknownOption()
    .action(async (_o: { stdio?: boolean }, cmd: Command) => {
      const { workspace } = cmd.optsWithGlobals() as { workspace?: string };
      // Loaded here only: the hook and the other commands start without the LSP libraries.
      const { serve } = await ctx.loadSidecar();
      // Every request and person's save waits for what the capture daemon answered early to be recorded.
      const [{ settleIfRunning }, { takebackHome }, { logHook }] = await Promise.all([import('../../daemon/settle.js'), import('../../core/home.js'), import('../../daemon/log.js')]);
      const home = takebackHome();
      const settle = () => settleIfRunning(home, { log: (m) => logHook(home, m) });
      ctx.done(await serve({ cwd: workspace ?? process.cwd(), version: VERSION, settle }));
    });
}
