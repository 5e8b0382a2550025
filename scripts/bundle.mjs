#!/usr/bin/env node
// Bundles the command line into one file per entry, after `tsc` (part of `npm run build`):
//   dist/server/cli/main.bundle.cjs     every command
//   dist/server/cli/hook.bundle.cjs     `takeback hook <agent>` alone (an agent runs it twice a file tool call)
//   dist/server/cli/forward.bundle.cjs  what a hook loads first: hands the event to the capture
//                                       daemon (Node's own modules only), else loads hook.bundle.cjs
//   dist/server/cli/write-worker.bundle.cjs  the undo/redo write pool's worker thread
//                                       (plan/write-worker.ts), which plan/jobs.ts starts by path
//   dist/server/cli/stat-worker.bundle.cjs   the scan's stat worker thread (scan/stat-worker.ts),
//                                       which scan/stat-check.ts starts by path (see worker-file.ts)
//   dist/server/cli/pending-worker.bundle.cjs the background baseline's worker thread
//                                       (scan/pending-worker.ts), which scan/pending-reader.ts starts by path
// One file starts much faster than a hundred modules (bench/RESULTS.md). The bundles sit where
// the compiled modules do, so paths computed from `import.meta.url` (self.ts) stay right.
//
// CommonJS, not ES modules: bin/takeback.js compiles a bundle itself (node:vm) with V8's code
// cache, which only a classic script can use; `import.meta.url` becomes the bundle's own URL.
// A bundle must not call `import()` (a script compiled by node:vm cannot, without a flag): the
// build fails if one does, except `main.ts`'s import of the sidecar, which bin/takeback.js
// replaces (see `MainOptions.loadSidecar`). Node's own modules other than the few every command
// needs are loaded on first use (lazyBuiltins below), and better-sqlite3's JavaScript is bundled
// with its addon loaded by path (sqliteAddon below), which skips the `bindings` package's search.
import { build } from 'esbuild';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));

/** Node modules loaded as soon as a bundle starts: every command uses them, and they cost little. */
const EAGER = new Set(['fs', 'path', 'module', 'url', 'process', 'buffer', 'events', 'util', 'string_decoder', 'timers']);

/**
 * `import { spawn } from 'node:child_process'` becomes an object whose properties load the module
 * on first use: a command that never spawns (list, show, a hook's file tool) never pays for
 * loading child_process (and net, dgram, streams), crypto, zlib, worker_threads, os… The names
 * are this Node's (the one building); a name another Node lacks reads as undefined there, as it
 * would from the module itself.
 */
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (!builtinModules.includes(name) || EAGER.has(name)) return undefined;
      if (args.namespace === 'lazy-builtin') return { path: `node:${name}`, external: true };
      return { path: name, namespace: 'lazy-builtin' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => {
      const keys = Object.keys(require(`node:${args.path}`)).filter((k) => k !== 'default' && k !== '__esModule');
      return {
        loader: 'js',
        contents: [
          'let loaded;',
          `const load = () => (loaded ??= require(${JSON.stringify(`node:${args.path}`)}));`,
          `for (const k of ${JSON.stringify(keys)}) Object.defineProperty(exports, k, { enumerable: true, get: () => load()[k] });`,
        ].join('\n'),
      };
    });
  },
};

/**
 * better-sqlite3 finds its addon with the `bindings` package, which walks a dozen candidate
 * paths (and a stack trace) on every start. Bundled, its JavaScript is compiled with the rest (and
 * code-cached); the addon is required by its path in better-sqlite3's own folder, found through
 * Node's resolution from the bundle (as `require('better-sqlite3')` would find the package), and
 * `bindings` remains the fallback for a build that put the addon elsewhere.
 */
const sqliteAddon = {
  name: 'sqlite-addon',
  setup(b) {
    b.onLoad({ filter: /better-sqlite3[\\/]lib[\\/]database\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const call = "require('bindings')('better_sqlite3.node')";
      if (!text.includes(call)) throw new Error(`${args.path}: no ${call} to replace (a new better-sqlite3? see scripts/bundle.mjs)`);
      const replacement = `(() => {
        let root = null;
        try {
          root = path.dirname(require.resolve('better-sqlite3/package.json'));
          return require(path.join(root, 'build', 'Release', 'better_sqlite3.node'));
        } catch {
          return require('bindings')(root ? { bindings: 'better_sqlite3.node', module_root: root } : 'better_sqlite3.node');
        }
      })()`;
      return { contents: text.replace(call, replacement), loader: 'js' };
    });
  },
};

/** An `import()` left in a bundle: allowed only for the sidecar (main.ts), which bin/takeback.js loads. */
const ALLOWED_IMPORTS = ['import("../sidecar/serve.js")'];

// The ES module bundles of earlier builds (*.bundle.js), which nothing loads any more.
for (const name of ['main', 'hook', 'forward']) for (const ext of ['.js', '.js.map']) rmSync(join(root, 'dist/server/cli', `${name}.bundle${ext}`), { force: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: {
    'main.bundle': 'server/cli/main.ts',
    'hook.bundle': 'server/cli/hook.ts',
    'forward.bundle': 'server/cli/forward.ts',
    'write-worker.bundle': 'server/core/plan/write-worker.ts',
    'stat-worker.bundle': 'server/core/scan/stat-worker.ts',
    'pending-worker.bundle': 'server/core/scan/pending-worker.ts',
  },
  outdir: 'dist/server/cli',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  // Whitespace and comments out: a third less to read and hold at every start (names are kept,
  // and the source map gives the lines back).
  minifyWhitespace: true,
  write: true,
  metafile: true,
  // The sidecar (and its LSP libraries) stays in the compiled modules: `serve` only.
  external: ['../sidecar/serve.js', 'better-sqlite3/package.json'],
  plugins: [lazyBuiltins, sqliteAddon],
  // jsonc-parser's "main" is a UMD build whose require()s a bundler cannot follow; its ES module
  // build is the same code.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
  define: { 'import.meta.url': '__takebackUrl' },
  banner: { js: "var __takebackUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});

for (const out of Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.cjs'))) {
  let text = readFileSync(join(root, out), 'utf8');
  // ASCII only, so that V8 holds the source in one byte a character, not two: esbuild escapes
  // strings but leaves regular expression literals (`/[✓✘]/`) as written. `\uXXXX` means the same
  // character there (with or without the u flag), in strings, templates and names alike. (The
  // source map's columns on those few lines move by a few characters.)
  const ascii = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (ascii !== text) writeFileSync(join(root, out), (text = ascii));
  const left = (text.match(/\bimport\s*\([^)]*\)/g) ?? []).filter((m) => !ALLOWED_IMPORTS.includes(m.replace(/\s+/g, '')));
  if (left.length) throw new Error(`${out}: import() cannot run in a bundle bin/takeback.js compiles: ${left.join(', ')}`);
}
