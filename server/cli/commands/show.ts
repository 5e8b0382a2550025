import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { json, print } from '../output.js';
import { renderShow } from '../render.js';

/** `takeback show <id>`: one change set in full. */
export function registerShow(p: Command, ctx: CommandContext): void {
  p.command('show')
    .description('one change set in full')
    .argument('<id>')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }, cmd: Command) => {
      const e = await ctx.open(cmd);
      const { showChange } = await import('../../service/history.js');
      const r = showChange(e, id);
      if (o.json) json(r);
      else print(renderShow(r, ctx.color()));
      ctx.done(0);
    });
}
