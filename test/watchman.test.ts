// The capture daemon's watcher through Watchman (core/scan/watchman.ts), chosen where the Watchman
// service answers. A real `watchman` server, private to each test (its own socket and state,
// named to the daemon by WATCHMAN_SOCK) and stopped when the test ends; the real binary, real
// hooks. Shell tool calls are recorded exactly as in-process hooks record them by walking, with
// the warm scans given Watchman's hints; a flood past the bound of paths heard, and the Watchman
// server stopped and started again, fall back to the walk and lose nothing; the watch the daemon
// asked for is taken away when it leaves; `doctor` says which watcher serves, and outside git
// (which Watchman does not watch) names @parcel/watcher.
//
// Skipped when `watchman` is not installed, unless TAKEBACK_REQUIRE_WATCHMAN=1 (CI) makes that a
// failure. Which watcher gave a scan its hints is read from the debug log
// (`watch: hints for <root> (<n> paths, watchman)`).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { filesOf, hookAsync, hookLog, sandbox, setsOf, type Sandbox } from './support/takeback.js';
import { CALLS, commandSets, seed } from './support/watch-scenario.js';
import { until } from './support/procs.js';
import { bashCall, failures, quiet, startDaemon, warmUntil } from './support/daemon.js';

const installed = spawnSync('watchman', ['--version'], { encoding: 'utf8' }).status === 0;
const required = process.env.TAKEBACK_REQUIRE_WATCHMAN === '1';
const SESSION = 'wa7c4e00-0000-4000-8000-00000000wm01';

/** A private Watchman server: its socket, a way to ask it a command, and to stop it. */
interface Watchman {
  sock: string;
  ask(args: string[]): any;
  stop(): Promise<void>;
  /** Starts it again on the same socket after {@link stop}. */
  restart(): Promise<void>;
}

