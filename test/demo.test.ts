// `npm run demo` (scripts/demo.mjs): runs it as a user would (after the build), checks that it
// succeeds quickly, prints the main job's key parts without colour on a pipe, and leaves a
// folder whose journal can be explored with the printed commands; and that it fails loudly
// (non-zero) when a step fails.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/claude.js';

const DEMO = path.join(REPO_ROOT, 'scripts', 'demo.mjs');
const BIN = path.join(REPO_ROOT, 'bin', 'takeback.js');
const leftovers: string[] = [];

function runDemo(env: NodeJS.ProcessEnv) {
  const started = Date.now();
  const r = spawnSync(process.execPath, [DEMO], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 90_000 });
  const base = /remove it all with: rm -rf (\S+)/.exec(r.stdout)?.[1] ?? /the scratch folder is left in (\S+)/.exec(r.stderr)?.[1];
  if (base) leftovers.push(base);
  return { ...r, base, ms: Date.now() - started };
}

afterAll(() => {
  for (const d of leftovers) fs.rmSync(d, { recursive: true, force: true });
});

describe('npm run demo', () => {
  const env = { ...process.env };
  delete env.FORCE_COLOR;
  delete env.TAKEBACK_HOME;

  it('succeeds in under a minute and shows list, preview, undo (files back, git clean) and redo', () => {
    const r = runDemo(env);
    expect(r.status, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
    expect(r.ms).toBeLessThan(60_000);
    const text = r.stdout;
    // Not a terminal: no colour.
    expect(text).not.toMatch(/\u001b\[/);
    // Where things are, and the session as the agent did it.
    expect(text).toMatch(/project: +\/\S+\/project/);
    expect(text).toMatch(/journal: +\/\S+\/takeback-home/);
    expect(text).toContain('17 hook events sent.');
    for (const part of [
      // takeback list: the two turns, one set per tool call, with sources
      '$ takeback list',
      'Turn t2 · "Move the helper up a level',
      'Turn t1 · "Add a helper that filters paths',
      'Write src/util/filter-paths.js',
      'Edit index.js',
      'Bash: sed -i',
      'Bash: rm legacy.js',
      'Bash: mv src/util/filter-paths.js src/filter-paths.js',
      'Edit package.json',
      // preview, undo, redo
      '$ takeback preview --turn 2',
      'src/filter-paths.js: remove (the agent created it)',
      '-  "version": "',
      'every file is byte for byte unchanged by the preview',
      '$ takeback undo --turn 2',
      'every file is byte for byte as it was after turn 1',
      'README.md is back to its original bytes',
      '$ takeback undo --turn 1',
      'legacy.js: bring back (the agent deleted it)',
      'every file is byte for byte as committed before the agent started',
      'git status: clean',
      '$ takeback redo --turn 1',
      '$ takeback redo --turn 2',
      'every file is byte for byte as the agent left it',
      'export TAKEBACK_HOME=',
      'Demo finished in',
    ])
      expect(text, part).toContain(part);
    // Headings come in order.
    const order = ['== 1.', '== 2.', '== 3.', '== 4.', '== 5.', '== 6.', '== 7.', '== 8.', '== Explore'].map((h) => text.indexOf(h));
    expect(order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1]!))).toBe(true);

    // The folder is left to explore: its journal answers the printed commands.
    expect(r.base).toBeTruthy();
    const project = path.join(r.base!, 'project');
    const list = spawnSync(process.execPath, [BIN, 'list', '--json'], {
      cwd: project,
      env: { ...env, TAKEBACK_HOME: path.join(r.base!, 'takeback-home') },
      encoding: 'utf8',
    });
    expect(list.status, list.stderr).toBe(0);
    const sets = JSON.parse(list.stdout).sets;
    expect(sets).toHaveLength(6);
    expect(sets.every((s: any) => s.state === 'applied')).toBe(true);
    expect(sets.map((s: any) => s.source.tool).reverse()).toEqual(['Write', 'Edit', 'Bash', 'Bash', 'Bash', 'Edit']);
    for (const s of sets) expect(s.source.toolCallId).toMatch(/^toolu_01[A-Za-z0-9]{22}$/);
    expect(fs.existsSync(path.join(project, 'src', 'filter-paths.js'))).toBe(true);
    expect(fs.existsSync(path.join(project, 'legacy.js'))).toBe(false);
  }, 90_000);

  it('exits non-zero when a step fails (here: no sed on PATH), and says so', () => {
    const r = runDemo({ ...env, PATH: '/nonexistent' });
    expect(r.status, r.stdout).toBe(1);
    expect(r.stderr).toMatch(/demo failed: .*sed/);
    expect(r.stdout).not.toContain('Demo finished');
  }, 90_000);
});
