import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { json } from '../output.js';
import { page } from '../pager.js';
import { renderPreview } from '../render.js';
import { selectorFrom, selectorOptions, untouchedFiles, type SelectorOpts } from '../selector.js';

/** `takeback preview`: what an undo (or, with `--redo`, a redo) would do, writing nothing; through the pager on a terminal. */
export function registerPreview(p: Command, ctx: CommandContext): void {
  selectorOptions(p.command('preview').description('show what an undo (or redo) would do, writing nothing'))
    .option('--redo', 'preview a redo instead')
    .option('--no-pager', 'write to standard output even on a terminal')
    .action(async (ids: string[], o: SelectorOpts & { json?: boolean; redo?: boolean; pager: boolean }, cmd: Command) => {
      const e = await ctx.open(cmd);
      const { previewStep } = await import('../../service/undo.js');
      const r = previewStep(e, selectorFrom(e, ids, o), o.redo ? 'redo' : 'undo');
      untouchedFiles(o, r);
      if (o.json) json(r);
      else await page(renderPreview(r, ctx.color()), o.pager);
      ctx.done(0);
    });
}
