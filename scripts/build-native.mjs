// Builds takeback's native parts when `npm ci` / `npm install` runs this package's install script:
// the scan check (native/scan-check.c, a Node-API module) with the node-gyp that npm carries, and
// the hook client (native/hook-client.c, a program of its own that bin/takeback.js runs for
// `takeback hook` instead of Node while the capture daemon runs) with the same C compiler
// (`$CC`, else `cc`, as node-gyp's make uses). Both are optional speed-ups: without a compiler, or
// on a platform they do not build on, the warm scan runs its JavaScript check
// (server/core/scan/stat-check.ts) and a hook starts Node. So this never fails the install: it
// says what happened, one line for each, and exits 0.
//
//   node scripts/build-native.mjs        both
//   node scripts/build-native.mjs hook   the hook client alone (into native/build-hook/)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const native = join(dirname(fileURLToPath(import.meta.url)), '..', 'native');
const say = (s) => process.stderr.write(`takeback: ${s}\n`);

function nodeGyp() {
  // npm says where its node-gyp is to the scripts it runs; else look beside the npm on PATH.
  if (process.env.npm_config_node_gyp && existsSync(process.env.npm_config_node_gyp)) return process.env.npm_config_node_gyp;
  const npmClis = [process.env.npm_execpath];
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      if (dir) npmClis.push(realpathSync(join(dir, 'npm'))); // bin/npm-cli.js in npm's own folder
    } catch {
      // no npm there
    }
  }
  for (const npmCli of npmClis) {
    if (!npmCli) continue;
    const guess = join(dirname(npmCli), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    if (existsSync(guess)) return guess;
  }
  return null;
}

/** The first line of a compiler's or gyp's output that says why it failed, not its closing boilerplate. */
function whyFailed(r) {
  const lines = `${r.stderr ?? ''}\n${r.stdout ?? ''}`.split('\n').map((l) => l.trim()).filter(Boolean);
  const boiler = /gyp ERR! (stack|System|command|cwd|node -v|node-gyp -v|not ok)|^gyp info/;
  return lines.find((l) => /error|not found|find Python|ENOENT|EACCES/i.test(l) && !boiler.test(l)) ?? lines.find((l) => !boiler.test(l)) ?? String(r.error ?? `exit ${r.status}`);
}

/**
 * Compiles the hook client to native/build-hook/takeback-hook (through a temporary name, so that
 * a hook running meanwhile finds the old program or the new one, never half of one). A failed
 * build leaves no program: hooks start Node, as without one.
 */
function buildHookClient() {
  const out = join(native, 'build-hook');
  const program = join(out, 'takeback-hook');
  const tmp = `${program}.${process.pid}.tmp`;
  // Where CC is not set: musl's static C library first, where musl-gcc is installed (Debian's
  // musl-tools), then the system's own. A hook is a process start, and a static program has no
  // dynamic loader to run (no libraries to find, map and relocate), and musl's start-up touches
  // 4 pages of memory where glibc's, even linked statically, touches 26 (`perf stat`, the program
  // given no event): where a page fault is a trip through the host, as in a virtual machine with
  // page-table isolation, that is ≈ 0.5–0.7 ms a hook (bench/hook-floor.mjs, bench/RESULTS.md). Each
  // is tried until one builds a program that runs.
  const attempts = process.env.CC ? [[process.env.CC, ['-static']], [process.env.CC, []]] : [['musl-gcc', ['-static']], ['cc', ['-static']], ['cc', []]];
  let cc = attempts[0][0];
  try {
    mkdirSync(out, { recursive: true });
    const compile = (extra) => spawnSync(cc, ['-O2', '-std=c11', '-Wall', '-Wextra', '-Wno-unused-parameter', ...extra, '-o', tmp, join(native, 'hook-client.c')], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 120_000 });
    // Run once with no event (it then does nothing and exits 0): a program this machine cannot
    // run would make /bin/sh fail every hook, where no program makes it start Node.
    const runsHere = () => spawnSync(tmp, [], { stdio: 'ignore', timeout: 10_000 }).status === 0;
    let r;
    let runs = false;
    for (const [compiler, extra] of attempts) {
      cc = compiler;
      r = compile(extra);
      runs = r.status === 0 && runsHere();
      if (runs) break;
    }
    if (runs) {
      renameSync(tmp, program);
      say('hook client built (native/build-hook/takeback-hook)');
      return;
    }
    rmSync(tmp, { force: true });
    rmSync(program, { force: true });
    say(`hook client not built (hooks start Node): ${r.status === 0 ? 'the program built does not run here' : r.error?.code === 'ENOENT' ? `no C compiler (${cc})` : whyFailed(r)}`);
  } catch (e) {
    rmSync(tmp, { force: true });
    say(`hook client not built (hooks start Node): ${e.message}`);
  }
}

const hookOnly = process.argv[2] === 'hook';
if (process.platform === 'win32' || process.env.TAKEBACK_NATIVE === '0') {
  say('native scan check and hook client not built (the JavaScript check is used, hooks start Node)');
} else if (hookOnly) {
  buildHookClient();
} else {
  buildHookClient();
  const gyp = nodeGyp();
  if (!gyp) {
    say("native scan check not built: npm's node-gyp not found (the JavaScript one is used)");
  } else {
    // Node's headers: where npm is told (npm_config_nodedir), else the system's own when it has
    // them (node-gyp would otherwise download them, which an offline machine cannot).
    const nodedir = !process.env.npm_config_nodedir && existsSync('/usr/include/node/node_api.h') ? ['--nodedir=/usr'] : [];
    // At most five minutes (node-gyp may try to download Node's headers through a proxy that never answers).
    const r = spawnSync(process.execPath, [gyp, 'rebuild', '--loglevel=warn', ...nodedir], { cwd: native, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 300_000 });
    if (r.status === 0) say('native scan check built (native/build/Release/takeback_native.node)');
    // The first line that says why (a compiler error, no Python, no headers).
    else say(`native scan check not built (the JavaScript one is used): ${whyFailed(r)}`);
  }
}
