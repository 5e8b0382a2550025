import { join } from 'node:path';
import { packageRoot, packageVersion } from '../core/package-info.js';
import { switchedOff } from '../core/switch.js';

/*
 * Where the capture daemon listens, and what its wire messages look like: shared by the
 * forwarding client (server/cli/forward.ts, which must start in a few milliseconds: Node's own
 * modules only, no SQLite, no crypto) and the daemon. Both compute the same socket path from the
 * same TAKEBACK_HOME, takeback version and install folder, so a client only ever talks to a
 * daemon running its own code.
 *
 * The exchange, one connection per hook event, each message one line of JSON:
 *   client → daemon  {@link ForwardRequest}
 *   daemon → client  {"claim":true}   it is about to handle the event (or {"refuse":true}: run it yourself)
 *   client → daemon  {"go":true}      the client has not given up: handle it
 *   (or daemon → client {"claim":true,"taken":true}: handled with no "go", see below)
 *   daemon → client  {"ok":true}      recorded (or {"ok":false}: it failed, and was logged); or,
 *                                    for an event its rule answers early, {"ok":true} before the
 *                                    record, which the daemon finishes before it claims the next
 * A client that hears no claim in time closes the connection and handles the event itself; the
 * daemon, hearing no "go", drops the event. So an event is handled once, by one of them.
 *
 * A client that names in its request the moment it stops waiting for a claim (`deadline`, on the
 * monotonic clock both processes read) has its event taken at once where the daemon claims it at
 * least {@link TAKE_MARGIN_MS} before that moment: `{"claim":true,"taken":true}`, no "go" (one
 * round trip fewer on every hook). Such a client, when its wait runs out, reads what already came
 * before it gives up, and a taken claim still binds it. The event is handled twice only if the
 * daemon stalls for longer than the margin between its look at the clock and its write of the
 * claim (a process stopped there).
 *
 * A process about to read or write a journal (settle.ts) sends instead:
 *   client → daemon  {"settle":true}
 *   daemon → client  {"settled":true}  once no event answered early is left unrecorded
 */

/** The environment variable that turns the daemon off: `0` (or `false`, `off`, `no`: hooks run in-process, none is started); unset or anything else, on. */
export const DAEMON_SWITCH = 'TAKEBACK_HOOK_DAEMON';
/** The environment variable with the daemon's idle time (ms) before it exits; default {@link DEFAULT_IDLE_MS}. */
export const IDLE_VAR = 'TAKEBACK_HOOK_DAEMON_IDLE_MS';
/** 30 minutes without an event, and the daemon exits. */
export const DEFAULT_IDLE_MS = 30 * 60 * 1000;
/**
 * The environment variable in which the hook client (native/hook-client.c) tells the Node hook it
 * runs how its hand-over went: `no-daemon <socket path>` or `fallback <socket path>` (see
 * forward.ts's ForwardResult). The Node hook then does not ask the daemon again.
 */
export const CLIENT_RESULT_VAR = 'TAKEBACK_HOOK_FORWARDED';
/** Linux's limit on a unix socket path (bytes, without the final NUL). Longer: no daemon. */
export const MAX_SOCKET_PATH = 107;

/**
 * The environment a hook passes on to the daemon, which applies it around the event as the hook
 * process would have had it: takeback's own settings, and what the `git` the scan runs reads
 * (`GIT_*`, `PATH`, `HOME`, `XDG_CONFIG_HOME`). Nothing else is sent.
 */
export const FORWARDED_ENV = /^(TAKEBACK_|GIT_)|^(PATH|HOME|XDG_CONFIG_HOME|XDG_STATE_HOME)$/;

/** One hook event, as the client sends it. */
export interface ForwardRequest {
  /** `claude-code`, `codex`, `gemini` (or anything: the daemon checks it as the hook does). */
  agent: string;
  /** The hook's stdin, as read (the daemon parses and checks it exactly as the in-process hook does). */
  text: string;
  /** The hook process's current folder (an absolute path). */
  cwd: string;
  /** The hook's variables matching {@link FORWARDED_ENV}; `TAKEBACK_HOME` always set (resolved). */
  env: Record<string, string>;
  /**
   * When the client stops waiting for a claim and handles the event itself (ms on the monotonic
   * clock, {@link monotonicMs}); absent from a client that always waits for "go" before the daemon
   * handles it. See the exchange above.
   */
  deadline?: number;
}

/** How far ahead of a client's `deadline` the daemon must claim its event to take it with no "go" (ms). */
export const TAKE_MARGIN_MS = 1000;

/**
 * Now on the monotonic clock (ms; CLOCK_MONOTONIC on Linux, which every process reads alike and
 * which no change of the wall clock moves): the clock of a request's `deadline`.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}

/** 8 hex digits of FNV-1a (32 bits) of `text`: enough to tell installs apart, no crypto to load. */
function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** `$TAKEBACK_HOME/run`: the daemon's folder (0700). */
export function runDir(home: string): string {
  return join(home, 'run');
}

/**
 * `$TAKEBACK_HOME/run/capture-<version>-<hash of the install folder>.sock`. The hook client
 * (native/hook-client.c) computes the same path by the same rule (and leaves the event to Node
 * where it cannot), and the Node hook checks the path it is told (forward.ts's clientResult).
 */
export function socketPath(home: string): string {
  return join(runDir(home), `capture-${packageVersion()}-${fnv(packageRoot())}.sock`);
}

/** The variables of `env` the daemon gets (see {@link FORWARDED_ENV}), with `TAKEBACK_HOME` set to `home`. */
export function forwardedEnv(env: NodeJS.ProcessEnv, home: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && FORWARDED_ENV.test(k)) out[k] = v;
  out.TAKEBACK_HOME = home;
  return out;
}

/**
 * False when `TAKEBACK_HOOK_DAEMON=0` (or `false`, `off`, `no`), else true: hooks use the daemon
 * by default. It takes a hook from ≈ node + 35 ms to ≈ node + 10 ms, and its watcher spares a
 * shell tool call's scans the walk of the workspace (bench/RESULTS.md); without it a hook works
 * as it does in-process.
 */
export function daemonEnabled(env: NodeJS.ProcessEnv): boolean {
  return !switchedOff(env[DAEMON_SWITCH]);
}


/**
 * The environment variable that, set to `0` (or `false`, `off`, `no`) in a hook's environment,
 * has the capture daemon answer that hook only once its event is recorded; unset or anything else,
 * an event whose rule says so is answered earlier (see AnswerPoint in agents/registry.ts).
 */
export const EARLY_VAR = 'TAKEBACK_HOOK_EARLY';

/** False when `env` turns early answers off ({@link EARLY_VAR}), else true. */
export function earlyAnswers(env: NodeJS.ProcessEnv | Record<string, string>): boolean {
  return !switchedOff(env[EARLY_VAR]);
}
