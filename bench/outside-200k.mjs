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
// TAKEBACK_BENCH_OUTSIDE_FILES=20000 runs the same on a 20,000-file tree (a quick run);
// TAKEBACK_BENCH_OUTSIDE_COMPARE=1 first makes the baseline once more, in the same run, with
// every slice read on the daemon's own thread (TAKEBACK_BASELINE_WORKER=0): `onThread`.
// Prints one JSON object; bench/RESULTS.md keeps the figures with the machine and its load.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rng, sourceText } from './gen.mjs';
import { median, sleep, time } from './measure.mjs';

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

const find = (ws) => time('find', ['.', '-type', 'f', '-printf', '%s %T@ %p\n'], { cwd: ws });

/**
 * One hook event through `takeback hook claude-code` as an agent runs it (bin/takeback.js by its
 * path: the hook client of native/build-hook when it is built, else Node), timed (ms).
 */
function hook(env, ws, event) {
  return time(BIN, ['hook', 'claude-code'], { cwd: ws, env, input: JSON.stringify({ session_id: 'bench-outside', cwd: ws, ...event }) });
}

/** How many scans the daemon's watcher gave hints to so far (its debug log). */
function hinted(home) {
  try {
    return readFileSync(join(home, 'logs', 'hook.log'), 'utf8').split('\n').filter((l) => l.includes('] watch: hints for ')).length;
  } catch {
    return 0;
  }
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
  for (let i = 0; i < 200 && !(existsSync(join(home, 'run')) && readdirSync(join(home, 'run')).some((n) => n.endsWith('.sock'))); i++) sleep(50);
  return daemon;
}

function main() {
  const ws = outsideTree(FILES);
  // TAKEBACK_BENCH_OUTSIDE_HOME: a home whose baseline of the tree is complete (kept from a run
  // before): only the warm brackets are measured.
  const reuse = process.env.TAKEBACK_BENCH_OUTSIDE_HOME;
  const home = reuse ?? mkdtempSync(join(tmpdir(), 'takeback-bench-home-'));
  const env = { ...process.env, TAKEBACK_HOME: home, TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '600000', TAKEBACK_LOG_LEVEL: 'debug' };
  delete env.NODE_EXTRA_CA_CERTS;
  const out = { files: FILES, machine: `${cpus().length} cores (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(1)} GB, Node ${process.version}`, loadBefore: loadavg().map((x) => x.toFixed(1)).join(' ') };
  if (!reuse && process.env.TAKEBACK_BENCH_OUTSIDE_COMPARE === '1') {
    // First, in the same run, the baseline read on the daemon's own thread (as before the worker).
    const h = mkdtempSync(join(tmpdir(), 'takeback-bench-home-'));
    const e = { ...env, TAKEBACK_HOME: h, TAKEBACK_BASELINE_WORKER: '0' };
    const d = startDaemon(e, ws, h);
    out.onThread = { loadBefore: loadavg().map((x) => x.toFixed(1)).join(' ') };
    try {
      measureBaseline(e, ws, out.onThread);
      out.onThread.loadAfter = loadavg().map((x) => x.toFixed(1)).join(' ');
      delete out.onThread.during;
    } finally {
      d.kill('SIGTERM');
      rmSync(h, { recursive: true, force: true });
    }
  }
  const daemon = startDaemon(env, ws, home);
  try {
    if (!reuse) measureBaseline(env, ws, out);
    // Warm: the daemon's watcher trusted after a few calls; then brackets against find, interleaved.
    for (let i = 0; i < 3; i++) bashCall(env, ws);
    const lone = { ...env, TAKEBACK_HOOK_DAEMON: '0' };
    const s = { find: [], daemon: [], lone: [] };
    const hintedBefore = hinted(home);
    for (let i = 0; i < 5; i++) {
      s.find.push(find(ws));
      const d = bashCall(env, ws);
      s.daemon.push(d.pre + d.post);
      const l = bashCall(lone, ws);
      s.lone.push(l.pre + l.post);
    }
    const m = { find: median(s.find), daemon: median(s.daemon), lone: median(s.lone) };
    out.warm = { findMs: Math.round(m.find), daemonPairMs: Math.round(m.daemon), daemonRatio: +(m.daemon / m.find).toFixed(2), inProcessPairMs: Math.round(m.lone), inProcessRatio: +(m.lone / m.find).toFixed(2), daemonPairs: s.daemon.map((x) => Math.round(x)), finds: s.find.map((x) => Math.round(x)), hintedScans: hinted(home) - hintedBefore };
    const list = JSON.parse(run(['list', '--json'], env, ws));
    out.recorded = list.sets.filter((x) => x.source.kind === 'command').slice(0, 3).map((x) => `${x.files.length} files${x.files.some((f) => f.gap) ? ' (gaps)' : ''}`);
    out.loadAfter = loadavg().map((x) => x.toFixed(1)).join(' ');
  } finally {
    // Whether the daemon stayed up to the end, and what it logged besides the events it served.
    out.daemonUp = daemon.exitCode === null && daemon.signalCode === null;
    try {
      out.daemonLog = readFileSync(join(home, 'logs', 'hook.log'), 'utf8').split('\n').filter((l) => l && !/\] (claude-code \w+|watch): /.test(l)).slice(-20);
    } catch {
      out.daemonLog = [];
    }
    daemon.kill('SIGTERM');
    if (!reuse) rmSync(home, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

main();
