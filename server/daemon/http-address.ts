import { join } from 'node:path';
import { runDir } from './address.js';

/*
 * Where the capture daemon takes hook events over HTTP, and how a hook tells that it will.
 * Claude Code can POST an event to a URL (`"type": "http"` hooks) instead of starting a process:
 * no Node start, a few milliseconds a hook. takeback writes such a hook next to a command hook
 * for the same event; both run at once. The command hook (a line of shell, no Node) does
 * nothing while a daemon is ready — its ready file names a live process — and runs the full hook
 * in-process when none is, so capture goes on with no daemon running (and that run starts one).
 *
 * Shared by `init` (which writes the hooks), the daemon (which serves the port and keeps the
 * ready file) and the in-process hook (which starts the daemon): Node's own modules only.
 */

/** The variable that carries the port to the in-process hook and the daemon it starts. */
export const HTTP_PORT_VAR = 'TAKEBACK_HOOK_HTTP_PORT';
/** The URL path of an agent's hook events: `/takeback/hook/<agent>` (also how `init` knows its own http hooks). */
export const HOOK_URL_PATH = '/takeback/hook/';
/** The lowest port `defaultHttpPort` gives: below Linux's ephemeral range (32768–60999). */
const PORT_BASE = 29470;

/**
 * The default port: 29470 + (uid mod 1000), so two users of one machine get two ports. Loopback
 * only (127.0.0.1). `init --port` chooses another.
 */
export function defaultHttpPort(): number {
  return PORT_BASE + ((process.getuid?.() ?? 0) % 1000);
}

/** A port number from the environment's {@link HTTP_PORT_VAR}, or null when unset or not 1–65535. */
export function httpPortFrom(env: NodeJS.ProcessEnv): number | null {
  const v = env[HTTP_PORT_VAR];
  if (!v || !/^\d{1,5}$/.test(v)) return null;
  const n = Number(v);
  return n >= 1 && n <= 65535 ? n : null;
}

/**
 * `$TAKEBACK_HOME/run/http-<port>.pid`: `<pid> <fingerprint of its token>` of the daemon serving
 * `port`, written once it listens there, removed before it stops taking events. The command
 * hook's shell test reads it: it stands down only for a live daemon that takes its token.
 */
export function readyFile(home: string, port: number): string {
  return join(runDir(home), `http-${port}.pid`);
}

/** The contents of a ready file (`<pid> <fingerprint>`), or null when they are not that. */
export function parseReady(text: string): { pid: number; fp: string } | null {
  const [p, fp = ''] = text.trim().split(' ');
  const pid = Number(p);
  return Number.isInteger(pid) && pid > 0 ? { pid, fp } : null;
}

/** `$TAKEBACK_HOME/run/http-<port>.starting`: touched when a hook starts a daemon, so hooks a moment later do not start another. */
export function startingFile(home: string, port: number): string {
  return join(runDir(home), `http-${port}.starting`);
}

/**
 * `$TAKEBACK_HOME/http-token` (0600): the bearer token the http hooks send and the daemon
 * requires. Not in `run/`, which holds what a daemon leaves behind and may be cleared.
 */
export function tokenFile(home: string): string {
  return join(home, 'http-token');
}

/** The variable that carries the token's fingerprint to the in-process hook (see {@link tokenFingerprint}). */
export const HTTP_FP_VAR = 'TAKEBACK_HOOK_HTTP_FP';

/** `http://127.0.0.1:<port>/takeback/hook/<agent>`. */
export function hookUrl(port: number, agent: string): string {
  return `http://127.0.0.1:${port}${HOOK_URL_PATH}${agent}`;
}
