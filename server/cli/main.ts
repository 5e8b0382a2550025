import { Command, CommanderError } from 'commander';
import type { Workspace } from '../core/open-workspace.js';
import { TakebackError } from '../core/errors.js';
import { registerCapture } from './commands/capture.js';
import { registerDoctor } from './commands/doctor.js';
import { registerGc } from './commands/gc.js';
import { registerHookDaemon } from './commands/hook-daemon.js';
import { registerHook } from './commands/hook.js';
import { registerInit } from './commands/init.js';
import { registerList } from './commands/list.js';
import { registerPreview } from './commands/preview.js';
import { registerRun } from './commands/run.js';
import { registerServe } from './commands/serve.js';
import { registerShow } from './commands/show.js';
import { registerTurn } from './commands/turn.js';
import { registerUndoRedo } from './commands/undo.js';
import { checkIds, WORKSPACE_HELP, type CommandContext } from './context.js';
import { EXIT } from './exit.js';
import { colorOut, json, print } from './output.js';
import { VERSION } from './self.js';

// One module a command (commands/*.ts). Every command imports what it runs when it runs
// (`await import(…)` in its action), not at start: `list` or `--version` does not set up the
// agents, the editors, the planner or the scan. In main.bundle.cjs these stay in the one file and
// only their initialisation waits (scripts/bundle.mjs); bin/takeback.js caches the compiled code
// of each command apart.

/** What {@link main} needs from whoever loads it. */
export interface MainOptions {
  /**
   * Loads the sidecar's module for `serve` (default: `import('../sidecar/serve.js')`). The
   * sidecar and its LSP libraries are not in main.bundle.cjs, and that bundle, which
   * bin/takeback.js compiles with node:vm, cannot `import()`: bin/takeback.js passes its own.
   */
  loadSidecar?: () => Promise<typeof import('../sidecar/serve.js')>;
}

/** Builds the command line. Handlers return an exit code. With `jsonErrors` (a `--json` command line), commander writes no error text: main prints the error as JSON. */
function program(setCode: (n: number) => void, opts: MainOptions, jsonErrors = false): Command {
  const p = new Command('takeback')
    .description('Undo for AI coding agents: list, preview, undo and redo what an agent changed.')
    .version(VERSION, '-V, --version')
    .option('-w, --workspace <dir>', WORKSPACE_HELP)
    .enablePositionalOptions()
    .showHelpAfterError('(run takeback --help for usage)')
    .exitOverride();
  // Under --json a usage error is an `{ "error": … }` on stdout (main), not commander's text.
  p.configureOutput({ writeOut: print, writeErr: (s) => (jsonErrors ? undefined : process.stderr.write(s)) });

  let ws: Workspace | null = null;
  let colorOn: boolean | undefined;
  const ctx: CommandContext = {
    async open(cmd) {
      checkIds(cmd);
      const { workspace } = cmd.optsWithGlobals() as { workspace?: string };
      // What the capture daemon answered and has not recorded yet comes first (≤ 5 s: see daemon/settle.ts).
      const [{ settleCapture }, { takebackHome }, { logHook }] = await Promise.all([import('../daemon/settle.js'), import('../core/home.js'), import('../daemon/log.js')]);
      const home = takebackHome();
      await settleCapture(home, { log: (m) => logHook(home, m) });
      const { openWorkspace } = await import('../core/open-workspace.js');
      ws = openWorkspace({ workspace });
      // Events the hooks queued while the journal could not take them come first.
      if (ws.journal.spilled) (await import('../core/capture/queued.js')).foldSpill(ws);
      // Then the tool calls and turns a journal left mid-way holds open for good (their end lost);
      // the repair, and the capture code it closes them with, is loaded only when there are some.
      if (ws.journal.hasLostEnds()) (await import('../core/capture/repair.js')).repairLostEnds(ws);
      return ws;
    },
    done(n) {
      setCode(n);
      ws?.journal.close();
      ws = null;
    },
    color: () => (colorOn ??= colorOut()),
    loadSidecar: opts.loadSidecar ?? (() => import('../sidecar/serve.js')),
  };
  for (const register of [
    registerList,
    registerShow,
    registerPreview,
    registerUndoRedo,
    registerRun,
    registerCapture,
    registerTurn,
    registerDoctor,
    registerServe,
    registerGc,
    registerHook,
    registerHookDaemon,
    registerInit,
  ]) {
    register(p, ctx);
  }

  // `--workspace` works before the subcommand (global) and after it, as people type it.
  const withWorkspace = (c: Command) => {
    for (const sub of c.commands) {
      if (!sub.options.some((o) => o.long === '--workspace')) sub.option('-w, --workspace <dir>', WORKSPACE_HELP);
      withWorkspace(sub);
    }
  };
  withWorkspace(p);
  return p;
}

function errorCode(e: unknown): number {
  if (e instanceof TakebackError) return EXIT[e.code];
  return EXIT.internal;
}

/** Runs the command line with `argv` (without node and script). Resolves to the exit code (see {@link EXIT}). */
export async function main(argv: string[], opts: MainOptions = {}): Promise<number> {
  let code = 0;
  const wantsJson = argv.includes('--json');
  try {
    await program(
      (n) => {
        code = n;
      },
      opts,
      wantsJson,
    ).parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return 0;
      if (wantsJson) json({ error: { code: 'usage', message: e.message.replace(/^error: /, ''), data: null } });
      return EXIT.usage;
    }
    const c = errorCode(e);
    const said = e instanceof TakebackError ? e.message : await plainError(e);
    if (wantsJson) {
      const err = e instanceof TakebackError ? { code: e.code, message: e.message, data: e.data ?? null } : { code: 'internal', message: said };
      json({ error: err });
    } else {
      process.stderr.write(`takeback: ${said}\n`);
      if (c === EXIT.internal && process.env.TAKEBACK_DEBUG && e instanceof Error) process.stderr.write(`${e.stack}\n`);
    }
    return c;
  }
}

/**
 * The message of an error that is not takeback's own: as it is, unless the journal's disk is
 * full (SQLite says only "disk I/O error" when it cannot grow its files), which is then said,
 * with the folder, so that the person knows what to free.
 */
async function plainError(e: unknown): Promise<string> {
  const msg = e instanceof Error ? e.message : String(e);
  try {
    const { takebackHome } = await import('../core/home.js');
    const { unkeptCause } = await import('../core/capture/queued.js');
    const home = takebackHome(process.env);
    if (unkeptCause(e, home) === 'disk-full') return `the journal cannot be written: the disk of ${home} is full (${msg})`;
  } catch {
    // no better word than the error's own
  }
  return msg;
}
