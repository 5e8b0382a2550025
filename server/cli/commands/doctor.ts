import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { doctorReport } from '../doctor-report.js';
import { json, print } from '../output.js';
import { renderDoctor } from '../render.js';

/** `takeback doctor`: checks the journal and says what is kept. */
export function registerDoctor(p: Command, ctx: CommandContext): void {
  p.command('doctor')
    .description('check the journal and say what is kept')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const r = await doctorReport(await ctx.open(cmd));
      if (o.json) json(r);
      else print(renderDoctor(r, ctx.color()));
      ctx.done(0);
    });
}