/** Starts a Watchman server of its own (socket, state and log in a temporary folder), stopped when the test ends. */
async function startWatchman(): Promise<Watchman> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-wm-'));
  const sock = path.join(dir, 'sock');
  let child: ChildProcess | null = null;
  const ask = (args: string[]) => {
    const r = spawnSync('watchman', [`--sockname=${sock}`, '--no-spawn', '--no-pretty', ...args], { encoding: 'utf8' });
    return r.status === 0 ? JSON.parse(r.stdout) : null;
  };
  const start = async () => {
    child = spawn('watchman', ['--foreground', '--no-save-state', `--sockname=${sock}`, `--statefile=${path.join(dir, 'state')}`, `--logfile=${path.join(dir, 'log')}`, `--pidfile=${path.join(dir, 'pid')}`], { stdio: 'ignore' });
    await until('watchman to answer', () => ask(['version'])?.version !== undefined, 30_000);
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGTERM');
    await gone;
  };
  await start();
  onTestFinished(async () => {
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { sock, ask, stop, restart: start };
}

function watchSandbox(wm: Watchman, env: NodeJS.ProcessEnv = {}): Sandbox {
  return sandbox({
    git: true,
    env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', TAKEBACK_LOG_LEVEL: 'debug', TAKEBACK_WATCH_SYNC: 'always', TAKEBACK_WATCHMAN: '1', WATCHMAN_SOCK: wm.sock, ...env },
  });
}

const ev = (sb: Sandbox, name: string, extra: object = {}) => ({ session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra });
const hook = (sb: Sandbox, event: object) => hookAsync(event, { cwd: sb.ws, env: sb.env });

/** How many scans were given @parcel/watcher's hints so far. */
function hintedByParcel(sb: Sandbox): number {
  return hookLog(sb).split('\n').filter((l) => l.includes('] watch: hints for ') && l.endsWith(', parcel)')).length;
}

/** How many scans were given Watchman's hints so far. */
function hintedByWatchman(sb: Sandbox): number {
  return hookLog(sb).split('\n').filter((l) => l.includes('] watch: hints for ') && l.endsWith(', watchman)')).length;
}

const bash = (sb: Sandbox, command: string): Promise<void> => bashCall(sb, ev, command);

/** Runs tool calls that change nothing until Watchman's hints reach a scan. */
const warmUp = (sb: Sandbox): Promise<void> => warmUntil(sb, ev, () => hintedByWatchman(sb));

describe.skipIf(!installed && !required)('the capture daemon’s watcher through Watchman', () => {
  it('records shell tool calls exactly as the walk does, the warm scans given Watchman’s hints; its watch is taken away when the daemon leaves; doctor names it', async () => {
    if (!installed) throw new Error('watchman is not installed (TAKEBACK_REQUIRE_WATCHMAN=1)');
    const wm = await startWatchman();
    const walk = watchSandbox(wm, { TAKEBACK_HOOK_DAEMON: '0' });
    seed(walk);
    quiet(await hook(walk, ev(walk, 'SessionStart', { source: 'startup' })));
    quiet(await hook(walk, ev(walk, 'UserPromptSubmit', { prompt: 'p' })));
    for (const c of CALLS) await bash(walk, c);

    const sb = watchSandbox(wm);
    seed(sb);
    const daemon = await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await warmUp(sb);
    expect(hookLog(sb)).toContain('watch: the watcher is Watchman ');
    for (const c of CALLS) {
      const before = hintedByWatchman(sb);
      await bash(sb, c);
      // Both scans of the call (its start and its end) went by Watchman's hints.
      expect(hintedByWatchman(sb) - before, c).toBe(2);
    }
    expect(commandSets(sb)).toEqual(commandSets(walk));
    expect(commandSets(sb)).toHaveLength(4);
    expect(failures(sb)).toEqual([]);

    // doctor says which watcher a daemon started here uses.
    expect(sb.tb(['doctor']).stdout).toMatch(/^watcher: +Watchman \d+\.\d+/m);
    expect(sb.json(['doctor']).watcher).toMatchObject({ kind: 'watchman' });
    const off = sb.tb(['doctor'], { env: { ...sb.env, TAKEBACK_WATCHMAN: '0' } });
    expect(off.stdout).toMatch(/^watcher: +@parcel\/watcher \(TAKEBACK_WATCHMAN=0\)$/m);

    // The daemon asked Watchman to watch the workspace, and takes the watch away as it leaves.
    const real = fs.realpathSync(sb.ws);
    expect(wm.ask(['watch-list']).roots).toContain(real);
    const exited = new Promise((resolve) => daemon.once('exit', resolve));
    daemon.kill('SIGTERM');
    await exited;
    await until('the watch to be taken away', () => !wm.ask(['watch-list']).roots.includes(real), 10_000);
  }, 240_000);

  it('a flood of paths past the bound, then Watchman stopped and started again: the scans walk and lose nothing, and its hints come back', async () => {
    if (!installed) throw new Error('watchman is not installed (TAKEBACK_REQUIRE_WATCHMAN=1)');
    const wm = await startWatchman();
    const sb = watchSandbox(wm, { TAKEBACK_WATCH_MAX_PATHS: '50' });
    seed(sb);
    await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await warmUp(sb);

    const flood = 'mkdir many && for i in $(seq 1 120); do echo $i > many/f$i; done';
    const before = hintedByWatchman(sb);
    await bash(sb, flood);
    // Its start had hints; its end heard more than 50 paths and walked.
    expect(hintedByWatchman(sb) - before).toBe(1);
    const floodSet = commandSets(sb).find(([c]) => c === flood)!;
    expect(Object.keys(floodSet[1])).toHaveLength(121);
    await warmUp(sb);

    await wm.stop();
    await bash(sb, 'echo while-stopped > w.txt');
    await wm.restart();
    await bash(sb, 'echo after > a.txt');
    await warmUp(sb);
    await bash(sb, 'echo again >> a.txt');
    const sets = commandSets(sb).map(([c, f]) => [c, f]);
    expect(sets).toContainEqual(['echo while-stopped > w.txt', { 'w.txt': 'created' }]);
    expect(sets).toContainEqual(['echo after > a.txt', { 'a.txt': 'created' }]);
    expect(sets).toContainEqual(['echo again >> a.txt', { 'a.txt': 'modified' }]);
    expect(failures(sb)).toEqual([]);
  }, 240_000);

  it('outside git, where Watchman answers, the daemon watches through @parcel/watcher and doctor names that watcher, not Watchman', async () => {
    if (!installed) throw new Error('watchman is not installed (TAKEBACK_REQUIRE_WATCHMAN=1)');
    const wm = await startWatchman();
    const sb = sandbox({
      env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', TAKEBACK_LOG_LEVEL: 'debug', TAKEBACK_WATCH_SYNC: 'always', TAKEBACK_WATCHMAN: '1', WATCHMAN_SOCK: wm.sock },
    });
    expect(fs.existsSync(path.join(sb.ws, '.git'))).toBe(false);
    sb.write('a.txt', 'a\n');
    await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await until('the watcher to be trusted', async () => {
      await bash(sb, 'true');
      return hintedByParcel(sb) > 0;
    }, 120_000);
    await bash(sb, 'echo b > b.txt');
    // The process chose Watchman; this workspace's scans were given @parcel/watcher's hints only.
    expect(hookLog(sb)).toContain('watch: the watcher is Watchman ');
    expect(hintedByWatchman(sb)).toBe(0);
    expect(wm.ask(['watch-list']).roots ?? []).not.toContain(fs.realpathSync(sb.ws));
    expect(sb.tb(['doctor']).stdout).toMatch(/^watcher: +@parcel\/watcher \(outside git: /m);
    expect(sb.json(['doctor']).watcher).toMatchObject({ kind: 'parcel' });
    expect(setsOf(sb.json(['list'])).map((x: any) => filesOf(x))).toContainEqual({ 'b.txt': 'created' });
    expect(failures(sb)).toEqual([]);
  }, 240_000);
});
