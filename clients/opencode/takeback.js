// takeback-plugin: takeback's plugin for opencode and the Kilo Code CLI (the same plugin API).
//
// It hands opencode's events to takeback, which records them in its change journal: a session's
// creation, each prompt (`chat.message`: a turn begins), each file tool and shell call before it
// runs and after (`tool.execute.before` / `tool.execute.after`, paired by the tool call's
// `callID`), and the session going idle (the turn ends). Each event goes to the capture daemon's
// socket when one runs for this install (TAKEBACK_HOOK_DAEMON=1), else to `takeback hook
// <agent>` with the event on its stdin, exactly as the other agents' hooks do.
//
// `takeback init opencode` (or `init kilo`) copies this file into the agent's plugins folder and
// fills in SETUP below; `init --remove` deletes the copy. Plain JavaScript, Node's modules only,
// no dependencies. It never throws into the agent and never holds it up long: a failure is
// logged to $TAKEBACK_HOME/logs/hook.log and swallowed, the daemon gets a second to take an
// event, and an event taken (by the daemon or the command line) is waited for HOOK_TIMEOUT_MS
// at most. Where takeback is not installed (a teammate's clone that has this file) it does
// nothing at all.
import { spawn } from 'node:child_process';
import { accessSync, appendFileSync, closeSync, constants, mkdirSync, openSync, unlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/**
 * Filled in by `takeback init` (one line of JSON): the agent's name as takeback knows it, the
 * Node and the `bin/takeback.js` of the install that wrote this file, the name of that install's
 * daemon socket (under $TAKEBACK_HOME/run), and how many folders `init` made for this file (its
 * own, then its parent: `init --remove` takes them out again when they are left empty). With
 * nulls, the `takeback` on PATH is used.
 */
const SETUP = {"agent":"opencode","node":null,"bin":null,"socket":null,"made":0};

/** The tools whose calls takeback records; every other tool's events are not sent at all. */
const CAPTURED_TOOLS = new Set(['write', 'edit', 'multiedit', 'apply_patch', 'patch', 'bash']);
/** How long the daemon has to claim an event before the command line is run instead (ms). */
const CLAIM_TIMEOUT_MS = 1000;
/** How long a tool call waits for `takeback hook` to record its start or end (ms); past it the process goes on alone. */
const HOOK_TIMEOUT_MS = 30_000;

const env = process.env;

/** True when `file` is there and executable. */
function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The program and arguments that run this install's takeback, or null where there is none. */
function takebackCommand() {
  if (SETUP.bin && executable(SETUP.bin)) return SETUP.node && executable(SETUP.node) ? [SETUP.node, SETUP.bin] : [SETUP.bin];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && executable(join(dir, 'takeback'))) return [join(dir, 'takeback')];
  }
  return null;
}

/** `$TAKEBACK_HOME`, else `$XDG_STATE_HOME/takeback`, else `~/.local/state/takeback` (takeback's own rule). */
function takebackHome() {
  if (env.TAKEBACK_HOME) return env.TAKEBACK_HOME;
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'takeback');
}

/** One line in takeback's hook log; never throws. */
function log(message) {
  try {
    const dir = join(takebackHome(), 'logs');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    appendFileSync(join(dir, 'hook.log'), `${new Date().toISOString()} [${process.pid}] plugin ${SETUP.agent}: ${message}\n`, { mode: 0o600 });
  } catch {
    // Nowhere to log: stay silent rather than stand in the agent's way.
  }
}

/** takeback's daemon switch: `1`, `true`, `on` or `yes`. */
function daemonEnabled() {
  return ['1', 'true', 'on', 'yes'].includes((env.TAKEBACK_HOOK_DAEMON ?? '').toLowerCase());
}

/** The variables the daemon applies around an event (takeback's FORWARDED_ENV), TAKEBACK_HOME resolved. */
function forwardedEnv(home) {
  const out = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && /^(TAKEBACK_|GIT_)|^(PATH|HOME|XDG_CONFIG_HOME|XDG_STATE_HOME)$/.test(k)) out[k] = v;
  out.TAKEBACK_HOME = home;
  return out;
}

/**
 * Hands one event to the daemon on `socket` (takeback's protocol: the request, a claim, "go",
 * the answer). Resolves true once the daemon took it, false when it should be run here (no
 * daemon, no claim in time, refused). Never rejects.
 */
function forward(socket, req) {
  return new Promise((resolve) => {
    let committed = false;
    let settled = false;
    let buf = '';
    const finish = (taken) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(taken);
    };
    const sock = connect(socket);
    let timer = setTimeout(() => finish(false), CLAIM_TIMEOUT_MS);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(`${JSON.stringify(req)}\n`));
    sock.on('data', (chunk) => {
      buf += chunk;
      let nl;
      while (!settled && (nl = buf.indexOf('\n')) >= 0) {
        let msg = {};
        try {
          msg = JSON.parse(buf.slice(0, nl));
        } catch {
          // not a message: treated as a refusal below
        }
        buf = buf.slice(nl + 1);
        if (!committed) {
          if (msg.claim !== true) return finish(false);
          // From here on the event is the daemon's: it is not run here too. A daemon that does not
          // answer in HOOK_TIMEOUT_MS (stopped, say) is left to finish it while the agent goes on.
          committed = true;
          clearTimeout(timer);
          timer = setTimeout(() => {
            log(`the capture daemon took over ${HOOK_TIMEOUT_MS} ms; going on without waiting`);
            finish(true);
          }, HOOK_TIMEOUT_MS);
          sock.write('{"go":true}\n');
        } else if (typeof msg.ok === 'boolean') finish(true);
      }
    });
    // A daemon that took the event and went away may have recorded it: it is not done twice.
    const broken = () => finish(committed);
    sock.on('error', broken);
    sock.on('close', broken);
  });
}

