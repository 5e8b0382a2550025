/*
 * The one shell command line every agent's settings hold for `takeback hook <agent>`. Settings
 * files get committed and shared (`.claude/settings.json`, `.codex/hooks.json`,
 * `.gemini/settings.json`), and a teammate without takeback must not get an error from every hook:
 * where takeback cannot be found the command does nothing, says nothing and exits 0. Where it is
 * found it runs takeback as the last thing, so what the agent gets (its output, its exit code) is
 * takeback's own.
 *
 * It is POSIX sh (an `if` compound, no bashisms): Claude Code and Codex run hook commands with
 * `sh -c`, Gemini CLI with `bash -c`.
 */

/**
 * Where a hook finds takeback. `path`: the `takeback` on PATH (the one this install is). `install`:
 * this install's node and script by absolute path, as shell words already quoted, with the
 * `takeback` on PATH taking over when either is gone (a Node upgraded away, a clone deleted).
 * `client`: this install's hook client (native/build-hook/takeback-hook) run by absolute path with
 * its script (both shell words already quoted), so that the shell the agent starts becomes the
 * client at once: no `/bin/sh` reading the script and no `readlink` of the npm link on PATH
 * before it (about half of a hook's processes: bench/hook-floor.mjs); the `takeback` on PATH
 * takes over when either is gone (an uninstall, a rebuild that failed).
 */
export type HookProgram = { kind: 'path' } | { kind: 'install'; node: string; bin: string } | { kind: 'client'; client: string; bin: string };

/** What a POSIX shell tests to know that `takeback` is on PATH, quietly. */
const ON_PATH = 'command -v takeback >/dev/null 2>&1';

/**
 * The hook command for `agent`: `if … then <env>takeback hook <agent>; fi`, harmless where
 * takeback is missing (exit 0, no output) and takeback's own result where it is there. `env`: the
 * variable assignments the takeback process gets (each ends with a space, e.g.
 * `NODE_EXTRA_CA_CERTS= `), written before the program in every branch. `exec`: takeback
 * replaces the shell (`exec takeback …`: the shell does not fork for it, one process start fewer
 * a hook, and the assignments still reach it in sh and bash), for an agent whose hook is this
 * command line alone, whose result is takeback's either way; not for one that wraps it in more
 * (`… || true`, a script that exits 0 after it), which must outlive takeback.
 */
export function hookCommandLine(agent: string, program: HookProgram, env = '', opts: { exec?: boolean } = {}): string {
  const run = opts.exec ? 'exec ' : '';
  const onPath = `${ON_PATH}; then ${env}${run}takeback hook ${agent}`;
  if (program.kind === 'path') return `if ${onPath}; fi`;
  if (program.kind === 'client') return `if [ -x ${program.client} ] && [ -f ${program.bin} ]; then ${env}${run}${program.client} ${program.bin} ${agent}; elif ${onPath}; fi`;
  return `if [ -x ${program.node} ] && [ -f ${program.bin} ]; then ${env}${run}${program.node} ${program.bin} hook ${agent}; elif ${onPath}; fi`;
}

/**
 * Whether `spec`'s hook is the command line alone (see {@link hookCommandLine}'s `exec`): an
 * agent with hook entries that hold the command as it is given, not one with a plugin, a program
 * per event, or an entry that adds to the command.
 */
export function hookIsCommandAlone(spec: { plugin?: boolean; hookProgram?: unknown; hookEntry(command: string): { command?: string } }): boolean {
  const probe = 'takeback hook';
  return !spec.plugin && !spec.hookProgram && spec.hookEntry(probe).command === probe;
}

/**
 * Builds the hook command with the variable assignments `env` for the takeback process (`''`:
 * none; each assignment ends with a space). `init` takes one, so that the hooks of
 * `init claude-code --http` can hand the daemon's port to the same harmless command. `personal`:
 * the command goes to a settings file of one person's (Claude Code's `.claude/settings.local.json`,
 * any `--user` file), which may name this install's files by absolute path; a file a team may
 * commit gets the command that finds takeback on PATH.
 */
export type HookCommand = (env: string, where?: { personal: boolean }) => string;
