// The two halves of a baseline made in the background, in process on a real folder: the scan
// that keeps only stats (scanAndCommit in a process with a keeper) and the slices that keep the
// bytes (keepBaselineSlice). A file whose stat moved since the scan, or that is racy, is never
// read by a slice (the scan that sees it records the change, named as a gap); a secret is named,
// never kept; the counts in the snapshot's meta follow.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { keepBaselineSlice } from '../server/core/capture/baseline.js';
import { scanAndCommit, useBackgroundBaseline } from '../server/core/capture/scan-commit.js';
import { unitWorkspace, type UnitWorkspace } from './support/unit-workspace.js';

const HOUR_AGO = new Date(Date.now() - 3600_000);
const ALL = { files: 1e9, bytes: Infinity, ms: Infinity };

/** A workspace of `n` files (and one secret), all written an hour ago, past a limit of 5 files read at once. */
function large(n: number): UnitWorkspace {
  const ws = unitWorkspace({ TAKEBACK_MAX_WORKSPACE_FILES: '5' });
  for (let i = 0; i < n; i++) ws.write(`d/f${i}.txt`, `file ${i}\n`);
  ws.write('.env', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n');
  for (const f of [...fs.readdirSync(ws.abs('d')).map((x) => `d/${x}`), '.env']) fs.utimesSync(ws.abs(f), HOUR_AGO, HOUR_AGO);
  return ws;
}

const woken: string[] = [];
useBackgroundBaseline((ws) => woken.push(ws.root));
afterEach(() => {
  woken.length = 0;
});

describe('a baseline kept in the background', () => {
  it('the scan keeps stats only, wakes the keeper; slices keep the bytes and the counts follow', () => {
    const ws = large(20);
    const scan = ws.journal.write(() => scanAndCommit(ws));
    expect(scan.status).toBe('baseline');
    expect(ws.journal.snapshot.meta()).toMatchObject({ files: 21, bytes: 0, background: true, pending: 21 });
    expect(woken).toEqual([ws.root]);
    const first = keepBaselineSlice(ws, { ...ALL, files: 8 })!;
    expect([first.kept, first.left]).toEqual([8, 13]);
    expect(ws.journal.snapshot.meta()!.pending).toBe(13);
    const rest = keepBaselineSlice(ws, ALL)!;
    expect([rest.kept, rest.left, rest.skipped]).toEqual([13, 0, 0]);
    const meta = ws.journal.snapshot.meta()!;
    expect(meta.pending).toBeUndefined();
    // Every file's bytes but the secret's: 20 files of 'file N\n'.
    expect(meta.bytes).toBe([...Array(20).keys()].reduce((a, i) => a + `file ${i}\n`.length, 0));
    expect(keepBaselineSlice(ws, ALL)).toBeNull();
    // Nothing moved: the next scan reports nothing.
    expect(ws.journal.write(() => scanAndCommit(ws)).changes).toEqual([]);
  });

  it('a file whose stat moved since the scan is left to the next scan, whose change names the gap', () => {
    const ws = large(6);
    ws.journal.write(() => scanAndCommit(ws));
    fs.appendFileSync(ws.abs('d/f1.txt'), 'more\n');
    fs.utimesSync(ws.abs('d/f1.txt'), new Date(Date.now() - 1800_000), new Date(Date.now() - 1800_000));
    const r = keepBaselineSlice(ws, ALL)!;
    expect([r.kept, r.left, r.skipped]).toEqual([6, 1, 1]);
    const next = ws.journal.write(() => scanAndCommit(ws));
    expect(next.changes.map((c) => [c.path, c.before?.gap ?? null, c.after?.sha256 !== null])).toEqual([['d/f1.txt', 'baseline-incomplete', true]]);
    expect(ws.journal.snapshot.meta()!.pending).toBeUndefined();
  });

  it('a file modified within the racy window of the last scan is not read by a slice; the next scan reads it again and reports no change', () => {
    const ws = large(4);
    fs.writeFileSync(ws.abs('d/fresh.txt'), 'fresh\n');
    ws.journal.write(() => scanAndCommit(ws));
    const r = keepBaselineSlice(ws, ALL)!;
    expect([r.kept, r.left, r.skipped]).toEqual([5, 1, 1]);
    // The next scan reads it again (racy), and keeps it.
    expect(ws.journal.write(() => scanAndCommit(ws)).changes).toEqual([]);
    expect(ws.journal.snapshot.meta()!.pending).toBeUndefined();
  });
});
