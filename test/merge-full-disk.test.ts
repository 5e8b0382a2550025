// Full disks during a merged undo, real ones (a small tmpfs; root only, as CI runs): the journal's
// home full (the undo must keep the bytes it replaces and the merged ones before it writes), and
// the workspace's own disk full (the merged files are longer than those they replace, and some go
// by rename). Either way the undo fails saying why, every file stays byte for byte as the person
// left it, the journal still says the change is in place; once there is room, the undo merges and
// its redo gives the person's files back exactly.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canMount, REQUIRED, smallDisk } from './support/disk.js';
import { sandbox, tree, type Sandbox } from './support/takeback.js';

const mountable = canMount();
if (!mountable && REQUIRED) throw new Error('merge-full-disk.test.ts: mounting a tmpfs needs root on Linux (CI runs as root)');

const N = 12;

/** File `i`: numbered lines, line 2 long; every fourth file 20,000 lines (over 256 KiB: written by rename). */
function body(i: number): string {
  const n = i % 4 === 0 ? 20_000 : 12;
  let s = '';
  for (let k = 1; k <= n; k++) s += k === 2 ? `file ${i} line 2 ${'with a long tail '.repeat(8)}\n` : `file ${i} line ${k}\n`;
  return s;
}

/**
 * In workspace folder `ws` (through `sb`'s CLI): the files, the agent's sed that shortens line 2
 * of each (so that its undo makes each file longer), then the person's edit of line 8 of each,
 * outside takeback. Returns the change's id.
 */
function setUp(sb: Sandbox, ws: string): string {
  for (let i = 0; i < N; i++) fs.writeFileSync(path.join(ws, `f${i}.txt`), body(i));
  const run = (args: string[]) => {
    const r = sb.tb(args, { cwd: ws });
    expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
    return r;
  };
  run(['run', '--', 'true']);
  run(['run', '--', 'sh', '-c', "sed -i 's/ line 2 with.*$/ line 2/' f*.txt"]);
  for (let i = 0; i < N; i++) {
    const f = path.join(ws, `f${i}.txt`);
    fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(`file ${i} line 8\n`, `file ${i} line 8 by the person\n`));
  }
  return JSON.parse(run(['list', '--json']).stdout).sets[0].id as string;
}

/** After room is back: the change still in place; the undo merges every file; redo --last gives the person's files back. */
function worksOnceThereIsRoom(sb: Sandbox, ws: string, id: string, person: ReturnType<typeof tree>): void {
  const list = JSON.parse(sb.tb(['list', '--json'], { cwd: ws }).stdout);
  expect(list.sets.find((s: { id: string }) => s.id === id).state).toBe('applied');
  const u = sb.tb(['undo', id, '--json'], { cwd: ws });
  expect(u.code, u.stdout + u.stderr).toBe(0);
  expect(JSON.parse(u.stdout).applied.filter((f: { merged?: boolean }) => f.merged)).toHaveLength(N);
  for (let i = 0; i < N; i++) expect(fs.readFileSync(path.join(ws, `f${i}.txt`), 'utf8')).toBe(body(i).replace(`file ${i} line 8\n`, `file ${i} line 8 by the person\n`));
  const r = sb.tb(['redo', '--last'], { cwd: ws });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(tree(ws)).toEqual(person);
}

describe.skipIf(!mountable)('a merged undo on a full disk', () => {
  it("TAKEBACK_HOME full: the undo fails saying so, nothing written, the change still in place; with room it merges", () => {
    const disk = smallDisk(8192);
    const sb = sandbox({ env: { TAKEBACK_HOME: disk.dir } });
    const id = setUp(sb, sb.ws);
    const person = tree(sb.ws);
    disk.fill();
    const u = sb.tb(['undo', id]);
    expect(u.code, u.stdout + u.stderr).not.toBe(0);
    expect(u.stderr).toContain(`takeback: the journal cannot be written: the disk of ${disk.dir} is full`);
    expect(tree(sb.ws)).toEqual(person);
    disk.free();
    worksOnceThereIsRoom(sb, sb.ws, id, person);
  });

  it("the workspace's disk full: the undo fails saying so and puts back what it wrote, every file as the person left it; with room it merges", () => {
    const disk = smallDisk(4096);
    const sb = sandbox();
    const ws = path.join(disk.dir, 'ws');
    fs.mkdirSync(ws);
    const id = setUp(sb, ws);
    const person = tree(ws);
    disk.fill();
    const u = sb.tb(['undo', id], { cwd: ws });
    expect(u.code, u.stdout + u.stderr).not.toBe(0);
    expect(u.stdout + u.stderr).toMatch(/nothing was changed/);
    expect(u.stdout + u.stderr).toMatch(/ENOSPC|no space/i);
    expect(Object.keys(tree(ws)).filter((p) => p.includes('.takeback-'))).toEqual([]);
    expect(tree(ws)).toEqual(person);
    disk.free();
    worksOnceThereIsRoom(sb, ws, id, person);
  });
});
