import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { TakebackError } from '../core/errors.js';
import { HTTP_PORT_VAR, hookUrl } from '../daemon/http-address.js';
import { httpToken } from '../daemon/http-token.js';
import { initAgentHooks, settingsPath } from './hooks-file.js';
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
 * keeps out of git), not to the shared `.claude/settings.json`. SessionStart stays a command
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
 * The command hook beside an http hook: does nothing when the ready file names a live process
 * (the daemon takes the http hook's event), else runs the full hook in-process with the port
 * set (which then starts the daemon). `command`: how to run `takeback hook <agent>`.
 */
export function fallbackCommand(port: number, command: string): string {
  return `p=; read -r p 2>/dev/null < ${readyFileExpr(port)}; [ -n "$p" ] && kill -0 "$p" 2>/dev/null || ${HTTP_PORT_VAR}=${port} ${command}`;
}

/** The hook entries of one event with http hooks on `port` (`token`: the bearer token; `command`: `takeback hook <agent>`). */
export function httpHookEntries(spec: AnySpec, event: string, opts: { port: number; token: string; command: string }): HookEntry[] {
  const inProcess = `${HTTP_PORT_VAR}=${opts.port} ${opts.command}`;
  if (COMMAND_ONLY.has(event)) return [spec.hookEntry(inProcess)];
  return [
    { type: 'http', url: hookUrl(opts.port, spec.name), headers: { Authorization: `Bearer ${opts.token}` }, timeout: 30 },
    spec.hookEntry(fallbackCommand(opts.port, opts.command)),
  ];
}

/** What `init … --http` (or `init` without it) did to each settings file it looked at. */
export interface InitResult {
  file: string;
  changed: boolean;
  /** `added` takeback's hooks, or `removed` them (from the file the other kind of hook lives in). */
  action: 'added' | 'removed';
}

/**
 * `init claude-code [--user] [--http [--port N]] [--remove]`: writes takeback's hooks for `spec`
 * (Claude Code only takes http hooks) and takes them out of the other file, so that an agent
 * never runs both kinds. Project scope: command hooks go to `.claude/settings.json`, http hooks
 * to `.claude/settings.local.json`; `--user`: both to the user's settings file. `--remove` takes
 * takeback's hooks out of both. The file that gets http hooks holds the token: it is made 0600.
 * `home`: takeback's home (the token lives there). Throws `usage`
 * for an agent other than Claude Code with `http`, or a port outside 1–65535.
 */
export function initHooks(
  spec: AnySpec,
  opts: { workspace: string; user: boolean; command: string; remove?: boolean; http?: boolean; port?: number; home: string; env?: NodeJS.ProcessEnv },
): InitResult[] {
  if (opts.http && spec.name !== 'claude-code') throw new TakebackError('usage', `--http: only Claude Code takes http hooks (not ${spec.name})`);
  const port = opts.port;
  if (opts.http && (port === undefined || !Number.isInteger(port) || port < 1 || port > 65535)) throw new TakebackError('usage', `--port must be 1–65535`);
  const shared = settingsPath(spec, opts.workspace, opts.user, opts.env);
  const local = spec.name === 'claude-code' && !opts.user ? join(opts.workspace, ...LOCAL_SETTINGS) : null;
  const results: InitResult[] = [];
  const run = (file: string, remove: boolean, entries?: (event: string) => HookEntry[]) => {
    const r = initAgentHooks(spec, { file, command: opts.command, remove, entries });
    results.push({ ...r, action: remove ? 'removed' : 'added' });
  };
  if (opts.remove) {
    run(shared, true);
    if (local) run(local, true);
    return results;
  }
  if (opts.http) {
    const token = httpToken(opts.home);
    const entries = (event: string) => httpHookEntries(spec, event, { port: port!, token, command: opts.command });
    run(local ?? shared, false, entries);
    // It holds the token now: for its owner's eyes only.
    chmodSync(local ?? shared, 0o600);
    if (local) run(shared, true);
    return results;
  }
  run(shared, false);
  if (local) run(local, true);
  return results;
}
