// The capture daemon's choice between a walk and a sync before an event (core/capture/watch-feed.ts,
// walkInstead), on its running figures: the walk where it costs less than a sync and a hinted scan,
// and a sync made anyway now and then while the walk is chosen, so that a sync measured under a
// passing load does not keep a workspace walking for good; and each warm scan tells its look's
// cost, whether or not it found changes (what it read of them left out).
import { afterEach, describe, expect, it } from 'vitest';
import { useChangeHints } from '../server/core/capture/scan-commit.js';
import { MOST_WALKS_BEFORE_RESYNC, WALKS_BEFORE_RESYNC, walkInstead, type Figures } from '../server/core/capture/watch-feed.js';
import { captureBegin, captureEnd } from '../server/service/capture.js';
import { unitWorkspace } from './support/unit-workspace.js';

/** The choices of `n` operations in a row on figures `f` (true: walk), the figures left as they are. */
const choices = (f: Figures, n: number): boolean[] => Array.from({ length: n }, () => walkInstead(f));

/** Where the syncs fall in `cs`: the indexes of the operations that did not walk. */
const syncsAt = (cs: boolean[]): number[] => cs.flatMap((walk, i) => (walk ? [] : [i]));

describe('walk or sync before an event', () => {
  it('unknown figures sync; a sync and a hinted scan that cost less than a walk sync, every time', () => {
    expect(choices({}, 3)).toEqual([false, false, false]);
    expect(choices({ walkMs: 5 }, 2)).toEqual([false, false]);
    expect(choices({ walkMs: 40, syncMs: 2, hintedMs: 3 }, 50).every((walk) => !walk)).toBe(true);
  });

  it('a walk cheaper than the sync: walks, with a sync after 8 walks, then after 16, 32 … up to 256 while the walk stays cheaper', () => {
    const f: Figures = { walkMs: 5, syncMs: 60, hintedMs: 2 };
    const cs = choices(f, 1200);
    const syncs = syncsAt(cs);
    const gaps = syncs.map((at, i) => at - (i === 0 ? -1 : syncs[i - 1]!) - 1);
    expect(gaps.slice(0, 7)).toEqual([8, 16, 32, 64, 128, 256, 256]);
    expect(WALKS_BEFORE_RESYNC).toBe(8);
    expect(MOST_WALKS_BEFORE_RESYNC).toBe(256);
    // Most operations still walk.
    expect(cs.filter(Boolean).length).toBeGreaterThan(1190);
  });

  it('a sync measured under a passing load: the sync made anyway finds it cheap again, and every operation after it syncs', () => {
    // Twenty files on a quiet machine walk in 4 ms; one sync took 80 ms while the machine was busy.
    const f: Figures = { walkMs: 4, syncMs: 80, hintedMs: 1 };
    const before = choices(f, WALKS_BEFORE_RESYNC);
    expect(before.every(Boolean)).toBe(true);
    // The next one syncs: its figure, 1 ms, brings the running average down (the feed's average of weight 0.5).
    expect(walkInstead(f)).toBe(false);
    f.syncMs = f.syncMs! + 0.5 * (1 - f.syncMs!); // 40.5: still dearer than the walk
    const next = choices(f, 2 * WALKS_BEFORE_RESYNC + 1);
    expect(syncsAt(next)).toEqual([2 * WALKS_BEFORE_RESYNC]);
    for (const ms of [1, 1, 1, 1, 1]) f.syncMs = f.syncMs! + 0.5 * (ms - f.syncMs!);
    expect(f.syncMs! + f.hintedMs!).toBeLessThan(f.walkMs!);
    expect(choices(f, 20).every((walk) => !walk)).toBe(true);
    // And the walk cheaper again later starts over from 8 walks between syncs.
    f.syncMs = 60;
    expect(syncsAt(choices(f, WALKS_BEFORE_RESYNC + 1))).toEqual([WALKS_BEFORE_RESYNC]);
  });

  it('a quick sync measured slow once, between batched syncs: the quick one is measured again after 8 of its own walks, whatever the batched ones do', () => {
    // A command's begin (quick: the watcher is quiet) and its end (batched: it follows the
    // command's writes) alternate; the first quick sync of a new watcher took 7 ms, a walk takes 3.
    const f: Figures = { walkMs: 3, syncMs: 50, quickSyncMs: 7, hintedMs: 0.4 };
    const begins: boolean[] = [];
    const ends: boolean[] = [];
    for (let i = 0; i < WALKS_BEFORE_RESYNC + 1; i++) {
      begins.push(walkInstead(f, true));
      ends.push(walkInstead(f, false));
    }
    // The ninth begin syncs, the ends' own run being no matter.
    expect(syncsAt(begins)).toEqual([WALKS_BEFORE_RESYNC]);
    expect(syncsAt(ends)).toEqual([WALKS_BEFORE_RESYNC]);
    // Measured again at 0.5 ms (the average of weight 0.5: 3.75 ms), still dearer: the next after 16.
    f.quickSyncMs = f.quickSyncMs! + 0.5 * (0.5 - f.quickSyncMs!);
    const next = Array.from({ length: 2 * WALKS_BEFORE_RESYNC + 1 }, () => {
      const walk = walkInstead(f, true);
      walkInstead(f, false);
      return walk;
    });
    expect(syncsAt(next)).toEqual([2 * WALKS_BEFORE_RESYNC]);
    // Then cheaper than the walk: every begin syncs, while the ends still walk.
    f.quickSyncMs = f.quickSyncMs! + 0.5 * (0.5 - f.quickSyncMs!);
    expect(f.quickSyncMs! + f.hintedMs!).toBeLessThan(f.walkMs!);
    for (let i = 0; i < 20; i++) {
      expect(walkInstead(f, true)).toBe(false);
      expect(walkInstead(f, false)).toBe(true);
    }
  });
});

describe('the figures a warm scan gives', () => {
  afterEach(() => useChangeHints(null));

  it('a shell call that changed files: both scans tell how long their look took (the walk here), the one that read the changes too', () => {
    const ws = unitWorkspace();
    for (let i = 0; i < 30; i++) ws.write(`d${i % 5}/f${i}.txt`, `${i}\n`.repeat(1000));
    captureBegin(ws, { id: 'first', command: 'true' });
    captureEnd(ws, { id: 'first' });
    const told: { ms: number; hinted: boolean }[] = [];
    // A hint source that has none to give: the scans walk, and are timed.
    useChangeHints(() => undefined, (root, ms, hinted) => {
      expect(root).toBe(ws.root);
      told.push({ ms, hinted });
    });
    captureBegin(ws, { id: 'call', command: 'sed -i s/1/2/ d*/f*.txt' });
    for (let i = 0; i < 30; i += 3) ws.write(`d${i % 5}/f${i}.txt`, 'changed\n');
    const end = captureEnd(ws, { id: 'call' });
    expect(end.set?.files).toHaveLength(10);
    expect(told).toHaveLength(2);
    for (const t of told) {
      expect(t.hinted).toBe(false);
      expect(t.ms).toBeGreaterThanOrEqual(0);
      expect(t.ms).toBeLessThan(10_000);
    }
  });
});
