#!/bin/sh
':' //; if [ $# = 2 ] && [ "$1" = hook ]; then f=$0; if [ -L "$f" ]; then for p in "${f%/*}/../lib/node_modules/takeback/bin/takeback.js" "${f%/*}/../takeback/bin/takeback.js"; do if [ "$f" -ef "$p" ]; then f=$p; break; fi; done; fi; while [ -L "$f" ]; do l=$(readlink "$f") || break; case $l in /*) f=$l ;; *) f=${f%/*}/$l ;; esac; done; case $f in */*) ;; *) f=./$f ;; esac; c=${f%/*}/../native/build-hook/takeback-hook; if [ -x "$c" ]; then [ -n "$NODE_EXTRA_CA_CERTS" ] && TAKEBACK_CA_CERTS=$NODE_EXTRA_CA_CERTS NODE_EXTRA_CA_CERTS= exec "$c" "$0" "$2"; exec "$c" "$0" "$2"; fi; fi
':' //; [ -n "$NODE_EXTRA_CA_CERTS" ] && TAKEBACK_CA_CERTS=$NODE_EXTRA_CA_CERTS NODE_EXTRA_CA_CERTS= exec node "$0" "$@"; exec node "$0" "$@"
// The `takeback` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run automatically by `npm ci` / `npm install` through the `prepare` script), which also
// bundles the command line into one file (and the agent hook into others, smaller) that starts
// several times faster (scripts/bundle.mjs). A bundle older than the compiled modules (a bare
// `tsc` since) is not used: the compiled modules are imported instead.
//
// `takeback hook <agent>` runs the full hook (hook.bundle.cjs: SQLite, the journal) in this
// process at once when the capture daemon is turned off (TAKEBACK_HOOK_DAEMON=0); otherwise it first loads the
// forwarding client (forward.bundle.cjs: Node's own modules only), which hands the event to the
// daemon when one runs, and runs the full hook only when none takes it.
//
// A bundle is compiled here (node:vm) with V8's code cache: compiling a few hundred kilobytes of
// JavaScript was most of what takeback added to Node's own start. After a command that succeeded,
// the code V8 compiled for it (the bundle's top level and every function that ran) is written to
// `$TAKEBACK_HOME/cache/` (0700, files 0600), one file per bundle and command, and the next run of
// that command starts from it. A cache file names the bundle it was made from (path, size,
// mtime, ctime, inode) and the Node that made it; any other bundle — a rebuild, an upgrade in
// place, a file copied over — finds it stale and compiles from source, so old code never runs.
// A bundle changed in the last seconds is not cached: a file rewritten in place within one tick
// of the file system's clock keeps its times, and one that has not moved for longer cannot be
// rewritten without its ctime moving on. V8 checks the rest (its own version and flags) and
// rejects a cache it cannot use; that one is rewritten. TAKEBACK_CODE_CACHE=0 turns the cache off;
// an absolute path there puts it in that folder instead (one cache for several homes).
//
// This file is CommonJS (bin/package.json): Node starts a CommonJS script several milliseconds
// sooner than an ES module, whose loader it would otherwise set up first.
'use strict';
// The first three lines start Node from /bin/sh (`takeback` run as a command; `node bin/takeback.js`
// skips them). `takeback hook <agent>` execs the hook client instead when `npm ci` built it
// (native/build-hook/takeback-hook, found beside this script once the symlinks on PATH that lead
// here are followed; npm's two links, `<prefix>/bin/takeback` to `../lib/node_modules/takeback/…`
// and `node_modules/.bin/takeback` to `../takeback/…`, are recognised with the shell's own `-ef`
// before any `readlink` is forked, a few milliseconds a hook): it hands the event to the capture
// daemon without starting Node, and starts
// Node (this script, the same stdin) only when no daemon takes it (native/hook-client.c). Node
// itself starts with NODE_EXTRA_CA_CERTS emptied, since Node 20 builds its whole CA store at start
// whenever that variable is set (≈ 50 ms of an ≈ 80 ms start where it is: bench/RESULTS.md) and
// takeback makes no TLS connection. Its value is passed on in TAKEBACK_CA_CERTS and put back
// here, so that every program takeback starts (`takeback run -- npm install`) gets it as it was.
if (process.env.TAKEBACK_CA_CERTS !== undefined) {
  process.env.NODE_EXTRA_CA_CERTS = process.env.TAKEBACK_CA_CERTS;
  delete process.env.TAKEBACK_CA_CERTS;
}
const { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { dirname, isAbsolute, join } = require('node:path');
const { fileURLToPath, pathToFileURL } = require('node:url');

const args = process.argv.slice(2);
const hook = args.length === 2 && args[0] === 'hook';
const DIST = pathToFileURL(join(__dirname, '..', 'dist', 'server', 'cli', '/'));

const stat = (file) => {
  try {
    return statSync(file);
  } catch {
    return null;
  }
};

/**
 * The code cache's folder: the one TAKEBACK_CODE_CACHE names (an absolute path; several homes may
 * share it, since each file names the bundle and the Node it was made from), else
 * `$TAKEBACK_HOME/cache` as server/core/home.ts resolves the home; null when the cache is off
 * (`TAKEBACK_CODE_CACHE=0`) or no home can be found.
 */
function cacheDir() {
  const env = process.env;
  const asked = env.TAKEBACK_CODE_CACHE;
  if (asked === '0') return null;
  if (asked && isAbsolute(asked)) return asked;
  const home = env.TAKEBACK_HOME || (env.XDG_STATE_HOME ? join(env.XDG_STATE_HOME, 'takeback') : env.HOME ? join(env.HOME, '.local', 'state', 'takeback') : null);
  return home ? join(home, 'cache') : null;
}

/** A short name for `text` in a file name (FNV-1a, 32 bits, hex): the cache file's header says exactly what it holds. */
function shortHash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** What a cache file of `file` (its stat `st`) must begin with: one line, padded to 8 bytes (V8 reads the rest in place). */
function cacheHeader(file, st) {
  const line = `takeback-code-cache 1 ${process.version} ${process.arch} ${st.size} ${st.mtimeMs} ${st.ctimeMs} ${st.ino} ${st.dev} ${file}`;
  return Buffer.from(`${line}${' '.repeat(7 - ((Buffer.byteLength(line) + 7) % 8))}\n`);
}

/** Bundles run by this process whose code cache is to be written once the command succeeded. */
const toSave = [];

/** How long a bundle must have stayed as it is before its code is cached (ms): longer than any file system's clock tick (FAT's is 2 s). */
const SETTLED_MS = 3000;

/**
 * Runs the CommonJS bundle `file` (its stat `st`) and returns its exports, with the code cache
 * of `cacheName` (a bundle and a command: `main-list`), when there is one for this very bundle;
 * `cacheName` null: no cache is read or written (a long-running `serve`).
 */
function runBundle(file, st, cacheName) {
  const dir = cacheName ? cacheDir() : null;
  const cache = dir ? join(dir, `${cacheName}-${shortHash(`${file} ${process.version} ${process.arch}`)}.v8`) : null;
  const header = cache ? cacheHeader(file, st) : null;
  let cachedData;
  if (cache) {
    try {
      const bytes = readFileSync(cache);
      if (bytes.length > header.length && bytes.subarray(0, header.length).equals(header)) cachedData = bytes.subarray(header.length);
    } catch {
      // No cache yet, or unreadable: compile from source.
    }
  }
  const { Script } = require('node:vm');
  const source = readFileSync(file, 'utf8');
  // The CommonJS wrapper on the bundle's first line, so that line numbers stay the bundle's.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: file, cachedData });
  const settled = Date.now() - Math.max(st.ctimeMs, st.mtimeMs) > SETTLED_MS;
  if (cache && settled && (cachedData === undefined || script.cachedDataRejected)) toSave.push({ script, cache, header });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  return module.exports;
}

/** Writes the code caches of the bundles this process compiled from source. Never throws. */
function saveCaches() {
  for (const { script, cache, header } of toSave.splice(0)) {
    const tmp = `${cache}.${process.pid}.tmp`;
    try {
      const data = script.createCachedData();
      mkdirSync(dirname(cache), { recursive: true, mode: 0o700 });
      writeFileSync(tmp, Buffer.concat([header, data]), { mode: 0o600 });
      renameSync(tmp, cache);
    } catch {
      try {
        unlinkSync(tmp);
      } catch {
        // Never written.
      }
    }
  }
}

/**
 * The commands of main.bundle whose code is cached (one cache each). Not `serve` and
 * `hook-daemon`, which run for long, nor `gc`, which a hook starts in the background: nobody
 * waits for them, and a cache written as they end would land in a home that may be going away.
 */
const CACHED_COMMANDS = new Set(['list', 'show', 'preview', 'undo', 'redo', 'run', 'capture', 'turn', 'doctor', 'hook', 'init', 'version', 'help']);

/** The command `argv` runs (`list`, `version`, `help` for any `--help`, …), for naming its code cache. */
function commandOf(argv) {
  if (argv.includes('-h') || argv.includes('--help')) return 'help';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-w' || a === '--workspace') i++;
    else if (a === '-V' || a === '--version') return 'version';
    else if (!a.startsWith('-')) return a;
  }
  return 'help';
}

