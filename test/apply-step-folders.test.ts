// The write path an undo runs (one batch of file jobs after the folders are checked) refuses a
// folder swapped for a link after the plan was made: nothing is written through the link.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openWorkspace } from '../server/core/open-workspace.js';
import { runStep } from '../server/core/plan/apply.js';
import { sandbox, tree } from './support/takeback.js';

describe('undo checks the folders of its writes', () => {
  it('a folder swapped for a link between the plan and the writes: refused, nothing written outside', () => {
    const sb = sandbox();
    sb.write('d/a.txt', 'a\n');
    sb.write('d/b.txt', 'b\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "a2\\n" > d/a.txt && printf "b2\\n" > d/b.txt']);
    const outside = path.join(sb.base, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'a.txt'), 'a2\n');
    fs.writeFileSync(path.join(outside, 'b.txt'), 'b2\n');
    const before = tree(outside);
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const sets = opened.journal.sets.list();
      expect(sets.length).toBe(1);
      // The swap lands after the sets are read, when the plan is about to be made through `d`.
      const select = () => {
        fs.renameSync(sb.abs('d'), sb.abs('d-moved'));
        fs.symlinkSync(outside, sb.abs('d'));
        return sets;
      };
      expect(() => runStep(opened, select, 'undo')).toThrow(/folder moved|symbolic link/);
      expect(tree(outside)).toEqual(before);
      expect(fs.readFileSync(sb.abs('d-moved/a.txt'), 'utf8')).toBe('a2\n');
      expect(fs.readFileSync(sb.abs('d-moved/b.txt'), 'utf8')).toBe('b2\n');
    } finally {
      opened.journal.close();
    }
  });
});