/**
 * Runs `takeback hook <agent>` with `text` on its stdin, in its own process group (it outlives
 * an agent that exits meanwhile: the last event of `opencode run` is not awaited). The event is
 * handed over in a file opened as the child's stdin and unlinked at once, so nothing of it is
 * lost when the agent exits right after. Resolves when the child exits, or after HOOK_TIMEOUT_MS.
 */
function runHook(command, text, cwd) {
  return new Promise((resolve) => {
    let fd = null;
    const file = join(tmpdir(), `takeback-${SETUP.agent}-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
    try {
      writeFileSync(file, text, { mode: 0o600 });
      fd = openSync(file, 'r');
      unlinkSync(file);
      const child = spawn(command[0], [...command.slice(1), 'hook', SETUP.agent], {
        cwd,
        env: { ...env, NODE_EXTRA_CA_CERTS: '' },
        stdio: [fd, 'ignore', 'ignore'],
        detached: true,
      });
      const timer = setTimeout(() => {
        log(`takeback hook took over ${HOOK_TIMEOUT_MS} ms; going on without waiting`);
        resolve();
      }, HOOK_TIMEOUT_MS);
      child.once('error', (e) => {
        clearTimeout(timer);
        log(`cannot run ${command.join(' ')}: ${e.message}`);
        resolve();
      });
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.unref();
    } catch (e) {
      log(`cannot hand the event over: ${e?.message ?? e}`);
      try {
        unlinkSync(file);
      } catch {
        // gone already
      }
      resolve();
    } finally {
      if (fd !== null) closeSync(fd);
    }
  });
}

/** The plugin: opencode calls it once per project folder and calls the hooks it returns. */
export const TakebackPlugin = async ({ directory }) => {
  const command = takebackCommand();
  // No takeback here: nothing to hand events to, and nothing to say.
  if (!command) return {};
  const cwd = typeof directory === 'string' && directory !== '' ? directory : process.cwd();
  /** Sessions with a prompt whose idle event has not come yet: a turn ends once. */
  const busy = new Set();

  /** Hands `ev` to takeback; resolves when it is recorded (or given up on). Never rejects. */
  const deliver = async (ev) => {
    try {
      const text = JSON.stringify({ ...ev, cwd });
      if (SETUP.socket && daemonEnabled() && process.platform !== 'win32') {
        const home = takebackHome();
        const req = { agent: SETUP.agent, text, cwd, env: forwardedEnv(home) };
        if (await forward(join(home, 'run', SETUP.socket), req)) return;
      }
      await runHook(command, text, cwd);
    } catch (e) {
      log(`${ev.hook_event_name} failed: ${e?.message ?? e}`);
    }
  };

  const idle = (sessionID) => {
    if (typeof sessionID !== 'string' || !busy.delete(sessionID)) return undefined;
    return deliver({ hook_event_name: 'session.idle', session_id: sessionID });
  };

  return {
    event: async ({ event }) => {
      try {
        const p = event?.properties ?? {};
        if (event?.type === 'session.created') await deliver({ hook_event_name: 'session.created', session_id: p.sessionID ?? p.info?.id });
        else if (event?.type === 'session.idle') await idle(p.sessionID);
        else if (event?.type === 'session.status' && p.status?.type === 'idle') await idle(p.sessionID);
      } catch (e) {
        log(`event failed: ${e?.message ?? e}`);
      }
    },
    'chat.message': async (input, output) => {
      try {
        const prompt = (output?.parts ?? [])
          .filter((part) => part?.type === 'text' && !part.synthetic && typeof part.text === 'string')
          .map((part) => part.text)
          .join('\n');
        busy.add(input?.sessionID);
        await deliver({ hook_event_name: 'chat.message', session_id: input?.sessionID, message_id: input?.messageID ?? output?.message?.id, prompt });
      } catch (e) {
        log(`chat.message failed: ${e?.message ?? e}`);
      }
    },
    'tool.execute.before': async (input, output) => {
      try {
        if (!CAPTURED_TOOLS.has(input?.tool)) return;
        await deliver({ hook_event_name: 'tool.execute.before', session_id: input.sessionID, tool_name: input.tool, call_id: input.callID, tool_input: output?.args ?? {} });
      } catch (e) {
        log(`tool.execute.before failed: ${e?.message ?? e}`);
      }
    },
    'tool.execute.after': async (input) => {
      try {
        if (!CAPTURED_TOOLS.has(input?.tool)) return;
        // The end is paired by its call id: the arguments (a whole file's content for write) are not sent again.
        await deliver({ hook_event_name: 'tool.execute.after', session_id: input.sessionID, tool_name: input.tool, call_id: input.callID });
      } catch (e) {
        log(`tool.execute.after failed: ${e?.message ?? e}`);
      }
    },
  };
};
