#!/usr/bin/env node
// Builds the VS Code extension (`npm run build:vscode`): type-checks clients/vscode/src, bundles
// it with esbuild into dist/extension.js (one CommonJS file with vscode-languageclient and diff
// inside; `vscode` is the editor's), and packages dist/takeback.vsix with @vscode/vsce, which
// `takeback init vscode` installs. Prints the .vsix's path.
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

execFileSync(bin('tsc'), ['-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
await build({
  entryPoints: [join(here, 'src', 'extension.ts')],
  outfile: join(here, 'dist', 'extension.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'],
  logLevel: 'warning',
});
const vsix = join(here, 'dist', 'takeback.vsix');
// --no-dependencies: everything is in the bundle; no LICENSE or repository field of its own (the
// package's are takeback's).
execFileSync(bin('vsce'), ['package', '--no-dependencies', '--skip-license', '--allow-missing-repository', '-o', vsix], { cwd: here, stdio: ['ignore', 'ignore', 'inherit'] });
console.log(vsix);
