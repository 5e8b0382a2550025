// The background baseline of a large workspace outside git under attack, with real processes:
// the real binary, the real capture daemon (its worker thread reading the batches), a generated
// tree with the limits lowered by the environment (TAKEBACK_MAX_WORKSPACE_FILES=50). While the
// baseline goes on, a person changes files, removes them, and puts links and folders in their
// place; the daemon is killed (SIGKILL) mid-baseline and another takes over. Once the baseline is
// complete every file's bytes are kept as they are now (a bash call's undo gives back exactly
// the tree before it), no blob is missing, and `doctor` finds the journal healthy. A full disk
// under TAKEBACK_HOME stops the baseline, not the hooks; doctor says why (the log, on that disk
// too, cannot), and with room again the baseline completes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hookAsync, sandbox, setsOf, sleep, type Sandbox } from './support/takeback.js';
import { until } from './support/procs.js';
import { bashCall, quiet, startDaemon } from './support/daemon.js';
import { REQUIRED, canMount, smallDisk } from './support/disk.js';
import crypto from 'node:crypto';

const SESSION = 'ba77ac00-0000-4000-8000-000000000001';
const content = (i: number) => `file ${i}\n${'y'.repeat(i % 700)}\n`;

function bigSandbox(files: number, env: NodeJS.ProcessEnv = {}): Sandbox {
  const sb = sandbox({ env: { TAKEBACK_MAX_WORKSPACE_FILES: '50', TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', ...env } });
  const hourAgo = new Date(Date.now() - 3600_000);
  for (let i = 0; i < files; i++) {
    sb.write(`d${i % 20}/f${i}.txt`, content(i));
    fs.utimesSync(sb.abs(`d${i % 20}/f${i}.txt`), hourAgo, hourAgo);
  }
  return sb;
}

const ev = (sb: Sandbox, name: string, extra: object = {}) => ({ session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra });
const bash = (sb: Sandbox, command: string): Promise<void> => bashCall(sb, ev, command);

const progress = (sb: Sandbox) => sb.json(['list']).capture.baseline as { kept: number; files: number } | null;

describe('a background baseline under attack', () => {
  it('files changed, removed, and replaced by links and folders while their batches are read: once complete, an undo gives back exactly the tree', async () => {
    const FILES = 1200;
    const sb = bigSandbox(FILES);
    await startDaemon(sb, { TAKEBACK_BASELINE_SLICE_FILES: '60', TAKEBACK_BASELINE_PAUSE_MS: '30' });
    quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
    quiet(await hookAsync(ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { cwd: sb.ws, env: sb.env }));
    // The person's edits, one file in three, while the slices go on: a few milliseconds apart,
    // the baseline's progress asked for every eighth (each ask is a process of its own).
    let touched = 0;
    for (let i = 0; i < FILES && (touched % 8 !== 0 || progress(sb) !== null); i += 3) {
      await sleep(15);
      const rel = `d${i % 20}/f${i}.txt`;
      const kind = (i / 3) % 4;
      if (kind === 0) fs.appendFileSync(sb.abs(rel), 'person\n');
      else if (kind === 1) fs.rmSync(sb.abs(rel));
      else if (kind === 2) {
        fs.rmSync(sb.abs(rel));
        fs.symlinkSync(`f${i + 1}.txt`, sb.abs(rel));
      } else {
        fs.rmSync(sb.abs(rel));
        fs.mkdirSync(sb.abs(rel));
        fs.writeFileSync(sb.abs(`${rel}/inner`), `inner ${i}\n`);
      }
      touched++;
    }
    expect(touched).toBeGreaterThan(10);
    // A scan (a tool call) sees what the person did; the baseline then completes.
    await bash(sb, 'true');
    await until('the baseline to complete', () => progress(sb) === null, 120_000);
    const before = sb.tree();
    await bash(sb, 'for f in d*/f*.txt; do [ -L "$f" ] || [ -d "$f" ] || echo agent >> "$f"; done; rm -f d3/f3.txt');
    const last = setsOf(sb.json(['list'])).at(-1);
    expect(last.files.filter((f: any) => f.gap)).toEqual([]);
    sb.json(['undo', '--last']);
    expect(sb.tree()).toEqual(before);
    const doctor = sb.json(['doctor']);
    expect(doctor.capture).toEqual({ commands: true, reason: null, baseline: null });
  }, 300_000);

  it('the daemon killed mid-baseline: another goes on from the next event, nothing lost or doubled, the journal healthy', async () => {
    const FILES = 2000;
    const sb = bigSandbox(FILES);
    const first = await startDaemon(sb, { TAKEBACK_BASELINE_SLICE_FILES: '150', TAKEBACK_BASELINE_PAUSE_MS: '20' });
    quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
    await until('the baseline to be half made', () => (progress(sb)?.kept ?? 0) >= 300, 120_000);
    first.kill('SIGKILL');
    await until('the daemon to die', () => first.signalCode !== null, 60_000);
    const mid = progress(sb);
    expect(mid).not.toBeNull();
    expect(mid!.kept).toBeLessThan(FILES);
    await startDaemon(sb);
    await bash(sb, 'true');
    await until('the baseline to complete', () => progress(sb) === null, 120_000);
    for (let i = 0; i < FILES; i++) expect(sb.hasBlob(content(i)), `f${i}`).toBe(true);
    const doctor = sb.json(['doctor']);
    expect(doctor.capture).toEqual({ commands: true, reason: null, baseline: null });
    expect(sb.tb(['doctor']).code).toBe(0);
    await bash(sb, 'for f in d*/f*.txt; do echo agent >> "$f"; done');
    const last = setsOf(sb.json(['list'])).at(-1);
    expect(last.files).toHaveLength(FILES);
    expect(last.files.filter((f: any) => f.gap)).toEqual([]);
    const before = sb.tree();
    sb.json(['undo', '--last']);
    for (let i = 0; i < FILES; i += 97) expect(sb.read(`d${i % 20}/f${i}.txt`).toString()).toBe(content(i));
    sb.json(['redo', '--last']);
    expect(sb.tree()).toEqual(before);
  }, 300_000);

  it.skipIf(!canMount() && !REQUIRED)('a full disk under the journal mid-baseline: hooks answer quiet, doctor says the disk is full (the log cannot), and with room again the baseline completes with nothing lost', async () => {
    const disk = smallDisk(4096);
    const FILES = 300;
    // Bytes no compression shrinks: 300 × 24 KiB, more than the 4 MiB disk holds.
    const sb = sandbox({ env: { TAKEBACK_HOME: `${disk.dir}/home`, TAKEBACK_MAX_WORKSPACE_FILES: '50', TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000' } });
    sb.home = `${disk.dir}/home`;
    const hourAgo = new Date(Date.now() - 3600_000);
    for (let i = 0; i < FILES; i++) {
      sb.write(`d${i % 10}/f${i}.bin`, crypto.randomBytes(24 * 1024));
      fs.utimesSync(sb.abs(`d${i % 10}/f${i}.bin`), hourAgo, hourAgo);
    }
    const daemon = await startDaemon(sb, { TAKEBACK_BASELINE_SLICE_FILES: '20', TAKEBACK_BASELINE_PAUSE_MS: '10' });
    quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
    quiet(await hookAsync(ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { cwd: sb.ws, env: sb.env }));
    let last = '';
    let same = 0;
    await until(
      'the baseline to stop on the full disk',
      () => {
        const now = JSON.stringify(progress(sb));
        same = now === last ? same + 1 : 0;
        last = now;
        return same >= 40;
      },
      120_000,
    );
    expect(fs.statfsSync(disk.dir).bavail).toBe(0);
    const stuck = progress(sb);
    expect(stuck).not.toBeNull();
    // Hooks meanwhile: exit 0, quiet, the daemon up.
    await bash(sb, 'echo during > during.txt');
    expect([daemon.exitCode, daemon.signalCode]).toEqual([null, null]);
    // The log lies on the full disk too: doctor says why nothing moves.
    const full = `the disk under ${sb.home} is full (under 256 KiB free): nothing more can be kept, nor logged: the baseline in the background and the events queued wait for room`;
    expect(sb.json(['doctor']).problems).toContain(full);
    expect(sb.tb(['doctor']).stdout).toContain(full);
    expect(progress(sb)).toEqual(stuck);
    // Room again: the next event wakes the baseline and it completes.
    const r = spawnSync('mount', ['-o', 'remount,size=64m', disk.dir], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    await bash(sb, 'true');
    await until('the baseline to complete', () => progress(sb) === null, 120_000);
    // The call made on the full disk was queued, and is recorded now.
    expect(setsOf(sb.json(['list'])).map((s: any) => [s.source.kind, s.files.map((f: any) => f.path)])).toEqual([['command', ['during.txt']]]);
    expect(sb.json(['doctor']).problems.filter((p: string) => p.includes('is full'))).toEqual([]);
    const before = sb.tree();
    await bash(sb, 'for f in d*/f*.bin; do echo agent >> "$f"; done');
    expect(setsOf(sb.json(['list'])).at(-1).files.filter((f: any) => f.gap)).toEqual([]);
    sb.json(['undo', '--last']);
    expect(sb.tree()).toEqual(before);
  }, 300_000);
});

