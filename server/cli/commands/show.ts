import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { json } from '../output.js';
import { page } from '../pager.js';
import { renderShow, renderStat } from '../render.js';

/**
 * `takeback show <id>`: one change set in full, with what the agent did to each file as a
 * forward diff (`--stat`: git's diffstat instead); through the pager on a terminal.
 */
export function registerShow(p: Command, ctx: CommandContext): void {
  p.command('show')
    .description('one change set in full, with its diff (what the agent did)')
    .argument('<id>')
    .option('--stat', 'a line a file with its lines added and removed, instead of the diff')
    .option('--no-pager', 'write to standard output even on a terminal')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean; stat?: boolean; pager: boolean }, cmd: Command) => {
      const e = await ctx.open(cmd);
      const { hunkProbe, showChange } = await import('../../service/history.js');
      const { probe, asked } = hunkProbe(e);
      let r = showChange(e, id, probe);
      // A file written over since: asked again, by its hunks (a diff, loaded only then).
      if (asked()) r = showChange(e, id, (await import('../../service/in-place.js')).hunkInPlace(e));
      if (o.json) json(r);
      else {
        const { changeDiffs } = await import('../../service/change-diff.js');
        const diffs = changeDiffs(e, id);
        await page(o.stat ? renderStat(r, ctx.color(), diffs) : renderShow(r, ctx.color(), diffs), o.pager);
      }
      ctx.done(0);
    });
}
