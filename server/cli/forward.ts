import { createRequire } from 'node:module';
import { logHook } from '../daemon/log.js';
import { takebackHome } from '../core/home.js';
import { CLIENT_RESULT_VAR, daemonEnabled, forwardedEnv, MAX_SOCKET_PATH, monotonicMs, socketPath, type ForwardRequest } from '../daemon/address.js';
import { spawnDaemon } from '../daemon/spawn.js';
import { httpPortFrom } from '../daemon/http-address.js';
import { readStdin } from './stdin.js';

/*
 * The first thing `takeback hook <agent>` loads (bin/takeback.js): it reads the event and hands
 * it to the capture daemon of this TAKEBACK_HOME and install (server/daemon/), which records it
 * with an open SQLite and warm code, and answers once it is recorded (or, for the events its rule
 * says, before: see AnswerPoint in agents/registry.ts). When no daemon answers, the
 * caller runs the full hook in this process, as before. Node's own modules only (no SQLite, no
 * crypto, no commander): this file is bundled on its own (scripts/bundle.mjs) and must start fast.
 * The hook client (native/hook-client.c) does the same before Node starts, where it is built;
 * test/hook-client.test.ts holds the two to the same socket path and request.
 */

// `require`, not `import`: importing node:net as an ES module builds its namespace,
// which loads fs/promises and more (milliseconds a hook would pay for nothing).
const require = createRequire(import.meta.url);
const { connect } = require('node:net') as typeof import('node:net');

/** How long a hook waits for the daemon to take its event (connect included) before doing it itself (ms). */
export const CLAIM_TIMEOUT_MS = 3000;

/**
 * How the hand-over went:
 * - `done`: the daemon took the event (recorded or to be recorded before its next one, or failed and logged it): nothing more to do;
 * - `no-daemon`: none listens (no socket, or a stale one): handle it here, and a session's start may start one;
 * - `fallback`: a daemon is there but did not take the event (busy past the wait, refused, broke): handle it here.
 */
export type ForwardResult = 'done' | 'no-daemon' | 'fallback';

/**
 * Hands one hook event (`agent`, the stdin `text`) to the daemon listening on `socket`, and waits
 * for its answer (once recorded, or earlier where the daemon's rule allows). The event is handled exactly once: either the daemon claims it within
 * `claimMs` (then this resolves `done` when the daemon answers or goes away), or it is left to
 * the caller (`no-daemon`, `fallback`). The request names when that wait ends (`deadline`), so
 * that a daemon claiming well before it takes the event with no "go" (address.ts). Never rejects.
 */
export function forwardEvent(
  socket: string,
  req: ForwardRequest,
  opts: { claimMs?: number; home?: string } = {},
): Promise<ForwardResult> {
  return new Promise((resolve) => {
    let committed = false;
    let settled = false;
    let buf = '';
    const sock = connect(socket);
    const finish = (r: ForwardResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const claimMs = opts.claimMs ?? CLAIM_TIMEOUT_MS;
    const deadline = monotonicMs() + claimMs;
    // No claim in time: close (the daemon then drops the event) and let the caller handle it; but
    // first what already came is read (the poll phase runs before setImmediate's), since a claim
    // that took the event binds this hook however late it is read. A claim that waits for "go",
    // read late, does not: the daemon may have dropped the event already, and a "go" then would
    // leave it to nobody.
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      setImmediate(() => !committed && finish('fallback'));
    }, claimMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(`${JSON.stringify({ ...req, deadline })}\n`));
    sock.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while (!settled && (nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let msg: { claim?: boolean; taken?: boolean; refuse?: boolean; ok?: boolean };
        try {
          msg = JSON.parse(line) as typeof msg;
        } catch {
          msg = {};
        }
        if (!committed) {
          if (msg.claim === true && (msg.taken === true || !late)) {
            // From here on the event is the daemon's, however long it takes.
            committed = true;
            clearTimeout(timer);
            if (msg.taken !== true) sock.write('{"go":true}\n');
          } else finish('fallback');
        } else if (typeof msg.ok === 'boolean') finish('done');
      }
    });
    const broken = (e?: NodeJS.ErrnoException) => {
      if (settled) return;
      if (committed) {
        // The daemon took the event and then went away: it may have recorded it, so it is not
        // done twice (a hook process killed midway loses its event the same way).
        if (opts.home) logHook(opts.home, `hook ${req.agent}: the capture daemon went away while handling the event${e ? ` (${e.code ?? e.message})` : ''}`);
        finish('done');
      } else finish(e && (e.code === 'ENOENT' || e.code === 'ECONNREFUSED') ? 'no-daemon' : 'fallback');
    };
    sock.on('error', broken);
    sock.on('close', () => broken());
  });
}