/**
 * The exports of entry `name` (`main`, `hook`, `forward`): its bundle (dist/server/cli/NAME.bundle.cjs),
 * or the compiled module NAME.js when the bundle is missing or older. `command` names the cache.
 */
async function load(name, command) {
  const bundle = fileURLToPath(new URL(`${name}.bundle.cjs`, DIST));
  const st = stat(bundle);
  const modules = stat(fileURLToPath(new URL(`${name}.js`, DIST)));
  if (st && (!modules || st.mtimeMs >= modules.mtimeMs)) return runBundle(bundle, st, command ? `${name}-${command}` : null);
  return import(new URL(`${name}.js`, DIST).href);
}

// The capture daemon is on unless TAKEBACK_HOOK_DAEMON turns it off (the values of SWITCH_OFF in
// core/switch.ts); off, the forwarding client is not even loaded.
const daemonAsked = hook && !['0', 'false', 'off', 'no'].includes((process.env.TAKEBACK_HOOK_DAEMON ?? '').toLowerCase());

/** Runs the command (or the hook) and sets the exit code; writes the code caches when it succeeded. */
async function run() {
  if (daemonAsked) {
    const inProcess = async (text) => (await load('hook', 'hook')).runHook(args[1], text);
    let forward = null;
    try {
      forward = await load('forward', 'hook');
    } catch {
      // No forwarding client (a partial build): the hook runs in this process, as it always could.
    }
    process.exitCode = forward ? await forward.runForwardedHook(args[1], inProcess) : (await load('hook', 'hook')).runHook(args[1]);
  } else if (hook) {
    process.exitCode = (await load('hook', 'hook')).runHook(args[1]);
  } else {
    const command = commandOf(args);
    const { main } = await load('main', CACHED_COMMANDS.has(command) ? command : null);
    // The sidecar is not in the bundle (server/cli/main.ts, `serve`): its compiled module, by URL.
    process.exitCode = await main(args, { loadSidecar: () => import(new URL('../sidecar/serve.js', DIST).href) });
  }
  if (!process.exitCode) saveCaches();
}

run().catch((e) => {
  // What an ES module's top level would have done with an uncaught error.
  process.exitCode = 1;
  console.error(e);
});
