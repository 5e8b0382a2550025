// Power cuts: what takeback needs after a power cut is on the disk before the step that depends
// on it. Each case runs one real `takeback` process under a recorder of its file calls
// (support/powercut/trace.c, preloaded), then rebuilds, for every point the power could have gone
// (after each fsync), the disk a power cut would leave — only what was made durable — and checks
// it: the journal loads, no file of the workspace is torn (an undo or redo is all or nothing), and
// no byte the person had is lost (what takeback kept can still be brought back).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildRecorder, cutPoints, loadTree, readTrace, recorderEnv, replay, writeDurable, type TraceEvent } from './support/powercut.js';
import { BIN, sandbox, type Sandbox } from './support/takeback.js';

let recorder: string;
let scratch: string;
beforeAll(() => {
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-powercut-')));
  recorder = buildRecorder(scratch);
  return () => fs.rmSync(scratch, { recursive: true, force: true });
});

/** A workspace file as the checks compare it: its type, mode and bytes (or link target). */
type Entry = string;
function wsTree(sb: Sandbox): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const walk = (dir: string, rel: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      if (rel === '' && name === '.git') continue;
      const abs = path.join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(abs);
      if (st.isSymbolicLink()) out.set(r, `link ${fs.readlinkSync(abs)}`);
      else if (st.isDirectory()) {
        out.set(r, `dir ${(st.mode & 0o7777).toString(8)}`);
        walk(abs, r);
      } else out.set(r, `file ${(st.mode & 0o7777).toString(8)} ${fs.readFileSync(abs).toString('base64')}`);
    }
  };
  walk(sb.ws, '');
  return out;
}

const same = (a: Map<string, Entry>, b: Map<string, Entry>) => a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

/** Runs `takeback ARGS` in `sb` under the recorder; returns its exit code and its calls. */
function traced(sb: Sandbox, args: string[]): { code: number | null; events: TraceEvent[] } {
  const log = path.join(scratch, `trace-${process.hrtime.bigint()}.log`);
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: sb.ws, env: { ...sb.env, ...recorderEnv(recorder, sb.base, log) }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`takeback ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  const events = readTrace(log);
  fs.rmSync(log, { force: true });
  return { code: r.status, events };
}

/** A copy of everything under `sb.base` (the workspace, the journal's home, the user's home) as it is now. */
function keepCopy(sb: Sandbox): string {
  const copy = fs.mkdtempSync(path.join(scratch, 'before-'));
  fs.cpSync(sb.base, copy, { recursive: true, verbatimSymlinks: true });
  return copy;
}

/** Puts under `sb.base` the disk a power cut after `events[0..k)` leaves (the run began from `copy`). */
function cutAt(sb: Sandbox, copy: string, events: readonly TraceEvent[], k: number): void {
  writeDurable(replay(loadTree(copy), sb.base, events.slice(0, k), process.umask()), sb.base);
}

/**
 * Dates files an hour back: a scan then trusts their stat instead of reading them again (a file
 * changed within a second of a scan is read again, which would hide a lost copy).
 */
function aged(sb: Sandbox, ...rels: string[]): void {
  const t = new Date(Date.now() - 3600_000);
  for (const r of rels) fs.utimesSync(sb.abs(r), t, t);
}

/** The journal opens (a rollback of what the cut left half-done runs then) and `list` answers. */
function journalLoads(sb: Sandbox, what: string): void {
  const r = sb.tb(['list', '--json']);
  expect(r.code, `${what}: list after the cut: ${r.stderr}`).toBe(0);
}

/** A workspace with one change of the agent's and, over it, the person's later edit to one file. */
function agentThenPerson(sb: Sandbox): void {
  sb.write('a.txt', 'one\ntwo\nthree\n');
  sb.write('big.bin', Buffer.alloc(300 * 1024, 7)); // over the in-place bound: written beside and renamed in
  sb.write('gone.txt', 'the agent deletes me\n');
  sb.write('run.sh', '#!/bin/sh\n', 0o644);
  expect(sb.tb(['run', '--', 'sh', '-c', 'sed -i s/two/TWO/ a.txt && printf x >> big.bin && rm gone.txt && echo new > made.txt && chmod 755 run.sh']).code).toBe(0);
  sb.write('a.txt', 'one\nTWO, and the person wrote here\nthree\n'); // overlaps the agent's line: a conflict
}

/**
 * Runs step `args` (an undo or redo) traced, then checks the disk of every cut: the journal
 * loads; the workspace is all before or all after the step (never torn, never half-done); after
 * it, `back` (the commands that take the step back) gives the before state again — nothing the
 * person had is lost — and before it, the step made again gives the same after state.
 */
function everyCut(sb: Sandbox, args: string[], back: string[][]): void {
  const before = wsTree(sb);
  const copy = keepCopy(sb);
  const { events } = traced(sb, args);
  const after = wsTree(sb);
  expect(same(before, after), 'the step changed nothing').toBe(false);
  const cuts = cutPoints(events);
  expect(cuts.length).toBeGreaterThan(4);
  for (const k of cuts) {
    cutAt(sb, copy, events, k);
    const what = `${args.join(' ')}: a cut after ${k} of ${events.length} calls`;
    journalLoads(sb, what);
    const now = wsTree(sb);
    expect(same(now, before) || same(now, after), `${what}: the workspace is neither before nor after the step (torn)`).toBe(true);
    if (same(now, after)) {
      for (const cmd of back) {
        if (same(wsTree(sb), before)) break;
        const r = sb.tb(cmd);
        expect(r.code, `${what}: ${cmd.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
      }
      expect(same(wsTree(sb), before), `${what}: ${back.map((c) => c.join(' ')).join(', ')} does not give back the state before the step`).toBe(true);
    } else {
      const r = sb.tb(args);
      expect(r.code, `${what}: the step again: ${r.stdout}${r.stderr}`).toBe(0);
      expect(same(wsTree(sb), after), `${what}: the step again does not give the same result`).toBe(true);
    }
  }
  // Leave the disk as the step left it, for a next step.
  cutAt(sb, copy, events, events.length);
  expect(same(wsTree(sb), after)).toBe(true);
}

