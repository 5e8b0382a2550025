#!/usr/bin/env node
// The floor of a hook under the capture daemon: what one `takeback hook claude-code` costs as the
// agent runs it when the daemon answers at once, i.e. the processes alone. A stand-in daemon on the
// socket of a fresh TAKEBACK_HOME claims every event and answers {"ok":true} as soon as it is told
// "go"; each hook is timed from its spawn to its exit, alternated step by step:
//
//   bash      `bash -c true`: the agent's shell alone
//   plain     `bash -c 'if command -v takeback …; then takeback hook claude-code; fi'` (takeback on
//             PATH through a symlink, as npm makes it): the command without `exec`
//   init      the same with `exec takeback` (no fork of bash for it): what init writes for Claude Code
//   script    `takeback hook claude-code` run as a command: bin/takeback.js's /bin/sh lines, then the client
//   client    native/build-hook/takeback-hook <script> claude-code: the hook client alone
//   git       `git status --porcelain` on the bench's 1,800-file tree, when it is generated (the target's measure)
//
// node bench/hook-floor.mjs [runs]     (default 200 runs of each; medians and 90th percentiles, ms)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
const bin = join(base, 'bin');
for (const d of [ws, bin]) mkdirSync(d, { recursive: true });
mkdirSync(join(home, 'run'), { recursive: true, mode: 0o700 });
symlinkSync(BIN, join(bin, 'takeback'));
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

const plain = hookCommandLine('claude-code', { kind: 'path' }, HOOK_ENV_PREFIX);
const command = hookCommandLine('claude-code', { kind: 'path' }, HOOK_ENV_PREFIX, { exec: true });
const event = JSON.stringify({ session_id: 'floor', cwd: ws, hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: 'toolu_floor', tool_input: { command: 'true' }, tool_response: {} });
const CACHE = process.env.TAKEBACK_BENCH_CACHE || join(tmpdir(), 'takeback-bench');
const tree = join(CACHE, 'gen-1800-v1');
const ways = {
  bash: ['bash', ['-c', 'true']],
  plain: ['bash', ['-c', plain]],
  init: ['bash', ['-c', command]],
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

const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
process.stdout.write(`hook floor, ${RUNS} runs each, alternated; load average ${load.map((l) => l.toFixed(1)).join(' → ')}\n`);
for (const [k, xs] of Object.entries(times)) process.stdout.write(`${k.padEnd(7)} median ${q(xs, 0.5).toFixed(2)} ms, p90 ${q(xs, 0.9).toFixed(2)} ms\n`);
process.stdout.write(`command: ${command}\n`);
