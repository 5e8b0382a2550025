#!/usr/bin/env node
// The floor of a hook under the capture daemon: what one `takeback hook claude-code` costs as the
// agent runs it when the daemon answers at once, i.e. the processes alone. A stand-in daemon on the
// socket of a fresh TAKEBACK_HOME claims every event and answers {"ok":true} as soon as it is told
// "go"; each hook is timed from its spawn to its exit, alternated step by step. The agent's shell
// is `sh -c`, as Claude Code runs hook commands (bench/measure.mjs, AGENT_SHELL):
//
//   sh        `sh -c true`: the agent's shell alone
//   plain     `sh -c 'if command -v takeback …; then takeback hook claude-code; fi'` (takeback on
//             PATH through npm's links, as `npm i -g` makes them): the command without `exec`
//   shared    the same with `exec takeback` (no fork of the shell for it): what init writes in a
//             file the team may commit
//   personal  `sh -c 'if [ -x <client> ] && [ -f <script> ]; then exec <client> <script>
//             claude-code; elif …'`: what init writes in a person's own file (the default)
//   script    `takeback hook claude-code` run as a command: bin/takeback.js's /bin/sh lines, then the client
//   client    native/build-hook/takeback-hook <script> claude-code: the hook client alone
//   git       `git status --porcelain` on the bench's 1,800-file tree, when it is generated (the target's measure)
//
// node bench/hook-floor.mjs [runs]     (default 200 runs of each; medians and 90th percentiles, ms)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_SHELL, npmGlobalLink } from './measure.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'takeback.js');
const CLIENT = join(ROOT, 'native', 'build-hook', 'takeback-hook');
const RUNS = Number(process.argv[2]) > 0 ? Number(process.argv[2]) : 200;
const { socketPath } = await import(join(ROOT, 'dist', 'server', 'daemon', 'address.js'));
const { hookCommandLine } = await import(join(ROOT, 'dist', 'server', 'agents', 'hook-command.js'));
const { HOOK_ENV_PREFIX } = await import(join(ROOT, 'dist', 'server', 'cli', 'self.js'));

if (!existsSync(CLIENT)) {
  process.stderr.write('hook-floor: the hook client is not built (native/build-hook/takeback-hook)\n');
  process.exit(1);
}

const base = mkdtempSync(join(tmpdir(), 'takeback-floor-'));
const home = join(base, 'home');
const ws = join(base, 'ws');
mkdirSync(ws, { recursive: true });
mkdirSync(join(home, 'run'), { recursive: true, mode: 0o700 });
const bin = npmGlobalLink(join(base, 'prefix'), ROOT);
const env = { PATH: `${bin}:${process.env.PATH}`, HOME: base, TAKEBACK_HOME: home, LANG: 'C.UTF-8' };

// The stand-in daemon: claim, then ok once told "go".
const server = createServer((sock) => {
  sock.setEncoding('utf8');
  let buf = '';
  sock.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.includes('"go"')) sock.end('{"ok":true}\n');
      else sock.write('{"claim":true}\n');
    }
  });
  sock.on('error', () => {});
});
await new Promise((r) => server.listen(socketPath(home), r));

const q = (w) => `'${w.replace(/'/g, "'\\''")}'`;
const plain = hookCommandLine('claude-code', { kind: 'path' }, HOOK_ENV_PREFIX);
const shared = hookCommandLine('claude-code', { kind: 'path' }, HOOK_ENV_PREFIX, { exec: true });
const personal = hookCommandLine('claude-code', { kind: 'client', client: q(CLIENT), bin: q(BIN) }, HOOK_ENV_PREFIX, { exec: true });
const event = JSON.stringify({ session_id: 'floor', cwd: ws, hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: 'toolu_floor', tool_input: { command: 'true' }, tool_response: {} });
const CACHE = process.env.TAKEBACK_BENCH_CACHE || join(tmpdir(), 'takeback-bench');
const tree = join(CACHE, 'gen-1800-v1');
const ways = {
  sh: [AGENT_SHELL, ['-c', 'true']],
  plain: [AGENT_SHELL, ['-c', plain]],
  shared: [AGENT_SHELL, ['-c', shared]],
  personal: [AGENT_SHELL, ['-c', personal]],
  script: [join(bin, 'takeback'), ['hook', 'claude-code']],
  client: [CLIENT, [join(bin, 'takeback'), 'claude-code']],
  ...(existsSync(join(tree, '.complete')) ? { git: ['git', ['-C', tree, '--no-optional-locks', 'status', '--porcelain']] } : {}),
};

function once([file, args]) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const child = spawn(file, args, { cwd: ws, env, stdio: ['pipe', 'ignore', 'inherit'] });
    child.stdin.on('error', () => {});
    child.stdin.end(event);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t) / 1e6) : reject(new Error(`${file} exited ${code}`))));
  });
}

const times = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
const load = [loadavg()[0]];
for (let i = 0; i < RUNS; i++) for (const [k, w] of Object.entries(ways)) times[k].push(await once(w));
load.push(loadavg()[0]);
server.close();
rmSync(base, { recursive: true, force: true });

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
process.stdout.write(`hook floor, ${RUNS} runs each, alternated; load average ${load.map((l) => l.toFixed(1)).join(' → ')}\n`);
for (const [k, xs] of Object.entries(times)) process.stdout.write(`${k.padEnd(8)} median ${pct(xs, 0.5).toFixed(2)} ms, p90 ${pct(xs, 0.9).toFixed(2)} ms\n`);
process.stdout.write(`shared: ${shared}\npersonal: ${personal}\n`);
