// `takeback show`: what the agent did, as a forward diff per file, `--stat`, a `mv` as a rename;
// `show` and `preview` through the pager on a terminal only (PAGER, TAKEBACK_PAGER, --no-pager).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, lines, sandbox, type Sandbox } from './support/takeback.js';

let sb: Sandbox;
beforeAll(() => {
  sb = sandbox({ git: true });
  sb.write('a.txt', lines('a', 10));
  sb.write('m.txt', 'the same bytes\n');
  sb.write('run.sh', '#!/bin/sh\n', 0o644);
  sb.write('crlf.txt', 'one\r\ntwo\r\n');
  const r = sb.tb(['run', '--', 'sh', '-c', "sed -i 's/^a 5$/FIVE/' a.txt && mv m.txt n.txt && printf 'x\\000y' > bin.dat && chmod 755 run.sh && printf 'one\\r\\nTWO\\r\\n' > crlf.txt"]);
  expect(r.code).toBe(0);
});
afterAll(() => {
  if (sb && !process.env.TAKEBACK_KEEP_TMP) fs.rmSync(sb.base, { recursive: true, force: true });
});

/** Runs `takeback ARGS` under a terminal (script(1)) with `env` added; returns its output. */
function underTerminal(args: string[], env: NodeJS.ProcessEnv): { code: number | null; out: string } {
  const cmd = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { cwd: sb.ws, env: { ...sb.env, ...env }, encoding: 'utf8' });
  return { code: r.status, out: r.stdout };
}

/** A pager that keeps what it was given, and its LESS, in `file`. */
function recordingPager(file: string): string {
  const script = path.join(sb.base, 'pager.sh');
  fs.writeFileSync(script, `#!/bin/sh\n{ echo "LESS=$LESS"; cat; } > '${file}'\n`, { mode: 0o755 });
  return script;
}

