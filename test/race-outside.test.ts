// Never outside the workspace, even under a race: a real process swaps a workspace folder with a
// link to a folder outside (renameat2 with RENAME_EXCHANGE, as fast as it can) while undo and
// redo run, through the CLI and through the sidecar's disk path. Between steps the swapping
// pauses (always after an even number of swaps: the folder is back in place) and the test looks:
// the outside folder is byte for byte as it was, with no temporary file in it, and the step
// either completed inside the workspace or failed with a clear error and left it as it was. Also
// for a merged undo and its redo, and an undo and redo narrowed to one hunk.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApplyResult } from '../protocol/src/types.js';
import { inProcess } from './support/lsp-client.js';
import { heldUnder, Swapper, swapperProgram } from './support/swapper.js';
import { sandbox, tree, type Entry, type Sandbox } from './support/takeback.js';

const swapProgram = swapperProgram();

const isTemp = (rel: string) => /\.takeback-/.test(rel);

/** Copies folder `from` to `to` (files, links and folders, with their modes). */
function mirror(from: string, to: string): void {
  fs.rmSync(to, { recursive: true, force: true });
  fs.mkdirSync(to);
  for (const name of fs.readdirSync(from)) {
    const a = path.join(from, name);
    const b = path.join(to, name);
    const st = fs.lstatSync(a);
    if (st.isDirectory()) mirror(a, b);
    else if (st.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(a), b);
    else fs.copyFileSync(a, b);
    if (!st.isSymbolicLink()) fs.chmodSync(b, st.mode & 0o7777);
  }
}

/**
 * A workspace whose folder `sub` a recorded command changed: many small files rewritten, two
 * large ones (written by rename), a file made, a file removed, a mode changed, a folder made; a
 * link `swap` beside it to `outside`, which the swapping loop exchanges with `sub`.
 */
type Setup = { sb: Sandbox; outside: string; states: { applied: Record<string, Entry>; undone: Record<string, Entry> } };

function setUp(): Setup {
  const sb = sandbox();
  for (let i = 0; i < 60; i++) sb.write(`sub/f${i}.txt`, `before ${i}\n`);
  sb.write('sub/big0.bin', Buffer.alloc(300 * 1024, 1));
  sb.write('sub/big1.bin', Buffer.alloc(300 * 1024, 2));
  sb.write('sub/gone.txt', 'removed by the command\n');
  sb.write('sub/run.sh', '#!/bin/sh\n', 0o644);
  sb.write('sub/deep/d.txt', 'deep before\n');
  sb.write('keep.txt', 'the workspace needs a file at its root\n');
  const script = [
    'for f in sub/f*.txt sub/deep/d.txt; do printf "after\\n" >> "$f"; done',
    'head -c 307200 /dev/zero > sub/big0.bin',
    'head -c 307201 /dev/zero > sub/big1.bin',
    'rm sub/gone.txt',
    'chmod 755 sub/run.sh',
    'mkdir sub/made && printf "made\\n" > sub/made/m.txt',
    'printf "new\\n" > sub/new.txt',
  ].join(' && ');
  const r = sb.tb(['run', '--', 'sh', '-c', script]);
  expect(r.code, r.stderr).toBe(0);
  return finishSetUp(sb, ['1']);
}

/** The states of `sub` after undo and redo args `step` (learnt by running them once), and the link `swap` to a copy of `sub` outside. */
function finishSetUp(sb: Sandbox, step: string[]): Setup {
  const subTree = () => tree(sb.abs('sub'));
  const applied = subTree();
  expect(sb.tb(['undo', ...step]).code).toBe(0);
  const undone = subTree();
  expect(undone).not.toEqual(applied);
  expect(sb.tb(['redo', ...step]).code).toBe(0);
  expect(subTree()).toEqual(applied);
  const outside = path.join(sb.base, 'outside');
  mirror(sb.abs('sub'), outside);
  fs.symlinkSync(outside, sb.abs('swap'));
  return { sb, outside, states: { applied, undone } };
}

/**
 * A workspace whose folder `sub` a recorded command changed on line 2 of each of many files (two
 * of them over 256 KiB, written by rename), and the person then on line 10 of each: every undo
 * of it merges. With `step` the undo and redo narrowed (a file and its lines: per hunk).
 */
function setUpMerged(step: string[] = ['1']): Setup {
  const sb = sandbox();
  const body = (i: number, n: number) => Array.from({ length: n }, (_, k) => `file ${i} line ${k + 1}\n`).join('');
  for (let i = 0; i < 40; i++) sb.write(`sub/f${i}.txt`, body(i, i < 2 ? 20_000 : 12));
  sb.write('sub/deep/d.txt', body(99, 12));
  sb.write('keep.txt', 'the workspace needs a file at its root\n');
  expect(sb.tb(['run', '--', 'true']).code).toBe(0);
  const r = sb.tb(['run', '--', 'sh', '-c', "sed -i 's/ line 2$/ line 2 by the agent/' sub/f*.txt sub/deep/d.txt"]);
  expect(r.code, r.stderr).toBe(0);
  for (const rel of [...Array.from({ length: 40 }, (_, i) => `sub/f${i}.txt`), 'sub/deep/d.txt']) {
    fs.writeFileSync(sb.abs(rel), sb.read(rel).toString().replace(/ line 10\n/, ' line 10 by the person\n'));
  }
  return finishSetUp(sb, step);
}

