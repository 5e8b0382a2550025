// The person saves between an undo's plan and its write: a real takeback process (the CLI, and
// the sidecar over real stdio) is stopped right after its transaction record is in place — the
// plan made, the merged bytes computed from the file as it was, nothing written yet — and the
// person's editor saves the file then (in place, or by renaming a new file over it, as editors
// do). However the step ends, the person's last save is not lost: the file holds it (the step
// stopped, saying why) or it is in the step's own record (what the step found, so that a redo
// puts it back). And the same stopped undo holding the journal: an agent's hooks behind it
// return, each after one wait of about a second, their events queued and folded in after.
import fs from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { overStdio } from './support/lsp-client.js';
import { pauseEnv, pauseLibrary, stoppedRun, TXN_RECORD, untilStopped } from './support/pause.js';
import { BIN, hookLog, lines, sandbox, type Sandbox } from './support/takeback.js';

const pauseSo = pauseLibrary();

const TEN = lines('line', 10);

/** `text` with line `n` (1-based) replaced by `line`. */
function withLine(text: string, n: number, line: string): string {
  const l = text.split('\n');
  l[n - 1] = line;
  return l.join('\n');
}

/** A workspace where the agent's sed changed line 2 of app.js and the person then line 8: an undo of the sed merges. */
function setUp(): { sb: Sandbox; id: string; ours: string } {
  const sb = sandbox();
  sb.write('app.js', TEN);
  expect(sb.tb(['run', '--', 'true']).code).toBe(0);
  expect(sb.tb(['run', '--', 'sed', '-i', 's/^line 2$/agent 2/', 'app.js']).code).toBe(0);
  const id = sb.json(['list']).sets[0].id as string;
  const ours = withLine(withLine(TEN, 2, 'agent 2'), 8, 'line 8 // mine');
  fs.writeFileSync(sb.abs('app.js'), ours);
  return { sb, id, ours };
}

/** The person's save while the step is stopped: `bytes` written in place (same inode) or into a new file renamed over it. */
function save(sb: Sandbox, bytes: string, how: 'in-place' | 'rename'): void {
  if (how === 'in-place') fs.writeFileSync(sb.abs('app.js'), bytes);
  else {
    fs.writeFileSync(sb.abs('.app.js.swp'), bytes);
    fs.renameSync(sb.abs('.app.js.swp'), sb.abs('app.js'));
  }
}

/**
 * The person's save is kept: the file holds `saved` itself, or the step wrote over it only with
 * a record of having found it (a `redo --last` then gives it back byte for byte).
 */
function expectKept(sb: Sandbox, saved: string, how: string): void {
  const now = sb.read('app.js').toString();
  if (now === saved) return;
  const r = sb.tb(['redo', '--last']);
  expect(sb.read('app.js').toString(), `${how}: the person's save is gone (the file held ${JSON.stringify(now)}; redo --last: ${r.stdout}${r.stderr})`).toBe(saved);
}

describe("the person saves between a merged undo's plan and its write", () => {
  for (const how of ['in-place', 'rename'] as const) {
    it(`the CLI (a save ${how}): the save is not lost, and the step says what it did`, async () => {
      const { sb, id } = setUp();
      const { child, out: printed, exited } = await stoppedRun(BIN, ['undo', id], sb.ws, { ...sb.env, ...pauseEnv(pauseSo(), TXN_RECORD) });
      // Same length as the file the plan read, other bytes (line 9's "9" for an "X").
      const saved = withLine(withLine(withLine(TEN, 2, 'agent 2'), 8, 'line 8 // mine'), 9, 'line X');
      save(sb, saved, how);
      child.kill('SIGCONT');
      const code = await exited;
      const out = printed();
      expectKept(sb, saved, `exit ${code}: ${out}`);
      // A step that stopped says so and exits non-zero; the journal still holds the sed as applied.
      if (sb.read('app.js').toString() === saved) {
        expect(code, out).not.toBe(0);
        expect(out).toMatch(/changed meanwhile/);
        expect(sb.json(['list']).sets[0].files[0].undone ?? false).toBe(false);
      }
    }, 120_000);
  }

  it('the sidecar over stdio: the save is not lost', async () => {
    const { sb, id } = setUp();
    const { editor, child } = overStdio(sb.ws, 'headless', { ...sb.env, ...pauseEnv(pauseSo(), TXN_RECORD) });
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    await editor.initialize();
    const undo = editor.request<any>('undo/apply', { selector: { ids: [id] } }).then(
      (r) => ({ ok: true as const, r }),
      (e: Error) => ({ ok: false as const, e }),
    );
    await untilStopped(child);
    const saved = withLine(withLine(withLine(TEN, 2, 'agent 2'), 8, 'line 8 // mine'), 9, 'line X');
    save(sb, saved, 'in-place');
    child.kill('SIGCONT');
    const r = await undo;
    await editor.close().catch(() => undefined);
    expectKept(sb, saved, JSON.stringify(r.ok ? r.r : r.e.message));
    // The step stopped before writing and said why (Busy, naming the file).
    expect(r.ok ? JSON.stringify(r.r) : r.e.message).toMatch(/app\.js changed meanwhile/);
  }, 120_000);
});

