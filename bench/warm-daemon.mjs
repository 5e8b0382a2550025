#!/usr/bin/env node
// The warm bracket of the capture daemon alone (issue 18 §3), for profiling and before/after runs:
// one shell tool call's PreToolUse + PostToolUse through the default hooks (the hook client when
// built) to a daemon whose watcher is trusted, on a generated tree, 10 tracked files appended by the
// "command" and put back after, as bench/million.mjs does but without the CLI rows and the cold
// snapshot of a new CLI journal. Per call it prints the hooks' wall, the daemon's CPU over the call
// (its threads' time on CPU from /proc, read once the daemon has logged both events), and the daemon's own
// per-event figures from its debug log (`watch: ... before the event`, `event: handled in`).
//
//   node bench/warm-daemon.mjs --root=<takeback checkout> --ws=<tree> --watcher=parcel|watchman
//        [--home=<TAKEBACK_HOME, reused when given>] [--calls=6] [--prof=<folder for --cpu-prof>]
//        [--interval=<µs between samples, 250>] [--json=<file to append a line of results to>]
//        [--git: `git status` before each timed call, as bench/million.mjs] [--watchman-sock=<a server's socket to use>]
//        [--same-bytes: the command rewrites the files with the bytes they have]
//
//        [--node-args="<flags for the daemon's Node>"]
//
// The tree is changed only by appends to 10 tracked files (chosen by a fixed stride), each put back
// byte for byte after its call, and by the watcher's cookie; git's index is refreshed at the start
// (as bench/run.mjs does before its sections), which rewrites it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { refreshIndex } from './gen.mjs';
import { median, sleep, waitForDaemon } from './measure.mjs';
import { startWatchman } from './peers.mjs';

const arg = (name, dflt) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : dflt;
};
const ROOT = resolve(arg('root', '.'));
const WS = resolve(arg('ws', join(tmpdir(), 'takeback-bench', 'gen-1000000-fast-v1')));
const WATCHER = arg('watcher', 'watchman');
const CALLS = Number(arg('calls', '6'));
const PROF = arg('prof', '');
const JSON_OUT = arg('json', '');
const scratch = mkdtempSync(join(tmpdir(), 'takeback-warm-daemon-'));
const home = resolve(arg('home', join(scratch, 'home')));
mkdirSync(home, { recursive: true });
const bin = join(ROOT, 'bin', 'takeback.js');
const { HOOK_ENV_PREFIX } = await import(join(ROOT, 'dist', 'server', 'cli', 'self.js'));
const q = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;
const client = existsSync(join(ROOT, 'native', 'build-hook', 'takeback-hook'));
const cmd = client ? `${HOOK_ENV_PREFIX}${q(bin)} hook claude-code` : `${HOOK_ENV_PREFIX}${q(process.execPath)} ${q(bin)} hook claude-code`;

// git's index refreshed first, as bench/run.mjs does before the trees' sections: a tracked file
// whose stat git's index holds is git's blob in a first snapshot, not a copy.
refreshIndex(WS);
// 10 tracked files, the same each run (a fixed stride through `git ls-files`).
const files = execFileSync('git', ['ls-files', '-z'], { cwd: WS, maxBuffer: 1 << 30 }).toString().split('\0').filter((p) => p && !p.endsWith('.gitignore'));
const pick = Array.from({ length: 10 }, (_, k) => files[(k * 99_991 + 17) % files.length]).filter((p) => statSync(join(WS, p)).isFile());
const originals = pick.map((p) => readFileSync(join(WS, p)));
const putBack = () => pick.forEach((p, k) => writeFileSync(join(WS, p), originals[k]));
// --same-bytes: the command writes the 10 files again with the bytes they have (a `sed -i` that
// matched nothing, a formatter that changed nothing): their stat moves, their bytes do not.
const SAME = process.argv.includes('--same-bytes');
const edit = (tag) => pick.forEach((p, k) => (SAME ? writeFileSync(join(WS, p), originals[k]) : appendFileSync(join(WS, p), `// warm daemon ${tag} ${k}\n`)));

