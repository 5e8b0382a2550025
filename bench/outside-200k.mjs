// The 200,000-file workspace outside git (no .git anywhere), its baseline made by the capture
// daemon in the background: `node bench/outside-200k.mjs` after `npm run build`.
//
// The tree is generated once into `$TAKEBACK_BENCH_CACHE/outside-200k` (default
// `<tmp>/takeback-bench`; a marker beside it, `outside-200k.complete`, says it is whole: inside, it
// would be the 200,001st file, one past the limit): 200,000 files of about 1.2 KB
// of text, 20 to a folder, four levels deep. Each run takes a new TAKEBACK_HOME, starts a capture
// daemon, and measures, all in the same run:
//   1. the session's first hook (SessionStart: the baseline's stat walk, in the daemon);
//   2. while the daemon keeps the baseline's bytes in the background: Bash hook pairs (PreToolUse,
//      10 files appended to, PostToolUse), each hook's latency, against `find` over the tree
//      taken between them, and how far the baseline was at each;
//   3. the time from SessionStart until `list` says the baseline is complete;
//   4. then warm brackets through the daemon (watcher trusted: `hintedScans` counts the scans
//      given its hints, two a pair) and in-process (the walk), interleaved with
//      `find . -type f -printf '%s %T@ %p\n'`.
// Hooks run as an agent runs them: bin/takeback.js by its path, so the hook client hands the
// event to the daemon before any Node starts (where native/build-hook is built).
// Each watcher of TAKEBACK_BENCH_OUTSIDE_WATCHERS (a comma-separated list; default
// `watchman,parcel` where `watchman` is installed, else `parcel`) is measured in the same run:
// `watchman` through a Watchman server private to the run (its own socket, as bench/peers.mjs
// starts one; never the machine's), `parcel` with `TAKEBACK_WATCHMAN=0` (@parcel/watcher). Phases
// 1 to 3 run once per watcher, each in a home of its own; phase 4 alternates the watchers,
// TAKEBACK_BENCH_OUTSIDE_ROUNDS rounds (default 2) of 5 pairs each, a daemon started anew for
// each round, and reads each daemon's peak memory (VmHWM) and the Watchman server's (VmRSS), and
// from the daemon's debug log its waits for the sync, its handling of each event and the paths
// each hinted scan was given. TAKEBACK_BENCH_KEEP=1 keeps the homes and their logs.
// TAKEBACK_BENCH_OUTSIDE_FILES=20000 runs the same on a 20,000-file tree (a quick run);
// TAKEBACK_BENCH_OUTSIDE_COMPARE=1 first makes the baseline once more, in the same run, with
// every slice read on the daemon's own thread (TAKEBACK_BASELINE_WORKER=0): `onThread`.
// Prints one JSON object; bench/RESULTS.md keeps the figures with the machine and its load.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rng, sourceText } from './gen.mjs';
import { HINTS_LINE, daemonListening, hookLogCount, median, sleep, time } from './measure.mjs';
import { startWatchman } from './peers.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'takeback.js');
const CACHE = process.env.TAKEBACK_BENCH_CACHE ?? join(tmpdir(), 'takeback-bench');
const FILES = Number(process.env.TAKEBACK_BENCH_OUTSIDE_FILES ?? 200_000);
const log = (m) => process.stderr.write(`${m}\n`);

/** The tree of `files` files outside git, made once (files dated a day back: none is racy). */
function outsideTree(files) {
  const dir = join(CACHE, `outside-${files / 1000}k`);
  const marker = `${dir}.complete`;
  if (existsSync(marker)) return dir;
  rmSync(dir, { recursive: true, force: true });
  log(`generating ${files} files in ${dir} (once)…`);
  const rand = rng(200);
  const old = new Date(Date.now() - 86_400_000);
  for (let i = 0; i < files; i++) {
    const f = Math.floor(i / 20);
    const sub = join(dir, `p${Math.floor(f / 500)}`, `q${Math.floor(f / 25) % 20}`, `r${f % 25}`);
    if (i % 20 === 0) mkdirSync(sub, { recursive: true });
    const file = join(sub, `m${i}.ts`);
    writeFileSync(file, sourceText(rand, 1200, `m${i}`));
    utimesSync(file, old, old);
  }
  writeFileSync(marker, '');
  return dir;
}

