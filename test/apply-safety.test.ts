// Where undo and redo never write: through a symbolic link (a file or a folder on the way),
// outside the workspace, or from a kept copy whose hash does not match. Each refusal writes
// nothing at all.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox, sha256, tree, type Sandbox } from './support/takeback.js';

/** A folder outside the workspace holding `name` with `content`; returns its path. */
function outsideDir(sb: Sandbox, name: string, content: string): string {
  const dir = path.join(sb.base, 'outside');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, name), content);
  return dir;
}

/** Replaces workspace folder `rel` by a link to `target` (the original moves aside). */
function swapForLink(sb: Sandbox, rel: string, target: string): void {
  fs.renameSync(sb.abs(rel), sb.abs(`${rel}-moved`));
  fs.symlinkSync(target, sb.abs(rel));
}

// Both ways of naming folders (safe-fs.ts): through folders held open, and by full paths (where
// /proc/self/fd does not work).
describe.each([
  ['through folders held open', {}],
  ['by full paths', { TAKEBACK_FOLDER_FDS: '0' }],
])('undo and redo never write through a link or outside the workspace (%s)', (_way, env) => {
  it('removing a file the agent created, in a folder now swapped for a link: refused, nothing written', () => {
    const sb = sandbox({ env });
    sb.write('d/keep.txt', 'keep\n');
    sb.tb(['capture', 'begin', '--id', 'w1', '--tool', 'Write', 'd/new.txt']);
    sb.write('d/new.txt', 'new\n');
    sb.tb(['capture', 'end', '--id', 'w1']);
    const out = outsideDir(sb, 'new.txt', 'new\n');
    swapForLink(sb, 'd', out);
    const before = [sb.tree(), tree(out)];
    const r = sb.tb(['undo', '1', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'outside-workspace', message: expect.stringMatching(/d is a symbolic link/) });
    expect([sb.tree(), tree(out)]).toEqual(before);
    expect(sb.json(['show', '1']).state).toBe('applied');
  });

  it('putting back a file in a folder now swapped for a link: refused, nothing written', () => {
    const sb = sandbox({ env });
    sb.write('d/a.txt', 'a\n');
    sb.write('b.txt', 'b\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "a2\\n" > d/a.txt && printf "b2\\n" > b.txt']);
    const out = outsideDir(sb, 'a.txt', 'a2\n');
    swapForLink(sb, 'd', out);
    const before = [sb.tree(), tree(out)];
    for (const args of [['undo', '1'], ['undo', '1', '--force']]) {
      const r = sb.tb(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect([sb.tree(), tree(out)]).toEqual(before); // not even b.txt
    }
  });

  it('a folder made again by redo gets its mode, and the files below it', () => {
    const sb = sandbox({ env });
    sb.write('keep.txt', 'keep\n');
    sb.tb(['run', '--', 'sh', '-c', 'mkdir -m 750 d && mkdir d/e && printf "f\\n" > d/e/f.txt']);
    sb.json(['undo', '1']);
    expect(sb.exists('d')).toBe(false);
    sb.json(['redo', '1']);
    expect(fs.lstatSync(sb.abs('d')).mode & 0o7777).toBe(0o750);
    expect(sb.read('d/e/f.txt').toString()).toBe('f\n');
  });

  it('redo creating a file in a folder now swapped for a link: refused', () => {
    const sb = sandbox({ env });
    sb.write('d/keep.txt', 'keep\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "made\\n" > d/made.txt']);
    sb.json(['undo', '1']);
    const out = outsideDir(sb, 'other.txt', 'x\n');
    swapForLink(sb, 'd', out);
    const r = sb.tb(['redo', '1']);
    expect(r.code).toBe(2);
    expect(fs.readdirSync(out)).toEqual(['other.txt']);
  });

  it('a file the user swapped for a link: a conflict; --force replaces the link itself, never its target', () => {
    const sb = sandbox({ env });
    sb.write('f.txt', 'one\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "two\\n" > f.txt']);
    const out = outsideDir(sb, 'target.txt', 'two\n');
    fs.rmSync(sb.abs('f.txt'));
    fs.symlinkSync(path.join(out, 'target.txt'), sb.abs('f.txt'));
    const r = sb.tb(['undo', '1', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).conflicts).toEqual([expect.objectContaining({ path: 'f.txt', reason: 'changed-since' })]);
    sb.json(['undo', '1', '--force']);
    expect(fs.lstatSync(sb.abs('f.txt')).isFile()).toBe(true);
    expect(sb.read('f.txt').toString()).toBe('one\n');
    expect(fs.readFileSync(path.join(out, 'target.txt'), 'utf8')).toBe('two\n');
  });

  it('a failure part-way puts back what was already written', () => {
    const sb = sandbox({ env });
    sb.write('a.txt', 'a\n');
    sb.write('z/x', 'x\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "a2\\n" > a.txt && rm z/x']);
    // The user turns folder z into a file: a.txt is written back first, then z/x cannot be.
    fs.rmdirSync(sb.abs('z'));
    sb.write('z', 'now a file\n');
    const before = sb.tree();
    const r = sb.tb(['undo', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/nothing was changed: refusing to write z\/x: z is not a folder/);
    expect(sb.tree()).toEqual(before); // a.txt put back as it was
    expect(sb.json(['show', '1']).state).toBe('applied');
    expect(fs.readdirSync(sb.journalDir()).filter((n) => n.startsWith('txn-'))).toEqual([]);
  });

  it('a kept copy whose hash does not match is never written back', () => {
    const sb = sandbox({ env });
    sb.write('a.txt', 'original content\n');
    sb.write('b.txt', 'b\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "agent\\n" > a.txt && printf "b2\\n" > b.txt']);
    const h = sha256('original content\n');
    const blob = path.join(sb.home, 'blobs', h.slice(0, 2), h.slice(2));
    fs.writeFileSync(blob, 'tampered content\n'); // same size, other bytes
    const before = sb.tree();
    const r = sb.tb(['undo', '1']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/damaged/);
    expect(sb.tree()).toEqual(before); // b.txt neither
    expect(sb.json(['show', '1']).state).toBe('applied');
  });
});

