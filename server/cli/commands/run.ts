import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import type { Command } from 'commander';
import type { Workspace } from '../../core/open-workspace.js';
import { HOOK_BUSY_MS } from '../../core/journal/journal.js';
import type { CommandContext } from '../context.js';
import { scanProgress } from '../output.js';
import { setHeadline } from '../render.js';
import { shellQuote } from '../shell-quote.js';

/**
 * `takeback run <command…>`: runs a command and records what it changed. The command runs
 * whatever becomes of the capture: a journal that cannot be opened or written (a full disk, a
 * lock held by a stuck process) is said on stderr, the command is queued in the spill as a change
 * that could not be kept (named by `list` and doctor once the journal can take it), and the exit
 * code is the command's.
 */
export function registerRun(p: Command, ctx: CommandContext): void {
  p.command('run')
    .description('run a command and record what it changed')
    .option('--turn <T>', 'the turn it belongs to (default: the open turn)')
    .argument('<command...>')
    .passThroughOptions()
    .action(async (argv: string[], o: { turn?: string }, cmd: Command) => {
      const command = argv.map(shellQuote).join(' ');
      const id = `run-${randomBytes(6).toString('hex')}`;
      let e: Workspace | null = null;
      let began = false;
      try {
        e = await ctx.open(cmd);
        // Opening waited its second for another process's undo or redo already: no second wait.
        if (e.undoUnderWay) throw Object.assign(new Error('an undo or redo of another process is under way'), { code: 'SQLITE_BUSY' });
        const { captureBegin } = await import('../../service/capture.js');
        const progress = scanProgress();
        // The command waits about a second for another process's lock, as a hook does, not 30 s.
        const ws = e;
        const r = ws.journal.withBusyTimeout(HOOK_BUSY_MS, () => captureBegin(ws, { id, command, turn: o.turn, agent: 'cli', onProgress: progress.onProgress }));
        progress.done();
        began = true;
        if (r.scan?.status === 'too-large') process.stderr.write(`takeback: commands are not captured here (${r.scan.reason}) — workspace ${e.root}\n`);
      } catch (err) {
        if (!(await notCaptured(err, command, cmd))) throw err;
      }
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
      if (e && began) {
        try {
          const { captureEnd } = await import('../../service/capture.js');
          const r = captureEnd(e, { id });
          if (r.set) process.stderr.write(`takeback: recorded change ${r.set.id}: ${setHeadline(r.set)}\n`);
        } catch (err) {
          if (!(await notCaptured(err, command, cmd))) throw err;
        }
      }
      ctx.done(code);
    });
}

/**
 * For an error of the journal that means it cannot take the capture now (see `unkeptCause`):
 * says so on stderr, queues `command` in the workspace's spill as a change that could not be
 * kept, and returns true. Returns false for any other error (the caller throws it).
 */
async function notCaptured(err: unknown, command: string, cmd: Command): Promise<boolean> {
  const { unkeptCause, queueOps } = await import('../../core/capture/queued.js');
  const { takebackHome, loadConfig } = await import('../../core/config.js');
  const { workspaceRootOf } = await import('../../core/open-workspace.js');
  const { journalDirOf } = await import('../../core/journal/journal.js');
  const { BlobStore } = await import('../../core/store/blobs.js');
  const home = takebackHome();
  const cause = unkeptCause(err, home);
  if (cause === null) return false;
  process.stderr.write(`takeback: not recording this command: the journal cannot be written (${(err as Error).message})\n`);
  try {
    const { workspace } = cmd.optsWithGlobals() as { workspace?: string };
    const root = workspaceRootOf(home, { workspace });
    queueOps(journalDirOf(home, root), { root, config: loadConfig(home), blobs: new BlobStore(home) }, cause, [{ op: 'lost', what: `takeback run ${command}` }]);
  } catch {
    // Not even queued: said on stderr above.
  }
  return true;
}