function run(args, env, cwd, input) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env, input, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`takeback ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return r.stdout;
}

// -ignore_readdir_race: a watcher's sync cookie at the root (made and removed within a sync) may
// go between find's listing and its stat of it, which is no error of the walk's.
const find = (ws) => time('find', ['.', '-ignore_readdir_race', '-type', 'f', '-printf', '%s %T@ %p\n'], { cwd: ws });

/**
 * One hook event through `takeback hook claude-code` as an agent runs it (bin/takeback.js by its
 * path: the hook client of native/build-hook when it is built, else Node), timed (ms).
 */
function hook(env, ws, event) {
  return time(BIN, ['hook', 'claude-code'], { cwd: ws, env, input: JSON.stringify({ session_id: 'bench-outside', cwd: ws, ...event }) });
}

/** The daemon's debug log of `home` as lines (none yet: empty). */
function logLines(home) {
  try {
    return readFileSync(join(home, 'logs', 'hook.log'), 'utf8').split('\n');
  } catch {
    return [];
  }
}

/** From debug log lines: each sync's wait before an event (`watch: synced before the event (N ms)`) and each event's handling in the daemon (`event: handled in N ms`). */
function daemonTimes(lines) {
  const of = (re) => lines.map((l) => l.match(re)).filter(Boolean).map((m) => Number(m[1]));
  return { syncMs: of(/\] watch: synced before the event \(([\d.]+) ms\)$/), handledMs: of(/\] event: handled in ([\d.]+) ms$/), hintedPaths: of(/\] watch: hints for .* \((\d+) paths, \w+\)$/) };
}

/** How many scans the daemon's watcher gave hints to so far (its debug log). */
function hinted(home) {
  return hookLogCount(home, HINTS_LINE);
}

let calls = 0;
/** A Bash tool call appending to 10 files: its two hooks' latencies (ms). */
function bashCall(env, ws) {
  const id = `toolu_${process.pid}_${++calls}`;
  const call = { tool_name: 'Bash', tool_use_id: id, tool_input: { command: 'append to 10 files' } };
  const pre = hook(env, ws, { hook_event_name: 'PreToolUse', ...call });
  for (let k = 0; k < 10; k++) {
    const i = (calls * 7919 + k * 104_729) % FILES;
    const f = Math.floor(i / 20);
    appendFileSync(join(ws, `p${Math.floor(f / 500)}`, `q${Math.floor(f / 25) % 20}`, `r${f % 25}`, `m${i}.ts`), `// call ${calls}\n`);
  }
  const post = hook(env, ws, { hook_event_name: 'PostToolUse', ...call, tool_response: {} });
  return { pre, post };
}

const baseline = (env, ws) => JSON.parse(run(['list', '--json'], env, ws)).capture.baseline;

/** Phases 1 to 3: the session's first hooks, hook pairs while the baseline is made, its time (into `out`). */
function measureBaseline(env, ws, out) {
  const t0 = Date.now();
  out.sessionStartMs = hook(env, ws, { hook_event_name: 'SessionStart', source: 'startup' });
  out.promptMs = hook(env, ws, { hook_event_name: 'UserPromptSubmit', prompt: 'bench' });
  // While the baseline is made: hook pairs, each with a find beside it.
  const during = [];
  let b = baseline(env, ws);
  while (b) {
    const f = find(ws);
    const { pre, post } = bashCall(env, ws);
    during.push({ kept: b.kept, of: b.files, pre: Math.round(pre), post: Math.round(post), find: Math.round(f) });
    log(JSON.stringify(during.at(-1)));
    b = baseline(env, ws);
  }
  out.baselineMs = Date.now() - t0;
  out.baselineFilesPerS = Math.round(FILES / (out.baselineMs / 1000));
  out.during = during;
  out.duringMedian = during.length ? { pre: median(during.map((d) => d.pre)), post: median(during.map((d) => d.post)), find: median(during.map((d) => d.find)) } : null;
}