// Each case runs takeback two or three times for every cut point (tens of them): minutes on a
// loaded machine, where the default minute would fail a case that is only slow.
describe('a power cut', { timeout: 300_000 }, () => {
  it("during a forced undo: each cut leaves it whole or rolled back, and the person's edit it replaced comes back", () => {
    const sb = sandbox({ git: true });
    agentThenPerson(sb);
    everyCut(sb, ['undo', '1', '--force'], [['redo', '--last'], ['redo', '--last']]);
  });

  it("during a merged undo (the person's later edit kept) and during its redo", () => {
    const sb = sandbox({ git: true });
    agentThenPerson(sb);
    sb.write('a.txt', 'one\nTWO\nthree\nand a line of the person\n'); // beside the agent's line: merged
    everyCut(sb, ['undo', '1'], [['redo', '1']]);
    everyCut(sb, ['redo', '1'], [['undo', '1']]);
  });

  it("after a file tool's capture begins (the hook answered): its before copy brings the file back", () => {
    const sb = sandbox({ git: true });
    sb.write('f.txt', 'the baseline has these bytes\n');
    aged(sb, 'f.txt');
    expect(sb.tb(['run', '--', 'true']).code).toBe(0); // the baseline, made before: durable
    sb.write('f.txt', 'the person wrote this after the baseline\n'); // only the capture's before copy has these
    aged(sb, 'f.txt');
    const original = sb.read('f.txt');
    const copy = keepCopy(sb);
    const { events } = traced(sb, ['capture', 'begin', '--id', 'w1', '--tool', 'Write', 'f.txt']);
    for (const k of cutPoints(events)) {
      cutAt(sb, copy, events, k);
      journalLoads(sb, `cut after ${k} of ${events.length}`);
    }
    // The power goes after the hook answered: the agent's write happened after the power came back.
    cutAt(sb, copy, events, events.length);
    sb.write('f.txt', 'the agent wrote this\n');
    expect(sb.tb(['capture', 'end', '--id', 'w1']).code).toBe(0);
    expect(sb.tb(['undo', '--last']).code).toBe(0);
    expect(sb.read('f.txt')).toEqual(original);
  });

  it("after a first scan: its copies of the workspace bring back what a later command changes", () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'kept by the first scan\n');
    sb.write('b.txt', 'deleted later\n');
    aged(sb, 'a.txt', 'b.txt');
    expect(sb.tb(['list']).code).toBe(0); // the journal is there (and on disk) before the first scan
    const before = wsTree(sb);
    const copy = keepCopy(sb);
    const { events } = traced(sb, ['run', '--', 'true']);
    for (const k of cutPoints(events)) {
      cutAt(sb, copy, events, k);
      journalLoads(sb, `cut after ${k} of ${events.length}`);
    }
    cutAt(sb, copy, events, events.length);
    expect(sb.tb(['run', '--', 'sh', '-c', 'echo changed > a.txt && rm b.txt']).code).toBe(0);
    const u = sb.tb(['undo', sb.json(['list']).sets[0].id]);
    expect(u.code, u.stdout + u.stderr).toBe(0);
    expect(same(wsTree(sb), before)).toBe(true);
  });
});
