// The capture daemon watches each workspace it serves (core/scan/watcher.ts, daemon/watch.ts)
// and a warm scan checks only what the watcher heard. Real processes, the real binary, a real
// inotify watcher: a shell tool call is recorded exactly as the walk of in-process hooks records
// it (a `sed -i`, a `mv` of a file and of a folder, an `rm`, a folder made and written at once,
// files under a moved folder); a file rewritten in place deep inside node_modules, which no
// folder's stamp shows, is named as a gap from what the watcher heard; a flood of events past the
// watcher's bound, a daemon killed and a new one not yet trusted fall back to the walk and lose
// nothing.
//
// Whether a scan was given hints is read from the debug log (`watch: hints for <root>`), each
// line with the pid of the process that wrote it.
import { readdirSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { hookAsync, hookLog, sandbox, setsOf, sleep, type Sandbox } from './support/takeback.js';
import { CALLS, commandSets, seed } from './support/watch-scenario.js';
import { until } from './support/procs.js';
import { bashCall, failures, quiet, startDaemon, warmUntil } from './support/daemon.js';
import { overStdio } from './support/lsp-client.js';

const SESSION = 'wa7c4e00-0000-4000-8000-000000000001';

function watchSandbox(env: NodeJS.ProcessEnv = {}, git = true): Sandbox {
  return sandbox({ git, env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', TAKEBACK_LOG_LEVEL: 'debug', TAKEBACK_WATCH_SYNC: 'always', ...env } });
}

function ev(sb: Sandbox, name: string, extra: object = {}): object {
  return { session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra };
}

/** How many scans were given a watcher's hints so far (by any process). */
function hinted(sb: Sandbox): number {
  return hookLog(sb).split('\n').filter((l) => l.includes('] watch: hints for ')).length;
}

const hook = (sb: Sandbox, event: object) => hookAsync(event, { cwd: sb.ws, env: sb.env });

const bash = (sb: Sandbox, command: string): Promise<void> => bashCall(sb, ev, command);

/** Runs tool calls that change nothing until the watcher's hints reach a scan (it vouches for the snapshot). */
const warmUp = (sb: Sandbox): Promise<void> => warmUntil(sb, ev, () => hinted(sb));

/**
 * Waits until the last change is older than the scans' racy window (2 s), then runs one tool call
 * that changes nothing, whose scans see it so: the watcher then forgets the paths it heard for
 * it, and only what it names for good (folders created or moved in) still reaches the scans.
 */
async function settle(sb: Sandbox): Promise<void> {
  await sleep(2510);
  await bash(sb, 'true');
}

describe('the capture daemon’s watcher', () => {
  it('records shell tool calls exactly as the walk does, with the warm scans given hints', async () => {
    const walk = watchSandbox({ TAKEBACK_HOOK_DAEMON: '0' });
    seed(walk);
    quiet(await hook(walk, ev(walk, 'SessionStart', { source: 'startup' })));
    quiet(await hook(walk, ev(walk, 'UserPromptSubmit', { prompt: 'p' })));
    for (const c of CALLS) await bash(walk, c);
    expect(hinted(walk)).toBe(0); // no daemon: every scan walked

    const sb = watchSandbox();
    seed(sb);
    await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await warmUp(sb);
    for (const c of CALLS) {
      // Each call long after the one before: what the scans are given of an earlier call is only
      // what the watcher keeps naming (the folders created or moved in, under which it may not hear).
      await settle(sb);
      const before = hinted(sb);
      await bash(sb, c);
      // Both scans of the call (its start and its end) went by the watcher.
      expect(hinted(sb) - before, c).toBe(2);
    }
    expect(commandSets(sb)).toEqual(commandSets(walk));
    expect(commandSets(sb)).toEqual([
      [CALLS[0], { dir: 'deleted', 'dir/sub': 'deleted', 'dir/sub/deep.txt': 'deleted', 'dir/top.txt': 'deleted', moved: 'created', 'moved/sub': 'created', 'moved/sub/deep.txt': 'created', 'moved/top.txt': 'created' }],
      [CALLS[1], { 'f.txt': 'modified', 'gone.txt': 'deleted', 'moved/sub/deep.txt': 'modified', n: 'created', 'n/m': 'created', 'n/m/z': 'created', x: 'deleted', y: 'created' }],
      [CALLS[2], { keep: 'deleted', 'keep/k.txt': 'deleted', 'moved/sub/deep.txt': 'modified', 'moved/sub/keep': 'created', 'moved/sub/keep/k.txt': 'created', 'n/m/z': 'modified' }],
      [CALLS[3], { 'moved/sub/keep/k.txt': 'modified', n: 'deleted', 'n/m': 'deleted', 'n/m/z': 'deleted' }],
    ]);
    expect(failures(sb)).toEqual([]);
  });

  it('outside git: the warm scans are given hints (the cookie at the root, never recorded, never left) and record exactly what the walk does', async () => {
    const walk = watchSandbox({ TAKEBACK_HOOK_DAEMON: '0' }, false);
    seed(walk, false);
    quiet(await hook(walk, ev(walk, 'SessionStart', { source: 'startup' })));
    quiet(await hook(walk, ev(walk, 'UserPromptSubmit', { prompt: 'p' })));
    for (const c of CALLS) await bash(walk, c);

    const sb = watchSandbox({}, false);
    seed(sb, false);
    await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await warmUp(sb);
    for (const c of CALLS) {
      await settle(sb);
      const before = hinted(sb);
      await bash(sb, c);
      expect(hinted(sb) - before, c).toBe(2);
    }
    expect(commandSets(sb)).toEqual(commandSets(walk));
    expect(commandSets(sb).map(([c]) => c)).toEqual(CALLS);
    // No set, turn or the workspace itself holds a cookie.
    expect(JSON.stringify(sb.json(['list']))).not.toContain('takeback-watch-cookie');
    expect(readdirSync(sb.ws).filter((n) => n.includes('takeback-watch-cookie'))).toEqual([]);
    expect(failures(sb)).toEqual([]);
  });

  it('a Bash call that rewrites a file in place deep inside node_modules: the folder named as an excluded gap on its change, heard by the daemon’s watcher', async () => {
    const sb = watchSandbox();
    seed(sb);
    sb.write('node_modules/a/b/c/d.js', 'one\n');
    await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await warmUp(sb);
    const before = hinted(sb);
    // Four levels down, rewritten in place (the same inode, the same size): no folder's stat or stamp moves.
    const call = "printf 'two\\n' > node_modules/a/b/c/d.js";
    await bash(sb, call);
    expect(hinted(sb) - before).toBe(2);
    const set = setsOf(sb.json(['list'])).find((s: any) => s.source.command === call);
    expect(set.files.map((f: any) => [f.path, f.status, f.gap ?? null])).toEqual([['node_modules', 'modified', 'excluded']]);
    expect(failures(sb)).toEqual([]);
  });

  it('a flood of events past its bound: the watcher lets go, the scans walk and lose nothing, and it is trusted again later', async () => {
    const sb = watchSandbox({ TAKEBACK_WATCH_MAX_PATHS: '20' });
    seed(sb);
    await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await warmUp(sb);
    const before = hinted(sb);
    const flood = 'mkdir -p many && for i in $(seq 1 60); do echo $i > many/f$i; done && echo flood >> f.txt';
    await bash(sb, flood);
    // The start of the call had hints; its end did not: the watcher let go of what it heard.
    expect(hinted(sb) - before).toBe(1);
    const set = commandSets(sb).find(([c]) => c === flood)!;
    expect(Object.keys(set[1]).length).toBe(62);
    expect(set[1]).toMatchObject({ 'f.txt': 'modified', many: 'created', 'many/f1': 'created', 'many/f60': 'created' });
    // Trusted again once a snapshot is taken after it let go.
    await warmUp(sb);
    await bash(sb, 'echo after >> many/f7');
    expect(commandSets(sb).at(-1)).toEqual(['echo after >> many/f7', { 'many/f7': 'modified' }]);
    expect(failures(sb)).toEqual([]);
  });

  it('a daemon killed while trusted, then a new one not yet trusted: the hooks walk and lose nothing', async () => {
    const sb = watchSandbox();
    seed(sb);
    const first = await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await warmUp(sb);
    first.kill('SIGKILL');
    await until('the daemon to die', () => first.signalCode !== null, 60_000);
    const before = hinted(sb);
    // No daemon: in-process hooks, walking.
    await bash(sb, 'echo one >> f.txt && mv x y');
    expect(hinted(sb)).toBe(before);
    // A new daemon: its watcher starts with its first event and vouches for nothing before.
    await startDaemon(sb);
    await bash(sb, 'echo two >> f.txt && rm y');
    expect(hinted(sb)).toBe(before);
    expect(commandSets(sb).slice(-2)).toEqual([
      ['echo one >> f.txt && mv x y', { 'f.txt': 'modified', x: 'deleted', y: 'created' }],
      ['echo two >> f.txt && rm y', { 'f.txt': 'modified', y: 'deleted' }],
    ]);
    expect(failures(sb)).toEqual([]);
  });

  it('the sidecar: captures of commands through `takeback serve` are scanned with its watcher’s hints and record what happened', async () => {
    const sb = watchSandbox();
    seed(sb);
    const { editor } = overStdio(sb.ws, 'headless', sb.env);
    onTestFinished(() => editor.close());
    await editor.initialize();
    const hintsLogged = () => editor.logs.filter((l) => l.startsWith('watch: hints for ')).length;
    let id = 0;
    const command = async (cmd: string) => {
      const cid = `sc${++id}`;
      await editor.conn.sendRequest('capture/begin', { id: cid, tool: 'Bash', command: cmd });
      sb.sh(cmd);
      return editor.conn.sendRequest<{ set: { files: { path: string; status: string }[] } | null }>('capture/end', { id: cid });
    };
    await until('the sidecar’s watcher to be trusted', async () => {
      await command('true');
      return hintsLogged() > 0;
    }, 120_000);
    const before = hintsLogged();
    const r = await command("sed -i 's/a/b/' f.txt && mv x y && rm gone.txt && mv dir moved");
    expect(hintsLogged() - before).toBe(2);
    expect(Object.fromEntries(r.set!.files.map((f) => [f.path, f.status]))).toEqual({
      dir: 'deleted', 'dir/sub': 'deleted', 'dir/sub/deep.txt': 'deleted', 'dir/top.txt': 'deleted',
      'f.txt': 'modified', 'gone.txt': 'deleted', moved: 'created', 'moved/sub': 'created', 'moved/sub/deep.txt': 'created', 'moved/top.txt': 'created', x: 'deleted', y: 'created',
    });
  });

  it('the sidecar: a command that rewrites a file in place deep inside node_modules names the folder as an excluded gap, heard by its watcher', async () => {
    const sb = watchSandbox();
    seed(sb);
    sb.write('node_modules/a/b/c/d.js', 'one\n');
    const { editor } = overStdio(sb.ws, 'headless', sb.env);
    onTestFinished(() => editor.close());
    await editor.initialize();
    const hintsLogged = () => editor.logs.filter((l) => l.startsWith('watch: hints for ')).length;
    let id = 0;
    const command = async (cmd: string) => {
      const cid = `nm${++id}`;
      await editor.conn.sendRequest('capture/begin', { id: cid, tool: 'Bash', command: cmd });
      sb.sh(cmd);
      return editor.conn.sendRequest<{ set: { files: { path: string; status: string; gap?: string }[] } | null }>('capture/end', { id: cid });
    };
    await until('the sidecar’s watcher to be trusted', async () => {
      await command('true');
      return hintsLogged() > 0;
    }, 120_000);
    // Four levels down, rewritten in place (the same inode, the same size): no folder’s stat or stamp moves.
    const r = await command("printf 'two\\n' > node_modules/a/b/c/d.js");
    expect(r.set?.files.map((f) => [f.path, f.status, f.gap ?? null])).toEqual([['node_modules', 'modified', 'excluded']]);
    expect(sb.read('node_modules/a/b/c/d.js').toString()).toBe('two\n');
  });
});
