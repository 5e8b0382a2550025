// Never outside the workspace, even under a race: a real process swaps a workspace folder with a
// link to a folder outside (renameat2 with RENAME_EXCHANGE, as fast as it can) while undo and
// redo run, through the CLI and through the sidecar's disk path. Between steps the swapping
// pauses (always after an even number of swaps: the folder is back in place) and the test looks:
// the outside folder is byte for byte as it was, with no temporary file in it, and the step
// either completed inside the workspace or failed with a clear error and left it as it was. Also
// for a merged undo and its redo, and an undo and redo narrowed to one hunk.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApplyResult } from '../protocol/src/types.js';
import { inProcess } from './support/lsp-client.js';
import { sandbox, tree, type Entry, type Sandbox } from './support/takeback.js';

/** The swapping loop: exchanges argv[1] and argv[2] until told to stop; reads 'g' (go) and 's' (stop after an even number, answering 's') on stdin. */
const SWAPPER_C = String.raw`
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
static int exchange(const char *a, const char *b) { return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */); }
int main(int argc, char **argv) {
  if (argc != 3) return 2;
  long n = 0;
  int going = 0;
  struct pollfd p = { .fd = 0, .events = POLLIN };
  for (;;) {
    if (!going || (n & 63) == 0) {
      if (poll(&p, 1, going ? 0 : -1) > 0) {
        char c;
        if (read(0, &c, 1) <= 0) break;
        if (c == 'g') going = 1;
        if (c == 's') {
          going = 0;
          if ((n & 1) && exchange(argv[1], argv[2]) == 0) n++;
          if (write(1, "s", 1) != 1) return 1;
        }
        continue;
      }
    }
    if (going) {
      if (exchange(argv[1], argv[2]) != 0) { perror("renameat2"); return 1; }
      n++;
    }
  }
  if ((n & 1) && exchange(argv[1], argv[2]) == 0) n++;
  return 0;
}
`;

let helper: string;
let helperDir: string;

beforeAll(() => {
  helperDir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'takeback-swapper-'));
  fs.writeFileSync(path.join(helperDir, 'swap.c'), SWAPPER_C);
  helper = path.join(helperDir, 'swap');
  const cc = spawnSync('cc', ['-O2', '-o', helper, path.join(helperDir, 'swap.c')], { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`could not build the swapping loop: ${cc.stderr}`);
});
afterAll(() => fs.rmSync(helperDir, { recursive: true, force: true }));

/** A running swapping loop between `a` and `b`. */
class Swapper {
  private readonly child: ChildProcess;
  private answers = 0;
  private waiting: (() => void) | null = null;
  constructor(a: string, b: string) {
    this.child = spawn(helper, [a, b], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.answers += d.length;
      this.waiting?.();
    });
  }
  go(): void {
    this.child.stdin!.write('g');
  }
  /** Stops swapping (with both back in place) and resolves once the loop says so. */
  async stop(): Promise<void> {
    const want = this.answers + 1;
    this.child.stdin!.write('s');
    while (this.answers < want) await new Promise<void>((r) => (this.waiting = r));
    this.waiting = null;
  }
  async end(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end();
    await exited;
  }
}

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
  const swapper = new Swapper(sb.abs('sub'), sb.abs('swap'));
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
  // No descriptor of the write path (the sidecar's, in process: its folders are opened O_PATH,
  // 010000000) is left open on a workspace folder. Descriptors other parts hold (a listing's,
  // a watcher's) are not the write path's and are not judged here.
  const O_PATH = 0o10000000;
  const held = () =>
    fs.readdirSync('/proc/self/fd').flatMap((fd) => {
      try {
        const p = fs.readlinkSync(`/proc/self/fd/${fd}`);
        if (p !== sb.ws && !p.startsWith(`${sb.ws}/`)) return [];
        const flags = parseInt(/flags:\s*(\d+)/.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '0', 8);
        return flags & O_PATH ? [p] : [];
      } catch {
        return [];
      }
    });
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
