// Redo as the exact inverse of the undo it takes back, and what an undo or redo says it moved, in
// this process on a real journal: sets recorded by the capture functions against a real
// temporary workspace, moved by real undo and redo steps (runStep), the disk read back.
import { describe, expect, it } from 'vitest';
import type { ChangeSet } from '../server/core/types.js';
import { unitWorkspace, type UnitWorkspace } from './support/engine.js';

/** A tool call writing `data` to `rel`: the set it recorded. */
function edit(ws: UnitWorkspace, rel: string, data: string | Buffer, mode?: number): ChangeSet {
  const set = ws.tool([rel], () => ws.write(rel, data, mode));
  expect(set).not.toBeNull();
  return set!;
}

describe('what a step says it moved', () => {
  it('a selected set whose every file is a capture gap is not among the sets an undo names, and stays applied', () => {
    const ws = unitWorkspace();
    const a = edit(ws, 'a.txt', 'a\n');
    const secret = edit(ws, 'id_rsa', 'key');
    expect(secret.files.every((f) => f.gap === 'secret')).toBe(true);
    const r = ws.step({ ids: [a.id, secret.id] }, 'undo');
    expect(r.written).toBe(true);
    expect(r.sets).toEqual([a.id]);
    expect(r.gaps.map((g) => g.path)).toEqual(['id_rsa']);
    expect(ws.engine.journal.sets.get(a.id).state).toBe('undone');
    expect(ws.engine.journal.sets.get(secret.id).state).toBe('applied');
  });
});
