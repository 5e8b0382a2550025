#!/usr/bin/env node
// The `takeback` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run automatically by `npm ci` / `npm install` through the `prepare` script).
import { main } from '../dist/server/cli/main.js';
main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
