// The capture daemon's watcher through Watchman (core/scan/watchman.ts), chosen where the Watchman
// service answers. A real `watchman` server, private to each test (its own socket and state,
// named to the daemon by WATCHMAN_SOCK) and stopped when the test ends; the real binary, real
// hooks. Shell tool calls are recorded exactly as in-process hooks record them by walking, with
// the warm scans given Watchman's hints; a flood past the bound of paths heard, and the Watchman
// server stopped and started again, fall back to the walk and lose nothing; the watch the daemon
// asked for is taken away when it leaves; `doctor` says which watcher serves. Outside git and in
// a git worktree Watchman watches too, its cookies (`.watchman-cookie-<host>-<pid>-<n>`, at the
// workspace root then, seen through inotify) never recorded nor left, a person's file of such a
// name with bytes recorded, undone and redone; a `.watchmanconfig` above the workspace makes
// Watchman watch that folder; a workspace removed under the watcher does not keep the daemon.
//
// Skipped when `watchman` is not installed, unless TAKEBACK_REQUIRE_WATCHMAN=1 (CI) makes that a
// failure. Which watcher gave a scan its hints is read from the debug log
// (`watch: hints for <root> (<n> paths, watchman)`).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { hookAsync, hookLog, sandbox, type Sandbox } from './support/takeback.js';
import { CALLS, commandSets, seed } from './support/watch-scenario.js';
import { until } from './support/procs.js';
import { bashCall, failures, quiet, reapDaemons, startDaemon, warmUntil } from './support/daemon.js';

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
  // Watchman's command line, which now and then fails on a loaded machine with the server up: a
  // failed ask is tried again (three times in all) before it says null.
  const ask = (args: string[]) => {
    for (let tries = 0; tries < 3; tries++) {
      if (tries > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
      const r = spawnSync('watchman', [`--sockname=${sock}`, '--no-spawn', '--no-pretty', ...args], { encoding: 'utf8' });
      if (r.status === 0) return JSON.parse(r.stdout);
    }
    return null;
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

/** A sandbox outside git (no `.git` anywhere) whose daemon would use the private Watchman. */
function outsideSandbox(wm: Watchman, env: NodeJS.ProcessEnv = {}): Sandbox {
  return sandbox({
    env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', TAKEBACK_LOG_LEVEL: 'debug', TAKEBACK_WATCH_SYNC: 'always', TAKEBACK_WATCHMAN: '1', WATCHMAN_SOCK: wm.sock, ...env },
  });
}

/** The names of Watchman's cookies made in folder `dir` from now on (inotify through fs.watch), until `close`. */
function cookiesSeen(dir: string): { names: string[]; close(): void } {
  const names: string[] = [];
  const w = fs.watch(dir, (_t, name) => {
    if (name && String(name).startsWith('.watchman-cookie-') && !names.includes(String(name))) names.push(String(name));
  });
  return { names, close: () => w.close() };
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

  it('outside git, Watchman watches too: both scans of each call hinted by Watchman and recorded as the walk records them; its cookies at the root never recorded nor left; doctor names it', async () => {
    if (!installed) throw new Error('watchman is not installed (TAKEBACK_REQUIRE_WATCHMAN=1)');
    const wm = await startWatchman();
    const walk = outsideSandbox(wm, { TAKEBACK_HOOK_DAEMON: '0' });
    seed(walk, false);
    quiet(await hook(walk, ev(walk, 'SessionStart', { source: 'startup' })));
    quiet(await hook(walk, ev(walk, 'UserPromptSubmit', { prompt: 'p' })));
    for (const c of CALLS) await bash(walk, c);

    const sb = outsideSandbox(wm);
    expect(fs.existsSync(path.join(sb.ws, '.git'))).toBe(false);
    seed(sb, false);
    const daemon = await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await warmUp(sb);
    const seen = cookiesSeen(sb.ws);
    for (const c of CALLS) {
      const before = hintedByWatchman(sb);
      await bash(sb, c);
      expect(hintedByWatchman(sb) - before, c).toBe(2);
    }
    // Watchman synced with a cookie at the workspace root (nothing else of its kind is there)...
    await until('a cookie of Watchman’s to be seen', () => seen.names.length > 0);
    seen.close();
    // ...and none was recorded, nor left behind.
    expect(commandSets(sb)).toEqual(commandSets(walk));
    expect(commandSets(sb)).toHaveLength(4);
    expect(fs.readdirSync(sb.ws).filter((n) => n.startsWith('.watchman-cookie-'))).toEqual([]);
    expect(hintedByParcel(sb)).toBe(0);
    expect(failures(sb)).toEqual([]);
    const real = fs.realpathSync(sb.ws);
    expect(wm.ask(['watch-list']).roots).toContain(real);
    expect(sb.tb(['doctor']).stdout).toMatch(/^watcher: +Watchman \d+\.\d+/m);
    expect(sb.json(['doctor']).watcher).toMatchObject({ kind: 'watchman' });
    const exited = new Promise((resolve) => daemon.once('exit', resolve));
    daemon.kill('SIGTERM');
    await exited;
    await until('the watch to be taken away', () => !wm.ask(['watch-list']).roots.includes(real), 10_000);
  }, 240_000);

  it('in a git worktree (`.git` a file): Watchman watches, its cookie at the root never recorded, and git sees none left', async () => {
    if (!installed) throw new Error('watchman is not installed (TAKEBACK_REQUIRE_WATCHMAN=1)');
    const wm = await startWatchman();
    const sb = outsideSandbox(wm);
    const repo = path.join(sb.base, 'repo');
    sb.sh(`git init -q ${repo} && cd ${repo} && echo a > a.txt && git add a.txt && git -c user.email=t@t -c user.name=t commit -qm a && git worktree add -q ${sb.ws}`);
    expect(fs.lstatSync(path.join(sb.ws, '.git')).isFile()).toBe(true);
    await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await warmUp(sb);
    const seen = cookiesSeen(sb.ws);
    const before = hintedByWatchman(sb);
    await bash(sb, 'echo b > b.txt && echo more >> a.txt');
    expect(hintedByWatchman(sb) - before).toBe(2);
    await until('a cookie of Watchman’s to be seen', () => seen.names.length > 0);
    seen.close();
    expect(commandSets(sb).at(-1)).toEqual(['echo b > b.txt && echo more >> a.txt', { 'a.txt': 'modified', 'b.txt': 'created' }]);
    expect(sb.sh('git status --porcelain --untracked-files=all')).toBe(' M a.txt\n?? b.txt\n');
    expect(failures(sb)).toEqual([]);
  }, 240_000);

  it('a .watchmanconfig above the workspace: Watchman watches that folder, the queries name the workspace under it, and no cookie comes into the workspace', async () => {
    if (!installed) throw new Error('watchman is not installed (TAKEBACK_REQUIRE_WATCHMAN=1)');
    const wm = await startWatchman();
    const sb = outsideSandbox(wm);
    fs.writeFileSync(path.join(sb.base, '.watchmanconfig'), '{}\n');
    sb.write('a.txt', 'a\n');
    // A file beside the workspace, under the root Watchman watches: never the workspace's.
    fs.writeFileSync(path.join(sb.base, 'beside.txt'), 'x\n');
    const daemon = await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await warmUp(sb);
    const seen = cookiesSeen(sb.ws);
    const before = hintedByWatchman(sb);
    await bash(sb, `echo b > b.txt && echo more >> a.txt && echo y >> ${path.join(sb.base, 'beside.txt')}`);
    expect(hintedByWatchman(sb) - before).toBe(2);
    expect(commandSets(sb).at(-1)![1]).toEqual({ 'a.txt': 'modified', 'b.txt': 'created' });
    const roots: string[] = wm.ask(['watch-list']).roots;
    expect(roots).toContain(sb.base);
    expect(roots).not.toContain(sb.ws);
    seen.close();
    expect(seen.names).toEqual([]);
    expect(failures(sb)).toEqual([]);
    const exited = new Promise((resolve) => daemon.once('exit', resolve));
    daemon.kill('SIGTERM');
    await exited;
    await until('the watch to be taken away', () => !wm.ask(['watch-list']).roots.includes(sb.base), 10_000);
  }, 240_000);

  it('a person’s file named as Watchman’s own cookies (its server’s host and pid) with bytes, at the root: recorded, undone and redone, hinted as walked; an empty one left by another server never recorded', async () => {
    if (!installed) throw new Error('watchman is not installed (TAKEBACK_REQUIRE_WATCHMAN=1)');
    const wm = await startWatchman();
    const pid = wm.ask(['get-pid']).pid as number;
    expect(pid).toBeGreaterThan(0);
    // Watchman reports no path of this prefix at its cookie folder: only the watcher's listing of the root names it.
    const mine = `.watchman-cookie-${os.hostname()}-${pid}-999999`;
    const left = `.watchman-cookie-${os.hostname()}-1-1`;
    const turn = async (hinted: boolean) => {
      const sb = outsideSandbox(wm, { TAKEBACK_HOOK_DAEMON: hinted ? '1' : '0' });
      sb.write(mine, 'mine at the root\n');
      sb.write(`sub/${mine}`, 'mine deeper\n');
      sb.write(left, '');
      sb.write('other.txt', 'other\n');
      if (hinted) await startDaemon(sb);
      quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
      quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
      if (hinted) await warmUp(sb);
      else for (let i = 0; i < 2; i++) await bash(sb, 'true');
      const before = sb.tree();
      const hintedBefore = hintedByWatchman(sb);
      await bash(sb, `printf 'changed\\n' > ${mine} && printf 'changed deeper\\n' > sub/${mine}`);
      await bash(sb, `rm ${mine}`);
      await bash(sb, `printf 'back\\n' > ${mine} && echo more >> other.txt && touch ${left}`);
      expect(hintedByWatchman(sb) - hintedBefore).toBe(hinted ? 6 : 0);
      quiet(await hook(sb, ev(sb, 'Stop')));
      const after = sb.tree();
      const sets = commandSets(sb).filter(([c]) => c !== 'true');
      sb.json(['undo', '--turn', 't1']);
      const undone = sb.tree();
      sb.json(['redo', '--last']);
      const redone = sb.tree();
      expect(failures(sb)).toEqual([]);
      return { before, after, sets, undone, redone };
    };
    const hinted = await turn(true);
    expect(hinted.sets.map(([, f]) => f)).toEqual([{ [mine]: 'modified', [`sub/${mine}`]: 'modified' }, { [mine]: 'deleted' }, { [mine]: 'created', 'other.txt': 'modified' }]);
    expect(hinted.undone).toEqual(hinted.before);
    expect(hinted.redone).toEqual(hinted.after);
    // The empty one, another server's cookie by its name, left as it was by the undo and the redo.
    expect(hinted.undone[left]).toMatchObject({ type: 'file', size: 0 });
    expect(await turn(false)).toEqual(hinted);
  }, 240_000);

  it('a workspace outside git removed under Watchman (its home with it): the daemon leaves', async () => {
    if (!installed) throw new Error('watchman is not installed (TAKEBACK_REQUIRE_WATCHMAN=1)');
    const wm = await startWatchman();
    const sb = outsideSandbox(wm);
    sb.write('a.txt', 'a\n');
    reapDaemons(sb);
    const daemon = await startDaemon(sb);
    // The second prompt syncs with the watcher the first began.
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p1' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p2' })));
    await until('Watchman to watch the workspace', () => (wm.ask(['watch-list']).roots ?? []).includes(sb.ws));
    expect(hookLog(sb)).toContain('watch: the watcher is Watchman ');
    fs.rmSync(sb.ws, { recursive: true, force: true });
    fs.rmSync(sb.home, { recursive: true, force: true });
    await until('the daemon to exit', () => daemon.exitCode !== null || daemon.signalCode !== null, 15_000);
    expect(daemon.exitCode).toBe(0);
    expect(fs.existsSync(sb.home)).toBe(false);
  }, 120_000);
});
