// A workspace outside git past `maxWorkspaceFiles` keeps command capture where the capture
// daemon makes its baseline: the first scan keeps every file's stat at once and the daemon keeps
// their bytes in the background, slice by slice, between the hook events it serves. Real
// processes: the real binary, the real daemon, a generated tree with the limits lowered by the
// environment (TAKEBACK_MAX_WORKSPACE_FILES=50, so 300 files is "large").
//
// While the baseline is in progress (the daemon's pace set to one small slice and then a pause
// longer than the test, so that the state under test holds still), a shell tool call records a
// file already kept as any other change, and one not yet kept as a named gap
// (`baseline-incomplete`), and `list`/`doctor` show how far the baseline is. A new daemon goes on
// with it; once complete, changes are whole again and undo gives the bytes back. With no
// long-lived process at all, the old limits stand: commands are not captured past them. A
// baseline longer than the daemon's idle time does not stop the daemon as it completes.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hookAsync, hookLog, sandbox, setsOf, type Sandbox } from './support/takeback.js';
import { until } from './support/procs.js';
import { bashCall, handledBy, quiet, socketFile, startDaemon } from './support/daemon.js';

const SESSION = 'bb7c4e00-0000-4000-8000-000000000001';
const FILES = 300;
/** Files of the first slice: the daemon keeps these and then pauses. */
const FIRST_SLICE = 40;

const content = (i: number) => `file ${i}\n${'x'.repeat(i)}\n`;

