// The capture daemon answers a hook before its record is done where the rule allows it
// (agents/registry.ts, AnswerPoint): a command's end and a turn's end at once, a command's begin
// once its "before" is read. Real daemon, the real hook client, each hook run as the agent runs
// it: `sh -c '<the command init wrote>'` with `takeback` on PATH (the personal settings file
// names its hook client). The daemon is stopped at an exact point of its record by the pause
// library (test/support/pause.ts): where it stores the command's bytes (a blob's rename), or just
// before a blob's sync (before the commit).
//
// Shown: the hook returns while the record is held; a reader (`takeback list`, the sidecar's
// `changes/list`) waits for it, and at most 5 s; the next event is not claimed before the record is done; a daemon killed between
// the answer and the record leaves a marker that the next hook turns into `not-kept` gaps with the
// cause named; a command's begin does not answer before its "before" bytes are stored, and does
// before its commit; TAKEBACK_HOOK_EARLY=0 answers once recorded, and doctor says which.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, filesOf, hookLog, sandbox, setsOf, sha256, sleep, type Run, type Sandbox } from './support/takeback.js';
import { failures, handledBy, quiet, startDaemon } from './support/daemon.js';
import { pauseEnv, pauseLibrary, pauseSyncEnv, untilStopped } from './support/pause.js';
import { until } from './support/procs.js';
import { overStdio } from './support/lsp-client.js';

const so = pauseLibrary();
const SESSION = 'ea11e000-0000-4000-8000-00000000e001';

/**
 * A git sandbox whose hooks are the ones `init claude-code` writes, run through `sh -c` (as
 * Claude Code runs hook commands) with a `takeback` on PATH that is this install (a symlink, as
 * npm makes one): the personal settings file names this install's hook client, which the shell
 * becomes.
 */