describe('undo --force loses nothing', () => {
  it('what it writes over is kept as a change of its own, already taken back: redo --last gives everything back', () => {
    const sb = sandbox();
    sb.write('notes.md', 'one\n');
    sb.write('other.txt', 'o\n');
    sb.tb(['capture', 'begin', '--id', 'e1', '--tool', 'Edit', 'notes.md', 'other.txt']);
    sb.write('notes.md', 'one\nagent\n');
    sb.write('other.txt', 'o2\n');
    sb.tb(['capture', 'end', '--id', 'e1']);
    // The user's own edit since, then a forced undo over it.
    sb.write('notes.md', 'one\nagent\nmy own line\n', 0o600);
    expect(sb.tb(['undo', '1']).code).toBe(1);
    const r = sb.json(['undo', '1', '--force']);
    expect(r).toMatchObject({ written: true, forced: true });
    expect([sb.read('notes.md').toString(), sb.read('other.txt').toString()]).toEqual(['one\n', 'o\n']);
    const sets = sb.json(['list']).sets;
    const kept = sets.find((s: any) => s.source.kind === 'replaced');
    expect(kept).toMatchObject({ state: 'undone', source: { kind: 'replaced', direction: 'undo', sets: ['1'] }, label: 'what undo --force of #1 replaced' });
    expect(kept.files.map((f: any) => [f.path, f.status])).toEqual([['notes.md', 'modified']]);
    // Its bytes are referenced: a sweep with no grace keeps them.
    sb.json(['gc', '--grace', '0']);
    expect(sb.hasBlob('one\nagent\nmy own line\n')).toBe(true);
    // redo --last, the forced undo's exact inverse: the agent's change and the user's line, mode
    // and all, in one step; the kept change is applied again with it.
    expect(sb.json(['redo', '--last']).sets).toEqual(['1', kept.id]);
    expect(sb.read('notes.md').toString()).toBe('one\nagent\nmy own line\n');
    expect(sb.tb(['redo', '--last']).code).toBe(3);
    expect(fs.statSync(sb.abs('notes.md')).mode & 0o777).toBe(0o600);
    expect(sb.read('other.txt').toString()).toBe('o2\n');
  });
});
