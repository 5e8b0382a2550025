#!/usr/bin/env node
// The `takeback` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run automatically by `npm ci` / `npm install` through the `prepare` script), which also
// bundles the command line into one file (and the agent hook into another, smaller one) that
// starts several times faster. A bundle older than the compiled modules (a bare `tsc` since)
// is not used.
import { statSync } from 'node:fs';

const args = process.argv.slice(2);
const hook = args.length === 2 && args[0] === 'hook';
const name = hook ? 'hook' : 'main';
const mtime = (file) => {
  try {
    return statSync(new URL(`../dist/server/cli/${file}`, import.meta.url)).mtimeMs;
  } catch {
    return -1;
  }
};
const entry = mtime(`${name}.bundle.js`) >= mtime(`${name}.js`) ? `${name}.bundle.js` : `${name}.js`;
const mod = await import(`../dist/server/cli/${entry}`);
process.exitCode = hook ? mod.runHook(args[1]) : await mod.main(args);
