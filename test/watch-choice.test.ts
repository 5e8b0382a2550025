// Whether the capture daemon waits for its watcher's sync before an event (core/capture/watch-feed.ts,
// agents/registry.ts: eventMayScan). Real daemon, real hooks, @parcel/watcher: an event that scans
// nothing (a session's start, a file tool's begin and end) waits for no sync; a shell tool call's
// do; and on a tree whose walk costs less than a sync and a hinted scan, the daemon walks a
// command's begin instead of waiting (its end, answered as it is claimed, keeps nobody waiting and
// syncs all the same), and records the calls as the walk of in-process hooks does; with
// TAKEBACK_WATCH=0 it watches nothing and walks every time.
//
// What the daemon did before each event is read from its debug log
// (`watch: <synced|walk|unsynced|none|unwatched> before the event (<ms> ms; walk <ms>, sync <ms>[, quick sync <ms>], hinted <ms>)`).
import { describe, expect, it } from 'vitest';
import { filesOf, hookAsync, hookLog, sandbox, setsOf, type Sandbox } from './support/takeback.js';
import { until } from './support/procs.js';
import { bashCall, failures, quiet, settled, startDaemon } from './support/daemon.js';

const SESSION = 'wa7c4e00-0000-4000-8000-00000000c401';

function daemonSandbox(env: NodeJS.ProcessEnv = {}): Sandbox {
  return sandbox({ git: true, env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', TAKEBACK_LOG_LEVEL: 'debug', ...env } });
}

const ev = (sb: Sandbox, name: string, extra: object = {}) => ({ session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra });
const hook = (sb: Sandbox, event: object) => hookAsync(event, { cwd: sb.ws, env: sb.env });

/**
 * What the daemon did before each event so far, oldest first: read once it has recorded what it
 * answered (a shell call's end is answered before its record, and before the daemon's sync for it).
 */
async function befores(sb: Sandbox): Promise<string[]> {
  await settled(sb);
  return [...hookLog(sb).matchAll(/\] watch: (\w+) before the event/g)].map((m) => m[1]!);
}

let calls = 0;

const bash = (sb: Sandbox, command: string): Promise<void> => bashCall(sb, ev, command);

async function write(sb: Sandbox, rel: string, text: string): Promise<void> {
  const call = { tool_name: 'Write', tool_use_id: `toolu_c${++calls}`, tool_input: { file_path: sb.abs(rel), content: text } };
  quiet(await hook(sb, ev(sb, 'PreToolUse', call)), `Pre Write ${rel}`);
  sb.write(rel, text);
  quiet(await hook(sb, ev(sb, 'PostToolUse', { ...call, tool_response: {} })), `Post Write ${rel}`);
}

describe('the capture daemon’s choice before an event', () => {
  it('an event that scans nothing waits for no sync; a shell tool call’s events do', async () => {
    const sb = daemonSandbox({ TAKEBACK_WATCH_SYNC: 'always' });
    sb.write('a.txt', 'a\n');
    await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    // Until the watcher syncs (trusted), so that a shell call's events are seen to sync.
    await until('the watcher to sync', async () => {
      await bash(sb, 'true');
      return (await befores(sb)).at(-1) === 'synced';
    }, 60_000);
    let seen = (await befores(sb)).length;
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'resume' })));
    await write(sb, 'b.txt', 'b\n');
    expect((await befores(sb)).slice(seen)).toEqual(['none', 'none', 'none']);
    seen = (await befores(sb)).length;
    await bash(sb, 'echo c > c.txt');
    expect((await befores(sb)).slice(seen)).toEqual(['synced', 'synced']);
    seen = (await befores(sb)).length;
    quiet(await hook(sb, ev(sb, 'Stop')));
    expect((await befores(sb)).slice(seen)).toEqual(['synced']);

    const sets = setsOf(sb.json(['list'])).map((s: any) => [s.source.tool ?? s.source.kind, filesOf(s)]);
    expect(sets).toContainEqual(['Write', { 'b.txt': 'created' }]);
    expect(sets).toContainEqual(['Bash', { 'c.txt': 'created' }]);
    expect(failures(sb)).toEqual([]);
  }, 120_000);

  it('where no Watchman service answers, the watcher is @parcel/watcher’s, doctor says so and why', async () => {
    // A socket nobody serves: fb-watchman's connection fails at once.
    const sb = daemonSandbox({ TAKEBACK_WATCHMAN: '1', WATCHMAN_SOCK: '/nonexistent/watchman.sock' });
    sb.write('a.txt', 'a\n');
    await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await bash(sb, 'echo b > b.txt');
    expect(hookLog(sb)).toContain('watch: the watcher is @parcel/watcher');
    expect(sb.tb(['doctor']).stdout).toMatch(/^watcher: +@parcel\/watcher \(no Watchman service answers/m);
    expect(sb.json(['doctor']).watcher).toMatchObject({ kind: 'parcel' });
    expect(setsOf(sb.json(['list'])).map((x: any) => filesOf(x))).toContainEqual({ 'b.txt': 'created' });
    expect(failures(sb)).toEqual([]);
  }, 120_000);

  it('with TAKEBACK_WATCH=0 the daemon watches nothing: every event walks, what it records is the same, doctor says so', async () => {
    const sb = daemonSandbox({ TAKEBACK_WATCH: '0', TAKEBACK_WATCH_SYNC: 'always' });
    sb.write('a.txt', 'a\n');
    await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    await bash(sb, 'echo b > b.txt && echo a2 >> a.txt');
    sb.write('mine.txt', 'the person’s\n');
    await bash(sb, 'rm b.txt');
    quiet(await hook(sb, ev(sb, 'Stop')));
    const seen = await befores(sb);
    expect(seen.length).toBeGreaterThanOrEqual(5);
    expect(new Set(seen)).toEqual(new Set(['unwatched']));
    expect(hookLog(sb)).toContain('watch: no watcher (TAKEBACK_WATCH=0): every scan walks');
    expect(hookLog(sb)).not.toContain('watch: the watcher is');
    expect(hookLog(sb)).not.toContain('watch: hints for');
    const sets = setsOf(sb.json(['list'])).map((x: any) => [x.source.command ?? x.source.kind, filesOf(x)]);
    expect(sets).toContainEqual(['echo b > b.txt && echo a2 >> a.txt', { 'a.txt': 'modified', 'b.txt': 'created' }]);
    expect(sets).toContainEqual(['rm b.txt', { 'b.txt': 'deleted' }]);
    expect(sb.tb(['doctor']).stdout).toMatch(/^watcher: +none \(TAKEBACK_WATCH=0: every scan/m);
    expect(sb.json(['doctor']).watcher).toMatchObject({ kind: 'none' });
    expect(failures(sb)).toEqual([]);
  }, 120_000);

  it('on a tree whose walk costs less than a sync and a hinted scan, the daemon walks a command’s begin instead of waiting, syncs its end all the same, and records what the walk records', async () => {
    const walk = daemonSandbox({ TAKEBACK_HOOK_DAEMON: '0' });
    const sb = daemonSandbox();
    for (const s of [walk, sb]) {
      for (let i = 0; i < 20; i++) s.write(`f${i}.txt`, `${i}\n`);
      s.sh('git add -A && git -c user.email=t@t -c user.name=t commit -qm seed');
    }
    await startDaemon(sb);
    for (const s of [walk, sb]) {
      quiet(await hook(s, ev(s, 'SessionStart', { source: 'startup' })));
      quiet(await hook(s, ev(s, 'UserPromptSubmit', { prompt: 'p' })));
    }
    // Twenty files walk in a few ms; @parcel/watcher's sync for an event soon after another
    // waits its 50 ms of quiet: once both are measured, the walk is chosen.
    let n = 0;
    await until('the daemon to choose the walk', async () => {
      await bash(sb, `echo ${++n} >> f1.txt`);
      return (await befores(sb)).includes('walk');
    }, 90_000);
    const cmds = Array.from({ length: n }, (_, i) => `echo ${i + 1} >> f1.txt`);
    // A call that renames, removes and makes a folder, until its begin walked and its end synced
    // (nothing waits behind it here: the next call starts once it is recorded): the choice follows
    // running averages of wall time, which one slow walk on a loaded machine can tip back to the
    // sync for a call or two. Each try works on files of its own (f2 to f19).
    let k = 0;
    do {
      k++;
      if (k > 9) throw new Error(`no call walked its begin and synced its end in 9 tries: ${(await befores(sb)).slice(-20).join(' ')}`);
      cmds.push(`mv f${2 * k}.txt g${2 * k}.txt && rm f${2 * k + 1}.txt && mkdir d${k} && echo d > d${k}/e.txt`);
      await bash(sb, cmds.at(-1)!);
    } while ((await befores(sb)).slice(-2).join() !== 'walk,synced');
    for (const c of cmds) await bash(walk, c);
    const commandSets = (s: Sandbox) => setsOf(s.json(['list'])).filter((x: any) => x.source.kind === 'command').map((x: any) => [x.source.command, filesOf(x)]);
    expect(commandSets(sb)).toEqual(commandSets(walk));
    expect(commandSets(sb).at(-1)).toEqual([cmds.at(-1), { [`d${k}`]: 'created', [`d${k}/e.txt`]: 'created', [`f${2 * k}.txt`]: 'deleted', [`f${2 * k + 1}.txt`]: 'deleted', [`g${2 * k}.txt`]: 'created' }]);
    expect(failures(sb)).toEqual([]);
  }, 120_000);
});
