// @parcel/watcher hands events over at once after a quiet spell, else in batches that close 50 ms
// after the last event: its watcher says which a sync would meet (core/scan/watcher.ts,
// `syncBatched`), and the feed keeps a figure for each kind of sync, so that a workspace whose
// syncs after a command wait out a batch (cheaper to walk) still syncs after a pause, when the
// cookie comes back at once (core/capture/watch-feed.ts, `walkInstead`). An operation nobody waits
// for (an event answered as it is claimed) syncs all the same, until another comes to wait behind
// it. A real inotify watcher.
import { describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { WorkspaceFeed, walkInstead, type Figures } from '../server/core/capture/watch-feed.js';
import { openWorkspace } from '../server/core/open-workspace.js';
import { WorkspaceWatcher } from '../server/core/scan/watcher.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { until } from './support/procs.js';
import { sandbox } from './support/takeback.js';

describe('a sync after a quiet spell, and one within a batch', () => {
  it('the watcher says a sync right after events meets a batch, and one after a pause does not', async () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'a\n');
    const w = WorkspaceWatcher.start(sb.ws, { env: {} })!;
    try {
      await until('the watcher to be subscribed', () => w.trusted, 30_000);
      // Events handed over just now (the file's, then the cookie's own): the next sync meets a batch.
      sb.write('a.txt', 'a changed\n');
      expect(await w.sync()).toBe(true);
      expect(w.syncBatched()).toBe(true);
      // After a quiet spell longer than the library's longest wait, the cookie comes back at once.
      await until('a quiet spell', () => !w.syncBatched(), 5_000);
      await sleep(100);
      expect(w.syncBatched()).toBe(false);
      // That sync's cookie is handed over, and the spell is over again.
      expect(await w.sync()).toBe(true);
      expect(w.syncBatched()).toBe(true);
    } finally {
      w.close();
    }
  });

  it('the walk is chosen against the figure of the kind of sync the watcher expects', () => {
    // A 1,800-file tree: a walk of 7 ms; a sync within a batch 52 ms, after a pause 2 ms.
    const f: Figures = { walkMs: 7, syncMs: 52, quickSyncMs: 2, hintedMs: 1 };
    expect(walkInstead(f, false)).toBe(true);
    expect(walkInstead(f, true)).toBe(false);
    // No figure yet for the quick kind: it syncs, to measure it.
    expect(walkInstead({ walkMs: 7, syncMs: 52, hintedMs: 1 }, true)).toBe(false);
    // The quick kind dearer than the walk: it walks too.
    expect(walkInstead({ walkMs: 7, syncMs: 52, quickSyncMs: 9, hintedMs: 1 }, true)).toBe(true);
  });

  it('within a batch on a tree cheaper to walk: an operation walks, one nobody waits for syncs, and walks once another comes to wait', async () => {
    const sb = sandbox({ git: true });
    for (let i = 0; i < 5; i++) sb.write(`f${i}.txt`, `${i}\n`);
    const feed = new WorkspaceFeed(sb.home, 4, undefined, { ...sb.env, TAKEBACK_WATCHMAN: '0' });
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const scan = () => feed.scope(() => opened.journal.write(() => scanAndCommit(opened)));
      // Trusted, with a walk's figure and a batched sync's: five files walk in well under a batch's 50 ms.
      await until(
        'the figures of a walk and of a sync within a batch',
        async () => {
          sb.write('f0.txt', `${Date.now()}\n`);
          const done = await feed.sync(sb.ws);
          scan();
          const f = feed.figuresFor(sb.ws);
          return done !== 'unsynced' && f.walkMs !== undefined && f.syncMs !== undefined && f.walkMs < f.syncMs;
        },
        30_000,
      );
      // A change, heard (at once, or in the batch under way): the next sync would meet a batch.
      const change = async (rel: string, text: string) => {
        sb.write(rel, text);
        await sleep(30);
      };
      await change('f2.txt', 'changed\n');
      expect(await feed.sync(sb.ws)).toBe('walk');
      scan();
      await change('f3.txt', 'changed\n');
      expect(await feed.sync(sb.ws, true, new AbortController().signal)).toBe('synced');
      expect(scan().changes.map((c) => c.path)).toEqual(['f3.txt']);
      await change('f4.txt', 'changed\n');
      const next = new AbortController();
      const waiting = feed.sync(sb.ws, true, next.signal);
      next.abort();
      expect(await waiting).toBe('walk');
      expect(scan().changes.map((c) => c.path)).toEqual(['f4.txt']);
      // Already aborted as it starts: the figures rule.
      await change('f4.txt', 'again\n');
      expect(await feed.sync(sb.ws, true, AbortSignal.abort())).toBe('walk');
      expect(scan().changes.map((c) => c.path)).toEqual(['f4.txt']);
    } finally {
      feed.close();
      opened.journal.close();
    }
  });
});
