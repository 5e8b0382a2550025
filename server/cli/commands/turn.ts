import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { json, print } from '../output.js';
import { setHeadline } from '../render.js';

/** `takeback turn begin|end`: a turn, for agents and scripts. */
export function registerTurn(p: Command, ctx: CommandContext): void {
  const turn = p.command('turn').description('begin or end a turn (for agents and scripts)');
  turn
    .command('begin')
    .option('--id <T>', 'the turn id (default: t<number>)')
    .option('--label <TEXT>', 'a label (the first line of the prompt)')
    .option('--agent <NAME>', 'the agent', 'cli')
    .option('--session <ID>', 'the agent session')
    .option('--json', 'print JSON')
    .action(async (o: { id?: string; label?: string; agent?: string; session?: string; json?: boolean }, cmd: Command) => {
      const e = await ctx.open(cmd);
      const { turnBegin } = await import('../../service/capture.js');
      const r = turnBegin(e, { id: o.id, label: o.label, agent: o.agent, session: o.session });
      if (o.json) json(r);
      else print(`${r.turn.id}\n`);
      ctx.done(0);
    });
  turn
    .command('end')
    .option('--id <T>', 'the turn (default: the open turn)')
    .option('--session <ID>', 'the agent session')
    .option('--json', 'print JSON')
    .action(async (o: { id?: string; session?: string; json?: boolean }, cmd: Command) => {
      const e = await ctx.open(cmd);
      const { turnEnd } = await import('../../service/capture.js');
      const r = turnEnd(e, { id: o.id, session: o.session });
      if (o.json) json(r);
      else if (r.set) print(`turn ${r.turn} ended; recorded change ${r.set.id} (changed during this turn): ${setHeadline(r.set)}\n`);
      ctx.done(0);
    });
}
