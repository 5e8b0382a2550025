// The sidecar (`takeback serve`) makes a large baseline outside git in the background too, through
// the same keeper as the capture daemon (capture/baseline.ts; its worker thread where one starts,
// which test/baseline-worker.test.ts shows keeps the same as reading on the journal's thread): real binary over real stdio, a real tree
// past the lowered limit (TAKEBACK_MAX_WORKSPACE_FILES=50). A command captured while it is made is
// recorded; once `list` says it is complete, every file's bytes are in the store and a change to
// any of them is whole.
import fs from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { overStdio } from './support/lsp-client.js';
import { until } from './support/procs.js';
import { sandbox } from './support/takeback.js';

const FILES = 300;
const content = (i: number) => `file ${i}\n${'y'.repeat(i)}\n`;

describe('the sidecar’s background baseline', () => {
  it('is kept to the end, batch by batch, while the sidecar serves commands, and is whole after', async () => {
    const sb = sandbox({ env: { TAKEBACK_MAX_WORKSPACE_FILES: '50' } });
    const hourAgo = new Date(Date.now() - 3600_000);
    for (let i = 0; i < FILES; i++) {
      sb.write(`d${i % 10}/f${i}.txt`, content(i));
      fs.utimesSync(sb.abs(`d${i % 10}/f${i}.txt`), hourAgo, hourAgo);
    }
    // Slices of 20 files: the baseline takes several batches on the worker.
    const { editor } = overStdio(sb.ws, 'headless', { ...sb.env, TAKEBACK_BASELINE_SLICE_FILES: '20' });
    onTestFinished(() => editor.close());
    await editor.initialize();
    let id = 0;
    const command = async (cmd: string) => {
      const cid = `bl${++id}`;
      await editor.conn.sendRequest('capture/begin', { id: cid, tool: 'Bash', command: cmd });
      sb.sh(cmd);
      return editor.conn.sendRequest<{ set: { files: { path: string; status: string; gap?: string }[] } | null }>('capture/end', { id: cid });
    };
    const first = await command('echo new > new.txt');
    expect(first.set?.files.map((f) => [f.path, f.status])).toEqual([['new.txt', 'created']]);
    await until('the baseline to complete', () => sb.json(['list']).capture.baseline === null, 120_000);
    for (let i = 0; i < FILES; i++) expect(sb.hasBlob(content(i)), `f${i}`).toBe(true);
    const r = await command('echo more >> d4/f4.txt');
    expect(r.set?.files.map((f) => [f.path, f.status, f.gap ?? null])).toEqual([['d4/f4.txt', 'modified', null]]);
  }, 180_000);
});
