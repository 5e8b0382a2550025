import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { TakebackError } from '../../core/errors.js';
import { json, print } from '../output.js';
import { renderGc } from '../render.js';

/** `takeback gc`: the retention rules and the sweep of unreferenced copies, for every workspace. */
export function registerGc(p: Command, ctx: CommandContext): void {
  p.command('gc')
    .description('expire change sets past the retention rules and sweep kept copies nothing refers to (every workspace)')
    .option('--dry-run', 'say what would go, change nothing')
    .option('--grace <seconds>', 'leave unreferenced copies younger than this (default 3600)')
    .option('--json', 'print JSON')
    .action(async (o: { dryRun?: boolean; grace?: string; json?: boolean }) => {
      const grace = o.grace === undefined ? undefined : Number(o.grace);
      if (grace !== undefined && !(grace >= 0)) throw new TakebackError('usage', `--grace wants seconds, not ${o.grace}`);
      const { loadConfig, takebackHome } = await import('../../core/config.js');
      const { collectGarbage } = await import('../../core/gc/sweep.js');
      const home = takebackHome();
      const r = collectGarbage({ home, config: loadConfig(home), dryRun: o.dryRun, graceMs: grace === undefined ? undefined : grace * 1000 });
      if (o.json) json(r);
      else print(renderGc(r));
      ctx.done(0);
    });
}
