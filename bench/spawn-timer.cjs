// Times one command from a small process: `node bench/spawn-timer.cjs <cmd> [args…]` runs it as
// measure.mjs's `time` does (its stdin when BENCH_TIMER_INPUT=1, else none) and prints how long
// it took (ms) on stdout; it exits with the command's status. A process starting another pays a
// fork that grows with its own memory (Node's spawn forks): from a bench process that holds
// gigabytes (the 1,000,000-file tree's lists) that fork alone is tens of milliseconds a command,
// and would be counted as the command's. This process holds next to nothing.
'use strict';
const { spawnSync } = require('node:child_process');
const { readFileSync, writeSync } = require('node:fs');

const [cmd, ...args] = process.argv.slice(2);
const withInput = process.env.BENCH_TIMER_INPUT === '1';
const input = withInput ? readFileSync(0) : undefined;
const env = { ...process.env };
delete env.BENCH_TIMER_INPUT;
// One spawn first, not timed: a process's first spawnSync pays Node's own first-use costs (about
// 0.5 ms here), which the long-lived process of an agent running a hook does not, and which would
// be counted once for `git status` and twice for a hook pair.
spawnSync('/bin/sh', ['-c', ':'], { env, stdio: 'ignore' });
const t0 = process.hrtime.bigint();
const r = spawnSync(cmd, args, { env, input, stdio: [withInput ? 'pipe' : 'ignore', 'ignore', 'pipe'], maxBuffer: 1 << 30 });
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
if (r.error) {
  process.stderr.write(String(r.error));
  process.exit(127);
}
writeSync(1, `${ms}\n`);
if (r.status !== 0) process.stderr.write(String(r.stderr).slice(0, 2000));
process.exit(r.status ?? 1);
