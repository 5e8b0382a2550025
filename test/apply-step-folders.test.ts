// Within one undo step, a folder verified for one write is only re-checked (not walked again)
// for the next: that re-check, right before each rename, must still refuse a folder swapped for
// a link between two writes of the same step.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEngine } from '../server/core/engine.js';
import { applyUndo, diskWriter, type FileWriter } from '../server/core/plan/apply.js';
import { sandbox, tree } from './support/takeback.js';

describe('undo re-checks the folder before every rename of a step', () => {
  it('a folder swapped for a link after the first write of the step: refused, nothing written outside', () => {
    const sb = sandbox();
    sb.write('d/a.txt', 'a\n');
    sb.write('d/b.txt', 'b\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "a2\\n" > d/a.txt && printf "b2\\n" > d/b.txt']);
    const outside = path.join(sb.base, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'a.txt'), 'a2\n');
    fs.writeFileSync(path.join(outside, 'b.txt'), 'b2\n');
    const before = tree(outside);
    const engine = openEngine({ workspace: sb.ws, env: sb.env });
    try {
      const disk = diskWriter(engine);
      let n = 0;
      const writer: FileWriter = (op, bytes, tag, made) => {
        const note = disk(op, bytes, tag, made);
        if (++n === 1) {
          fs.renameSync(sb.abs('d'), sb.abs('d-moved'));
          fs.symlinkSync(outside, sb.abs('d'));
        }
        return note;
      };
      const sets = engine.journal.sets.list();
      expect(sets.length).toBe(1);
      expect(() => applyUndo(engine, () => sets, 'undo', { writer })).toThrow(/folder moved|symbolic link/);
      expect(n).toBe(1);
      expect(tree(outside)).toEqual(before);
      expect(fs.readFileSync(sb.abs('d-moved/b.txt'), 'utf8')).toBe('b2\n');
    } finally {
      engine.journal.close();
    }
  });
});
