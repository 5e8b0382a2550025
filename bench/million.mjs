// The 1,000,000-file git tree (issue 18 §3): generated once through git fast-import (gen.mjs
// generatedFast) and kept in the cache; measured only with `--only=million` (or `--million`), as
// it takes minutes. On it, interleaved with `git status`: the first (cold) snapshot and its peak
// memory; a shell tool call's bracket through the CLI with no watcher and no daemon (`capture begin`
// + `end`, 10 files changed: a process each, what a hook does when no daemon serves it); the same call through the default hooks to the capture daemon with its watcher
// trusted (the hook client when built, else Node), once with @parcel/watcher and once with Watchman
// (a server of the bench's own) where it is installed; the same call through the daemon with no
// watcher (`TAKEBACK_WATCH=0`: both scans walk, from the rows it keeps in memory), timed until its
// end is recorded (the daemon answers a command's end before its record, and the next event waits
// for that record); and each daemon's memory (VmHWM, VmRSS) after (a watched daemon holds none of
// the snapshot's rows at this size: its walks until the watcher vouches are made by children,
// counted in the row's note).
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { HINTS_LINE, RECORD_LINE, fmt, hookLogCount, median, peakRss, sleep, timeFromSmall, waitForDaemon, waitForRecords } from './measure.mjs';
import { startWatchman } from './peers.mjs';

// Every command is timed from a small process: this one may hold the tree's lists, and its own
// fork would be counted as each command's (measure.mjs timeFromSmall).
const time = timeFromSmall;

/** A debug log line of a walk the daemon had a child make (a watched workspace whose rows it does not hold). */
const CHILD_WALK_LINE = '] hook daemon: a walk made by a child';

const q = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;

