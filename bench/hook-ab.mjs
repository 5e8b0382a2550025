#!/usr/bin/env node
// Two installs of takeback side by side, alternated call by call: one shell tool call's capture
// through the default hooks as the agent runs them (`sh -c '<the command that install's init
// writes in a person's own settings file>'`, `takeback` on PATH through a symlink, so its hook
// client), against each install's own
// capture daemon with Watchman as its watcher (a Watchman server of this script's own), on a copy
// of the bench's generated trees each. The same calls as bench/peers.mjs (10 files appended to
// between the two hooks; each timed call followed by an untimed one and the racy window), with
// `git status` of each copy in the same round. For a before/after on a loaded machine: both see
// the same load.
//
//   node bench/hook-ab.mjs <the other install's folder> [calls per tree, default 7]
//
// The other install must be built (npm ci, npm run build). Prints medians (ms), each install's
// daemon's median `event: handled in` per event kind, and the load average at start and end.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generated, refreshIndex } from './gen.mjs';
import { AGENT_SHELL, median, sleep, time, waitForDaemon } from './measure.mjs';

const HERE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OTHER = process.argv[2] ? resolve(process.argv[2]) : null;
const CALLS = Number(process.argv[3]) > 0 ? Number(process.argv[3]) : 7;
if (!OTHER || !existsSync(join(OTHER, 'dist', 'server', 'agents', 'hook-command.js'))) {
  process.stderr.write('usage: node bench/hook-ab.mjs <another built install of takeback> [calls]\n');
  process.exit(2);
}
const CACHE = process.env.TAKEBACK_BENCH_CACHE || join(tmpdir(), 'takeback-bench');
const scratch = mkdtempSync(join(tmpdir(), 'takeback-hook-ab-'));
const log = (s) => process.stderr.write(`[hook-ab] ${s}\n`);

/** A private Watchman server (as peers.mjs starts one), or null without watchman. */
function startWatchman() {
  if (spawnSync('watchman', ['--version'], { stdio: 'ignore' }).status !== 0) return null;
  const dir = join(scratch, 'watchman');
  mkdirSync(dir, { recursive: true });
  const sock = join(dir, 'sock');
  const child = spawn('watchman', ['--foreground', '--no-save-state', `--sockname=${sock}`, `--statefile=${join(dir, 'state')}`, `--logfile=${join(dir, 'log')}`, `--pidfile=${join(dir, 'pid')}`], { stdio: 'ignore' });
  for (let waited = 0; spawnSync('watchman', [`--sockname=${sock}`, '--no-spawn', 'version'], { stdio: 'ignore' }).status !== 0; waited += 100) {
    if (waited > 30_000) throw new Error('watchman did not start');
    sleep(100);
  }
  return { sock, stop: () => child.kill('SIGTERM') };
}

/** One install's side: its workspace copy of `tree`, home, PATH, hook command and daemon. */
function side(root, name, tree, label, watchman) {
  const base = join(scratch, `${label}-${name}`);
  const ws = join(base, 'ws');
  cpSync(tree, ws, { recursive: true });
  refreshIndex(ws);
  const bin = join(base, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(join(root, 'bin', 'takeback.js'), join(bin, 'takeback'));
  const home = join(base, 'home');
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, TAKEBACK_HOME: home, TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_LOG_LEVEL: 'debug', TAKEBACK_WATCHMAN: '1', WATCHMAN_SOCK: watchman.sock };
  // As its init would write it with its takeback on PATH: asked of a process whose PATH has it.
  const command = execFileSync(process.execPath, ['--input-type=module', '-e', `const { hookCommand } = await import(${JSON.stringify(join(root, 'dist', 'server', 'cli', 'self.js'))}); const { AGENTS } = await import(${JSON.stringify(join(root, 'dist', 'server', 'agents', 'registry.js'))}); process.stdout.write(hookCommand.length >= 2 ? hookCommand('claude-code', AGENTS['claude-code'], '', { personal: true }) : hookCommand('claude-code', '', { personal: true }));`], { env, encoding: 'utf8' });
  const daemon = spawn(process.execPath, [join(root, 'bin', 'takeback.js'), 'hook-daemon'], { env, stdio: 'ignore' });
  waitForDaemon(home, 60_000, `${name}: the capture daemon did not start`);
  return { name, ws, home, env, command, daemon, pairs: [], git: [] };
}

function hookLog(s) {
  try {
    return readFileSync(join(s.home, 'logs', 'hook.log'), 'utf8');
  } catch {
    return '';
  }
}

