// Builds takeback's native scan check (native/scan-check.c, a Node-API module) with the node-gyp
// that npm carries, when `npm ci` / `npm install` runs this package's install script. It is an
// optional speed-up: without a compiler, or on a platform it does not build on, the warm scan
// runs its JavaScript check (server/core/scan/stat-check.ts) instead. So this never fails the
// install: it says what happened, in one line, and exits 0.
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
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

if (process.platform === 'win32' || process.env.TAKEBACK_NATIVE === '0') {
  say('native scan check not built (the JavaScript one is used)');
} else {
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
    else {
      // The first line that says why (a compiler error, no Python, no headers), not gyp's closing boilerplate.
      const lines = `${r.stderr ?? ''}\n${r.stdout ?? ''}`.split('\n').map((l) => l.trim()).filter(Boolean);
      const boiler = /gyp ERR! (stack|System|command|cwd|node -v|node-gyp -v|not ok)|^gyp info/;
      const why = lines.find((l) => /error|not found|find Python|ENOENT|EACCES/i.test(l) && !boiler.test(l)) ?? lines.find((l) => !boiler.test(l)) ?? String(r.error ?? `exit ${r.status}`);
      say(`native scan check not built (the JavaScript one is used): ${why}`);
    }
  }
}
