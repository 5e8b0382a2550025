// The person saves between an undo's plan and its write: a real takeback process (the CLI, and
// the sidecar over real stdio) is stopped right after its transaction record is in place — the
// plan made, the merged bytes computed from the file as it was, nothing written yet — and the
// person's editor saves the file then (in place, or by renaming a new file over it, as editors
// do). However the step ends, the person's last save is not lost: the file holds it (the step
// stopped, saying why) or it is in the step's own record (what the step found, so that a redo
// puts it back).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { overStdio } from './support/lsp-client.js';
import { buildPause, pauseEnv, TXN_RECORD, untilStopped } from './support/pause.js';
import { BIN, lines, sandbox, type Sandbox } from './support/takeback.js';

let helperDir: string;
let so: string;

beforeAll(() => {
  helperDir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'takeback-pause-'));
  so = buildPause(helperDir);
});
afterAll(() => fs.rmSync(helperDir, { recursive: true, force: true }));

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
      const child = spawn(process.execPath, [BIN, 'undo', id], { cwd: sb.ws, env: { ...sb.env, ...pauseEnv(so, TXN_RECORD) }, stdio: ['ignore', 'pipe', 'pipe'] });
      onTestFinished(() => {
        child.kill('SIGKILL');
      });
      let out = '';
      child.stdout!.on('data', (d) => (out += String(d)));
      child.stderr!.on('data', (d) => (out += String(d)));
      const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
      await untilStopped(child);
      // Same length as the file the plan read, other bytes (line 9's "9" for an "X").
      const saved = withLine(withLine(withLine(TEN, 2, 'agent 2'), 8, 'line 8 // mine'), 9, 'line X');
      save(sb, saved, how);
      child.kill('SIGCONT');
      const code = await exited;
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
    const { editor, child } = overStdio(sb.ws, 'headless', { ...sb.env, ...pauseEnv(so, TXN_RECORD) });
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