const GIT = process.argv.includes('--git');
const SOCK = arg('watchman-sock', '');
const watchman = WATCHER !== 'watchman' ? null : SOCK ? { sock: SOCK, stop: () => {} } : startWatchman(scratch, 'warm');
if (WATCHER === 'watchman' && !watchman) throw new Error('watchman is not installed');
const env = {
  ...process.env,
  TAKEBACK_HOME: home,
  TAKEBACK_HOOK_DAEMON: '1',
  TAKEBACK_LOG_LEVEL: 'debug',
  TAKEBACK_WATCHMAN: WATCHER === 'watchman' ? '1' : '0',
  ...(watchman ? { WATCHMAN_SOCK: watchman.sock } : {}),
};
const log = join(home, 'logs', 'hook.log');
const logLines = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') : []);
const hrMs = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
/** Each hook run's start and end (ms since the epoch), for the timeline against the daemon's log. */
let spans = [];
const runHook = (input) => {
  const t0 = process.hrtime.bigint();
  const at = Date.now();
  const r = spawnSync('bash', ['-c', cmd], { cwd: WS, env, input, stdio: ['pipe', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`hook exited ${r.status}: ${r.stderr}`);
  const ms = hrMs(t0);
  spans.push([at, at + ms]);
  return ms;
};
/**
 * The PreToolUse's timeline from the daemon's log lines `lines` and its hook's span: from the
 * hook's start to the event's sync begun in the daemon, from there to its answer (the early
 * answer's line, else the end of its handling), and from the answer to the hook's exit (ms).
 */
const timeline = (lines, [start, end]) => {
  const ts = (l) => Date.parse(l.slice(0, 24));
  const sync = lines.map((l) => [l, /watch: \w+ before the event \(([\d.]+) ms/.exec(l)]).find(([, m]) => m);
  const answered = lines.find((l) => l.includes('event: answered before its record') || l.includes('event: handled in'));
  if (!sync || !answered) return null;
  const arrived = ts(sync[0]) - Number(sync[1][1]);
  return { toDaemon: Math.round(arrived - start), inDaemon: Math.round(ts(answered) - arrived), toExit: Math.round(end - ts(answered)) };
};
const ev = (name, fields = {}) => JSON.stringify({ session_id: 'bench-warm-daemon', cwd: WS, hook_event_name: name, permission_mode: 'acceptEdits', ...fields });
let n = 0;
const bashCall = (tag) => {
  const input = { tool_name: 'Bash', tool_input: { command: 'bench: append to 10 files' }, tool_use_id: `toolu_warm_${n++}` };
  const pre = runHook(ev('PreToolUse', input));
  if (tag !== null) edit(tag);
  const post = runHook(ev('PostToolUse', { ...input, tool_response: {} }));
  return { pre, post };
};
/** The daemon's CPU so far (ms): the time on CPU of each of its threads (/proc/<pid>/task/<tid>/schedstat, ns). */
const cpuMs = (pid) => {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread gone meanwhile
    }
  }
  return ns / 1e6;
};
const clk = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
/** The CPU of this process's waited-for children so far (ms: cutime + cstime, in clock ticks): the hooks' processes. */
const childrenMs = () => {
  const f = readFileSync('/proc/self/stat', 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(rest[13]) + Number(rest[14])) * 1000) / clk;
};
const procKb = (pid, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const handledCount = () => logLines().filter((l) => l.includes('event: handled in')).length;

const logStart = logLines().length;
const nodeArgs = PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`, `--cpu-prof-interval=${arg('interval', '250')}`] : [];
// --node-args: more flags for the daemon's Node (`--trace-gc`), its output then appended to <home>/daemon.out.
const extraArgs = arg('node-args', '').split(' ').filter(Boolean);
const out = extraArgs.length > 0 ? openSync(join(home, 'daemon.out'), 'a') : 'ignore';
const daemon = spawn(process.execPath, [...nodeArgs, ...extraArgs, bin, 'hook-daemon'], { env, stdio: ['ignore', out, out] });
const result = { root: ROOT, watcher: WATCHER, calls: [], load: [] };
try {
  waitForDaemon(home, 120_000);
  runHook(ev('SessionStart', { source: 'startup' }));
  runHook(ev('UserPromptSubmit', { prompt: 'bench: warm daemon' }));
  const t0 = Date.now();
  for (let waited = 0; !logLines().slice(logStart).some((l) => l.includes('] watch: hints for ')); waited++) {
    if (waited > 400) throw new Error('the watcher was never trusted');
    bashCall(null);
    sleep(500);
  }
  result.trustedAfterMs = Date.now() - t0;
  for (let i = 0; i < CALLS; i++) {
    sleep(2100);
    // As bench/million.mjs does: `git status` between the calls (its walk of the tree beside the daemon's).
    if (GIT) spawnSync('git', ['--no-optional-locks', 'status', '--porcelain'], { cwd: WS, stdio: 'ignore' });
    const mark = logLines().length;
    const handled0 = handledCount();
    const cpu0 = cpuMs(daemon.pid);
    const from = Number(process.hrtime.bigint() / 1000n);
    const kids0 = childrenMs();
    spans = [];
    const { pre, post } = bashCall(`${i}`);
    const hooksCpu = childrenMs() - kids0;
    // The PostToolUse may be answered before it is recorded: wait for both events' lines.
    for (let w = 0; handledCount() < handled0 + 2 && w < 400; w++) sleep(25);
    const cpu = cpuMs(daemon.pid) - cpu0;
    const to = Number(process.hrtime.bigint() / 1000n);
    const lines = logLines().slice(mark);
    const handled = lines.map((l) => /event: handled in ([\d.]+) ms/.exec(l)?.[1]).filter(Boolean).map(Number);
    const before = lines.map((l) => /watch: (\w+) before the event \(([\d.]+) ms/.exec(l)).filter(Boolean).map((m) => `${m[1]} ${m[2]}`);
    const hinted = lines.filter((l) => l.includes('] watch: hints for ')).length;
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
    const tl = timeline(lines, spans[0]);
    result.calls.push({ pre, post, wall: pre + post, cpu, hooksCpu, timeline: tl, handled, before, hinted, us: [from, to] });
    result.load.push(Number(load));
    console.log(`call ${i}: hooks ${pre.toFixed(1)} + ${post.toFixed(1)} = ${(pre + post).toFixed(1)} ms; daemon CPU ${cpu.toFixed(1)} ms, hooks' CPU ${hooksCpu.toFixed(0)} ms; handled ${handled.join(', ')} ms; before ${before.join(', ')}; hinted ${hinted}/2; load ${load}${tl ? `; pre: to the daemon ${tl.toDaemon} ms, in it ${tl.inDaemon} ms, to exit ${tl.toExit} ms` : ''}`);
    putBack();
    bashCall(null);
  }
  runHook(ev('Stop'));
  result.vmHwmMb = procKb(daemon.pid, 'VmHWM') / 1024;
  result.vmRssMb = procKb(daemon.pid, 'VmRSS') / 1024;
} finally {
  putBack();
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));
  watchman?.stop();
}
const c = result.calls;
result.median = { wall: median(c.map((x) => x.wall)), cpu: median(c.map((x) => x.cpu)), hooksCpu: c.reduce((a, x) => a + x.hooksCpu, 0) / c.length, handled: median(c.flatMap((x) => x.handled)) };
console.log(`${WATCHER} ${ROOT}: median bracket ${result.median.wall.toFixed(1)} ms, daemon CPU ${result.median.cpu.toFixed(1)} ms a call (the hooks' processes ${result.median.hooksCpu.toFixed(1)} ms, mean), event handled ${result.median.handled.toFixed(1)} ms; VmHWM ${result.vmHwmMb?.toFixed(1)} MB, VmRSS ${result.vmRssMb?.toFixed(1)} MB; trusted after ${result.trustedAfterMs} ms; home ${home}`);
if (JSON_OUT) appendFileSync(JSON_OUT, `${JSON.stringify(result)}\n`);
