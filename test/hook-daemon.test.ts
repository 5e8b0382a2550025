// The capture daemon: `takeback hook <agent>` hands its event to a long-lived `takeback
// hook-daemon` of the same TAKEBACK_HOME when one answers, and records it in-process otherwise.
// Real processes, the real binary: the same sets either way, nothing printed, exit 0; a daemon
// killed midway (its socket file left behind) is survived; a daemon too busy to take an event in
// time leaves it to the hook, and never records it twice; parallel hooks lose nothing; the
// daemon leaves when idle; it is used unless TAKEBACK_HOOK_DAEMON=0 (unset: the default, used).
//
// Which process handled an event is read from the debug log (TAKEBACK_LOG_LEVEL=debug): each
// line carries the pid of the process that wrote it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { filesOf, hookAsync, sandbox, setsOf, sleep, type Sandbox } from './support/takeback.js';
import { alive, until } from './support/procs.js';
import { answers, failures, handledBy, isDaemon, quiet, reapDaemons, socketFile, startDaemon } from './support/daemon.js';

const SESSION = 'da3m0n00-0000-4000-8000-000000000001';

function daemonSandbox(env: NodeJS.ProcessEnv = {}): Sandbox {
  // TAKEBACK_HOOK_DAEMON=1 (it is off unless asked for); a daemon started by a hook leaves after 20 s idle at most.
  return sandbox({ git: true, env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '20000', TAKEBACK_LOG_LEVEL: 'debug', ...env } });
}

function ev(sb: Sandbox, name: string, extra: object = {}): object {
  return { session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra };
}

function runDir(sb: Sandbox): string {
  return path.join(sb.home, 'run');
}

const hook = (sb: Sandbox, event: object, env: NodeJS.ProcessEnv = {}) => hookAsync(event, { cwd: sb.ws, env: { ...sb.env, ...env } });

/** A session: a Write and a Bash call, each bracketed by its Pre/Post hooks, in one turn. */
async function session(sb: Sandbox, env: NodeJS.ProcessEnv = {}): Promise<void> {
  sb.write('f.txt', 'a cat sat\n');
  sb.write('x', 'x\n');
  quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' }), env), 'SessionStart');
  quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'write and run' }), env), 'UserPromptSubmit');
  const write = { tool_name: 'Write', tool_use_id: 'toolu_w1', tool_input: { file_path: sb.abs('src/new.txt'), content: 'new\n' } };
  quiet(await hook(sb, ev(sb, 'PreToolUse', write), env), 'Pre Write');
  sb.write('src/new.txt', 'new\n');
  quiet(await hook(sb, ev(sb, 'PostToolUse', { ...write, tool_response: {} }), env), 'Post Write');
  const bash = { tool_name: 'Bash', tool_use_id: 'toolu_b1', tool_input: { command: "sed -i 's/a/b/' f.txt && mv x y" } };
  quiet(await hook(sb, ev(sb, 'PreToolUse', bash), env), 'Pre Bash');
  sb.sh("sed -i 's/a/b/' f.txt && mv x y");
  quiet(await hook(sb, ev(sb, 'PostToolUse', { ...bash, tool_response: {} }), env), 'Post Bash');
  quiet(await hook(sb, ev(sb, 'Stop'), env), 'Stop');
}

/** What `list` says, without ids and times. */
function recorded(sb: Sandbox): unknown {
  const list = sb.json(['list']);
  return {
    turns: list.turns.map((t: any) => [t.id, t.agent, t.session, t.label, t.end !== null]),
    sets: setsOf(list).map((s: any) => [s.turn, s.agent, s.source.kind, s.source.tool ?? null, s.source.toolCallId ?? null, s.source.command ?? null, filesOf(s)]),
  };
}

