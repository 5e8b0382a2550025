// Runs the exact script of README.md ("Headless JSON-RPC (scripts)") against the
// built `takeback` (npm run build first; npm test does), found on PATH as the document says.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-headless-')));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

it('the script in README.md captures a command, lists, previews and undoes it', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Headless JSON-RPC (scripts)'));
  const script = section.match(/```js\n([\s\S]*?)```/)![1]!;
  // The script's folder: with the project's node_modules beside it, as in a project that depends on vscode-jsonrpc.
  const dir = path.join(base, 'script');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'headless.mjs'), script);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  // `takeback` on PATH: this build.
  const bin = path.join(base, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(path.join(ROOT, 'bin', 'takeback.js'), path.join(bin, 'takeback'));
  // The workspace.
  const ws = path.join(base, 'ws');
  fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
  const text = 'The quick brown fox.\n';
  fs.writeFileSync(path.join(ws, 'notes.txt'), text);

  const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}`, TAKEBACK_HOME: path.join(base, 'home') };
  const r = spawnSync(process.execPath, [path.join(dir, 'headless.mjs')], { cwd: ws, env, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  const out = r.stdout;
  expect(out).toContain("recorded change 1: sed -i 's/quick/slow/' notes.txt (+1 -1)");
  expect(out).toContain("#1 applied: sed -i 's/quick/slow/' notes.txt");
  expect(out).toContain('-The slow brown fox.');
  expect(out).toContain('+The quick brown fox.');
  expect(out).toContain('undone: notes.txt');
  expect(out).toContain('(journal changed: undone)');
  expect(fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8')).toBe(text);
});
