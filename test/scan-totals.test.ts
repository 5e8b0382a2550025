// A long-lived process keeps the sum of its cached rows' counts (files, kept bytes, copied and
// pending files) beside the rows, adding and taking away the rows each write replaces, so that a
// warm scan of a large index need not sum every row again. The kept sum must equal a fresh sum
// over the rows after any run of edits, adds, removals and folder moves; and the meta a warm scan
// writes from it must equal the one a scan that sums every row writes (another opening, no cache).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openWorkspace, type Workspace } from '../server/core/open-workspace.js';
import { freshSum, rng } from './support/packed-rows.js';
import { sandbox } from './support/takeback.js';

describe('the snapshot rows totals', () => {
  it('equal a fresh sum of the rows after many edits, adds, removals and folder moves', () => {
    const sb = sandbox();
    for (let d = 0; d < 6; d++) for (let f = 0; f < 5; f++) sb.write(`d${d}/sub/f${f}.txt`, `file ${d} ${f}\n`);
    sb.write('top.txt', 'top\n');
    const daemon = openWorkspace({ workspace: sb.ws, env: sb.env });
    const scan = (w: Workspace) => w.journal.write(() => scanAndCommit(w));
    try {
      scan(daemon); // the baseline
      const totals = () => daemon.journal.snapshot.totals();
      expect(totals()).toEqual(freshSum(daemon));
      expect(totals().files).toBe(31);
      const rand = rng(18);
      const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
      const files = () => fs.readdirSync(sb.ws, { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('.txt') && !p.startsWith('.'));
      const dirs = () => fs.readdirSync(sb.ws, { encoding: 'utf8' }).filter((p) => /^d\d+$/.test(p) || /^moved/.test(p));
      let made = 0;
      for (let step = 0; step < 40; step++) {
        const kind = step % 6;
        if (kind === 0) sb.write(pick(files()), `edited ${step} ${'x'.repeat(Math.floor(rand() * 200))}\n`);
        else if (kind === 1) sb.write(`${pick(dirs())}/new${made++}.txt`, `new ${step}\n`);
        else if (kind === 2) fs.rmSync(sb.abs(pick(files())));
        else if (kind === 3) fs.renameSync(sb.abs(pick(dirs())), sb.abs(`moved${made++}`));
        else if (kind === 4) sb.write(`fresh${made++}/a/b/c.txt`, `deep ${step}\n`);
        else if (dirs().length > 2) fs.rmSync(sb.abs(pick(dirs())), { recursive: true });
        const out = scan(daemon);
        const want = freshSum(daemon);
        expect(totals(), `step ${step}`).toEqual(want);
        expect({ files: out.meta.files, bytes: out.meta.bytes, copied: out.meta.copied ?? 0 }, `step ${step}`).toEqual({ files: want.files, bytes: want.bytes, copied: want.copied });
      }
      // Another process's write: the cache (and its totals) are read anew, and agree.
      sb.write('top.txt', 'top, by another process\n');
      const cli = openWorkspace({ workspace: sb.ws, env: sb.env });
      try {
        scan(cli);
      } finally {
        cli.journal.close();
      }
      sb.write('after.txt', 'after\n');
      const out = scan(daemon);
      expect(totals()).toEqual(freshSum(daemon));
      expect(out.meta.files).toBe(freshSum(daemon).files);
      // A write rolled back leaves no totals that count it.
      sb.write('rolled.txt', 'rolled back\n');
      expect(() =>
        daemon.journal.write(() => {
          scanAndCommit(daemon);
          throw new Error('rolled back');
        }),
      ).toThrow('rolled back');
      expect(totals()).toEqual(freshSum(daemon));
      scan(daemon);
      expect(totals()).toEqual(freshSum(daemon));
      expect(totals().files).toBe(files().length);
    } finally {
      daemon.journal.close();
    }
  });
});