describe('hooks through the capture daemon', () => {
  it('record the same sets as in-process hooks, print nothing, exit 0', async () => {
    const plain = daemonSandbox({ TAKEBACK_HOOK_DAEMON: '0' });
    await session(plain);
    expect(fs.existsSync(runDir(plain))).toBe(false); // no daemon, not even its folder

    const sb = daemonSandbox();
    const daemon = await startDaemon(sb);
    await session(sb);
    expect(recorded(sb)).toEqual(recorded(plain));
    expect(recorded(sb)).toMatchObject({
      sets: [
        ['t1', 'claude-code', 'tool', 'Write', 'toolu_w1', null, { src: 'created', 'src/new.txt': 'created' }],
        ['t1', 'claude-code', 'command', 'Bash', 'toolu_b1', "sed -i 's/a/b/' f.txt && mv x y", { 'f.txt': 'modified', x: 'deleted', y: 'created' }],
      ],
    });
    // Every event was handled by the daemon; none failed.
    const by = handledBy(sb);
    expect(by.map((h) => h.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PreToolUse', 'PostToolUse', 'Stop']);
    expect(new Set(by.map((h) => h.pid))).toEqual(new Set([daemon.pid]));
    expect(failures(sb)).toEqual([]);
    expect(fs.statSync(runDir(sb)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(socketFile(sb)!).mode & 0o777).toBe(0o600);
    // SIGTERM: the daemon leaves and takes its socket with it.
    const file = socketFile(sb)!;
    daemon.kill('SIGTERM');
    await until('the daemon to exit', () => daemon.exitCode !== null);
    expect(daemon.exitCode).toBe(0);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('a first snapshot made by a child of the daemon (TAKEBACK_FIRST_SNAPSHOT=child) records the same sets as in-process hooks', async () => {
    const plain = daemonSandbox({ TAKEBACK_HOOK_DAEMON: '0' });
    await session(plain);

    const sb = daemonSandbox({ TAKEBACK_FIRST_SNAPSHOT: 'child' });
    const daemon = await startDaemon(sb);
    await session(sb);
    expect(recorded(sb)).toEqual(recorded(plain));
    expect(recorded(sb)).toMatchObject({
      sets: [
        ['t1', 'claude-code', 'tool', 'Write', 'toolu_w1', null, { src: 'created', 'src/new.txt': 'created' }],
        ['t1', 'claude-code', 'command', 'Bash', 'toolu_b1', "sed -i 's/a/b/' f.txt && mv x y", { 'f.txt': 'modified', x: 'deleted', y: 'created' }],
      ],
    });
    // The session's start (the first snapshot) in a child the daemon ran and waited for, not
    // in a hook's own process; every later event in the daemon, the snapshot now there.
    const by = handledBy(sb);
    expect(by.map((h) => h.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PreToolUse', 'PostToolUse', 'Stop']);
    const child = /\[(\d+)\] hook daemon: first snapshot made by a child \(pid (\d+)\)/.exec(fs.readFileSync(path.join(sb.home, 'logs', 'hook.log'), 'utf8'));
    expect(child && Number(child[1])).toBe(daemon.pid);
    expect(by[0]!.pid).toBe(Number(child![2]));
    expect(by.slice(1).map((h) => h.pid)).toEqual(by.slice(1).map(() => daemon.pid));
    expect(failures(sb)).toEqual([]);
  });

  it('a watched workspace of TAKEBACK_LEAN_FILES files or more: a walk before the watcher vouches is made by a child, the hinted scans in the daemon without its rows; the sets are those of in-process hooks', async () => {
    const plain = daemonSandbox({ TAKEBACK_HOOK_DAEMON: '0' });
    await session(plain);

    // Every workspace counts as large; every event that scans syncs with the watcher (no walk chosen for a small tree).
    const sb = daemonSandbox({ TAKEBACK_LEAN_FILES: '1', TAKEBACK_WATCH_SYNC: 'always' });
    const daemon = await startDaemon(sb);
    await session(sb);
    // A command after the watcher vouches (a snapshot whose racy line, its scan's start less 2 s,
    // is past the watcher's subscription: the prompt's walk): its scans given hints, in the daemon.
    await sleep(2100);
    const bash = { tool_name: 'Bash', tool_use_id: 'toolu_b2', tool_input: { command: 'printf z > z.txt' } };
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'again' })), 'UserPromptSubmit 2');
    quiet(await hook(sb, ev(sb, 'PreToolUse', bash)), 'Pre Bash 2');
    sb.sh('printf z > z.txt');
    quiet(await hook(sb, ev(sb, 'PostToolUse', { ...bash, tool_response: {} })), 'Post Bash 2');
    expect(recorded(sb)).toMatchObject({ sets: [...(recorded(plain) as { sets: unknown[] }).sets, ['t2', 'claude-code', 'command', 'Bash', 'toolu_b2', 'printf z > z.txt', { 'z.txt': 'created' }]] });
    const log = fs.readFileSync(path.join(sb.home, 'logs', 'hook.log'), 'utf8');
    // The session's events that scan walked, each in a child the daemon ran and waited for (the
    // snapshots they compare with were made before the watcher vouches); the last command was hinted, in the daemon.
    const children = [...log.matchAll(/\[(\d+)\] hook daemon: a walk made by a child \(pid (\d+)\)/g)];
    expect(children.length).toBeGreaterThan(0);
    expect(new Set(children.map((m) => Number(m[1])))).toEqual(new Set([daemon.pid]));
    const by = handledBy(sb);
    const childPids = new Set(children.map((m) => Number(m[2])));
    expect(by.filter((h) => childPids.has(h.pid)).length).toBe(children.length);
    expect(by.filter((h) => h.pid !== daemon.pid && !childPids.has(h.pid))).toEqual([]);
    expect(by.slice(-2)).toEqual([
      { event: 'PreToolUse', pid: daemon.pid },
      { event: 'PostToolUse', pid: daemon.pid },
    ]);
    expect([...log.matchAll(new RegExp(`\\[${daemon.pid}\\] watch: hints for `, 'g'))].length).toBeGreaterThanOrEqual(2);
    expect(failures(sb)).toEqual([]);
  });

  it('a session start finds no daemon and starts one, which leaves when idle', async () => {
    const sb = daemonSandbox({ TAKEBACK_HOOK_DAEMON_IDLE_MS: '1500' });
    reapDaemons(sb);
    quiet(await hook(sb, ev(sb, 'SessionStart', { source: 'startup' })));
    await until('a daemon to answer', async () => {
      const f = socketFile(sb);
      return f !== null && (await answers(f));
    });
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    const by = handledBy(sb);
    expect(by.map((h) => h.event)).toEqual(['SessionStart', 'UserPromptSubmit']);
    const pid = by[1]!.pid;
    expect(isDaemon(pid)).toBe(true);
    expect(isDaemon(by[0]!.pid)).toBe(false); // the first hook ran in-process
    // 1.5 s without an event: it leaves, socket and all.
    await until('the idle daemon to exit', () => !alive(pid) && socketFile(sb) === null, 10_000);
    // The next hook runs in-process and still records.
    quiet(await hook(sb, ev(sb, 'Stop')));
    expect(sb.json(['list']).turns[0].end).not.toBeNull();
    expect(failures(sb)).toEqual([]);
  });

  it('a daemon whose workspace and home are deleted together (a temporary folder removed) leaves', async () => {
    // The daemon watches the workspace; with its watcher left to choose, a `watchman` on PATH
    // was taken, whose backend deadlocked once the watched folder went: the daemon stayed for
    // ever, its socket gone. (Without Watchman installed, this passes either way.)
    const sb = daemonSandbox();
    reapDaemons(sb);
    const daemon = await startDaemon(sb);
    // Two prompts, no session start (whose retention sweep, a process of its own, may still be
    // writing in the home when it is removed): the second syncs with the watcher the first began.
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p1' })));
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p2' })));
    expect(handledBy(sb).map((h) => h.pid)).toEqual([daemon.pid, daemon.pid]);
    fs.rmSync(sb.ws, { recursive: true, force: true });
    fs.rmSync(sb.home, { recursive: true, force: true });
    await until('the daemon to exit', () => daemon.exitCode !== null || daemon.signalCode !== null, 15_000);
    expect(daemon.exitCode).toBe(0);
    // What it said as it left made nothing again: no log folder back inside the removed home
    // (which would make the removal of a folder holding it fail, ENOTEMPTY).
    expect(fs.existsSync(sb.home)).toBe(false);
  });

  it('a daemon killed (SIGKILL) mid-session: the next hooks fall back and record; its stale socket is survived', async () => {
    const sb = daemonSandbox();
    reapDaemons(sb);
    const daemon = await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    const w1 = { tool_name: 'Write', tool_use_id: 'toolu_k1', tool_input: { file_path: sb.abs('k1.txt'), content: '1\n' } };
    quiet(await hook(sb, ev(sb, 'PreToolUse', w1)));
    daemon.kill('SIGKILL');
    await until('the daemon to die', () => daemon.signalCode !== null);
    const file = socketFile(sb)!;
    expect(fs.existsSync(file)).toBe(true); // left behind: nothing answers there
    sb.write('k1.txt', '1\n');
    quiet(await hook(sb, ev(sb, 'PostToolUse', { ...w1, tool_response: {} })));
    const w2 = { tool_name: 'Write', tool_use_id: 'toolu_k2', tool_input: { file_path: sb.abs('k2.txt'), content: '2\n' } };
    quiet(await hook(sb, ev(sb, 'PreToolUse', w2)));
    sb.write('k2.txt', '2\n');
    quiet(await hook(sb, ev(sb, 'PostToolUse', { ...w2, tool_response: {} })));
    let by = handledBy(sb);
    expect(by.slice(0, 2).every((h) => h.pid === daemon.pid)).toBe(true);
    expect(by.slice(2).some((h) => h.pid === daemon.pid)).toBe(false);

    // Not even a socket: a regular file where it was. A prompt starts a new daemon, which replaces it.
    fs.rmSync(file);
    fs.writeFileSync(file, 'not a socket');
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'q' })));
    await until('a new daemon to answer', () => answers(file));
    const w3 = { tool_name: 'Write', tool_use_id: 'toolu_k3', tool_input: { file_path: sb.abs('k3.txt'), content: '3\n' } };
    quiet(await hook(sb, ev(sb, 'PreToolUse', w3)));
    sb.write('k3.txt', '3\n');
    quiet(await hook(sb, ev(sb, 'PostToolUse', { ...w3, tool_response: {} })));
    by = handledBy(sb);
    const fresh = by[by.length - 1]!.pid;
    expect(fresh).not.toBe(daemon.pid);
    expect(isDaemon(fresh)).toBe(true);

    const sets = setsOf(sb.json(['list']));
    expect(sets.map((s: any) => [s.turn, s.source.toolCallId, filesOf(s)])).toEqual([
      ['t1', 'toolu_k1', { 'k1.txt': 'created' }],
      ['t1', 'toolu_k2', { 'k2.txt': 'created' }],
      ['t2', 'toolu_k3', { 'k3.txt': 'created' }],
    ]);
    expect(failures(sb)).toEqual([]);
    expect(sb.json(['doctor']).problems).toEqual([]);
  });

  it('a daemon that does not take the event in time (stopped): the hook records it itself, and it is recorded once', async () => {
    const sb = daemonSandbox();
    const daemon = await startDaemon(sb);
    quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    daemon.kill('SIGSTOP');
    onTestFinished(() => {
      daemon.kill('SIGCONT');
    });
    const w = { tool_name: 'Write', tool_use_id: 'toolu_s1', tool_input: { file_path: sb.abs('s1.txt'), content: '1\n' } };
    const t0 = Date.now();
    quiet(await hook(sb, ev(sb, 'PreToolUse', w)));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2500); // it waited for the daemon, then gave up
    daemon.kill('SIGCONT');
    sb.write('s1.txt', '1\n');
    quiet(await hook(sb, ev(sb, 'PostToolUse', { ...w, tool_response: {} })));
    // list first: it waits for the daemon's record of the end (a tool call's end whose begin the
    // daemon did not see is answered before its record), and the log is read after it.
    const sets = setsOf(sb.json(['list']));
    expect(sets.map((s: any) => [s.source.toolCallId, filesOf(s)])).toEqual([['toolu_s1', { 's1.txt': 'created' }]]);
    const by = handledBy(sb);
    expect(by.map((h) => [h.event, h.pid === daemon.pid])).toEqual([
      ['UserPromptSubmit', true],
      ['PreToolUse', false], // in the hook's own process
      ['PostToolUse', true], // the daemon answers again
    ]);
    expect(failures(sb)).toEqual([]);
    expect(sb.json(['doctor']).captures.open).toBe(0);
  });

  it('8 hooks at once through the daemon (6 Write, 2 Bash), twice: no set lost', async () => {
    const sb = daemonSandbox();
    const daemon = await startDaemon(sb);
    sb.write('seed.txt', 'seed\n');
    const writeIds: Record<string, string> = {};
    const bashFiles: string[] = [];
    for (const round of [1, 2]) {
      quiet(await hook(sb, ev(sb, 'UserPromptSubmit', { prompt: `round ${round}` })));
      const tools = [
        ...[0, 1, 2, 3, 4, 5].map((i) => ({ id: `toolu_w${round}_${i}`, tool: 'Write', file: `w${round}-${i}.txt`, content: `round ${round} write ${i}\n` })),
        ...[0, 1].map((i) => ({ id: `toolu_b${round}_${i}`, tool: 'Bash', file: `bash${round}-${i}.txt`, content: `bash ${round} ${i}\n` })),
      ];
      const input = (t: (typeof tools)[number]) =>
        t.tool === 'Write' ? { file_path: sb.abs(t.file), content: t.content } : { command: `printf '${t.content.trimEnd()}\\n' > ${t.file}` };
      for (const r of await Promise.all(tools.map((t) => hook(sb, ev(sb, 'PreToolUse', { tool_name: t.tool, tool_input: input(t), tool_use_id: t.id }))))) quiet(r);
      for (const t of tools) fs.writeFileSync(sb.abs(t.file), t.content);
      for (const r of await Promise.all(tools.map((t) => hook(sb, ev(sb, 'PostToolUse', { tool_name: t.tool, tool_input: input(t), tool_use_id: t.id, tool_response: {} })))))
        quiet(r);
      for (const t of tools) if (t.tool === 'Write') writeIds[t.id] = t.file;
      else bashFiles.push(t.file);
      quiet(await hook(sb, ev(sb, 'Stop')));
    }
    // list first: it waits for the record of the last Stop, which the daemon answers before it.
    const list = sb.json(['list']);
    expect(failures(sb)).toEqual([]);
    expect(new Set(handledBy(sb).map((h) => h.pid))).toEqual(new Set([daemon.pid]));
    for (const [id, file] of Object.entries(writeIds)) {
      const sets = list.sets.filter((s: any) => s.source.toolCallId === id);
      expect(sets, id).toHaveLength(1);
      expect(filesOf(sets[0]), id).toEqual({ [file]: 'created' });
    }
    for (const file of bashFiles) expect(list.sets.some((s: any) => s.files.some((f: any) => f.path === file)), file).toBe(true);
    const doc = sb.json(['doctor']);
    expect(doc.problems).toEqual([]);
    expect(doc.captures.open).toBe(0);
  });

  it('TAKEBACK_HOOK_DAEMON=0: a running daemon is not used, and a session start starts none; unset, a session start starts one', async () => {
    const sb = daemonSandbox();
    const daemon = await startDaemon(sb);
    await session(sb, { TAKEBACK_HOOK_DAEMON: '0' });
    const by = handledBy(sb);
    expect(by).toHaveLength(7);
    expect(by.some((h) => h.pid === daemon.pid)).toBe(false);
    expect(setsOf(sb.json(['list']))).toHaveLength(2);

    // Off: no daemon is started.
    for (const value of ['0', 'off']) {
      const off = daemonSandbox({ TAKEBACK_HOOK_DAEMON: value });
      quiet(await hook(off, ev(off, 'SessionStart', { source: 'startup' })));
      quiet(await hook(off, ev(off, 'UserPromptSubmit', { prompt: 'p' })));
      await sleep(500);
      expect(fs.existsSync(runDir(off)), `TAKEBACK_HOOK_DAEMON=${value}`).toBe(false);
      expect(handledBy(off).map((h) => isDaemon(h.pid))).toEqual([false, false]);
    }

    // Unset (the default): the session's first hook runs in-process and starts one, which takes the next events.
    const on = daemonSandbox();
    delete on.env.TAKEBACK_HOOK_DAEMON;
    reapDaemons(on);
    quiet(await hook(on, ev(on, 'SessionStart', { source: 'startup' })));
    await until('a daemon to answer', async () => {
      const f = socketFile(on);
      return f !== null && (await answers(f));
    });
    quiet(await hook(on, ev(on, 'UserPromptSubmit', { prompt: 'p' })));
    expect(handledBy(on).map((h) => isDaemon(h.pid))).toEqual([false, true]);
  });
});
