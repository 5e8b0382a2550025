// `kill -9` at random moments: while a hook records a set, and while an undo or redo writes
// files. Afterwards the journal loads, a set is there whole or not at all, the next takeback
// command rolls the cut-short apply back (or completes it), and every file is wholly before or
// wholly after, byte for byte (before that, only the one file a write in place was cut short in
// may be neither).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { filesOf, sandbox, tbSpawn, type Entry, type Sandbox } from './support/takeback.js';
import { killedStep, rand } from './support/killed-step.js';

const SESSION = 'dead0000-0000-4000-8000-00000000beef';

/** Starts `takeback ...args` (stdin `input`) and kills it with SIGKILL after `ms`; resolves to how it ended. */
function killAfter(sb: Sandbox, args: string[], ms: number, input = ''): Promise<NodeJS.Signals | number | null> {
  return new Promise((resolve) => {
    const child = tbSpawn(args, { cwd: sb.ws, env: sb.env, input });
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ?? code);
    });
  });
}

const isTemp = (rel: string) => /(^|\/)\.[^/]*\.takeback-[^/]*$/.test(rel);

describe('kill -9', () => {
  it('during record (a hook process killed at random points): the journal loads, each set is whole or absent', async () => {
    const sb = sandbox();
    const N = 80;
    for (let i = 0; i < N; i++) sb.write(`d${i % 6}/f${i}.txt`, `start ${i}\n`);
    expect(sb.tb(['run', '--', 'true']).code).toBe(0); // baseline
    // How long one hook takes here, so the kills land inside it (a faster build must not make
    // every hook finish before its kill).
    const t0 = Date.now();
    expect(sb.hook({ session_id: SESSION, cwd: sb.ws, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'probe' }, tool_use_id: 'toolu_probe' }).code).toBe(0);
    expect(sb.hook({ session_id: SESSION, cwd: sb.ws, hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'probe' }, tool_use_id: 'toolu_probe', tool_response: {} }).code).toBe(0);
    const hookMs = Math.max(20, (Date.now() - t0) / 2);
    const outcomes: (string | number | null)[] = [];
    const ROUNDS = 8;
    for (let k = 1; k <= ROUNDS; k++) {
      const id = `toolu_crash_${k}`;
      const pre = { session_id: SESSION, cwd: sb.ws, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: `rewrite ${k}` }, tool_use_id: id };
      const post = { ...pre, hook_event_name: 'PostToolUse', tool_response: {} };
      // Every other round the Pre hook (the snapshot) is the one killed, else the Post (the record).
      const killPre = k % 2 === 0;
      if (killPre) outcomes.push(await killAfter(sb, ['hook', 'claude-code'], rand(hookMs * 0.1, hookMs * 0.9), JSON.stringify(pre)));
      else expect(sb.hook(pre).code).toBe(0);
      for (let i = 0; i < N; i++) fs.writeFileSync(sb.abs(`d${i % 6}/f${i}.txt`), `round ${k} ${i}\n`);
      if (killPre) expect(sb.hook(post).code).toBe(0);
      else outcomes.push(await killAfter(sb, ['hook', 'claude-code'], rand(hookMs * 0.1, hookMs * 0.9), JSON.stringify(post)));

      // The journal loads; a set of this round has all N files, or there is none.
      const r = sb.tb(['list', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const list = JSON.parse(r.stdout);
      for (const s of list.sets) {
        expect(s.files, `set ${s.id}`).toHaveLength(N);
        expect(Object.values(filesOf(s)).every((st) => st === 'modified')).toBe(true);
      }
      expect(list.sets.filter((s: any) => s.source.toolCallId === id).length).toBeLessThanOrEqual(1);
    }
    expect(outcomes).toContain('SIGKILL'); // some were cut short...
    const doc = sb.json(['doctor']);
    expect(doc.problems).toEqual([]);
    expect(doc.transactions).toBe(0);

    // The sets recorded still undo, all at once, to one consistent earlier state (--force: the
    // rounds whose record was cut short left later changes that no set holds).
    const list = sb.json(['list']);
    if (list.sets.length > 0) {
      sb.json(['undo', '--force', ...list.sets.map((s: any) => s.id)]);
      const first = sb.read('d0/f0.txt').toString().replace(/ 0\n$/, '');
      for (let i = 0; i < N; i++) expect(sb.read(`d${i % 6}/f${i}.txt`).toString()).toBe(`${first} ${i}\n`);
    }
  });

  it('during apply (an undo or redo of many files killed part-way): rolled back or completed, every file wholly before or after', async () => {
    const sb = sandbox();
    const N = 200;
    // Most files are small (written in place); every tenth is over 256 KiB (written by rename).
    for (let i = 0; i < N; i++) sb.write(`p${i % 10}/f${i}.txt`, `before ${i}\n`.repeat(i % 10 === 3 ? 30_000 : 1 + (i % 5)));
    sb.write('p0/gone.txt', 'deleted by the command\n');
    const S0 = sb.tree();
    const cmd = "for f in p*/f*.txt; do printf 'after\\n' >> $f; done && rm p0/gone.txt && mkdir -p new/deep && printf n > new/deep/made.txt";
    expect(sb.tb(['run', '--', 'sh', '-c', cmd]).code).toBe(0);
    const S1 = sb.tree();
    const journal = sb.journalDir();
    const sameAsOne = (rel: string, e: Entry | undefined) =>
      (e === undefined && (S0[rel] === undefined || S1[rel] === undefined)) || JSON.stringify(e) === JSON.stringify(S0[rel]) || JSON.stringify(e) === JSON.stringify(S1[rel]);

    /**
     * Runs `direction` on set 1, killing it (when `killWithin` is given) at a random moment within
     * that many ms after its first write: the transaction record has appeared and something in p0
     * (the first folder written) changed. Returns how it ended and, uncut, how long after its
     * first write it ended.
     */
    const step = (direction: string, killWithin?: number) => killedStep(sb, direction, '1', sb.abs('p0'), killWithin);
    // How long the writing lasts here (an undo and a redo, uncut), so that the kills land while
    // files are being written: a faster build must not finish every step before its kill.
    const uncut = [await step('undo'), await step('redo')];
    expect(sb.tree()).toEqual(S1);
    const killWithin = Math.max(2, Math.min(...uncut.map((u) => u.writing)) * 0.6);

    let landed = 0;
    let mixed = 0;
    const ROUNDS = 6;
    let state = 'applied';
    for (let k = 0; k < ROUNDS; k++) {
      const direction = state === 'applied' ? 'undo' : 'redo';
      // Kill while the files are being written.
      const { how } = await step(direction, killWithin);
      if (how === 'SIGKILL') landed++;

      // Before any takeback runs again: each path is wholly one state or the other (temporary
      // files beside them may be left; they are takeback's to clean up) — except that the one
      // file being written in place when the kill landed (a small file over a file, in both
      // states) may hold part of its new bytes: the next takeback puts it back (below).
      const torn = sb.tree();
      const files = Object.keys(S0).filter((p) => p.endsWith('.txt') && S1[p] && S0[p]!.type === 'file');
      const inS1 = files.filter((p) => JSON.stringify(torn[p]) === JSON.stringify(S1[p])).length;
      if (inS1 > 0 && inS1 < files.length) mixed++;
      const cutShort: string[] = [];
      for (const rel of new Set([...Object.keys(S0), ...Object.keys(S1), ...Object.keys(torn)])) {
        if (isTemp(rel) || sameAsOne(rel, torn[rel])) continue;
        const inPlace = S0[rel]?.type === 'file' && S1[rel]?.type === 'file' && torn[rel]?.type === 'file';
        expect(inPlace, `${rel} is neither before nor after`).toBe(true);
        cutShort.push(rel);
      }
      expect(cutShort.length, `more than one file cut short: ${cutShort.join(', ')}`).toBeLessThanOrEqual(1);

      // The next command recovers: the tree is exactly one of the two states, matching the journal.
      const r = sb.tb(['list', '--json']);
      expect(r.code, r.stderr).toBe(0);
      state = JSON.parse(r.stdout).sets[0].state;
      expect(['applied', 'undone']).toContain(state);
      expect(sb.tree()).toEqual(state === 'undone' ? S0 : S1);
      expect(fs.readdirSync(journal).filter((n) => n.startsWith('txn-'))).toEqual([]);
    }
    expect(landed).toBeGreaterThan(0);
    expect(mixed, 'no kill landed while files were being written').toBeGreaterThan(0);
    // And it still works afterwards, both ways.
    if (state === 'undone') sb.json(['redo', '1']);
    expect(sb.tree()).toEqual(S1);
    sb.json(['undo', '1']);
    expect(sb.tree()).toEqual(S0);
    expect(sb.json(['doctor']).problems).toEqual([]);
  });
});
