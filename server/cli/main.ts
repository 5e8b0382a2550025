import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fstatSync, statSync, writeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import type { Engine } from '../core/engine.js';
import { TakebackError, checkId, type ErrorCode } from '../core/errors.js';
import type { Selector } from '../core/plan/select.js';
import { findWorkspaceRoot, realFolder, toWorkspacePath } from '../core/workspace.js';
import { renderApply, renderDoctor, renderGc, renderList, renderPreview, renderShow, setHeadline } from './render.js';
import { useColor } from './style.js';
import { BIN, hookCommand, PACKAGE_ROOT, selfCommand, VERSION } from './self.js';

// Every command imports what it runs when it runs (`await import(…)` in its action), not at
// start: `list` or `--version` does not set up the agents, the editors, the planner or the scan.
// In main.bundle.cjs these stay in the one file and only their initialisation waits
// (scripts/bundle.mjs); bin/takeback.js caches the compiled code of each command apart.

/**
 * Exit codes (README.md): 0 done; 1 conflicts, nothing written; 2 usage error (bad arguments, a
 * malformed id, a path outside the workspace); 3 not found; 4 expired; 5 anything else.
 */
export const EXIT: Record<ErrorCode | 'ok' | 'internal', number> = {
  ok: 0,
  conflicts: 1,
  usage: 2,
  'invalid-id': 2,
  'outside-workspace': 2,
  'not-found': 3,
  expired: 4,
  'capture-gap': 5,
  busy: 5,
  internal: 5,
};

/** process.stdout, once {@link print} had to fall back on it: everything after goes there too, in order. */
let stdoutStream: NodeJS.WriteStream | null = null;

/**
 * Writes `text` to standard output: straight to fd 1 (`fs.writeSync`), without creating
 * process.stdout, which for a pipe is a net.Socket and costs a short command like `list` a few
 * milliseconds. What fd 1 does not take at once (a non-blocking pipe: EAGAIN) goes through
 * process.stdout, which waits for it. A reader that went away (EPIPE: `takeback list | head`)
 * ends the output quietly.
 */
function print(text: string): void {
  if (stdoutStream) {
    stdoutStream.write(text);
    return;
  }
  const bytes = Buffer.from(text);
  for (let done = 0; done < bytes.length; ) {
    try {
      done += writeSync(1, bytes, done);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      if (code !== 'EAGAIN') throw e;
      stdoutStream = process.stdout;
      stdoutStream.write(bytes.subarray(done));
      return;
    }
  }
}

/** Whether `st` (a character device) is /dev/null. */
function isDevNull(st: { rdev: number }): boolean {
  try {
    return st.rdev === statSync('/dev/null').rdev;
  } catch {
    return false;
  }
}

/**
 * Whether to colour standard output, as {@link useColor} decides. Only a character device other
 * than /dev/null can be a terminal: for a pipe, a file or /dev/null, process.stdout (which
 * {@link print} avoids) is not created to ask.
 */
function colorOut(): boolean {
  let device: boolean;
  try {
    const out = fstatSync(1);
    device = out.isCharacterDevice() && !isDevNull(out);
  } catch {
    device = false; // fd 1 closed: no terminal
  }
  return useColor(device ? process.stdout : ({ isTTY: false } as NodeJS.WriteStream));
}

