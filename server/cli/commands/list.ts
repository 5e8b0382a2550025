import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { json, print } from '../output.js';
import { renderList } from '../render.js';
import { painter } from '../style.js';

/** `takeback list`: the change sets, grouped by turn, newest first. */
export function registerList(p: Command, ctx: CommandContext): void {
  p.command('list')
    .description('list change sets, grouped by turn, newest first')
    .option('--turn <T>', 'only this turn')
    .option('--all', 'every turn, and expired changes too')
    .option('--agent <NAME>', 'only this agent: claude-code, codex, gemini, qwen-code, copilot, cline, cli')
    .option('--hunks <path>', "where each change's hunks of this file are in it now (the only file read)")
    .option('--json', 'print JSON (see README)')
    .action(async (o: { turn?: string; all?: boolean; agent?: string; hunks?: string; json?: boolean }, cmd: Command) => {
      const e = await ctx.open(cmd);
      const { hunkProbe, listChanges } = await import('../../service/history.js');
      let hunks: string | undefined;
      if (o.hunks !== undefined) {
        const { toWorkspacePath } = await import('../../core/workspace.js');
        const rel = toWorkspacePath(e.root, o.hunks, process.cwd());
        if (rel === null) {
          const { TakebackError } = await import('../../core/errors.js');
          throw new TakebackError('outside-workspace', `${o.hunks} is outside the workspace ${e.root}`, { path: o.hunks });
        }
        hunks = rel;
      }
      const { probe, asked } = hunkProbe(e);
      let r = listChanges(e, { turn: o.turn, all: o.all, agent: o.agent, inPlace: probe });
      // A file written over since: asked again, by its hunks (a diff, loaded only then).
      if (asked()) r = listChanges(e, { turn: o.turn, all: o.all, agent: o.agent, inPlace: (await import('../../service/in-place.js')).hunkInPlace(e) });
      if (hunks !== undefined) (await import('../../service/list-hunks.js')).withHunks(e, r, hunks);
      if (o.json) json(r);
      else {
        // Nothing by that agent: name the agents that did change something here.
        const agents = o.agent !== undefined && r.sets.length === 0 ? e.journal.sets.agents() : undefined;
        const { unkeptText } = await import('../../core/journal/unkept.js');
        const unkept = e.journal.unkept.summary();
        // What could not be kept comes first: the list below names those changes as gaps.
        if (unkept) print(`${painter(ctx.color())('yellow', `! ${unkeptText(unkept)}: named as capture gaps below (see takeback doctor)`)}\n`);
        print(renderList(r, ctx.color(), { agent: o.agent, agents }));
      }
      ctx.done(0);
    });
}
