import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { scanProgress } from '../output.js';
import { setHeadline } from '../render.js';
import { shellQuote } from '../shell-quote.js';

/** `takeback run <command…>`: runs a command and records what it changed. */
export function registerRun(p: Command, ctx: CommandContext): void {
  p.command('run')
    .description('run a command and record what it changed')
    .option('--turn <T>', 'the turn it belongs to (default: the open turn)')
    .argument('<command...>')
    .passThroughOptions()
    .action(async (argv: string[], o: { turn?: string }, cmd: Command) => {
      const e = await ctx.open(cmd);
      const { captureBegin, captureEnd } = await import('../../service/capture.js');
      const id = `run-${randomBytes(6).toString('hex')}`;
      const progress = scanProgress();
      const began = captureBegin(e, { id, command: argv.map(shellQuote).join(' '), turn: o.turn, agent: 'cli', onProgress: progress.onProgress });
      progress.done();
      if (began.scan?.status === 'too-large') process.stderr.write(`takeback: commands are not captured here (${began.scan.reason}) — workspace ${e.root}\n`);
      // Ctrl-C is for the command (it gets it too): takeback waits for it and still records.
      const ignore = () => {};
      process.on('SIGINT', ignore);
      const code = await new Promise<number>((res) => {
        const child = spawn(argv[0]!, argv.slice(1), { stdio: 'inherit' });
        child.on('error', (err) => {
          process.stderr.write(`takeback: ${argv[0]}: ${err.message}\n`);
          res(127);
        });
        child.on('exit', (c, sig) => res(c ?? (sig ? 128 + (osConstants.signals[sig] ?? 15) : 1)));
      });
      process.off('SIGINT', ignore);
      const r = captureEnd(e, { id });
      if (r.set) process.stderr.write(`takeback: recorded change ${r.set.id}: ${setHeadline(r.set)}\n`);
      ctx.done(code);
    });
}