describe('takeback show', () => {
  it("prints each file's forward diff: what the agent did, not the undo", () => {
    const out = sb.tb(['show', '1']).stdout;
    expect(out).toContain('--- a/a.txt\n+++ b/a.txt\n');
    expect(out).toMatch(/^-a 5$/m);
    expect(out).toMatch(/^\+FIVE$/m);
    expect(out).toMatch(/bin\.dat .*\n.*\n.*\n\s+\(binary files differ\)/);
    expect(out).toMatch(/run\.sh .*\n.*\n.*\n\s+\(mode 0644 → 0755\)/);
    // CRLF lines keep their carriage return in the diff's lines.
    expect(out).toContain('-TWO'.replace('TWO', 'two\r'));
    expect(out).toContain('+TWO\r');
  });

  it("preview's diff keeps a last line's carriage return too", () => {
    const out = sb.tb(['preview', '1']).stdout;
    expect(out).toContain('-TWO\r\n+two\r');
  });

  it('shows a mv as one rename, with no diff, when the bytes are the same', () => {
    const out = sb.tb(['show', '1']).stdout;
    expect(out).toContain('m.txt → n.txt  (renamed, same bytes)');
    expect(out).not.toMatch(/^\s+m\.txt\s+\+0 −1/m);
    expect(out).not.toContain('+++ b/n.txt');
    // The header counts the rename as one file with no lines, as the body and --stat do.
    expect(out.split('\n')[1]).toMatch(/ · 5 files changed \+2 −2$/);
  });

  it('list counts and shows a mv as show does: one rename, no lines; --json links its two paths', () => {
    const row = sb.tb(['list']).stdout.split('\n');
    expect(row.find((l) => l.includes('#1'))).toMatch(/ 5 files changed \+2 −2/);
    expect(row).toContain('        m.txt → n.txt  (renamed)');
    expect(row.some((l) => /^\s+m\.txt\s+\+/.test(l))).toBe(false);
    const set = sb.json(['list']).sets.find((s: { id: string }) => s.id === '1');
    expect([set.added, set.removed]).toEqual([2, 2]);
    const byPath = new Map(set.files.map((f: { path: string }) => [f.path, f]));
    expect(byPath.get('n.txt')).toMatchObject({ status: 'created', renamedFrom: 'm.txt', added: 0, removed: 0 });
    expect(byPath.get('m.txt')).toMatchObject({ status: 'deleted', renamedTo: 'n.txt', added: 0, removed: 0 });
    expect(byPath.get('a.txt')).not.toHaveProperty('renamedFrom');
  });

  it('a rename with one half undone on its own is two changes again in list, and one after its redo', () => {
    const r = sb.tb(['run', '--', 'mv', 'a.txt', 'a2.txt']);
    expect(r.code).toBe(0);
    const id = sb.json(['list']).sets[0].id;
    expect(sb.tb(['undo', id, '--file', 'a2.txt']).code).toBe(0);
    const half = sb.json(['list']).sets[0];
    expect(half.files.map((f: { path: string; renamedFrom?: string; renamedTo?: string }) => [f.path, f.renamedFrom ?? f.renamedTo ?? null])).toEqual([
      ['a.txt', null],
      ['a2.txt', null],
    ]);
    expect(sb.tb(['list']).stdout).toMatch(/#\d+  mv a\.txt a2\.txt  2 files changed \+10 −10/);
    expect(sb.tb(['redo', id]).code).toBe(0);
    expect(sb.tb(['list']).stdout).toMatch(/#\d+  mv a\.txt a2\.txt  1 file changed \+0 −0/);
    expect(sb.tb(['undo', id]).code).toBe(0);
    expect(fs.readFileSync(path.join(sb.ws, 'a.txt'), 'utf8')).toContain('FIVE');
  });

  it('--stat: a line a file, binary sizes, the rename as old => new, and a total', () => {
    const out = sb.tb(['show', '1', '--stat']).stdout;
    const rows = out.trimEnd().split('\n');
    expect(rows).toContain(' a.txt          | 2 +-');
    expect(rows).toContain(' bin.dat        | Bin 0 -> 3 bytes');
    expect(rows).toContain(' m.txt => n.txt | 0');
    expect(rows.at(-1)).toBe(' 5 files changed, 2 insertions(+), 2 deletions(-)');
    expect(out).not.toContain('@@');
  });

  it('--stat counts no folder and says 0 insertions and 0 deletions for a rename alone, as git does', () => {
    const r = sb.tb(['run', '--', 'sh', '-c', 'mkdir -p deep/er && mv n.txt deep/er/n.txt']);
    expect(r.code).toBe(0);
    const id = sb.json(['list']).sets[0].id;
    const rows = sb.tb(['show', id, '--stat']).stdout.trimEnd().split('\n');
    expect(rows).toEqual([' n.txt => deep/er/n.txt | 0', ' 1 file changed, 0 insertions(+), 0 deletions(-)']);
  });

  it('--json keeps the protocol shape (no diff text in it)', () => {
    const j = sb.json(['show', '1']);
    expect(j.files.map((f: { path: string }) => f.path).sort()).toEqual(['a.txt', 'bin.dat', 'crlf.txt', 'm.txt', 'n.txt', 'run.sh']);
    expect(JSON.stringify(j)).not.toContain('@@');
  });
});

describe('the pager', () => {
  it('on a terminal, show goes through $PAGER, with LESS=FRX when LESS is unset', () => {
    const got = path.join(sb.base, 'paged-show.txt');
    fs.rmSync(got, { force: true });
    const r = underTerminal(['show', '1'], { PAGER: recordingPager(got) });
    expect(r.code).toBe(0);
    const paged = fs.readFileSync(got, 'utf8');
    expect(paged.split('\n')[0]).toBe('LESS=FRX');
    expect(paged).toContain('a.txt');
    expect(paged).toContain('FIVE');
    expect(r.out).not.toContain('FIVE'); // written to the pager, not to the terminal
  });

  it('TAKEBACK_PAGER wins over PAGER; preview is paged too; a LESS of the person is kept', () => {
    const got = path.join(sb.base, 'paged-preview.txt');
    fs.rmSync(got, { force: true });
    const r = underTerminal(['preview', '1'], { PAGER: '/bin/false', TAKEBACK_PAGER: recordingPager(got), LESS: '-S' });
    expect(r.code).toBe(0);
    const paged = fs.readFileSync(got, 'utf8');
    expect(paged.split('\n')[0]).toBe('LESS=-S');
    expect(paged).toMatch(/Undo 1 change/);
  });

  it('--no-pager, PAGER=cat and a pipe write straight to standard output', () => {
    const got = path.join(sb.base, 'paged-never.txt');
    fs.rmSync(got, { force: true });
    const pager = recordingPager(got);
    expect(underTerminal(['show', '1', '--no-pager'], { PAGER: pager }).out).toContain('FIVE');
    expect(underTerminal(['show', '1'], { PAGER: 'cat' }).out).toContain('FIVE');
    expect(sb.tb(['show', '1'], { env: { ...sb.env, PAGER: pager } }).stdout).toContain('FIVE');
    expect(fs.existsSync(got)).toBe(false);
  });

  it('a pager that cannot be started leaves the text written directly', () => {
    const r = underTerminal(['show', '1'], { PAGER: 'no-such-pager-anywhere' });
    expect(r.code).toBe(0);
    expect(r.out).toContain('FIVE');
  });
});
