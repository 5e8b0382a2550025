// A long-lived process (the sidecar) keeps the snapshot's packed rows between scans and reloads
// them only when another connection wrote them (a generation token in the journal's meta,
// written with the rows). Two openings of one journal stand for two processes: each sees the
// other's writes, its own writes need no reload, and a write rolled back leaves no stale cache.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openWorkspace, type Workspace } from '../server/core/open-workspace.js';
import { sandbox } from './support/takeback.js';

const changed = (e: Workspace) => e.journal.write(() => scanAndCommit(e).changes.map((c) => c.path).sort());

describe('the snapshot rows cache', () => {
  it('reloads only after another connection wrote; never reports a change twice or misses one', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    sb.write('d/b.txt', 'b\n');
    const sidecar = openWorkspace({ workspace: sb.ws, env: sb.env });
    const cli = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      expect(changed(sidecar)).toEqual([]); // the baseline
      const first = sidecar.journal.snapshot.rows();
      // Nothing written since: the same map, read from nowhere.
      expect(sidecar.journal.snapshot.rows()).toBe(first);

      // The sidecar's own write keeps its cache, up to date.
      sb.write('a.txt', 'a2\n');
      expect(changed(sidecar)).toEqual(['a.txt']);
      expect(sidecar.journal.snapshot.rows()).toBe(first);
      expect(changed(sidecar)).toEqual([]);

      // Another process scans and writes: the sidecar must not see that change again...
      sb.write('d/b.txt', 'b2\n');
      expect(changed(cli)).toEqual(['d/b.txt']);
      expect(sidecar.journal.snapshot.rows()).not.toBe(first);
      expect(changed(sidecar)).toEqual([]);
      // ...and must see what happens after.
      fs.rmSync(sb.abs('a.txt'));
      expect(changed(sidecar)).toEqual(['a.txt']);
      expect(changed(cli)).toEqual([]);

      // A write rolled back: the cache it touched is not trusted afterwards.
      sb.write('c.txt', 'c\n');
      const cached = sidecar.journal.snapshot.rows();
      expect(() =>
        sidecar.journal.write(() => {
          scanAndCommit(sidecar);
          throw new Error('rolled back');
        }),
      ).toThrow('rolled back');
      expect(sidecar.journal.snapshot.rows()).not.toBe(cached);
      expect(changed(sidecar)).toEqual(['c.txt']);
      expect(changed(cli)).toEqual([]);
    } finally {
      sidecar.journal.close();
      cli.journal.close();
    }
  });
});
