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
 */
export type HookProgram = { kind: 'path' } | { kind: 'install'; node: string; bin: string };

/** What a POSIX shell tests to know that `takeback` is on PATH, quietly. */
const ON_PATH = 'command -v takeback >/dev/null 2>&1';

/**
 * The hook command for `agent`: `if … then <env>takeback hook <agent>; fi`, harmless where
 * takeback is missing (exit 0, no output) and takeback's own result where it is there. `env`: the
 * variable assignments the takeback process gets (each ends with a space, e.g.
 * `NODE_EXTRA_CA_CERTS= `), written before the program in every branch.
 */
export function hookCommandLine(agent: string, program: HookProgram, env = ''): string {
  const onPath = `${ON_PATH}; then ${env}takeback hook ${agent}`;
  if (program.kind === 'path') return `if ${onPath}; fi`;
  return `if [ -x ${program.node} ] && [ -f ${program.bin} ]; then ${env}${program.node} ${program.bin} hook ${agent}; elif ${onPath}; fi`;
}

/**
 * Builds the hook command with the variable assignments `env` for the takeback process (`''`:
 * none; each assignment ends with a space). `init` takes one, so that the hooks of
 * `init claude-code --http` can hand the daemon's port to the same harmless command.
 */
export type HookCommand = (env: string) => string;