/** A hook run that must not stand in the way: exit 0, nothing on stdout, never killed by the (generous) timeout. */
function hookOk(sb: Sandbox, ev: Record<string, unknown>): void {
  const r = sb.hook({ session_id: 'sess-stuck', cwd: sb.ws, ...ev }, { timeout: 25_000 });
  expect(r.signal, JSON.stringify(ev)).toBeNull();
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe('');
}

/**
 * While `holder` (a merged undo, stopped right after its transaction record: it holds the
 * journal's write lock) is stopped, an agent's turn with a Write runs through the hooks: each
 * returns, its event queued, and doctor names the stopped holder.
 */
function turnBehindTheLock(sb: Sandbox, holder: number): void {
  hookOk(sb, { hook_event_name: 'UserPromptSubmit', prompt: 'write b' });
  const write = { tool_name: 'Write', tool_input: { file_path: sb.abs('b.txt'), content: 'b after\n' }, tool_use_id: 'toolu_behind' };
  hookOk(sb, { hook_event_name: 'PreToolUse', ...write });
  sb.write('b.txt', 'b after\n');
  hookOk(sb, { hook_event_name: 'PostToolUse', ...write, tool_response: {} });
  hookOk(sb, { hook_event_name: 'Stop' });
  const doctor = sb.json(['doctor'], { timeout: 25_000 });
  expect(doctor.lock.holder).toMatchObject({ pid: holder, stopped: true });
  expect(doctor.queued).toBeGreaterThanOrEqual(3);
  // Each hook waited once (opening the journal found the undo's transaction, its lock held) and
  // queued its event at once, never waiting a second time for the spill or for its own write.
  const queuedLines = hookLog(sb).split('\n').filter((l) => l.includes('queued'));
  expect(queuedLines).toHaveLength(4);
  for (const l of queuedLines) expect(l).toContain(`(journal-busy, its lock last taken by pid ${holder}, an undo or redo under way)`);
  // takeback run -- CMD runs CMD behind it, after that one wait, and gives its exit code.
  const run = sb.tb(['run', '--', 'sh', '-c', 'echo ran > run.txt; exit 4'], { timeout: 25_000 });
  expect(run.signal).toBeNull();
  expect(run.code).toBe(4);
  expect(sb.read('run.txt').toString()).toBe('ran\n');
  expect(run.stderr).toContain('not recording this command: the journal cannot be written (an undo or redo of another process is under way)');
}

/** Once the holder is gone: the merged undo done, the turn's Write folded in with its bytes (it undoes), nothing queued. */
function nothingLost(sb: Sandbox): void {
  expect(sb.read('app.js').toString()).toBe(withLine(TEN, 8, 'line 8 // mine'));
  const sets = sb.json(['list']).sets as any[];
  const write = sets.find((s) => s.source.toolCallId === 'toolu_behind');
  expect(write?.files.map((f: any) => [f.path, f.status, f.gap ?? null])).toEqual([['b.txt', 'modified', null]]);
  expect(sb.json(['doctor']).queued).toBe(0);
  expect(sb.tb(['undo', write.id]).code).toBe(0);
  expect(sb.read('b.txt').toString()).toBe('b before\n');
}

describe('a merged undo stopped while it holds the journal', () => {
  it('from the CLI: hooks behind it return, their events queued; once it goes on, the undo is done and nothing is lost', async () => {
    const { sb, id } = setUp();
    sb.write('b.txt', 'b before\n');
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    const { child, out, exited } = await stoppedRun(BIN, ['undo', id], sb.ws, { ...sb.env, ...pauseEnv(pauseSo(), TXN_RECORD) });
    turnBehindTheLock(sb, child.pid!);
    child.kill('SIGCONT');
    expect(await exited, out()).toBe(0);
    expect(out()).toContain('app.js: put back, keeping later changes');
    nothingLost(sb);
  }, 180_000);

  it('from the sidecar over stdio: the same', async () => {
    const { sb, id } = setUp();
    sb.write('b.txt', 'b before\n');
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    const { editor, child } = overStdio(sb.ws, 'headless', { ...sb.env, ...pauseEnv(pauseSo(), TXN_RECORD) });
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    await editor.initialize();
    const undo = editor.request<any>('undo/apply', { selector: { ids: [id] } });
    await untilStopped(child);
    turnBehindTheLock(sb, child.pid!);
    child.kill('SIGCONT');
    expect(await undo).toMatchObject({ written: true, complete: true, applied: [expect.objectContaining({ path: 'app.js', merged: true })] });
    await editor.close().catch(() => undefined);
    nothingLost(sb);
  }, 180_000);
});