/** A field of /proc/<pid>/status in bytes (VmHWM, VmRSS), or NaN. */
function procKb(pid, field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Why daemon `pid` of home `home` left, as its own log line says (`leaving (...)`), or 'no reason logged'. */
function daemonLeft(home, pid) {
  try {
    const line = readFileSync(join(home, 'logs', 'hook.log'), 'utf8').split('\n').find((l) => l.includes(`hook daemon ${pid}: leaving`));
    return line ? line.slice(line.indexOf('leaving')) : 'no reason logged';
  } catch {
    return 'no reason logged';
  }
}

/**
 * Measures workspace `ws` (the million-file tree; `pick`: 10 tracked files to change) and records
 * its rows through `record`, `iterations` of each timed step. `bin`/`node`: the takeback command
 * and Node; `hookEnvPrefix`: what `init` puts before a hook command; `scratch`: a folder for homes.
 */
export async function millionBench({ record, log, ws, label, iterations, pick, bin, node, scratch, hookEnvPrefix }) {
  const home = (name) => {
    const h = join(scratch, `home-million-${name}`);
    mkdirSync(h, { recursive: true });
    return { ...process.env, TAKEBACK_HOME: h, TAKEBACK_LOG_LEVEL: '' };
  };
  const git = () => time('git', ['--no-optional-locks', 'status', '--porcelain'], { cwd: ws });
  const originals = pick.map((p) => readFileSync(join(ws, p)));
  const putBack = () => pick.forEach((p, k) => writeFileSync(join(ws, p), originals[k]));
  const edit = (tag) => pick.forEach((p, k) => appendFileSync(join(ws, p), `// million bench ${tag} ${k}\n`));
  const out = {};

  // The first snapshot, cold: a new journal.
  log(`million: the first snapshot of ${label}`);
  const cliEnv = home('cli');
  const g0 = [git(), git()];
  const t0 = process.hrtime.bigint();
  const coldKb = peakRss(node, [bin, 'capture', 'begin', '--id', 'cold'], { cwd: ws, env: cliEnv });
  const cold = Number(process.hrtime.bigint() - t0) / 1e6;
  time(bin, ['capture', 'end', '--id', 'cold'], { cwd: ws, env: cliEnv });
  g0.push(git());
  const gCold = median(g0);
  out.cold = { ms: cold, peakKb: coldKb, git: g0 };
  record({ section: 10, measure: 'first (cold) snapshot, CLI', workspace: label, value: fmt.ms(cold), baseline: `git status ${fmt.ms(gCold)}`, ratio: cold / gCold, target: '—', note: `peak memory ${coldKb ? fmt.mb(coldKb * 1024) : 'n/a'} (by /usr/bin/time)` });

  // A bracket through the CLI, no watcher: every row's stat checked.
  sleep(2100);
  time(bin, ['capture', 'begin', '--id', 'w'], { cwd: ws, env: cliEnv });
  time(bin, ['capture', 'end', '--id', 'w'], { cwd: ws, env: cliEnv });
  const s = { git: [], cli: [], daemon: [] };
  for (let i = 0; i < iterations; i++) {
    sleep(2100);
    s.git.push(git());
    const b = time(bin, ['capture', 'begin', '--id', `b${i}`], { cwd: ws, env: cliEnv });
    edit(`cli ${i}`);
    const e = time(bin, ['capture', 'end', '--id', `b${i}`], { cwd: ws, env: cliEnv });
    s.cli.push(b + e);
    putBack();
    time(bin, ['capture', 'begin', '--id', `r${i}`], { cwd: ws, env: cliEnv });
    time(bin, ['capture', 'end', '--id', `r${i}`], { cwd: ws, env: cliEnv });
  }

  // The default hooks to the capture daemon, its watcher trusted: once with @parcel/watcher, once
  // with Watchman (a server of the bench's own, as in peers.mjs) where it is installed. Each
  // daemon has a new home, so each makes its own first snapshot and its peak memory counts it.
  const client = existsSync(join(bin, '..', '..', 'native', 'build-hook', 'takeback-hook'));
  const cmd = client ? `${hookEnvPrefix}${q(bin)} hook claude-code` : `${hookEnvPrefix}${q(node)} ${q(bin)} hook claude-code`;
  const ev = (name, fields = {}) => JSON.stringify({ session_id: `bench-million-${label}`, cwd: ws, hook_event_name: name, permission_mode: 'acceptEdits', ...fields });
  let n = 0;
  /**
   * One daemon run with watcher `name` (`extra`: its env; `watched` false for a daemon with no
   * watcher): its timed calls (the two hooks), the same until the end's record is logged
   * (`recorded`), its hinted count and memory.
   */
  const daemonBench = (name, extra, watched = true) => {
    const env = { ...home(`daemon-${name}`), ...extra };
    const viaDaemon = { ...env, TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_LOG_LEVEL: 'debug' };
    const runHook = (input) => time('bash', ['-c', cmd], { cwd: ws, env: viaDaemon, input });
    const bashCall = (tag) => {
      const input = { tool_name: 'Bash', tool_input: { command: 'bench: append to 10 files' }, tool_use_id: `toolu_million_${n++}` };
      const pre = runHook(ev('PreToolUse', input));
      if (tag !== null) edit(tag);
      const post = runHook(ev('PostToolUse', { ...input, tool_response: {} }));
      return pre + post;
    };
    const hintsLogged = () => hookLogCount(env.TAKEBACK_HOME, HINTS_LINE);
    log(`million: starting the capture daemon with ${name} (its first snapshot, then its watcher)`);
    const daemon = spawn(node, [bin, 'hook-daemon'], { env: viaDaemon, stdio: 'ignore' });
    const r = { calls: [], recorded: [], git: [], hinted: 0, hwm: NaN, rss: NaN, left: null };
    // Its memory is read after every call, while it runs: a daemon that left early (its code
    // rebuilt by a build elsewhere, say) has no /proc entry to read at the end, and the calls
    // after it went were served by another process (the hooks start one): the row says so. (This
    // loop never yields to Node's event loop, so a daemon that left is a zombie here, not reaped:
    // its /proc status is there without its memory lines.)
    const sample = () => {
      if (r.left !== null) return;
      const hwm = procKb(daemon.pid, 'VmHWM');
      const rss = procKb(daemon.pid, 'VmRSS');
      if (!Number.isFinite(hwm)) {
        r.left = daemonLeft(env.TAKEBACK_HOME, daemon.pid);
        return;
      }
      r.hwm = Number.isFinite(r.hwm) ? Math.max(r.hwm, hwm) : hwm;
      r.rss = rss;
    };
    try {
      waitForDaemon(env.TAKEBACK_HOME, 120_000);
      runHook(ev('SessionStart', { source: 'startup' }));
      runHook(ev('UserPromptSubmit', { prompt: 'bench: million' }));
      const trustStarted = Date.now();
      // With no watcher, two calls untimed: the daemon then holds the rows.
      for (let waited = 0; watched ? hintsLogged() === 0 : waited < 2; waited++) {
        if (waited > 240) throw new Error('the watcher was never trusted');
        const records = hookLogCount(env.TAKEBACK_HOME, RECORD_LINE);
        bashCall(null);
        if (!watched) waitForRecords(env.TAKEBACK_HOME, records, 2);
        sleep(500);
      }
      r.trustedAfterMs = Date.now() - trustStarted;
      // A watched daemon of this size holds none of the rows: the walks until the watcher vouched were made by children.
      r.childWalks = hookLogCount(env.TAKEBACK_HOME, CHILD_WALK_LINE);
      for (let i = 0; i < iterations; i++) {
        sleep(2100);
        r.git.push(git());
        const before = hintsLogged();
        const records = hookLogCount(env.TAKEBACK_HOME, RECORD_LINE);
        const t = performance.now();
        r.calls.push(bashCall(`daemon ${name} ${i}`));
        waitForRecords(env.TAKEBACK_HOME, records, 2);
        r.recorded.push(performance.now() - t);
        r.hinted += hintsLogged() - before === 2 ? 1 : 0;
        sample();
        putBack();
        const back = hookLogCount(env.TAKEBACK_HOME, RECORD_LINE);
        bashCall(null);
        if (!watched) waitForRecords(env.TAKEBACK_HOME, back, 2);
      }
      runHook(ev('Stop'));
      sample();
    } finally {
      daemon.kill('SIGTERM');
      putBack();
    }
    return r;
  };
  const watchers = [['@parcel/watcher', daemonBench('parcel', { TAKEBACK_WATCHMAN: '0' })]];
  const watchman = startWatchman(scratch, label);
  if (watchman) {
    try {
      watchers.push(['Watchman', daemonBench('watchman', { TAKEBACK_WATCHMAN: '1', WATCHMAN_SOCK: watchman.sock })]);
    } finally {
      watchman.stop();
    }
  } else log('million: watchman is not installed: its rows are left out');
  const unwatched = daemonBench('none', { TAKEBACK_WATCH: '0' }, false);
  s.git.push(...watchers.flatMap(([, r]) => r.git), ...unwatched.git);
  out.daemons = { ...Object.fromEntries(watchers), none: unwatched };
  const m = { git: median(s.git), cli: median(s.cli) };
  Object.assign(out, { samples: s, medians: m });
  // A process a command, no daemon (what a hook does when none can serve it): two checks of every
  // file's stat (about 1.1 million each, both CPUs busy; the rows read from the rows image) against one `git status`.
  record({ section: 10, measure: 'shell tool call bracket through the CLI, no watcher, no daemon (`capture begin` + `end`, 10 files changed)', workspace: label, value: fmt.ms(m.cli), baseline: `git status ${fmt.ms(m.git)}`, ratio: m.cli / m.git, target: '≤ 1.0', met: m.cli / m.git <= 1.0, note: 'a process each: two checks of every stat against one `git status`' });
  {
    const ms = median(unwatched.recorded);
    const git = median(unwatched.git);
    record({ section: 10, measure: `shell tool call through the default hooks${client ? ' (hook client)' : ''} to the capture daemon, no watcher (\`TAKEBACK_WATCH=0\`): until its end is recorded`, workspace: label, value: fmt.ms(ms), baseline: `git status ${fmt.ms(git)}`, ratio: ms / git, target: '≤ 1.0', met: ms / git <= 1.0, note: `the agent waits ${fmt.ms(median(unwatched.calls))} (the two hooks; the end is answered before its record); ${unwatched.hinted}/${iterations} calls given hints` });
  }
  const cap = 400 * 1048576;
  /** The memory row of daemon run `r`, holding `what`. */
  const memoryRow = (r, what, target) => {
    const left = r.left === null ? {} : { note: `the daemon left before the end (${r.left}): memory as last read while it ran` };
    const walks = r.childWalks ? { note: `${r.childWalks} walks made by a child of the daemon (their memory not the daemon's) until the watcher vouched` } : {};
    record({ section: 10, measure: `capture daemon memory holding ${what} (VmHWM; VmRSS after)`, workspace: label, value: fmt.mb(r.hwm), baseline: `RSS ${fmt.mb(r.rss)}`, ratio: r.hwm / cap, ...target, ...walks, ...left });
  };
  for (const [name, r] of watchers) {
    const ms = median(r.calls);
    record({ section: 10, measure: `shell tool call through the default hooks${client ? ' (hook client)' : ''} to the capture daemon, watcher (${name}) trusted`, workspace: label, value: fmt.ms(ms), baseline: `git status ${fmt.ms(median(r.git))}`, ratio: ms / median(r.git), target: '≤ 60 ms', met: ms <= 60, note: `${r.hinted}/${iterations} calls had both scans given hints; trusted ${Math.round(r.trustedAfterMs / 1000)} s after the first prompt` });
    memoryRow(r, `the watcher (${name}), not the snapshot's rows (read a folder at a time)`, { target: '≤ 1.0 (400 MB)', met: r.hwm <= cap });
  }
  memoryRow(unwatched, "the snapshot's rows, no watcher", { target: '—' });
  return out;
}
