import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { TakebackError } from '../core/errors.js';
import { HTTP_FP_VAR, HTTP_PORT_VAR, hookUrl } from '../daemon/http-address.js';
import { tokenFile } from '../daemon/http-address.js';
import { httpToken, tokenFingerprint } from '../daemon/http-token.js';
import type { HookCommand } from './hook-command.js';
import { initHookPrograms } from './hook-programs.js';
import { initAgentHooks, ourHooksIn, settingsBase, settingsPath } from './hooks-file.js';
import type { AgentSpec, HookEntry } from './spec.js';

/*
 * `takeback init claude-code --http`: Claude Code's hooks as http hooks to a running capture
 * daemon (a few milliseconds a hook, no Node started), each with a command hook beside it that
 * takes over when no daemon is ready. Claude Code runs an event's hooks at once and waits for
 * all of them, so a hook costs the longer of the two: the POST, or the shell test of the command
 * hook (a shell start, one file read, one `kill -0`).
 *
 * The http hooks carry a bearer token from takeback's home, so they are personal: in a project
 * they go to `.claude/settings.local.json` (Claude Code's settings file for one person, which it
 * keeps out of git), never to the shared `.claude/settings.json`. SessionStart stays a command
 * hook: Claude Code sends it to no http hook.
 */

type AnySpec = AgentSpec<{ hook_event_name: string }>;

/** Claude Code's settings file for one person, under the workspace. */
const LOCAL_SETTINGS = ['.claude', 'settings.local.json'];
/** The events Claude Code does not send to http hooks (seen with 2.1.332; its hook schema says the same). */
const COMMAND_ONLY = new Set(['SessionStart', 'Setup']);

/**
 * The shell expression of the daemon's ready file for `port`, resolved when the hook runs as
 * takeback resolves its home (core/home.ts): `$TAKEBACK_HOME`, else
 * `$XDG_STATE_HOME/takeback`, else `$HOME/.local/state/takeback`; then `run/http-<port>.pid`.
 */
function readyFileExpr(port: number): string {
  return `"\${TAKEBACK_HOME:-\${XDG_STATE_HOME:-$HOME/.local/state}/takeback}/run/http-${port}.pid"`;
}

/**
 * The command hook beside an http hook: stands down when the ready file names a live daemon
 * that takes this token (`fp`: its fingerprint) and — under bash, with no process started — the
 * port answers (a killed daemon not yet reaped still passes `kill -0`, but its port is closed);
 * else runs the full hook in-process with the port and fingerprint set (it then starts a daemon,
 * or logs why the one running cannot take these hooks). `command`: builds `takeback hook <agent>`
 * (see hook-command.ts), harmless where takeback is missing.
 */
export function fallbackCommand(port: number, fp: string, command: HookCommand): string {
  const probe = `{ [ -z "$BASH_VERSION" ] || : 2>/dev/null 3<>/dev/tcp/127.0.0.1/${port}; }`;
  return `p=; f=; read -r p f 2>/dev/null < ${readyFileExpr(port)}; [ "$f" = ${fp} ] && kill -0 "$p" 2>/dev/null && ${probe} || ${command(envPrefix(port, fp))}`;
}

/** `TAKEBACK_HOOK_HTTP_PORT=<port> TAKEBACK_HOOK_HTTP_FP=<fp> `: what the in-process hook is told (ends with a space). */
function envPrefix(port: number, fp: string): string {
  return `${HTTP_PORT_VAR}=${port} ${HTTP_FP_VAR}=${fp} `;
}

/** The hook entries of one event with http hooks on `port` (`token`: the bearer token; `command`: builds `takeback hook <agent>`). */
export function httpHookEntries(spec: AnySpec, event: string, opts: { port: number; token: string; command: HookCommand }): HookEntry[] {
  const fp = tokenFingerprint(opts.token);
  if (COMMAND_ONLY.has(event)) return [spec.hookEntry(opts.command(envPrefix(opts.port, fp)))];
  return [
    { type: 'http', url: hookUrl(opts.port, spec.name), headers: { Authorization: `Bearer ${opts.token}` }, timeout: 30 },
    spec.hookEntry(fallbackCommand(opts.port, fp, opts.command)),
  ];
}

