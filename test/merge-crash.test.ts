// kill -9 at random moments of a merged undo of 200 files (and of the redo that is its exact
// inverse): the agent's command changed line 2 of every file, the person then line 8 of each, so
// that every file of the undo is a three-way merge. After each kill, before takeback runs again,
// every file is wholly before or after the step (but the one a write in place was cut short in);
// the next command rolls the step back or finds it done, and the tree is then exactly one of the
// two states, as the journal says; the person's line 8 is never lost. Afterwards both ways still work.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sandbox, type Entry } from './support/takeback.js';
import { killedStep } from './support/killed-step.js';

const isTemp = (rel: string) => /(^|\/)\.[^/]*\.takeback-[^/]*$/.test(rel);

/** Ten numbered lines; every tenth file 30,000 (over 256 KiB: written by rename, not in place). */
function body(i: number): string {
  const n = i % 10 === 3 ? 30_000 : 10;
  let s = '';
  for (let k = 1; k <= n; k++) s += `file ${i} line ${k}\n`;
  return s;
}

describe('kill -9 during a merged undo of 200 files', () => {
  it('rolled back or completed, every file wholly before or after, the journal in step, nothing of the person lost', async () => {
    const sb = sandbox();
    const N = 200;
    for (let i = 0; i < N; i++) sb.write(`p${i % 10}/f${i}.txt`, body(i));
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    expect(sb.tb(['run', '--', 'sh', '-c', "sed -i 's/ line 2$/ line 2 by the agent/' p*/f*.txt"]).code).toBe(0);
    const id = sb.json(['list']).sets[0].id as string;
    // The person's later edit, line 8 of every file, outside takeback.
    for (let i = 0; i < N; i++) {
      const rel = `p${i % 10}/f${i}.txt`;
      fs.writeFileSync(sb.abs(rel), sb.read(rel).toString().replace(`file ${i} line 8\n`, `file ${i} line 8 by the person\n`));
    }
    const applied = sb.tree();
    const expectedUndone: Record<string, Entry> = {};
    const journal = sb.journalDir();

    /** Runs `direction` on the set, killed (with `killWithin`) at a random moment within that many ms of its first write. */
    const step = (direction: string, killWithin?: number) => killedStep(sb, direction, id, sb.abs('p0'), killWithin);
    // Uncut, to learn how long the writing lasts here and what the merged undo leaves.
    const uncut = [await step('undo')];
    Object.assign(expectedUndone, sb.tree());
    for (let i = 0; i < N; i++) {
      const rel = `p${i % 10}/f${i}.txt`;
      expect(sb.read(rel).toString()).toBe(body(i).replace(`file ${i} line 8\n`, `file ${i} line 8 by the person\n`));
    }
    uncut.push(await step('redo'));
    expect(sb.tree()).toEqual(applied);
    const killWithin = Math.max(2, Math.min(...uncut.map((u) => u.writing)) * 0.6);
    const same = (a: Entry | undefined, b: Entry | undefined) => JSON.stringify(a) === JSON.stringify(b);

    let landed = 0;
    let mixed = 0;
    let state = 'applied';
    const ROUNDS = 6;
    for (let k = 0; k < ROUNDS; k++) {
      const { how } = await step(state === 'applied' ? 'undo' : 'redo', killWithin);
      if (how === 'SIGKILL') landed++;
      const torn = sb.tree();
      const files = Object.keys(applied).filter((p) => applied[p]!.type === 'file');
      const inUndone = files.filter((p) => same(torn[p], expectedUndone[p])).length;
      if (inUndone > 0 && inUndone < files.length) mixed++;
      const cutShort: string[] = [];
      for (const rel of new Set([...Object.keys(applied), ...Object.keys(torn)])) {
        if (isTemp(rel) || same(torn[rel], applied[rel]) || same(torn[rel], expectedUndone[rel])) continue;
        cutShort.push(rel);
      }
      expect(cutShort.length, `more than one file cut short: ${cutShort.join(', ')}`).toBeLessThanOrEqual(1);

      const r = sb.tb(['list', '--json']);
      expect(r.code, r.stderr).toBe(0);
      state = JSON.parse(r.stdout).sets.find((s: { id: string }) => s.id === id).state;
      expect(['applied', 'undone']).toContain(state);
      expect(sb.tree()).toEqual(state === 'undone' ? expectedUndone : applied);
      expect(fs.readdirSync(journal).filter((n) => n.startsWith('txn-'))).toEqual([]);
    }
    expect(landed).toBeGreaterThan(0);
    expect(mixed, 'no kill landed while files were being written').toBeGreaterThan(0);
    if (state === 'undone') expect(sb.tb(['redo', id]).code).toBe(0);
    expect(sb.tree()).toEqual(applied);
    expect(sb.tb(['undo', id]).code).toBe(0);
    expect(sb.tree()).toEqual(expectedUndone);
    expect(sb.json(['doctor']).problems).toEqual([]);
  }, 300_000);
});
