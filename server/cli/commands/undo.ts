import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { EXIT } from '../exit.js';
import { json, print } from '../output.js';
import { renderApply } from '../render.js';
import { selectorFrom, selectorOptions, untouchedFiles, type SelectorOpts } from '../selector.js';

/** `takeback undo` and `takeback redo`: take changes back, or apply undone ones again, all or nothing. */
export function registerUndoRedo(p: Command, ctx: CommandContext): void {
  for (const direction of ['undo', 'redo'] as const) {
    selectorOptions(p.command(direction).description(direction === 'undo' ? 'take changes back, all or nothing' : 'apply undone changes again'))
      .option('--force', 'replace later changes to the same files')
      .action(async (ids: string[], o: SelectorOpts & { json?: boolean; force?: boolean }, cmd: Command) => {
        const e = await ctx.open(cmd);
        const { applyStep } = await import('../../service/undo.js');
        // With a listener, Ctrl-C (or SIGTERM, SIGHUP) no longer ends the process: the step runs
        // to its end without giving way (a file being written in place is never left half-written
        // by it), and the listener, run after it, only says so. A file size limit (`ulimit -f`)
        // fails a write with EFBIG, and the step is put back, instead of killing the process
        // part-way: Node ignores SIGXFSZ, but the signal listeners of a library (signal-exit,
        // under write-file-atomic) leave it at its default once removed.
        for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
          process.on(sig, () => process.stderr.write(`takeback: ${sig} came during the ${direction}, which was finished first (see above)\n`));
        }
        process.on('SIGXFSZ', () => {});
        const r = applyStep(e, selectorFrom(e, ids, o), direction, { force: o.force });
        untouchedFiles(o, r);
        if (o.json) json(r);
        else print(renderApply(r, ctx.color()));
        // A step that left files it could not take back (capture gaps) is not a success, even
        // when it wrote all else: the person (or the script) must not take the result for checked.
        ctx.done(!r.written && r.conflicts.length > 0 ? EXIT.conflicts : r.complete ? 0 : EXIT.incomplete);
      });
  }
}
