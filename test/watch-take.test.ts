// A watcher's hints name only what it heard since the scan that wrote the snapshot took the last
// ones (core/scan/watcher.ts, HeardPaths.take; core/capture/watch-feed.ts): that scan looked at
// every path heard before its take, so a file it read just after a command wrote it (racy by its
// stat) is not read again by the next scan unless heard again. When the snapshot compared with is
// not that scan's (its transaction rolled back, another process scanned since), the hints are
// every path heard since the snapshot's racy line, as a watcher with no memory of takes gives.
// A real inotify watcher (@parcel/watcher) on a real folder and a real journal.
import { describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { WATCH_SYNC_VAR, WorkspaceFeed } from '../server/core/capture/watch-feed.js';
import { openWorkspace } from '../server/core/open-workspace.js';
import { HeardPaths } from '../server/core/scan/watcher.js';
import { until } from './support/procs.js';
import { sandbox } from './support/takeback.js';

describe('the paths heard since the last take', () => {
  it('without a take to build on: every path heard since the racy line; with one: only those heard since it; older ones forgotten either way', () => {
    const h = new HeardPaths();
    h.add('old.txt', 100);
    h.add('a.txt', 1_000);
    h.add('b.txt', 1_500);
    expect([...h.take(900, false, new Set(['stale/']))].sort()).toEqual(['a.txt', 'b.txt', 'stale/']);
    // Forgotten: heard before the line.
    expect(h.size).toBe(2);
    // Nothing heard since that take.
    expect([...h.take(900, true, new Set())]).toEqual([]);
    h.add('a.txt', 2_000);
    h.add('c.txt', 2_100);
    expect([...h.take(1_200, true, new Set())].sort()).toEqual(['a.txt', 'c.txt']);
    // The take above started anew: and without one to build on, the line rules again.
    expect([...h.take(1_200, false, new Set())].sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);
    h.clear();
    expect(h.size).toBe(0);
    expect([...h.take(0, false, new Set())]).toEqual([]);
  });
});

describe('a scan after a hinted scan', () => {
  it('reads nothing the last scan read and nobody touched since; a change of the same size is still found; a rolled-back scan leaves the racy line to rule', async () => {
    const sb = sandbox({ git: true });
    for (let i = 0; i < 6; i++) sb.write(`d${i % 2}/f${i}.txt`, `file ${i}\n`);
    const env = { ...sb.env, TAKEBACK_WATCHMAN: '0', [WATCH_SYNC_VAR]: 'always' };
    const feed = new WorkspaceFeed(sb.home, 4, undefined, env);
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const scan = async () => {
        expect(await feed.sync(sb.ws)).toBe('synced');
        return feed.scope(() => opened.journal.write(() => scanAndCommit(opened)));
      };
      expect(opened.journal.write(() => scanAndCommit(opened)).status).toBe('baseline');
      // The watcher's first sync starts it; it vouches for the snapshots taken once it is subscribed and past their racy line.
      await until(
        'a scan given hints',
        async () => {
          await feed.sync(sb.ws);
          feed.scope(() => opened.journal.write(() => scanAndCommit(opened)));
          return feed.figuresFor(sb.ws).hintedMs !== undefined;
        },
        30_000,
      );
      // A command's writes, then the scan at its end: both files read (they changed).
      sb.write('d0/f0.txt', 'file 0 changed\n');
      sb.write('d1/f1.txt', 'file 1 changed\n');
      const end = await scan();
      expect(end.changes.map((c) => c.path).sort()).toEqual(['d0/f0.txt', 'd1/f1.txt']);
      expect(end.read).toBe(2);
      // The next call's first scan, at once: racy by their stats, yet heard before that scan's
      // take and never since, so not read again.
      const next = await scan();
      expect(next.changes).toEqual([]);
      expect(next.read).toBe(0);
      // Rewritten with the same size (a stat that may not move within the clock's tick): heard, read, found.
      sb.write('d0/f0.txt', 'file 0 CHANGED\n');
      const same = await scan();
      expect(same.changes.map((c) => c.path)).toEqual(['d0/f0.txt']);
      expect(same.read).toBe(1);
      // A scan whose transaction rolls back took the hints of a change it never recorded.
      sb.write('d1/f1.txt', 'file 1 CHANGED\n');
      expect(await feed.sync(sb.ws)).toBe('synced');
      expect(() =>
        feed.scope(() =>
          opened.journal.write(() => {
            expect(scanAndCommit(opened).changes.map((c) => c.path)).toEqual(['d1/f1.txt']);
            throw new Error('rolled back');
          }),
        ),
      ).toThrow('rolled back');
      // The snapshot is the one before it: the paths heard since its racy line, so the change is found.
      const after = await scan();
      expect(after.changes.map((c) => c.path)).toEqual(['d1/f1.txt']);
      expect(after.read).toBeGreaterThanOrEqual(1);
    } finally {
      feed.close();
      opened.journal.close();
    }
  });
});
