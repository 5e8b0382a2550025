// The merge's bytes property through the real CLI (merged undo, then redo): the cases and the
// model are test/support/merge-property.ts's, which says what is checked.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sandbox } from './support/takeback.js';
import { caseArb, nulCaseArb, reporter, RUNS, SEED, verdict, versions } from './support/merge-property.js';

describe('merged undo and redo through the CLI keep every byte of the person (property)', () => {
  it(`random files, the agent's change, the person's later edits: the model's bytes, the person's back on redo, or a refusal that writes nothing (${RUNS} cases)`, () => {
    const seen = { plain: 0, 'in-place': 0, refuse: 0, merge: 0 };
    fc.assert(
      fc.property(fc.oneof({ weight: 4, arbitrary: caseArb }, { weight: 1, arbitrary: nulCaseArb }), ([overlap, shape]) => {
        const v = versions(shape);
        // The agent changed nothing: no change to undo.
        fc.pre(!v.a.equals(v.o));
        const kind = verdict(v, overlap);
        seen[kind]++;
        const sb = sandbox();
        sb.write('f.txt', v.o);
        sb.write('other.txt', 'other\n');
        expect(sb.tb(['run', '--', 'true']).code).toBe(0);
        const stage = path.join(sb.base, 'agent.txt');
        fs.writeFileSync(stage, v.a);
        const r = sb.tb(['run', '--', 'cp', stage, 'f.txt']);
        expect(r.code, r.stderr).toBe(0);
        const id = sb.json(['list']).sets[0].id as string;
        fs.writeFileSync(sb.abs('f.txt'), v.p);
        const before = fs.statSync(sb.abs('f.txt'));

        const undo = sb.tb(['undo', id, '--json']);
        const out = JSON.parse(undo.stdout);
        if (kind === 'refuse') {
          expect(undo.code, undo.stdout).toBe(1);
          expect(out.written).toBe(false);
          expect(out.conflicts.map((c: { path: string }) => c.path)).toEqual(['f.txt']);
          expect(sb.read('f.txt').equals(v.p), 'a refused undo wrote').toBe(true);
          const after = fs.statSync(sb.abs('f.txt'));
          expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
          return;
        }
        expect(undo.code, undo.stdout + undo.stderr).toBe(0);
        expect(sb.read('f.txt').equals(kind === 'merge' ? v.undone : v.o), `undo left other bytes (${kind})`).toBe(true);
        if (kind === 'merge') expect(out.applied).toEqual([expect.objectContaining({ path: 'f.txt', merged: true })]);

        const redo = sb.tb(['redo', id, '--json']);
        expect(redo.code, redo.stdout + redo.stderr).toBe(0);
        expect(sb.read('f.txt').equals(v.p), `redo did not give the person's bytes back (${kind})`).toBe(true);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true, reporter },
    );
    // Each kind came up (the seed is fixed: this guards the generator, not takeback).
    expect(seen.merge).toBeGreaterThan(0);
    expect(seen.refuse).toBeGreaterThan(0);
    console.log(`property-merge (CLI): ${JSON.stringify(seen)}`);
  }, 900_000);
});