function compare(label, tree, pick) {
  const watchman = startWatchman();
  if (!watchman) throw new Error('watchman is not installed');
  const sides = [side(HERE, 'this', tree, label, watchman), side(OTHER, 'other', tree, label, watchman)];
  let n = 0;
  const ev = (s, name, fields = {}) => JSON.stringify({ session_id: `hook-ab-${label}`, cwd: s.ws, hook_event_name: name, permission_mode: 'acceptEdits', ...fields });
  const hook = (s, input) => time(AGENT_SHELL, ['-c', s.command], { cwd: s.ws, env: s.env, input });
  const originals = new Map(sides.map((s) => [s.name, pick.map((p) => readFileSync(join(s.ws, p)))]));
  const putBack = (s) => pick.forEach((p, k) => writeFileSync(join(s.ws, p), originals.get(s.name)[k]));
  const call = (s) => {
    const input = { tool_name: 'Bash', tool_input: { command: 'bench: append to 10 files' }, tool_use_id: `toolu_ab_${label}_${n++}` };
    const pre = hook(s, ev(s, 'PreToolUse', input));
    pick.forEach((p, k) => appendFileSync(join(s.ws, p), `// hook-ab ${n} ${k}\n`));
    const post = hook(s, ev(s, 'PostToolUse', { ...input, tool_response: {} }));
    return pre + post;
  };
  try {
    for (const s of sides) {
      hook(s, ev(s, 'SessionStart', { source: 'startup' }));
      hook(s, ev(s, 'UserPromptSubmit', { prompt: 'bench: hook-ab' }));
    }
    // Warm: calls until each daemon's scans are given hints twice (or it walks by choice), past the racy window.
    for (const s of sides) {
      const warm = () => (hookLog(s).match(/\] watch: (synced|walk) before the event/g) ?? []).length;
      const from = warm();
      for (let i = 0; warm() - from < 4; i++) {
        if (i > 60) throw new Error(`${s.name}: the watcher was never trusted`);
        call(s);
        putBack(s);
        sleep(500);
      }
    }
    sleep(2100);
    for (let i = 0; i < CALLS; i++) {
      for (const s of i % 2 === 0 ? sides : [...sides].reverse()) {
        s.git.push(time('git', ['--no-optional-locks', 'status', '--porcelain'], { cwd: s.ws }));
        s.pairs.push(call(s));
        putBack(s);
        call(s);
        sleep(2100);
      }
    }
    for (const s of sides) hook(s, ev(s, 'Stop'));
  } finally {
    for (const s of sides) s.daemon.kill('SIGTERM');
    watchman.stop();
  }
  for (const s of sides) {
    // Each event's lines: its watcher's sync (before), what it did (its name), its time.
    const handled = {};
    const synced = {};
    let sync = null;
    let last = null;
    for (const line of hookLog(s).split('\n')) {
      const w = /\] watch: \w+ before the event \(([\d.]+) ms/.exec(line);
      if (w) sync = Number(w[1]);
      const m = /\] claude-code (\w+):/.exec(line);
      if (m) {
        last = m[1];
        if (sync !== null) (synced[last] ??= []).push(sync);
        sync = null;
      }
      const h = /\] event: handled in ([\d.]+) ms/.exec(line);
      if (h && last) (handled[last] ??= []).push(Number(h[1]));
    }
    const ms = (x) => `${x.toFixed(1)} ms`;
    process.stdout.write(`${label} ${s.name.padEnd(5)} (${s.name === 'this' ? HERE : OTHER}): shell call's two hooks ${ms(median(s.pairs))} (each: ${s.pairs.map((x) => x.toFixed(0)).join(', ')}), git status ${ms(median(s.git))}, ratio ${(median(s.pairs) / median(s.git)).toFixed(2)}×; daemon's time an event (its watcher's sync before it): ${['PreToolUse', 'PostToolUse'].map((k) => `${k} ${handled[k] ? ms(median(handled[k])) : '-'} (${synced[k] ? ms(median(synced[k])) : '-'})`).join(', ')}\n`);
  }
}

const start = loadavg().map((l) => l.toFixed(1)).join(' ');
const pick = (ws, n) => {
  const files = execFileSync('git', ['ls-files'], { cwd: ws, encoding: 'utf8' }).split('\n').filter((f) => f.endsWith('.ts') || f.endsWith('.js') || f.endsWith('.md'));
  return Array.from({ length: n }, (_, i) => files[Math.floor((i * files.length) / n)]);
};
try {
  for (const [label, files] of [
    ['gen-1.8k', 1800],
    ['gen-10k', 10000],
  ]) {
    const tree = generated(CACHE, files, log);
    compare(label, tree, pick(tree, 10));
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.stdout.write(`load average (1, 5, 15 min) at start ${start}, at end ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