function bigSandbox(env: NodeJS.ProcessEnv = {}): Sandbox {
  const sb = sandbox({ env: { TAKEBACK_MAX_WORKSPACE_FILES: '50', TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', ...env } });
  // Ten folders of thirty files, each file's bytes its own (so a blob in the store says which are kept).
  // Written an hour ago, as a workspace's files mostly are: none is racy (modified within the
  // scans' racy window, which every scan reads again), so what the daemon keeps is its own doing.
  const hourAgo = new Date(Date.now() - 3600_000);
  for (let i = 0; i < FILES; i++) {
    sb.write(`d${i % 10}/f${i}.txt`, content(i));
    fs.utimesSync(sb.abs(`d${i % 10}/f${i}.txt`), hourAgo, hourAgo);
  }
  return sb;
}

function ev(sb: Sandbox, name: string, extra: object = {}): object {
  return { session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra };
}

const bash = (sb: Sandbox, command: string): Promise<void> => bashCall(sb, ev, command);

/** The last command set's files: path → [status, gap or null]. */
function lastCommand(sb: Sandbox): Record<string, [string, string | null]> {
  const set = setsOf(sb.json(['list'])).filter((s: any) => s.source.kind === 'command').at(-1);
  return Object.fromEntries(set.files.map((f: any) => [f.path, [f.status, f.gap ?? null]]));
}

const progress = (sb: Sandbox) => sb.json(['list']).capture.baseline as { kept: number; files: number } | null;

describe('a large workspace outside git, its baseline made in the background', () => {
  it('records what it can while the baseline is in progress, names the rest, shows the progress, and is whole once complete', async () => {
    const sb = bigSandbox();
    const first = await startDaemon(sb, { TAKEBACK_BASELINE_SLICE_FILES: String(FIRST_SLICE), TAKEBACK_BASELINE_PAUSE_MS: '3600000' });
    quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
    quiet(await hookAsync(ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { cwd: sb.ws, env: sb.env }));
    // The first slice, then the pause.
    await until('the first slice to be kept', () => progress(sb)?.kept === FIRST_SLICE, 60_000);
    expect(progress(sb)).toEqual({ kept: FIRST_SLICE, files: FILES });
    const kept = [...Array(FILES).keys()].filter((i) => sb.hasBlob(content(i)));
    const notKept = [...Array(FILES).keys()].filter((i) => !sb.hasBlob(content(i)));
    expect([kept.length, notKept.length]).toEqual([FIRST_SLICE, FILES - FIRST_SLICE]);

    const k = kept[0]!;
    const n = notKept[0]!;
    const kp = `d${k % 10}/f${k}.txt`;
    const np = `d${n % 10}/f${n}.txt`;
    await bash(sb, `echo more >> ${kp} && echo more >> ${np} && echo new > new.txt`);
    expect(lastCommand(sb)).toEqual({
      [kp]: ['modified', null],
      [np]: ['modified', 'baseline-incomplete'],
      'new.txt': ['created', null],
    });
    // Read by the command's scan: the file not yet kept (its bytes after) and the new one.
    const now = { kept: FIRST_SLICE + 2, files: FILES + 1 };
    expect(sb.json(['doctor']).capture).toEqual({ commands: true, reason: null, baseline: now });
    expect(sb.tb(['list']).stdout).toContain(`baseline: ${now.kept} of ${now.files} files kept`);
    expect(sb.tb(['doctor']).stdout).toContain(`baseline: ${now.kept} of ${now.files} files kept`);

    // The preview names the gap; the undo puts back what was kept and leaves the rest as it is.
    const setId = setsOf(sb.json(['list'])).filter((s: any) => s.source.kind === 'command').at(-1).id;
    const preview = sb.json(['preview', setId]);
    expect(preview.gaps).toEqual([expect.objectContaining({ path: np, reason: 'baseline-incomplete' })]);
    // Not a success: the file not kept yet is left out (exit 6).
    expect(sb.json(['undo', setId], { code: 6 }).complete).toBe(false);
    expect(sb.read(kp).toString()).toBe(content(k));
    expect(sb.exists('new.txt')).toBe(false);
    expect(sb.read(np).toString()).toBe(`${content(n)}more\n`);

    // Another daemon at its own pace goes on with the baseline from the next event.
    first.kill('SIGKILL');
    await until('the daemon to die', () => first.signalCode !== null, 60_000);
    await startDaemon(sb);
    await bash(sb, 'true');
    await until('the baseline to complete', () => progress(sb) === null, 120_000);
    expect(sb.tb(['list']).stdout).not.toContain('baseline:');
    for (const i of notKept) if (i !== n) expect(sb.hasBlob(content(i)), `f${i}`).toBe(true);

    // Whole again: a change to a file the first slice had not kept is recorded and undone byte for byte.
    const m = notKept[1]!;
    const mp = `d${m % 10}/f${m}.txt`;
    await bash(sb, `printf 'other' > ${mp} && rm ${np}`);
    expect(lastCommand(sb)).toEqual({ [mp]: ['modified', null], [np]: ['deleted', null] });
    sb.json(['undo', '--last']);
    expect(sb.read(mp).toString()).toBe(content(m));
    expect(sb.read(np).toString()).toBe(`${content(n)}more\n`);
  }, 300_000);

  it('a baseline longer than the daemon’s idle time, in a quiet session: the daemon stays up after it completes, serves the next call, and leaves idle only after', async () => {
    const sb = bigSandbox({ TAKEBACK_HOOK_DAEMON_IDLE_MS: '6000', TAKEBACK_LOG_LEVEL: 'debug' });
    // 300 files, 10 a slice, 600 ms apart: about 18 s, three times the idle time, with no event meanwhile.
    const daemon = await startDaemon(sb, { TAKEBACK_BASELINE_SLICE_FILES: '10', TAKEBACK_BASELINE_PAUSE_MS: '600' });
    quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
    await until('the baseline to complete', () => progress(sb) === null, 120_000);
    // Longer than the daemon's watch takes to look again (1 s): a daemon that counted its idle
    // time from the session's start would have left by now.
    await new Promise((r) => setTimeout(r, 1500));
    expect([daemon.exitCode, daemon.signalCode]).toEqual([null, null]);
    expect(socketFile(sb)).not.toBeNull();
    await bash(sb, 'echo after >> d3/f3.txt');
    expect(lastCommand(sb)).toEqual({ 'd3/f3.txt': ['modified', null] });
    expect(handledBy(sb).filter((h) => h.event === 'PostToolUse').map((h) => h.pid)).toEqual([daemon.pid]);
    // Idle from then on: it leaves, and says why.
    await until('the daemon to leave idle', () => daemon.exitCode !== null, 60_000);
    expect(hookLog(sb)).toContain(`[${daemon.pid}] hook daemon ${daemon.pid}: leaving (idle)`);
    expect(hookLog(sb)).toContain(`baseline of ${sb.ws} complete`);
  }, 180_000);

  it('of TAKEBACK_LEAN_FILES files or more: once the baseline is complete, a walk before the watcher vouches is made by a child of the same daemon, and records the same', async () => {
    const sb = bigSandbox({ TAKEBACK_LEAN_FILES: '1', TAKEBACK_WATCH_SYNC: 'always', TAKEBACK_LOG_LEVEL: 'debug' });
    const daemon = await startDaemon(sb);
    quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
    // Seen by the daemon while the baseline is kept in the background: its rows held then.
    quiet(await hookAsync(ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { cwd: sb.ws, env: sb.env }));
    await until('the baseline to complete', () => progress(sb) === null, 120_000);
    const mark = hookLog(sb).length;
    // The snapshot compared with is older than the watcher's trust (the prompt's, within the
    // session's first 2 s): the command's scans walk, in children, the rows not loaded in the daemon.
    await bash(sb, 'echo more >> d4/f4.txt');
    expect(lastCommand(sb)).toEqual({ 'd4/f4.txt': ['modified', null] });
    const log = hookLog(sb).slice(mark);
    const children = [...log.matchAll(new RegExp(`\\[${daemon.pid}\\] hook daemon: a walk made by a child \\(pid (\\d+)\\)`, 'g'))].map((m) => Number(m[1]));
    expect(children.length).toBe(2);
    expect([...log.matchAll(/\[(\d+)\] claude-code (\w+):/g)].map((m) => [m[2], Number(m[1])])).toEqual([
      ['PreToolUse', children[0]],
      ['PostToolUse', children[1]],
    ]);
  }, 180_000);

  it('without a long-lived process the old limits stand: commands are not captured past them', async () => {
    const sb = bigSandbox({ TAKEBACK_HOOK_DAEMON: '0' });
    quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
    await bash(sb, 'echo more >> d0/f0.txt');
    const list = sb.json(['list']);
    expect(list.capture).toEqual({ commands: false, reason: 'the workspace is over 50 files: file tools only', baseline: null });
    expect(list.sets).toEqual([]);
  });
});
