// The capture daemon (`takeback hook-daemon`) of a sandbox, for the tests that start one or wait
// for the one a hook starts: where its socket is, whether it answers, and a daemon of the test's.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { alive, until } from './procs.js';
import { hookAsync, hookLog, tbSpawn, type Run, type Sandbox } from './takeback.js';

/** The daemon's socket file under the sandbox's home (`run/*.sock`), or null when there is none. */
export function socketFile(sb: Sandbox): string | null {
  try {
    const dir = path.join(sb.home, 'run');
    const name = fs.readdirSync(dir).find((n) => n.endsWith('.sock'));
    return name ? path.join(dir, name) : null;
  } catch {
    return null;
  }
}

/** Whether something accepts a connection on socket `file` (never rejects). */
export function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(file);
    s.on('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/**
 * Starts `takeback hook-daemon` for the sandbox (with `env` over its own) and waits, up to a
 * minute, until it answers. Killed when the test ends.
 */
export async function startDaemon(sb: Sandbox, env: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
  const child = tbSpawn(['hook-daemon'], { cwd: sb.ws, env: { ...sb.env, ...env } });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await until(
    'the daemon to answer',
    async () => {
      const f = socketFile(sb);
      return f !== null && (await answers(f));
    },
    60_000,
  );
  return child;
}

/**
 * Asks the sandbox's daemon to settle, as a reader does (`{"settle":true}` on its socket): resolves
 * once it has recorded every event it answered before recording it (the hook's return is not the
 * record's end; see AnswerPoint in agents/registry.ts), at once when no daemon answers. For tests
 * that read the daemon's log or the journal's file right after a hook. Gives up after 10 s (a
 * daemon the test stopped).
 */
export function settled(sb: Sandbox): Promise<void> {
  const file = socketFile(sb);
  if (!file) return Promise.resolve();
  return new Promise((resolve) => {
    const s = net.connect(file);
    // A daemon stopped by the test never answers: given up after the readers' own bound.
    s.setTimeout(10_000, () => s.destroy());
    s.setEncoding('utf8');
    s.on('connect', () => s.write('{"settle":true}\n'));
    s.on('data', (d: string) => {
      if (d.includes('\n')) s.destroy();
    });
    s.on('error', () => resolve());
    s.on('close', () => resolve());
  });
}

/** What a hook must be: exit 0, nothing on stdout, nothing on stderr (`what` names it in a failure). */
export function quiet(r: Run, what = ''): void {
  expect([r.code, r.stdout, r.stderr], what).toEqual([0, '', '']);
}

/** `event name → pid that logged it`, from the sandbox's debug log (hook.log), oldest first. */
export function handledBy(sb: Sandbox): { event: string; pid: number }[] {
  return [...hookLog(sb).matchAll(/\[(\d+)\] claude-code (\w+):/g)].map((m) => ({ event: m[2]!, pid: Number(m[1]) }));
}

/** Lines of debug log text `log` that are neither an event handled (nor its time), a watcher's doing, a daemon started, a first snapshot or a walk made by the daemon's child, nor a daemon leaving idle or on a signal. */
export function failureLines(log: string): string[] {
  return log
    .split('\n')
    .filter((l) => l && !/\] (claude-code \w+|watch|event): /.test(l) && !/\] hook: started a capture daemon/.test(l) && !/\] hook daemon: (first snapshot|a walk) made by a child \(pid \d+\)/.test(l) && !/\] hook daemon \d+: leaving \((idle|SIGTERM|SIGINT|SIGHUP)\)$/.test(l));
}

/** The lines of the sandbox's hook log that {@link failureLines} keeps. */
export function failures(sb: Sandbox): string[] {
  return failureLines(hookLog(sb));
}

/** True when process `pid` is a capture daemon (`takeback hook-daemon`). */
export function isDaemon(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('hook-daemon');
  } catch {
    return false;
  }
}

/** Kills (SIGKILL) every daemon that handled an event of `sb` and is still alive, when the test ends. */
export function reapDaemons(sb: Sandbox): void {
  onTestFinished(() => {
    for (const { pid } of handledBy(sb)) if (alive(pid) && isDaemon(pid)) process.kill(pid, 'SIGKILL');
  });
}

/** How a test file makes its hook events: `(sandbox, event name, extra fields)` → the event's JSON. */
export type EventOf = (sb: Sandbox, name: string, extra?: object) => object;

let bashCalls = 0;

/**
 * One Bash tool call running `command` (through sh) in the sandbox's workspace, bracketed by its
 * PreToolUse and PostToolUse hooks as `ev` makes them, each run as an agent runs it and required
 * to be quiet (see {@link quiet}); tool call ids are unique within the test file. Resolves once
 * the call is recorded: a capture daemon answers a shell call's end before its record
 * (test/hook-early.test.ts), and the tests read its log and the journal after this.
 */
export async function bashCall(sb: Sandbox, ev: EventOf, command: string): Promise<void> {
  const call = { tool_name: 'Bash', tool_use_id: `toolu_bash${++bashCalls}`, tool_input: { command } };
  quiet(await hookAsync(ev(sb, 'PreToolUse', call), { cwd: sb.ws, env: sb.env }), `Pre ${command}`);
  sb.sh(command);
  quiet(await hookAsync(ev(sb, 'PostToolUse', { ...call, tool_response: {} }), { cwd: sb.ws, env: sb.env }), `Post ${command}`);
  await settled(sb);
}

/** Runs Bash tool calls that change nothing until `count()` (e.g. the scans given a watcher's hints) grows; at most `ms`. */
export async function warmUntil(sb: Sandbox, ev: EventOf, count: () => number, ms = 120_000): Promise<void> {
  const before = count();
  await until('the watcher to be trusted', async () => {
    await bashCall(sb, ev, 'true');
    return count() > before;
  }, ms);
}
