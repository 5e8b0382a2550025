#!/usr/bin/env node
// The `takeback` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run automatically by `npm ci` / `npm install` through the `prepare` script), which also
// bundles the command line into one file (and the agent hook into others, smaller) that starts
// several times faster. A bundle older than the compiled modules (a bare `tsc` since) is not used.
//
// `takeback hook <agent>` runs the full hook (hook.bundle.js: SQLite, the journal) in this
// process. With the opt-in capture daemon (TAKEBACK_HOOK_DAEMON set), it first loads the
// forwarding client (forward.bundle.js: Node's own modules only), which hands the event to the
// daemon when one runs, and runs the full hook only when none takes it.
import { createRequire } from 'node:module';

// node:fs by `require`: importing it as an ES module also loads fs/promises and the file streams.
const { statSync } = createRequire(import.meta.url)('node:fs');

const args = process.argv.slice(2);
const hook = args.length === 2 && args[0] === 'hook';
const mtime = (file) => {
  try {
    return statSync(new URL(`../dist/server/cli/${file}`, import.meta.url)).mtimeMs;
  } catch {
    return -1;
  }
};
const entry = (name) => (mtime(`${name}.bundle.js`) >= mtime(`${name}.js`) ? `${name}.bundle.js` : `${name}.js`);
const load = (name) => import(`../dist/server/cli/${entry(name)}`);

// Which values turn the daemon on is the client's to say (daemon/address.ts); unset or 0, the
// default, the client is not even loaded.
const daemonAsked = hook && !['', '0'].includes(process.env.TAKEBACK_HOOK_DAEMON ?? '');

if (daemonAsked) {
  const inProcess = async (text) => (await load('hook')).runHook(args[1], text);
  let forward = null;
  try {
    forward = await load('forward');
  } catch {
    // No forwarding client (a partial build): the hook runs in this process, as it always could.
  }
  process.exitCode = forward ? await forward.runForwardedHook(args[1], inProcess) : (await load('hook')).runHook(args[1]);
} else if (hook) {
  process.exitCode = (await load('hook')).runHook(args[1]);
} else {
  process.exitCode = await (await load('main')).main(args);
}