/** A capture daemon for `home`, started and answering on its socket. */
function startDaemon(env, ws, home) {
  const daemon = spawn(process.execPath, [BIN, 'hook-daemon'], { cwd: ws, env, stdio: 'ignore' });
  for (let i = 0; i < 200 && !daemonListening(home); i++) sleep(50);
  return daemon;
}

/** A process's memory figure `field` (`VmHWM`, `VmRSS`) in MB, or null once it is gone. */
function memoryMb(pid, field) {
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');

/** Bash calls until one has both its scans given the watcher's hints (at most 40): the daemon's watcher trusted. */
function warmUp(env, ws, home) {
  for (let i = 0; i < 40; i++) {
    const before = hinted(home);
    bashCall(env, ws);
    if (hinted(home) - before >= 2) return i + 1;
  }
  return -1;
}

function main() {
  const ws = outsideTree(FILES);
  const scratch = mkdtempSync(join(tmpdir(), 'takeback-bench-outside-'));
  const watchers = (process.env.TAKEBACK_BENCH_OUTSIDE_WATCHERS ?? (spawnSync('watchman', ['--version'], { stdio: 'ignore' }).status === 0 ? 'watchman,parcel' : 'parcel')).split(',');
  const rounds = Number(process.env.TAKEBACK_BENCH_OUTSIDE_ROUNDS ?? 2);
  const wm = watchers.includes('watchman') ? startWatchman(scratch, 'outside') : null;
  if (watchers.includes('watchman') && !wm) throw new Error('watchman is not installed');
  const base = { ...process.env, TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '600000', TAKEBACK_LOG_LEVEL: 'debug' };
  delete base.NODE_EXTRA_CA_CERTS;
  delete base.WATCHMAN_SOCK;
  const homes = {};
  const envs = {};
  for (const w of watchers) {
    homes[w] = mkdtempSync(join(scratch, `home-${w}-`));
    envs[w] = { ...base, TAKEBACK_HOME: homes[w], ...(w === 'watchman' ? { TAKEBACK_WATCHMAN: '1', WATCHMAN_SOCK: wm.sock } : { TAKEBACK_WATCHMAN: '0' }) };
  }
  const out = { files: FILES, watchers, machine: `${cpus().length} cores (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(1)} GB, Node ${process.version}`, loadBefore: load() };
  try {
    if (process.env.TAKEBACK_BENCH_OUTSIDE_COMPARE === '1') {
      // First, in the same run, the baseline read on the daemon's own thread (as before the worker).
      const h = mkdtempSync(join(scratch, 'home-onthread-'));
      const e = { ...envs[watchers[0]], TAKEBACK_HOME: h, TAKEBACK_BASELINE_WORKER: '0' };
      const d = startDaemon(e, ws, h);
      out.onThread = { watcher: watchers[0], loadBefore: load() };
      try {
        measureBaseline(e, ws, out.onThread);
        out.onThread.loadAfter = load();
        delete out.onThread.during;
      } finally {
        d.kill('SIGTERM');
      }
    }
    // Phases 1 to 3, once per watcher, each in its own home.
    out.byWatcher = {};
    for (const w of watchers) {
      const o = (out.byWatcher[w] = { loadBefore: load() });
      const d = startDaemon(envs[w], ws, homes[w]);
      try {
        measureBaseline(envs[w], ws, o);
        o.daemonVmHWMMb = memoryMb(d.pid, 'VmHWM');
        o.loadAfter = load();
      } finally {
        d.kill('SIGTERM');
        sleep(500);
      }
    }
    // Phase 4: warm brackets, the watchers alternated round by round, each pair beside a find.
    const s = Object.fromEntries(watchers.map((w) => [w, { find: [], daemon: [], lone: [], hinted: 0, pairs: 0, warmCalls: [], vmHWM: [], watchmanRss: [], load: [], syncMs: [], handledMs: [], hintedPaths: [] }]));
    for (let r = 0; r < rounds; r++) {
      for (const w of watchers) {
        const x = s[w];
        const d = startDaemon(envs[w], ws, homes[w]);
        try {
          x.warmCalls.push(warmUp(envs[w], ws, homes[w]));
          const lone = { ...envs[w], TAKEBACK_HOOK_DAEMON: '0' };
          const hintedBefore = hinted(homes[w]);
          const logBefore = logLines(homes[w]).length;
          x.load.push(load());
          for (let i = 0; i < 5; i++) {
            x.find.push(find(ws));
            const p = bashCall(envs[w], ws);
            x.daemon.push(p.pre + p.post);
            const l = bashCall(lone, ws);
            x.lone.push(l.pre + l.post);
            x.pairs++;
          }
          x.hinted += hinted(homes[w]) - hintedBefore;
          const t = daemonTimes(logLines(homes[w]).slice(logBefore));
          x.syncMs.push(...t.syncMs);
          x.handledMs.push(...t.handledMs);
          x.hintedPaths.push(...t.hintedPaths);
          x.vmHWM.push(memoryMb(d.pid, 'VmHWM'));
          if (w === 'watchman') x.watchmanRss.push(memoryMb(Number(readFileSync(join(scratch, 'watchman-outside', 'pid'), 'utf8').trim()), 'VmRSS'));
        } finally {
          d.kill('SIGTERM');
          sleep(500);
        }
      }
    }
    out.warm = {};
    for (const w of watchers) {
      const x = s[w];
      const m = { find: median(x.find), daemon: median(x.daemon), lone: median(x.lone) };
      out.warm[w] = { findMs: Math.round(m.find), daemonPairMs: Math.round(m.daemon), daemonRatio: +(m.daemon / m.find).toFixed(2), inProcessPairMs: Math.round(m.lone), inProcessRatio: +(m.lone / m.find).toFixed(2), daemonPairs: x.daemon.map((v) => Math.round(v)), finds: x.find.map((v) => Math.round(v)), hintedScans: `${x.hinted} of ${2 * x.pairs}`, daemonSyncMedianMs: +median(x.syncMs).toFixed(1), daemonHandledMedianMs: +median(x.handledMs).toFixed(1), hintedPathsMedian: median(x.hintedPaths), warmCalls: x.warmCalls, daemonVmHWMMb: x.vmHWM, watchmanVmRSSMb: x.watchmanRss, load: x.load };
      const list = JSON.parse(run(['list', '--json'], envs[w], ws));
      const commands = list.sets.filter((x) => x.source.kind === 'command');
      out.warm[w].recorded = commands.slice(0, 3).map((x) => `${x.files.length} files${x.files.some((f) => f.gap) ? ' (gaps)' : ''}`);
      // Every Bash set holds its 10 files and nothing else: no sync cookie recorded.
      out.warm[w].setsNotTen = commands.filter((x) => x.files.length !== 10 || x.files.some((f) => /^\.(watchman|takeback-watch)-cookie-/.test(f.path))).length;
      out.warm[w].commandSets = commands.length;
      try {
        out.warm[w].daemonLog = readFileSync(join(homes[w], 'logs', 'hook.log'), 'utf8').split('\n').filter((l) => l && !/\] (claude-code \w+|watch|event): /.test(l)).slice(-10);
      } catch {
        out.warm[w].daemonLog = [];
      }
    }
    out.loadAfter = load();
  } finally {
    wm?.stop();
    // TAKEBACK_BENCH_KEEP=1 keeps the homes (their logs) and the Watchman server's folder.
    if (process.env.TAKEBACK_BENCH_KEEP === '1') log(`kept: ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

main();