function json(value: unknown): void {
  print(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Progress of a first (cold) scan, which reads every file once, when stderr is a terminal:
 * `takeback: first look at this workspace: 12,000 files` rewritten in place (at most ten times a
 * second, from the scan's call every 1,000 files) and cleared by `done`. Nothing otherwise: a
 * warm scan does not call it, and a script's stderr stays clean.
 */
function scanProgress(): { onProgress?: (files: number) => void; done(): void } {
  if (!process.stderr.isTTY) return { done() {} };
  let shown = false;
  let last = 0;
  const write = (s: string) => {
    try {
      writeSync(2, s);
    } catch {
      // a terminal gone: nothing to show it on
    }
  };
  return {
    onProgress(files) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      shown = true;
      write(`\rtakeback: first look at this workspace: ${files.toLocaleString('en-US')} files`);
    },
    done() {
      if (shown) write('\r\x1b[K');
    },
  };
}

type SelectorOpts = { turn?: string; last?: boolean; afterTurn?: string; file?: string[] };

/**
 * With `--file`, a step whose every selected change was left out because it does not touch
 * those files is `not-found` (exit 3), not "nothing to do" (exit 0): a mistyped path must not
 * look like success.
 */
function untouchedFiles(o: SelectorOpts, r: { sets: string[]; skipped: { id: string; reason: string }[] }): void {
  if (!o.file?.length || r.sets.length > 0 || r.skipped.length === 0) return;
  if (r.skipped.every((s) => s.reason === 'does not touch that file')) {
    const ids = r.skipped.map((s) => `#${s.id}`).join(' ');
    throw new TakebackError('not-found', `${ids} ${r.skipped.length === 1 ? 'does' : 'do'} not touch ${o.file.join(', ')}`, { paths: o.file });
  }
}

/** The selector the options name; `--file` paths (relative to the current folder) narrow it to those files. */
function selectorFrom(engine: Engine, ids: string[], o: SelectorOpts): Selector {
  const paths = (o.file ?? []).map((f) => {
    const rel = toWorkspacePath(engine.root, f, process.cwd());
    if (rel === null) throw new TakebackError('outside-workspace', `${f} is outside the workspace ${engine.root}`, { path: f });
    return rel;
  });
  return { ids: ids.length ? ids : undefined, turn: o.turn, last: o.last, afterTurn: o.afterTurn, paths: paths.length ? paths : undefined };
}

/** `arg` as a POSIX shell would need it written, for showing a command line. */
function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * Checks the ids a command names (change set ids, `--id`, `--turn`, `--after-turn`) against
 * `^[A-Za-z0-9_-]{1,64}$` before anything touches the disk (the journal is not even opened).
 */
function checkIds(cmd: Command): void {
  const o = cmd.opts() as { id?: unknown; turn?: unknown; afterTurn?: unknown };
  if (o.id !== undefined) checkId(o.id, cmd.parent?.name() === 'turn' ? 'turn id' : 'capture id');
  if (o.turn !== undefined) checkId(o.turn, 'turn id');
  if (o.afterTurn !== undefined) checkId(o.afterTurn, 'turn id');
  if (['show', 'preview', 'undo', 'redo'].includes(cmd.name())) for (const id of cmd.args) checkId(id, 'change set id');
}

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
  let colorOn: boolean | undefined;
  const color = (): boolean => (colorOn ??= colorOut());
  const p = new Command('takeback')
    .description('Undo for AI coding agents: list, preview, undo and redo what an agent changed.')
    .version(VERSION, '-V, --version')
    .option('-w, --workspace <dir>', 'the workspace (default: the enclosing git root, else the current folder)')
    .enablePositionalOptions()
    .showHelpAfterError('(run takeback --help for usage)')
    .exitOverride();
  // Under --json a usage error is an `{ "error": … }` on stdout (main), not commander's text.
  p.configureOutput({ writeOut: print, writeErr: (s) => (jsonErrors ? undefined : process.stderr.write(s)) });

  let engine: Engine | null = null;
  const open = async (cmd: Command): Promise<Engine> => {
    checkIds(cmd);
    const { workspace } = cmd.optsWithGlobals() as { workspace?: string };
    const { openEngine } = await import('../core/engine.js');
    engine = openEngine({ workspace });
    return engine;
  };
  const done = (n: number) => {
    setCode(n);
    engine?.journal.close();
    engine = null;
  };

  p.command('list')
    .description('list change sets, grouped by turn, newest first')
    .option('--turn <T>', 'only this turn')
    .option('--all', 'every turn, and expired changes too')
    .option('--agent <NAME>', 'only this agent: claude-code, codex, gemini, cli')
    .option('--json', 'print JSON (see README)')
    .action(async (o: { turn?: string; all?: boolean; agent?: string; json?: boolean }, cmd: Command) => {
      const e = await open(cmd);
      const { listChanges } = await import('../service/changes.js');
      const r = listChanges(e, { turn: o.turn, all: o.all, agent: o.agent });
      if (o.json) json(r);
      else {
        // Nothing by that agent: name the agents that did change something here.
        const agents = o.agent !== undefined && r.sets.length === 0 ? e.journal.sets.agents() : undefined;
        print(renderList(r, color(), { agent: o.agent, agents }));
      }
      done(0);
    });

  p.command('show')
    .description('one change set in full')
    .argument('<id>')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }, cmd: Command) => {
      const e = await open(cmd);
      const { showChange } = await import('../service/changes.js');
      const r = showChange(e, id);
      if (o.json) json(r);
      else print(renderShow(r, color()));
      done(0);
    });

  const selectorOptions = (c: Command) =>
    c
      .argument('[ids...]', 'change set ids')
      .option('--turn <T>', 'every change of turn T')
      .option('--last', 'the newest change (redo: what the last undo took back, e.g. a whole turn)')
      .option('--after-turn <T>', 'everything after turn T (rewind to that boundary)')
      .option('--file <path...>', 'only these files (with --last: the newest change, or undo, that touched them)')
      .option('--json', 'print JSON');

  selectorOptions(p.command('preview').description('show what an undo (or redo) would do, writing nothing'))
    .option('--redo', 'preview a redo instead')
    .action(async (ids: string[], o: SelectorOpts & { json?: boolean; redo?: boolean }, cmd: Command) => {
      const e = await open(cmd);
      const { previewStep } = await import('../service/undo.js');
      const r = previewStep(e, selectorFrom(e, ids, o), o.redo ? 'redo' : 'undo');
      untouchedFiles(o, r);
      if (o.json) json(r);
      else print(renderPreview(r, color()));
      done(0);
    });

  for (const direction of ['undo', 'redo'] as const) {
    selectorOptions(p.command(direction).description(direction === 'undo' ? 'take changes back, all or nothing' : 'apply undone changes again'))
      .option('--force', 'replace later changes to the same files')
      .action(async (ids: string[], o: SelectorOpts & { json?: boolean; force?: boolean }, cmd: Command) => {
        const e = await open(cmd);
        const { applyStep } = await import('../service/undo.js');
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
        else print(renderApply(r, color()));
        done(!r.written && r.conflicts.length > 0 ? EXIT.conflicts : 0);
      });
  }

  p.command('run')
    .description('run a command and record what it changed')
    .option('--turn <T>', 'the turn it belongs to (default: the open turn)')
    .argument('<command...>')
    .passThroughOptions()
    .action(async (argv: string[], o: { turn?: string }, cmd: Command) => {
      const e = await open(cmd);
      const { captureBegin, captureEnd } = await import('../service/capture.js');
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
      done(code);
    });

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
      const e = await open(cmd);
      const { captureBegin } = await import('../service/capture.js');
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
      done(0);
    });
  capture
    .command('end')
    .description('compare and record the change set of a tool call')
    .requiredOption('--id <ID>', 'the tool call id')
    .option('--json', 'print JSON')
    .action(async (o: { id: string; json?: boolean }, cmd: Command) => {
      const e = await open(cmd);
      const { captureEnd } = await import('../service/capture.js');
      const r = captureEnd(e, { id: o.id });
      if (o.json) json(r);
      else if (r.set) print(`recorded change ${r.set.id}: ${setHeadline(r.set)}\n`);
      done(0);
    });

  const turn = p.command('turn').description('begin or end a turn (for agents and scripts)');
  turn
    .command('begin')
    .option('--id <T>', 'the turn id (default: t<number>)')
    .option('--label <TEXT>', 'a label (the first line of the prompt)')
    .option('--agent <NAME>', 'the agent', 'cli')
    .option('--session <ID>', 'the agent session')
    .option('--json', 'print JSON')
    .action(async (o: { id?: string; label?: string; agent?: string; session?: string; json?: boolean }, cmd: Command) => {
      const e = await open(cmd);
      const { turnBegin } = await import('../service/capture.js');
      const r = turnBegin(e, { id: o.id, label: o.label, agent: o.agent, session: o.session });
      if (o.json) json(r);
      else print(`${r.turn.id}\n`);
      done(0);
    });
  turn
    .command('end')
    .option('--id <T>', 'the turn (default: the open turn)')
    .option('--session <ID>', 'the agent session')
    .option('--json', 'print JSON')
    .action(async (o: { id?: string; session?: string; json?: boolean }, cmd: Command) => {
      const e = await open(cmd);
      const { turnEnd } = await import('../service/capture.js');
      const r = turnEnd(e, { id: o.id, session: o.session });
      if (o.json) json(r);
      else if (r.set) print(`turn ${r.turn} ended; recorded change ${r.set.id} (changed during this turn): ${setHeadline(r.set)}\n`);
      done(0);
    });

  p.command('doctor')
    .description('check the journal and say what is kept')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const { doctorReport } = await import('./doctor-report.js');
      const r = await doctorReport(await open(cmd));
      if (o.json) json(r);
      else print(renderDoctor(r, color()));
      done(0);
    });

  p.command('serve')
    .description('run the sidecar for editors and scripts: JSON-RPC (LSP framing) over stdio')
    .option('--stdio', 'talk over stdio (the default; accepted because language clients pass it)')
    .allowUnknownOption()
    .action(async (_o: { stdio?: boolean }, cmd: Command) => {
      const { workspace } = cmd.optsWithGlobals() as { workspace?: string };
      // Loaded here only: the hook and the other commands start without the LSP libraries.
      const { serve } = await (opts.loadSidecar ?? (() => import('../sidecar/serve.js')))();
      done(await serve({ cwd: workspace ?? process.cwd(), version: VERSION }));
    });

  p.command('gc')
    .description('expire change sets past the retention rules and sweep kept copies nothing refers to (every workspace)')
    .option('--dry-run', 'say what would go, change nothing')
    .option('--grace <seconds>', 'leave unreferenced copies younger than this (default 3600)')
    .option('--json', 'print JSON')
    .action(async (o: { dryRun?: boolean; grace?: string; json?: boolean }) => {
      const grace = o.grace === undefined ? undefined : Number(o.grace);
      if (grace !== undefined && !(grace >= 0)) throw new TakebackError('usage', `--grace wants seconds, not ${o.grace}`);
      const { loadConfig, takebackHome } = await import('../core/config.js');
      const { collectGarbage } = await import('../core/gc/sweep.js');
      const home = takebackHome();
      const r = collectGarbage({ home, config: loadConfig(home), dryRun: o.dryRun, graceMs: grace === undefined ? undefined : grace * 1000 });
      if (o.json) json(r);
      else print(renderGc(r));
      done(0);
    });

  p.command('hook')
    .description('read one agent hook event on stdin (never fails, prints nothing)')
    .addArgument(new Command().createArgument('<agent>', 'claude-code | codex | gemini'))
    .action(async (agent: string) => {
      const { runHook } = await import('./hook.js');
      done(runHook(agent));
    });

  p.command('hook-daemon', { hidden: true })
    .description('serve hook events from a capture daemon (started by the hooks themselves)')
    .action(async () => {
      // Loaded here only: no other command needs it.
      const { runDaemon } = await import('../daemon/lifecycle.js');
      const { handleHookText } = await import('./hook.js');
      done(await runDaemon({ handle: handleHookText, bin: BIN }));
    });

  p.command('init')
    .description("add takeback's hooks to an agent's settings, or its sidecar to an editor's config")
    .argument('<agent>', 'claude-code | codex | gemini | helix | jetbrains')
    .option('--user', "the user's settings (~/.claude/settings.json, $CODEX_HOME/hooks.json, ~/.gemini/settings.json) instead of the project's")
    .option('--remove', 'take out exactly what init added')
    .option('--http', 'claude-code: http hooks to a capture daemon (a few ms a hook), each with a command hook that takes over when none runs; in .claude/settings.local.json')
    .option('--port <N>', 'claude-code --http: the loopback port (default: 29470 + uid mod 1000)')
    .option('--config-dir <DIR>', "helix: the folder of Helix's languages.toml (default: $XDG_CONFIG_HOME/helix)")
    .option('--hx <PATH>', 'helix: the Helix to ask for its languages (default: hx on PATH)')
    .option('--dir <DIR>', 'jetbrains: where to write the LSP4IJ template folder')
    .addOption(new Option('--command <TEXT>', 'the hook command to write (helix: the server program)').hideHelp())
    .action(async (agent: string, o: { user?: boolean; remove?: boolean; http?: boolean; port?: string; command?: string; configDir?: string; hx?: string; dir?: string }, cmd: Command) => {
      if (agent === 'helix') {
        const { initHelixCommand } = await import('../editors/helix-init.js');
        print(await initHelixCommand(o, BIN));
        return done(0);
      }
      if (agent === 'jetbrains') {
        const { defaultTemplateDir, removeJetbrainsTemplate, writeJetbrainsTemplate } = await import('../editors/jetbrains-init.js');
        if (o.remove) {
          const r = removeJetbrainsTemplate(o.dir ?? defaultTemplateDir());
          print(`${r.changed ? 'removed the LSP4IJ template from' : 'no takeback template in'} ${r.dir}\n`);
          return done(0);
        }
        const r = writeJetbrainsTemplate({
          source: join(PACKAGE_ROOT, 'clients', 'jetbrains', 'template'),
          dir: o.dir ?? defaultTemplateDir(),
          serveCommand: selfCommand('serve'),
        });
        print(`${r.changed ? 'wrote the LSP4IJ template to' : 'nothing to change in'} ${r.dir}\nIn the IDE: LSP Consoles → + → Template → Import from custom template… → ${r.dir}\n`);
        return done(0);
      }
      const { AGENTS } = await import('../agents/registry.js');
      const { initHooks } = await import('../agents/http-hooks.js');
      const { defaultHttpPort } = await import('../daemon/http-address.js');
      const { takebackHome } = await import('../core/config.js');
      const spec = AGENTS[agent];
      if (!spec) throw new TakebackError('usage', `unknown agent or editor ${agent} (known: ${Object.keys(AGENTS).join(', ')}, helix, jetbrains)`);
      const { workspace } = cmd.optsWithGlobals() as { workspace?: string };
      const dir = workspace ?? process.cwd();
      const root = spec.settingsFile.projectDir === 'cwd' ? realFolder(dir) : findWorkspaceRoot(dir);
      if (o.port !== undefined && !o.http) throw new TakebackError('usage', '--port goes with --http');
      const port = o.port === undefined ? defaultHttpPort() : /^\d+$/.test(o.port) ? Number(o.port) : NaN;
      const results = initHooks(spec, {
        workspace: root,
        user: Boolean(o.user),
        command: o.command ?? hookCommand(agent),
        remove: o.remove,
        http: o.http,
        port,
        home: takebackHome(),
      });
      for (const r of results) {
        // Taking hooks out of the file of the other kind is said only when there were some.
        if (r.action === 'removed' && !r.changed && !o.remove) continue;
        print(`${r.changed ? (r.action === 'removed' ? 'removed takeback hooks from' : 'added takeback hooks to') : 'nothing to change in'} ${r.file}\n`);
      }
      if (!o.remove && o.http) print(`http hooks to 127.0.0.1:${port}: the first hook starts the capture daemon; until it runs, and whenever it does not, the hooks run in-process\n`);
      if (!o.remove && spec.setupNote) print(`${spec.setupNote(Boolean(o.user))}\n`);
      done(0);
    });

  // `--workspace` works before the subcommand (global) and after it, as people type it.
  const withWorkspace = (c: Command) => {
    for (const sub of c.commands) {
      if (!sub.options.some((o) => o.long === '--workspace')) sub.option('-w, --workspace <dir>', 'the workspace (default: the enclosing git root, else the current folder)');
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
    if (wantsJson) {
      const err = e instanceof TakebackError ? { code: e.code, message: e.message, data: e.data ?? null } : { code: 'internal', message: String(e) };
      json({ error: err });
    } else {
      process.stderr.write(`takeback: ${e instanceof Error ? e.message : String(e)}\n`);
      if (c === EXIT.internal && process.env.TAKEBACK_DEBUG && e instanceof Error) process.stderr.write(`${e.stack}\n`);
    }
    return c;
  }
}
