// The merge's bytes property in process (mergeBytes alone): the cases and the model are
// test/support/merge-property.ts's, which says what is checked.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeBytes } from '../server/core/plan/merge.js';
import { caseArb, reporter, RUNS, SEED, verdict, versions } from './support/merge-property.js';

describe('the merge keeps every byte of the person (property, in process)', () => {
  it(`mergeBytes: non-overlapping edits give the model's bytes, and merging the agent's change again gives the person's file; overlapping ones refuse (${RUNS * 100} cases)`, () => {
    let merged = 0;
    let refused = 0;
    fc.assert(
      fc.property(caseArb, ([overlap, shape]) => {
        const v = versions(shape);
        const undo = mergeBytes(v.a, v.p, v.o);
        const kind = verdict(v, overlap);
        if (kind === 'refuse') {
          expect(undo.ok).toBe(false);
          refused++;
          return;
        }
        expect(undo.ok).toBe(true);
        if (!undo.ok) return;
        expect(undo.bytes.equals(kind === 'plain' || kind === 'in-place' ? v.o : v.undone)).toBe(true);
        const redo = mergeBytes(v.o, undo.bytes, v.a);
        expect(redo.ok && redo.bytes.equals(v.p)).toBe(true);
        merged++;
      }),
      { numRuns: RUNS * 100, seed: SEED, reporter },
    );
    expect(merged).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  }, 600_000);
});
