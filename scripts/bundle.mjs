#!/usr/bin/env node
// Bundles the command line into one file per entry, after `tsc` (part of `npm run build`):
//   dist/server/cli/main.bundle.js   every command
//   dist/server/cli/hook.bundle.js   `takeback hook <agent>` alone (an agent runs it twice a file tool call)
//   dist/server/cli/forward.bundle.js  what a hook loads first: hands the event to the capture
//                                    daemon (Node's own modules only), else loads hook.bundle.js
// One file starts much faster than a hundred modules (bench/RESULTS.md). The bundles sit where
// the compiled modules do, so paths computed from `import.meta.url` (self.ts) stay right.
// better-sqlite3 is not bundled (a native addon): it is `require`d, which skips Node's CommonJS
// export scan; the sidecar is loaded lazily from the compiled modules (`serve` only).
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** `import Database from 'better-sqlite3'` becomes `require('better-sqlite3')`. */
const requireNative = {
  name: 'require-native',
  setup(b) {
    b.onResolve({ filter: /^better-sqlite3$/ }, (args) =>
      args.namespace === 'require-native' ? { path: args.path, external: true } : { path: args.path, namespace: 'require-native' },
    );
    b.onLoad({ filter: /.*/, namespace: 'require-native' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

await build({
  absWorkingDir: root,
  entryPoints: { 'main.bundle': 'server/cli/main.ts', 'hook.bundle': 'server/cli/hook.ts', 'forward.bundle': 'server/cli/forward.ts' },
  outdir: 'dist/server/cli',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  external: ['../sidecar/serve.js'],
  plugins: [requireNative],
  // jsonc-parser's "main" is a UMD build whose require()s a bundler cannot follow; its ES module
  // build is the same code.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
  // CommonJS dependencies (commander, ignore, write-file-atomic) call require() for Node's
  // modules, and write-file-atomic names its temporary files after __filename.
  banner: {
    js: [
      "import { createRequire as __takebackRequire } from 'node:module';",
      "import { fileURLToPath as __takebackPath } from 'node:url';",
      'const require = __takebackRequire(import.meta.url);',
      'const __filename = __takebackPath(import.meta.url);',
    ].join('\n'),
  },
  logLevel: 'warning',
});
