import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { json, print, scanProgress } from '../output.js';
import { setHeadline } from '../render.js';

/** `takeback capture begin|end`: one tool call, for agents and scripts. */
export function registerCapture(p: Command, ctx: CommandContext): void {
  const capture = p.command('capture').description('capture one tool call (for agents and scripts)');
  capture
    .command('begin')
    .description('keep PATHs before a file tool runs, or (with no PATH) snapshot the workspace before a command')
    .requiredOption('--id <ID>', 'the tool call id')
    .option('--turn <T>', 'the turn it belongs to (default: the open turn)')
    .option('--tool <NAME>', 'the tool name')
    .option('--command <TEXT>', 'the command line (for a command)')
    .option('--agent <NAME>', 'the agent', 'cli')
    .option('--session <ID>', 'the agent session')
    .option('--json', 'print JSON')
    .argument('[paths...]')
    .action(async (paths: string[], o: { id: string; turn?: string; tool?: string; command?: string; agent: string; session?: string; json?: boolean }, cmd: Command) => {
      const e = await ctx.open(cmd);
      const { captureBegin } = await import('../../service/capture.js');
      const progress = scanProgress();
      const r = captureBegin(e, {
        id: o.id,
        paths,
        cwd: process.cwd(),
        turn: o.turn,
        tool: o.tool,
        command: o.command,
        agent: o.agent,
        session: o.session,
        onProgress: progress.onProgress,
      });
      progress.done();
      if (o.json) json(r);
      ctx.done(0);
    });
  capture
    .command('end')
    .description('compare and record the change set of a tool call')
    .requiredOption('--id <ID>', 'the tool call id')
    .option('--json', 'print JSON')
    .action(async (o: { id: string; json?: boolean }, cmd: Command) => {
      const e = await ctx.open(cmd);
      const { captureEnd } = await import('../../service/capture.js');
      const r = captureEnd(e, { id: o.id });
      if (o.json) json(r);
      else if (r.set) print(`recorded change ${r.set.id}: ${setHeadline(r.set)}\n`);
      ctx.done(0);
    });
}