/** What one step did: completed, or failed with this message. */
type Outcome = { ok: true } | { ok: false; error: string };

/**
 * Runs `steps` undo/redo steps of set 1 with `step` while the loop swaps, and checks each as said
 * at the top. Before each step the outside folder is made a copy of `sub` as it is (so that what
 * the step reads through the link, while it is there, is what it would read inside: the plan is
 * the same, and only where it writes differs). Returns how many steps completed and the failures.
 */
async function race(steps: number, step: (sb: Sandbox, direction: 'undo' | 'redo') => Promise<Outcome>, setup: () => Setup = setUp): Promise<{ completed: number; failures: string[] }> {
  const { sb, outside, states } = setup();
  const swapper = new Swapper(swapProgram(), sb.abs('sub'), sb.abs('swap'));
  let state: 'applied' | 'undone' = 'applied';
  let completed = 0;
  const failures: string[] = [];
  try {
    for (let i = 0; i < steps; i++) {
      mirror(sb.abs('sub'), outside);
      const before = tree(outside);
      const direction: 'undo' | 'redo' = state === 'applied' ? 'undo' : 'redo';
      swapper.go();
      const out = await step(sb, direction);
      await swapper.stop();
      expect(fs.lstatSync(sb.abs('sub')).isDirectory()).toBe(true);
      expect(tree(outside), `step ${i} (${direction}) changed the folder outside`).toEqual(before);
      expect(Object.keys(tree(sb.ws)).filter(isTemp), `step ${i} left temporary files`).toEqual([]);
      if (out.ok) {
        state = direction === 'undo' ? 'undone' : 'applied';
        completed++;
      } else {
        failures.push(out.error);
        expect(out.error, `step ${i}: a failure says why`).toMatch(/refusing to write|symbolic link|its folder moved|changed after|changed meanwhile|conflict/i);
      }
      expect(tree(sb.abs('sub')), `step ${i} (${direction}: ${out.ok ? 'completed' : out.error})`).toEqual(states[state]);
    }
  } finally {
    await swapper.end();
  }
  // No descriptor of this process (the sidecar's, in process) is left open on a workspace folder:
  // not the write path's (its folders are opened O_PATH, 010000000), nor a listing's, nor the
  // watcher's — whose crawl, when a folder it listed is swapped for the link before it opens it,
  // fails, and its descriptors are closed after it (scan/watch-subscribe.ts). A scan or crawl the
  // swaps set going holds one for a moment on another thread: a left descriptor is one still open
  // once that work has had five seconds to end. Each is named with its open flags.
  const held = () => heldUnder(sb.ws).map((h) => `${h.path} (flags ${h.flags})`);
  for (const until = Date.now() + 5000; held().length > 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
  expect(held()).toEqual([]);
  return { completed, failures };
}

/**
 * How many steps got as far as writing: those completed, and those stopped at a write's own
 * checks — their folder moved under them, or the path no longer held what the step read (read
 * through the link, it was the outside copy): what they had written was put back. The others
 * were stopped before writing (a link found on the way, or a conflict read through it).
 */
const wrote = (out: { completed: number; failures: string[] }) => out.completed + out.failures.filter((f) => /its folder moved|changed meanwhile/.test(f)).length;

describe('a workspace folder swapped for a link to an outside folder while undo and redo run', () => {
  it('the CLI never writes outside: every undo and redo completes inside or fails saying why, writing nothing', async () => {
    const out = await race(12, async (sb, direction) => {
      const r = await sb.tbAsync([direction, '1']);
      return r.code === 0 ? { ok: true } : { ok: false, error: `${r.stdout}\n${r.stderr}` };
    });
    expect(wrote(out)).toBeGreaterThan(0);
  }, 60_000);

  it('a merged undo and its redo, and a per-hunk undo and redo, through the CLI: never outside either', async () => {
    const merged = await race(10, async (sb, direction) => {
      const r = await sb.tbAsync([direction, '1']);
      return r.code === 0 ? { ok: true } : { ok: false, error: `${r.stdout}\n${r.stderr}` };
    }, () => setUpMerged());
    expect(wrote(merged)).toBeGreaterThan(0);
    const byLines = ['1', '--file', 'sub/f5.txt', '--lines', '2'];
    const hunk = await race(10, async (sb, direction) => {
      const r = await sb.tbAsync([direction, ...byLines]);
      return r.code === 0 ? { ok: true } : { ok: false, error: `${r.stdout}\n${r.stderr}` };
    }, () => setUpMerged(byLines));
    expect(wrote(hunk)).toBeGreaterThan(0);
  }, 180_000);

  it("the sidecar's disk path never writes outside either", async () => {
    let editor: ReturnType<typeof inProcess> | null = null;
    try {
      const out = await race(16, async (sb, direction) => {
        if (!editor) {
          editor = inProcess(sb.ws, 'headless', sb.env);
          await editor.initialize();
        }
        try {
          const r = await editor.request<ApplyResult & { failed?: { path: string; reason: string }[] }>('undo/apply', { selector: { ids: ['1'] }, direction });
          if (r.written && r.sets.length > 0 && !(r.failed ?? []).length) return { ok: true };
          return { ok: false, error: JSON.stringify(r) };
        } catch (e) {
          return { ok: false, error: (e as Error).message };
        }
      });
      expect(wrote(out)).toBeGreaterThan(0);
    } finally {
      await (editor as ReturnType<typeof inProcess> | null)?.close();
    }
  }, 60_000);
});