/** The line {@link keepOutOfGit} writes above the path it keeps out of git. */
const EXCLUDE_NOTE = "# takeback: Claude Code's settings for one person (takeback's hooks, the http hooks' token)";

/**
 * Makes git ignore `rel` (a path under `workspace`) when `workspace` is a git repository that does
 * not ignore it yet, by a line in the repository's own `info/exclude` (never committed, unlike a
 * `.gitignore`). Outside git, or when git cannot be run, does nothing.
 */
export function keepOutOfGit(workspace: string, rel: string): void {
  const git = (...args: string[]) => execFileSync('git', ['-C', workspace, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    git('rev-parse', '--git-dir');
  } catch {
    return; // not a repository
  }
  try {
    git('check-ignore', '-q', rel);
    return; // ignored already
  } catch {
    // not ignored: exclude it below
  }
  try {
    let exclude = git('rev-parse', '--git-path', 'info/exclude');
    if (!isAbsolute(exclude)) exclude = join(workspace, exclude);
    mkdirSync(dirname(exclude), { recursive: true });
    let text = '';
    try {
      text = readFileSync(exclude, 'utf8');
    } catch {
      // none yet
    }
    appendFileSync(exclude, `${text === '' || text.endsWith('\n') ? '' : '\n'}${EXCLUDE_NOTE}\n/${rel}\n`);
  } catch {
    // git could not tell: the file stays as it is (0600)
  }
}

/**
 * Takes out of the repository's `info/exclude` the two lines {@link keepOutOfGit} wrote for
 * `rel` (its note and the path), once the file they keep out of git is gone; anything else in
 * the file stays as it is. Outside git, or when git cannot be run, does nothing.
 */
export function forgetOutOfGit(workspace: string, rel: string): void {
  try {
    let exclude = execFileSync('git', ['-C', workspace, 'rev-parse', '--git-path', 'info/exclude'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (!isAbsolute(exclude)) exclude = join(workspace, exclude);
    const text = readFileSync(exclude, 'utf8');
    const ours = `${EXCLUDE_NOTE}\n/${rel}\n`;
    if (text.includes(ours)) writeFileSync(exclude, text.replace(ours, ''));
  } catch {
    // not a repository, or no exclude file: nothing of ours to take out
  }
}

/** What `init … --http` (or `init` without it) did to each settings file it looked at. */
export interface InitResult {
  file: string;
  changed: boolean;
  /** `added` takeback's hooks, or `removed` them (from the file the other kind of hook lives in). */
  action: 'added' | 'removed';
}

/**
 * `init claude-code [--user] [--shared] [--http [--port N]] [--remove]`: writes takeback's hooks
 * for `spec` and takes them out of the other file, so that an agent never runs them twice.
 *
 * Project scope, Claude Code: the hooks go to `.claude/settings.local.json` (its settings for one
 * person, kept out of git: listed in the repository's `info/exclude` when git does not ignore it
 * yet), so that one person's `init` does not hook the whole team through a committed file, and
 * the command there names this person's install. `shared`: to `.claude/settings.json` instead,
 * for a team that means everyone to record (the command is harmless for a teammate without
 * takeback). http hooks always go to the personal file (they hold a token), which is made 0600.
 * Other agents have one project file. `--user`: the user's settings file. `--remove` takes
 * takeback's hooks out of every file init writes for this scope. `home`: takeback's home (the
 * token lives there). `command`: builds the hook command (hook-command.ts). Throws `usage` for an
 * agent other than Claude Code with `http` or `shared`, `http` with `shared`, or a port outside
 * 1–65535.
 */
export function initHooks(
  spec: AnySpec,
  opts: { workspace: string; user: boolean; command: HookCommand; remove?: boolean; http?: boolean; shared?: boolean; port?: number; home: string; env?: NodeJS.ProcessEnv },
): InitResult[] {
  if (opts.http && spec.name !== 'claude-code') throw new TakebackError('usage', `--http: only Claude Code takes http hooks (not ${spec.name})`);
  if (opts.shared && spec.name !== 'claude-code') throw new TakebackError('usage', `--shared: only Claude Code has a settings file for one person (${spec.name}'s project file is the shared one)`);
  if (opts.shared && opts.http) throw new TakebackError('usage', '--shared and --http: http hooks hold a token, they go to .claude/settings.local.json only');
  const port = opts.port;
  if (opts.http && (port === undefined || !Number.isInteger(port) || port < 1 || port > 65535)) throw new TakebackError('usage', `--port must be 1–65535`);
  const shared = settingsPath(spec, opts.workspace, opts.user, opts.env);
  const local = spec.name === 'claude-code' && !opts.user ? join(opts.workspace, ...LOCAL_SETTINGS) : null;
  const results: InitResult[] = [];
  const base = settingsBase(spec, opts.workspace, opts.user, opts.env);
  if (spec.hookProgram) return [{ ...initHookPrograms(spec, { dir: shared, command: opts.command('', { personal: opts.user }), remove: opts.remove, base }), action: opts.remove ? 'removed' : 'added' }];
  const run = (file: string, remove: boolean, entries?: (event: string) => HookEntry[]) => {
    const r = initAgentHooks(spec, { file, command: opts.command('', { personal: opts.user || file === local }), remove, entries, base });
    results.push({ ...r, action: remove ? 'removed' : 'added' });
  };
  if (opts.remove) {
    if (local) run(local, true);
    run(shared, true);
    if (local && !existsSync(local)) forgetOutOfGit(opts.workspace, LOCAL_SETTINGS.join('/'));
    return results;
  }
  const target = local && !opts.shared ? local : shared;
  const entries = opts.http ? (event: string) => httpHookEntries(spec, event, { port: port!, token: httpToken(opts.home), command: (env) => opts.command(env, { personal: true }) }) : undefined;
  // In a git repository that does not ignore it yet, the personal file is kept out of git first.
  if (target === local) keepOutOfGit(opts.workspace, LOCAL_SETTINGS.join('/'));
  run(target, false, entries);
  // With the token in it: for its owner's eyes only.
  if (opts.http) chmodSync(target, 0o600);
  if (local) run(target === local ? shared : local, true);
  return results;
}

/**
 * What `doctor` says of takeback's hooks for `spec` around `workspace`: when they are in more
 * than one of the settings files Claude Code reads (the project's, its local one, the user's),
 * every event is handled twice; http hooks whose token is not `home`'s run in-process, every one.
 * Returns one line per problem (none: []).
 */
export function hookProblems(spec: AnySpec, workspace: string, home: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const files = [settingsPath(spec, workspace, false, env), ...(spec.name === 'claude-code' ? [join(workspace, ...LOCAL_SETTINGS)] : []), settingsPath(spec, workspace, true, env)];
  const withHooks = files.map((file) => ({ file, hooks: ourHooksIn(spec, file) })).filter((f) => f.hooks.length > 0);
  const problems: string[] = [];
  if (withHooks.length > 1) {
    problems.push(`takeback's ${spec.name} hooks are in ${withHooks.map((f) => f.file).join(' and ')}: every event is handled twice (keep one: \`takeback init ${spec.name} --remove\` and \`--user --remove\`, then one \`init\`)`);
  }
  let token: string | null = null;
  try {
    token = readFileSync(tokenFile(home), 'utf8').trim();
  } catch {
    // none: every http hook's token is foreign
  }
  for (const { file, hooks } of withHooks) {
    const foreign = hooks.some((h) => h.type === 'http' && (h.headers as Record<string, string> | undefined)?.Authorization !== `Bearer ${token}`);
    if (foreign) problems.push(`the http hooks in ${file} carry a token that ${tokenFile(home)} does not hold: they run in-process, every one (run \`takeback init ${spec.name} --http\` again)`);
  }
  return problems;
}
