// The warm scan's seam for a file watcher (scan/checker.ts, after git's fsmonitor): with hints it
// checks only the rows the hinted paths fall in; with none, or with hints from a watcher that was
// not watching before the last scan's racy line, it checks every row.
import { describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openEngine } from '../server/core/engine.js';
import { hintedRows } from '../server/core/scan/checker.js';
import { sandbox } from './support/takeback.js';

describe('change hints for the warm scan', () => {
  it('narrow the check to the rows of the hinted paths; none, or hints that begin after the racy line, check everything', () => {
    const sb = sandbox();
    sb.write('a/x.txt', 'x\n');
    sb.write('b/y.txt', 'y\n');
    const engine = openEngine({ workspace: sb.ws, env: sb.env });
    try {
      const scan = (hints?: { paths: Set<string>; sinceMs: number }) => engine.journal.write(() => scanAndCommit(engine, undefined, hints));
      expect(scan().status).toBe('baseline');
      sb.write('a/x.txt', 'x changed\n');
      sb.write('b/y.txt', 'y changed\n');
      // A watcher watching all along says only a/x.txt moved: b is not looked at.
      expect(scan({ paths: new Set(['a/x.txt']), sinceMs: 0 }).changes.map((c) => c.path)).toEqual(['a/x.txt']);
      // No hints: every row, so b/y.txt now.
      expect(scan().changes.map((c) => c.path)).toEqual(['b/y.txt']);
      sb.write('a/x.txt', 'x again\n');
      sb.write('b/y.txt', 'y again\n');
      // A watcher that began after the last scan's racy line cannot vouch for it: every row.
      expect(scan({ paths: new Set(['a/x.txt']), sinceMs: Date.now() }).changes.map((c) => c.path)).toEqual(['a/x.txt', 'b/y.txt']);
    } finally {
      engine.journal.close();
    }
  });

  it('a hinted path names its own row (a folder) and its folder’s row', () => {
    const rows = new Map(['', 'a', 'a/b', 'c'].map((d) => [d, new Uint8Array(0)]));
    expect(hintedRows(rows, 100, { paths: new Set(['a/b', 'c/new.txt', 'gone/z.txt']), sinceMs: 50 })?.sort()).toEqual(['a', 'a/b', 'c']);
    expect(hintedRows(rows, 100, { paths: new Set(['top.txt']), sinceMs: 100 })).toEqual(['']);
    expect(hintedRows(rows, 100, { paths: new Set(['top.txt']), sinceMs: 101 })).toBeNull();
    expect(hintedRows(rows, 100)).toBeNull();
  });
});