function earlySandbox(env: NodeJS.ProcessEnv = {}): Sandbox & { hook: never; command: string } {
  const sb = sandbox({ git: true, env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', TAKEBACK_LOG_LEVEL: 'debug', ...env } });
  const bin = path.join(sb.base, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(BIN, path.join(bin, 'takeback'));
  sb.env.PATH = `${bin}:${sb.env.PATH}`;
  const r = sb.tb(['init', 'claude-code']);
  expect(r.code, r.stderr).toBe(0);
  const settings = JSON.parse(fs.readFileSync(path.join(sb.ws, '.claude', 'settings.local.json'), 'utf8'));
  const command = settings.hooks.PreToolUse[0].hooks[0].command as string;
  expect(command).toMatch(/^if \[ -x \S*\/native\/build-hook\/takeback-hook \]/);
  return Object.assign(sb, { command }) as Sandbox & { hook: never; command: string };
}

/** One hook event, run as Claude Code runs the hook: `sh -c <command>`, the event on stdin. */
function agentHook(sb: Sandbox & { command: string }, name: string, extra: object = {}, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const input = JSON.stringify({ session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra });
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', sb.command], { cwd: sb.ws, env: { ...sb.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Resolves `p`'s value, or fails naming `what` when it has not settled within `ms`. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `p` is still pending after `ms`. */
async function pendingAfter(p: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await sleep(ms);
  return !settled;
}

/**
 * The markers of daemons that answered an event and have not recorded it (run/unrecorded-<pid>.json,
 * not empty: a daemon keeps its marker open, emptied, between events).
 */
function markers(sb: Sandbox): string[] {
  try {
    const run = path.join(sb.home, 'run');
    return fs.readdirSync(run).filter((n) => n.startsWith('unrecorded-') && fs.statSync(path.join(run, n)).size > 0);
  } catch {
    return [];
  }
}

/** The ids of the tool calls the journal holds as begun and not ended, read from its file (no takeback process: none waits for the daemon). */
function pendingCaptures(sb: Sandbox): string[] {
  const db = new Database(path.join(sb.journalDir(), 'journal.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT id FROM captures ORDER BY id').all() as { id: string }[]).map((r) => r.id);
  } finally {
    db.close();
  }
}

let calls = 0;
/** A Bash tool call's hook fields. */
function bashTool(command: string): { tool_name: string; tool_use_id: string; tool_input: { command: string } } {
  return { tool_name: 'Bash', tool_use_id: `toolu_early${++calls}`, tool_input: { command } };
}

/** Starts a session and a turn through the agent's hooks, and waits until the daemon (not an in-process hook) takes a shell call. */
async function begin(sb: Sandbox & { command: string }, daemon: ChildProcess): Promise<void> {
  quiet(await agentHook(sb, 'SessionStart', { source: 'startup' }), 'SessionStart');
  quiet(await agentHook(sb, 'UserPromptSubmit', { prompt: 'make a file' }), 'UserPromptSubmit');
  await until('the daemon to take an event', () => handledBy(sb).some((h) => h.pid === daemon.pid), 60_000);
}

describe('the capture daemon answers early', () => {
  it("a command's end is answered before its record; a reader (the command line, the sidecar) waits for the record and then sees it", async () => {
    const sb = earlySandbox();
    const made = 'made by the command\n';
    const daemon = await startDaemon(sb, pauseEnv(so(), sha256(made).slice(2)));
    await begin(sb, daemon);
    // An editor's sidecar on the workspace (`takeback serve` over stdio), as an editor starts it.
    const side = overStdio(sb.ws, 'headless', sb.env);
    onTestFinished(() => {
      side.child.kill('SIGKILL');
    });
    await side.editor.initialize();
    const call = bashTool('echo made by the command > made.txt');
    quiet(await agentHook(sb, 'PreToolUse', call), 'Pre');
    sb.sh(call.tool_input.command);
    const post = agentHook(sb, 'PostToolUse', { ...call, tool_response: {} });
    // The record stops where it stores the command's bytes; the hook has its answer by then.
    await untilStopped(daemon);
    quiet(await within(post, 30_000, 'the PostToolUse hook while its record is held'), 'Post');
    expect(markers(sb)).toEqual([`unrecorded-${daemon.pid}.json`]);
    expect(hookLog(sb)).toContain('event: answered before its record (claimed)');

    const reader = sb.tbAsync(['list', '--json']);
    const editorList = side.editor.request<{ sets: any[] }>('changes/list', {});
    expect(await pendingAfter(reader, 3000), 'list went on while the daemon held a record it had answered').toBe(true);
    expect(await pendingAfter(editorList, 0), "the sidecar's changes/list went on while the daemon held a record it had answered").toBe(true);
    daemon.kill('SIGCONT');
    const r = await within(reader, 30_000, 'list once the record is done');
    expect(r.code, r.stderr).toBe(0);
    const sets = setsOf(JSON.parse(r.stdout)).filter((s: any) => s.source.kind === 'command');
    expect(sets.map((s: any) => [s.source.toolCallId, filesOf(s)])).toEqual([[call.tool_use_id, { 'made.txt': 'created' }]]);
    const listed = (await within(editorList, 30_000, "the sidecar's changes/list once the record is done")).sets.filter((s: any) => s.source.kind === 'command');
    expect(listed.map((s: any) => [s.source.toolCallId, filesOf(s)])).toEqual([[call.tool_use_id, { 'made.txt': 'created' }]]);
    expect(markers(sb)).toEqual([]);
    expect(failures(sb)).toEqual([]);
  }, 180_000);

  it('the next event is claimed only once the record answered before it is done', async () => {
    const sb = earlySandbox();
    const made = 'first command\n';
    const daemon = await startDaemon(sb, pauseEnv(so(), sha256(made).slice(2)));
    await begin(sb, daemon);
    const first = bashTool('echo first command > one.txt');
    quiet(await agentHook(sb, 'PreToolUse', first), 'Pre 1');
    sb.sh(first.tool_input.command);
    const post = agentHook(sb, 'PostToolUse', { ...first, tool_response: {} });
    await untilStopped(daemon);
    quiet(await within(post, 30_000, 'Post 1 while its record is held'), 'Post 1');
    // The agent's next call: its hook waits (under the client's 3 s wait for a claim) while the
    // record it follows is held, then the daemon takes it.
    const second = bashTool('echo second > two.txt');
    const pre = agentHook(sb, 'PreToolUse', second);
    expect(await pendingAfter(pre, 1000), 'the next PreToolUse was answered while the record before it was held').toBe(true);
    daemon.kill('SIGCONT');
    quiet(await within(pre, 30_000, 'Pre 2 once the record is done'), 'Pre 2');
    sb.sh(second.tool_input.command);
    quiet(await agentHook(sb, 'PostToolUse', { ...second, tool_response: {} }), 'Post 2');
    // Each call's set holds its own file (list waits for the last Post's record, answered early).
    const sets = setsOf(sb.json(['list'])).filter((s: any) => s.source.kind === 'command');
    expect(sets.map((s: any) => [s.source.toolCallId, filesOf(s)])).toEqual([
      [first.tool_use_id, { 'one.txt': 'created' }],
      [second.tool_use_id, { 'two.txt': 'created' }],
    ]);
    // Both calls handled by the daemon, in order, none by a hook that gave up waiting for it.
    const byDaemon = handledBy(sb).filter((h) => h.pid === daemon.pid).map((h) => h.event);
    expect(byDaemon.slice(-4)).toEqual(['PreToolUse', 'PostToolUse', 'PreToolUse', 'PostToolUse']);
    expect(failures(sb)).toEqual([]);
  }, 180_000);

  it('a daemon killed between its answer and its record: a reader waits at most 5 s; the next hook names the lost record as not-kept gaps', async () => {
    const sb = earlySandbox();
    const made = 'lost with the daemon\n';
    const daemon = await startDaemon(sb, pauseEnv(so(), sha256(made).slice(2)));
    await begin(sb, daemon);
    const call = bashTool('echo lost with the daemon > lost.txt');
    quiet(await agentHook(sb, 'PreToolUse', call), 'Pre');
    sb.sh(call.tool_input.command);
    const post = agentHook(sb, 'PostToolUse', { ...call, tool_response: {} });
    await untilStopped(daemon);
    quiet(await within(post, 30_000, 'Post while its record is held'), 'Post');

    // A reader waits for the stopped daemon at most 5 s, then reads without the record.
    const started = Date.now();
    const r = await within(sb.tbAsync(['list', '--json']), 60_000, 'list with the daemon stopped');
    expect(r.code, r.stderr).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
    expect(setsOf(JSON.parse(r.stdout)).filter((s: any) => s.source.kind === 'command')).toEqual([]);

    daemon.kill('SIGKILL');
    await until('the daemon to be gone', () => daemon.exitCode !== null || daemon.signalCode !== null, 30_000);
    expect(markers(sb)).toEqual([`unrecorded-${daemon.pid}.json`]);
    // The agent's next call: no daemon answers, the hook records it itself, after what the killed
    // daemon answered and never recorded.
    const next = bashTool('echo next > next.txt');
    quiet(await agentHook(sb, 'PreToolUse', next), 'Pre next');
    sb.sh(next.tool_input.command);
    quiet(await agentHook(sb, 'PostToolUse', { ...next, tool_response: {} }), 'Post next');
    expect(markers(sb)).toEqual([]);

    const sets = setsOf(sb.json(['list'])).filter((s: any) => s.source.kind === 'command');
    expect(sets.map((s: any) => [s.source.toolCallId, s.files.map((f: any) => [f.path, f.status, f.gap])])).toEqual([
      [call.tool_use_id, [['lost.txt', 'created', 'not-kept']]],
      [next.tool_use_id, [['next.txt', 'created', null]]],
    ]);
    const doctor = sb.json(['doctor']);
    expect(doctor.unkept).toMatchObject({ causes: ['record-lost'] });
    expect(sb.tb(['doctor']).stdout).toContain('capture daemon gone before recording');
    expect(failures(sb)).toEqual([
      expect.stringMatching(new RegExp(`hook: the capture daemon ${daemon.pid} answered an event and was gone before recording it: queued end \\(its changes named as not kept\\)$`)),
    ]);
  }, 180_000);

  it("a command's begin answers once its before is stored, before its commit; the command's set starts from the bytes read", async () => {
    const sb = earlySandbox();
    sb.write('p.txt', 'as committed\n');
    sb.sh('git add -A && git -c user.email=t@t -c user.name=t commit -qm seed');
    // The person's save before the call: the begin's scan must read and store these bytes.
    const saved = "the person's save\n";
    const tail = sha256(saved).slice(2);
    const daemon = await startDaemon(sb, { ...pauseEnv(so(), tail), ...pauseSyncEnv(so(), tail) });
    await begin(sb, daemon);
    sb.write('p.txt', saved);
    const call = bashTool('echo by the command >> p.txt');
    const pre = agentHook(sb, 'PreToolUse', call);
    // Stopped where the "before" bytes are put in the store: not answered yet.
    await untilStopped(daemon);
    expect(await pendingAfter(pre, 1500), 'the begin was answered before its before-bytes were stored').toBe(true);
    daemon.kill('SIGCONT');
    // Stopped again just before those bytes are synced, ahead of the commit: answered by now.
    await until('the daemon to stop before the sync', () => fs.readFileSync(`/proc/${daemon.pid}/stat`, 'utf8').split(') ')[1]!.startsWith('T'), 60_000);
    quiet(await within(pre, 30_000, 'the PreToolUse while its commit is held'), 'Pre');
    expect(pendingCaptures(sb)).toEqual([]);
    expect(hookLog(sb)).toContain('event: answered before its record (fixed)');
    daemon.kill('SIGCONT');
    sb.sh(call.tool_input.command);
    quiet(await agentHook(sb, 'PostToolUse', { ...call, tool_response: {} }), 'Post');
    quiet(await agentHook(sb, 'Stop'), 'Stop');
    const sets = setsOf(sb.json(['list']));
    const command = sets.find((s: any) => s.source.toolCallId === call.tool_use_id);
    expect(filesOf(command)).toEqual({ 'p.txt': 'modified' });
    // Its diff starts from the person's save (the bytes the begin read), not from the commit.
    const diff = sb.tb(['show', command.id]).stdout;
    expect(diff).toContain('+by the command');
    expect(diff).not.toContain('-as committed');
    expect(diff).not.toContain("+the person's save");
    expect(failures(sb)).toEqual([]);
  }, 180_000);

  it("a command's begin with nothing moved since the snapshot is answered without a scan, ahead of its record; what moved between calls is still not the command's", async () => {
    const sb = earlySandbox();
    sb.write('p.txt', 'as it was\n');
    // Every event that scans syncs the watcher (in a workspace this small a walk costs less, and is taken instead).
    const daemon = await startDaemon(sb, { TAKEBACK_WATCH_SYNC: 'always' });
    await begin(sb, daemon);
    const unscanned = () => hookLog(sb).split('\n').filter((l) => l.includes('a command begun on it without a scan')).length;
    // Calls that change nothing, until the watcher vouches and a scan given its hints wrote the snapshot.
    await until(
      'a begin answered without a scan',
      async () => {
        const call = bashTool('true');
        quiet(await agentHook(sb, 'PreToolUse', call), 'Pre');
        quiet(await agentHook(sb, 'PostToolUse', { ...call, tool_response: {} }), 'Post');
        return unscanned() > 0;
      },
      90_000,
    );
    // Nothing moved since the last call: answered without a scan, and its set is what the command did.
    const was = unscanned();
    const quietCall = bashTool('echo made > made.txt');
    quiet(await agentHook(sb, 'PreToolUse', quietCall), 'Pre');
    expect(unscanned()).toBe(was + 1);
    // Said before its record (the log of an event goes out in one append, as it is answered; the
    // record's line follows once it is written, which may be after the answer reached the agent).
    const begun = (l: string) => l.includes(`capture ${quietCall.tool_use_id} begun`);
    await until('the begin recorded', () => hookLog(sb).split('\n').some(begun));
    const lines = hookLog(sb).split('\n');
    const said = lines.findLastIndex((l) => l.includes('a command begun on it without a scan'));
    expect(said).toBeGreaterThanOrEqual(0);
    expect(lines.findIndex(begun)).toBeGreaterThan(said);
    sb.sh(quietCall.tool_input.command);
    quiet(await agentHook(sb, 'PostToolUse', { ...quietCall, tool_response: {} }), 'Post');
    // The person's save between calls (once the end is recorded: the command line waits for it):
    // heard, so the next begin scans, and the save is not the command's.
    expect(sb.tb(['list']).code).toBe(0);
    sb.write('p.txt', "the person's save\n");
    const next = bashTool('echo also > also.txt');
    quiet(await agentHook(sb, 'PreToolUse', next), 'Pre');
    expect(unscanned()).toBe(was + 1);
    sb.sh(next.tool_input.command);
    quiet(await agentHook(sb, 'PostToolUse', { ...next, tool_response: {} }), 'Post');
    quiet(await agentHook(sb, 'Stop'), 'Stop');
    const sets = setsOf(sb.json(['list']));
    expect(filesOf(sets.find((s: any) => s.source.toolCallId === quietCall.tool_use_id))).toEqual({ 'made.txt': 'created' });
    expect(filesOf(sets.find((s: any) => s.source.toolCallId === next.tool_use_id))).toEqual({ 'also.txt': 'created' });
    expect(filesOf(sets.find((s: any) => s.source.kind === 'turn'))).toEqual({ 'p.txt': 'modified' });
    expect(sb.tb(['doctor']).stdout).not.toContain('could not be kept');
    expect(failures(sb)).toEqual([]);
  }, 180_000);

  it('TAKEBACK_HOOK_EARLY=0: the hook is answered once its event is recorded, and doctor says so', async () => {
    const sb = earlySandbox({ TAKEBACK_HOOK_EARLY: '0' });
    const made = 'answered late\n';
    const daemon = await startDaemon(sb, pauseEnv(so(), sha256(made).slice(2)));
    await begin(sb, daemon);
    const call = bashTool('echo answered late > late.txt');
    quiet(await agentHook(sb, 'PreToolUse', call), 'Pre');
    sb.sh(call.tool_input.command);
    const post = agentHook(sb, 'PostToolUse', { ...call, tool_response: {} });
    await untilStopped(daemon);
    expect(await pendingAfter(post, 2000), 'the PostToolUse was answered while its record was held').toBe(true);
    expect(markers(sb)).toEqual([]);
    daemon.kill('SIGCONT');
    quiet(await within(post, 30_000, 'the PostToolUse once recorded'), 'Post');
    expect(hookLog(sb)).not.toContain('answered before its record');
    expect(sb.tb(['doctor']).stdout).toContain('answers each hook once its event is recorded (TAKEBACK_HOOK_EARLY=0)');
    expect(sb.tb(['doctor'], { env: { ...sb.env, TAKEBACK_HOOK_EARLY: '1' } }).stdout).toMatch(/answers a command's begin once its snapshot is read, a command's end and a turn's end at once/);
    expect(failures(sb)).toEqual([]);
  }, 180_000);
});
