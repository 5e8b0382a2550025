// Timing helpers for the benchmarks: one child process at a time, wall-clock, medians.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The shell an agent runs a hook command with, as `AGENT_SHELL -c <command>`: Claude Code runs its
 * hook commands with /bin/sh (a hook that reads /proc/$$/exe finds dash on Debian, with
 * SHELL=/bin/bash too), as Codex does; Gemini CLI uses bash.
 */
export const AGENT_SHELL = 'sh';

/** Runs `cmd args` and returns how long it took in ms. Throws when it fails (unless `allowFail`). */
export function time(cmd, args, opts = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    input: opts.input,
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', opts.capture ? 'pipe' : 'ignore', 'pipe'],
    maxBuffer: 1 << 30,
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  if (r.status !== 0 && !opts.allowFail) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${String(r.stderr).slice(0, 2000)}`);
  }
  if (opts.capture) opts.capture.stdout = String(r.stdout);
  return ms;
}

const TIMER = fileURLToPath(new URL('./spawn-timer.cjs', import.meta.url));

/**
 * {@link time}, with the command started and timed by a small process (bench/spawn-timer.cjs),
 * which this one starts untimed: for a bench process that holds much memory, whose own fork would
 * otherwise be counted as each command's (ms; `opts` as {@link time} takes them, but `capture`).
 */
export function timeFromSmall(cmd, args, opts = {}) {
  const withInput = opts.input !== undefined;
  const env = { ...(opts.env ?? process.env), ...(withInput ? { BENCH_TIMER_INPUT: '1' } : {}) };
  const r = spawnSync(process.execPath, [TIMER, cmd, ...args], {
    cwd: opts.cwd,
    env,
    input: opts.input,
    stdio: [withInput ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    maxBuffer: 1 << 30,
  });
  if (r.error) throw r.error;
  if (r.status !== 0 && !opts.allowFail) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${String(r.stderr).slice(0, 2000)}`);
  const ms = Number(String(r.stdout).trim());
  if (!Number.isFinite(ms)) throw new Error(`${cmd} ${args.join(' ')}: no time from the timer (${String(r.stderr).slice(0, 500)})`);
  return ms;
}

/**
 * `takeback` on PATH as `npm i -g` puts it under prefix `prefix` (made when missing): the package
 * folder `root` linked as `<prefix>/lib/node_modules/takeback`, and `<prefix>/bin/takeback` a
 * relative link to its `bin/takeback.js` through that folder. Returns `<prefix>/bin`, for PATH.
 */
export function npmGlobalLink(prefix, root) {
  const modules = join(prefix, 'lib', 'node_modules');
  const bin = join(prefix, 'bin');
  mkdirSync(modules, { recursive: true });
  mkdirSync(bin, { recursive: true });
  if (!existsSync(join(modules, 'takeback'))) symlinkSync(root, join(modules, 'takeback'));
  if (!existsSync(join(bin, 'takeback'))) symlinkSync('../lib/node_modules/takeback/bin/takeback.js', join(bin, 'takeback'));
  return bin;
}

/** Peak resident memory (KB) of `cmd args`, by GNU time; null when /usr/bin/time is not there. */
export function peakRss(cmd, args, opts = {}) {
  if (!existsSync('/usr/bin/time')) return null;
  const r = spawnSync('/usr/bin/time', ['-f', '%M', cmd, ...args], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'ignore', 'pipe'] });
  const m = /(\d+)\s*$/.exec(String(r.stderr).trim());
  return m ? Number(m[1]) : null;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** Bytes of every file under `dir` (apparent size) and on disk (blocks), recursively. */
export function treeBytes(dir) {
  let bytes = 0;
  let disk = 0;
  let files = 0;
  const walk = (d) => {
    let names;
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else {
        files++;
        bytes += st.size;
        disk += st.blocks * 512;
      }
    }
  };
  walk(dir);
  return { bytes, disk, files };
}

export function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Whether a capture daemon of `home` listens: a socket (`*.sock`) in `<home>/run`. */
export function daemonListening(home) {
  const run = join(home, 'run');
  return existsSync(run) && readdirSync(run).some((f) => f.endsWith('.sock'));
}

/**
 * Waits until a capture daemon of `home` listens ({@link daemonListening}), polling every 50 ms;
 * throws `Error(what)` after `ms`.
 */
export function waitForDaemon(home, ms, what = 'the capture daemon did not start') {
  for (let waited = 0; !daemonListening(home); waited += 50) {
    if (waited > ms) throw new Error(what);
    sleep(50);
  }
}

/** A debug log line of a scan given a watcher's hints. */
export const HINTS_LINE = '] watch: hints for ';
/** A debug log line of an event's record done (the daemon answers a command's end before it). */
export const RECORD_LINE = '] event: handled in ';

/** How many lines of the hook log of `home` hold `text` (a string, or a RegExp they match; 0 without a log). */
export function hookLogCount(home, text) {
  const has = typeof text === 'string' ? (l) => l.includes(text) : (l) => text.test(l);
  try {
    return readFileSync(join(home, 'logs', 'hook.log'), 'utf8').split('\n').filter(has).length;
  } catch {
    return 0;
  }
}

/**
 * Waits until the capture daemon of `home` has logged `events` more records than `from` (its
 * count of {@link RECORD_LINE} before; debug logging), at most 5 s: a command's end is answered
 * before its record, whose scan's hints are logged then.
 */
export function waitForRecords(home, from, events) {
  for (let waited = 0; hookLogCount(home, RECORD_LINE) - from < events && waited < 5000; waited += 20) sleep(20);
}

export const fmt = {
  ms: (x) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(1) : Math.round(x)} ms` : 'n/a'),
  mb: (x) => `${(x / 1048576).toFixed(1)} MB`,
  ratio: (x) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a'),
};