/** Events at which a hook that found no daemon starts one: a session's start, and each prompt. */
const STARTERS = new Set(['SessionStart', 'UserPromptSubmit', 'BeforeAgent', 'session.created', 'chat.message']);

function startsDaemon(text: string): boolean {
  try {
    const ev = JSON.parse(text) as { hook_event_name?: unknown };
    return typeof ev?.hook_event_name === 'string' && STARTERS.has(ev.hook_event_name);
  } catch {
    return false;
  }
}

/**
 * What the hook client (native/hook-client.c) says of its hand-over to the daemon on `socket`, in
 * {@link CLIENT_RESULT_VAR}'s value `told`: `no-daemon` or `fallback` when it asked that very
 * socket; null when nothing was told, or when the client asked another socket (its rule and
 * address.ts's disagree: logged to `home`'s hook.log, and this hook asks the daemon itself).
 */
export function clientResult(told: string | undefined, socket: string, home: string): 'no-daemon' | 'fallback' | null {
  if (told === undefined) return null;
  const space = told.indexOf(' ');
  const result = told.slice(0, space);
  if (space > 0 && (result === 'no-daemon' || result === 'fallback') && told.slice(space + 1) === socket) return result;
  logHook(home, `hook: the hook client asked for ${JSON.stringify(told)}, not this install's socket ${socket}: the event goes to the daemon from Node`);
  return null;
}

/**
 * `takeback hook <agent>`: reads the event on stdin and forwards it to the capture daemon; when
 * none takes it, runs `inProcess(text)` (the full hook, server/cli/hook.ts) and, at a session's
 * start or a prompt with no daemon listening, starts one (`bin`: the takeback script) and does not
 * wait for it — unless the hooks are those of `init --http` (`TAKEBACK_HOOK_HTTP_PORT` set), whose
 * in-process hook starts it. When the hook client asked the daemon already
 * ({@link CLIENT_RESULT_VAR}, taken out of the environment here), its answer stands for the
 * hand-over. With
 * `TAKEBACK_HOOK_DAEMON=0`, always `inProcess`, and no daemon is started. Resolves to 0: a hook
 * never fails and never prints.
 */
export async function runForwardedHook(agent: string, inProcess: (text: string) => unknown, bin: string | undefined = process.argv[1]): Promise<number> {
  const env = process.env;
  const told = env[CLIENT_RESULT_VAR];
  delete env[CLIENT_RESULT_VAR];
  const text = readStdin();
  let result: ForwardResult = 'fallback';
  let home: string | null = null;
  try {
    if (daemonEnabled(env) && process.platform !== 'win32') {
      home = takebackHome(env);
      const socket = socketPath(home);
      if (Buffer.byteLength(socket) <= MAX_SOCKET_PATH) {
        result = clientResult(told, socket, home) ?? (await forwardEvent(socket, { agent, text, cwd: process.cwd(), env: forwardedEnv(env, home) }, { home }));
      } else home = null;
    }
  } catch {
    result = 'fallback';
  }
  if (result === 'done') return 0;
  try {
    await inProcess(text);
  } catch {
    // The hook itself logs what fails; whatever is left must not reach the agent.
  }
  // The hooks of `init claude-code --http` start their daemon from `inProcess` (cli/hook.ts,
  // daemon/http-start.ts), claimed by one hook of those that found none: a second start from
  // here would race the first for the socket and the port.
  if (result === 'no-daemon' && home && bin && startsDaemon(text) && httpPortFrom(env) === null) {
    if (spawnDaemon(bin, env) && env.TAKEBACK_LOG_LEVEL === 'debug') logHook(home, 'hook: started a capture daemon');
  }
  return 0;
}
