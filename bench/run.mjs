#!/usr/bin/env node
// takeback's benchmarks (issue 5): each figure against a baseline measured in the same run.
//
//   npm run bench                 # builds dist/, then everything (about 3 minutes; 4 the first time)
//   npm run bench -- --quick      # the 10,000-file workspace only, fewer edits
//   node bench/run.mjs --only=snapshot,hook   # some sections (no build; bench/out/last.json only)
//   node bench/run.mjs --only=peers,hinted-scan   # other agents' checkpoints against takeback's hooks, and the scans with a watcher's hints (section 7)
//   node bench/run.mjs --only=fsync               # what the durability syncs cost (section 9; also `node bench/fsync.mjs`)
//   node bench/run.mjs --only=cold                # the first (cold) snapshot alone, several new journals (section 1)
//   node bench/run.mjs --only=million             # the 1,000,000-file tree (section 10; never by default: it is made once, about 4.5 GB, in a minute or two)
//   npm run bench -- --million                    # everything, and the million-file tree too
//
// Generated trees are kept in $TAKEBACK_BENCH_CACHE (default: <tmp>/takeback-bench) between runs.
// Results go to bench/RESULTS.md, between the `bench:begin`/`bench:end` markers (the rest of the
// file, written by people, is kept), and to bench/out/last.json.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generated, generatedFast, git, realTree, refreshIndex, rng, sourceText } from './gen.mjs';
import { millionBench } from './million.mjs';
import { fireEvent, freePort, startHttpDaemon } from './http-hooks.mjs';
const { HOOK_ENV_PREFIX } = await import('../dist/server/cli/self.js');
import { fmt, median, peakRss, sleep, time, treeBytes, waitForDaemon } from './measure.mjs';
import { fsyncBench } from './fsync.mjs';
import { mergeBench } from './merge.mjs';
import { hintedScanBench, peersBench, peersHome } from './peers.mjs';

// Watchman is measured only through a server of the bench's own (peers.mjs `startWatchman`: the
// peers and the million-file sections): every other section's daemons and sidecars watch with
// @parcel/watcher. Else the first of them would start the machine's Watchman service (a Watchman
// client starts it when it asks for its socket), which would then watch the bench's trees for the
// rest of the run, hundreds of MB and CPU at every change, under the sections measured after it.
process.env.TAKEBACK_WATCHMAN ??= '0';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'takeback.js');
const NODE = process.execPath;
const args = process.argv.slice(2);
const QUICK = args.includes('--quick');
const ONLY = (args.find((a) => a.startsWith('--only=')) ?? '').slice(7).split(',').filter(Boolean);
const CACHE = process.env.TAKEBACK_BENCH_CACHE || join(tmpdir(), 'takeback-bench');
const SCRATCH = mkdtempSync(join(tmpdir(), 'takeback-bench-run-'));
const want = (name) => ONLY.length === 0 || ONLY.includes(name);
/** The million-file tree is measured only when asked for: `--million`, or `--only=million`. */
const MILLION = args.includes('--million') || ONLY.includes('million');

const log = (s) => process.stderr.write(`[bench] ${s}\n`);
const rows = []; // { section, measure, workspace, value, baseline, ratio, target, met, note }
const extra = {}; // details for last.json

/**
 * Stops every capture daemon still running for a home under this run's scratch folder, and waits
 * a second for them to go. A hook run the default way starts a daemon when none answers (the
 * sparse-file and fsync sections' hooks do), which stays until idle for 30 minutes, watching its
 * workspace: the sections that measure the hooks against `git status` (the peers, the million-file
 * tree) run with none of them beside.
 */
function stopLeftDaemons() {
  let stopped = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let cmd;
    let env;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
      env = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
    } catch {
      continue; // gone, or not ours to read
    }
    if (!cmd.includes('hook-daemon')) continue;
    const home = env.find((v) => v.startsWith('TAKEBACK_HOME='))?.slice('TAKEBACK_HOME='.length);
    if (!home || !home.startsWith(`${SCRATCH}/`)) continue;
    try {
      process.kill(Number(pid), 'SIGTERM');
      stopped++;
    } catch {
      // gone meanwhile
    }
  }
  if (stopped === 0) return;
  log(`stopped ${stopped} capture daemon(s) left running by earlier sections`);
  sleep(1000);
}

function home(name) {
  const h = join(SCRATCH, `home-${name}`);
  mkdirSync(h, { recursive: true });
  return { ...process.env, TAKEBACK_HOME: h, TAKEBACK_LOG_LEVEL: '' };
}

/** `takeback ...args` as a user's shell runs it: bin/takeback.js as a command (its /bin/sh lines start Node). */
function tb(cwd, env, args, opts = {}) {
  return time(BIN, args, { cwd, env, ...opts });
}

function tbJson(cwd, env, args) {
  const cap = {};
  tb(cwd, env, [...args, '--json'], { capture: cap });
  return JSON.parse(cap.stdout);
}

function record(r) {
  rows.push(r);
  const ratio = r.ratio === undefined ? '' : ` ratio ${fmt.ratio(r.ratio)} (target ${r.target})`;
  log(`${r.measure} [${r.workspace}]: ${r.value}${r.baseline ? ` vs ${r.baseline}` : ''}${ratio}${r.note ? ` — ${r.note}` : ''}`);
}

const EXCLUDED = ['.git', 'node_modules', 'dist', 'build', 'out', 'target', 'coverage', '.cache', '__pycache__', '.venv', 'venv'];

/** `n` tracked files spread over the tree, that takeback's scan covers (no excluded folder on the way). */
function pickFiles(ws, n, seed) {
  const all = git(ws, 'ls-files', '-z')
    .split('\0')
    .filter((p) => p && !p.split('/').some((s) => EXCLUDED.includes(s)) && !p.endsWith('.gitignore'))
    .filter((p) => {
      try {
        const st = statSync(join(ws, p));
        return st.isFile() && st.size < 1_000_000;
      } catch {
        return false;
      }
    });
  const rand = rng(seed);
  const out = new Set();
  while (out.size < Math.min(n, all.length)) out.add(all[Math.floor(rand() * all.length)]);
  return [...out];
}

// ---------------------------------------------------------------------------------------------
// 1. Snapshot of an unchanged workspace (warm) and a command bracket in which 10 files change.

function snapshotBench(ws, label, iterations) {
  const env = home(`snap-${label}`);
  refreshIndex(ws);
  const files = Number(git(ws, 'ls-files', '-z').split('\0').filter(Boolean).length);
  // The first (cold) scan.
  const cap = {};
  const cold = tb(ws, env, ['capture', 'begin', '--id', 'cold', '--json'], { capture: cap });
  const coldScan = JSON.parse(cap.stdout).scan;
  tb(ws, env, ['capture', 'end', '--id', 'cold']);
  const gitCold = time('git', ['status', '--porcelain'], { cwd: ws });
  record({ section: 1, measure: 'first (cold) snapshot', workspace: label, value: fmt.ms(cold), baseline: `git status ${fmt.ms(gitCold)}`, ratio: cold / gitCold, target: '— (reads everything once)', note: `scan ${coldScan?.status}${coldScan?.reason ? ` (${coldScan.reason})` : ''}; ${files} tracked files` });
  sleep(2100); // past the racy window of the cold scan
  tb(ws, env, ['capture', 'begin', '--id', 'warm']);
  tb(ws, env, ['capture', 'end', '--id', 'warm']);

  const pick = pickFiles(ws, 10, files);
  const originals = pick.map((p) => readFileSync(join(ws, p)));
  const s = { git0: [], find0: [], tb0: [], git1: [], tb1: [], bracket: [] };
  for (let i = 0; i < iterations; i++) {
    s.git0.push(time('git', ['status', '--porcelain'], { cwd: ws }));
    s.find0.push(time('find', ['.', '-path', './.git', '-prune', '-o', '-type', 'f', '-printf', '%s %T@ %p\n'], { cwd: ws }));
    const b = tb(ws, env, ['capture', 'begin', '--id', `b${i}`]);
    s.tb0.push(b);
    pick.forEach((p, k) => appendFileSync(join(ws, p), `// bench edit ${i} ${k}\n`));
    s.git1.push(time('git', ['status', '--porcelain'], { cwd: ws }));
    const e = tb(ws, env, ['capture', 'end', '--id', `b${i}`]);
    s.tb1.push(e);
    s.bracket.push(b + e);
    // Put the files back (that is the user's doing, outside any command) and let both tools see it.
    pick.forEach((p, k) => writeFileSync(join(ws, p), originals[k]));
    git(ws, 'update-index', '-q', '--refresh');
    tb(ws, env, ['capture', 'begin', '--id', `r${i}`]);
    tb(ws, env, ['capture', 'end', '--id', `r${i}`]);
    sleep(2100); // past the racy window: the next "unchanged" snapshot reads nothing
  }
  const sets = tbJson(ws, env, ['list', '--all']).sets.filter((x) => x.source.kind === 'command' && x.files.length === 10).length;
  const m = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, median(v)]));
  extra[`snapshot-${label}`] = { samples: s, medians: m, files, setsWith10Files: sets };
  // Issue 5's targets are for 100,000 files; smaller trees are shown for what start-up costs.
  const big = files >= 100_000;
  const target = (t, ok) => (big ? { target: t, met: ok } : { target: '— (targets: 100k)' });
  record({ section: 1, measure: 'snapshot, unchanged (warm)', workspace: label, value: fmt.ms(m.tb0), baseline: `git status ${fmt.ms(m.git0)}`, ratio: m.tb0 / m.git0, ...target('≤ 1.0', m.tb0 / m.git0 <= 1.0) });
  record({ section: 1, measure: 'snapshot, unchanged (warm) vs find', workspace: label, value: fmt.ms(m.tb0), baseline: `find ${fmt.ms(m.find0)}`, ratio: m.tb0 / m.find0, target: '—' });
  record({ section: 1, measure: 'end of a command that changed 10 files', workspace: label, value: fmt.ms(m.tb1), baseline: `git status ${fmt.ms(m.git1)}`, ratio: m.tb1 / m.git1, ...target('≤ 1.2', m.tb1 / m.git1 <= 1.2), note: `${sets}/${iterations} brackets recorded 10 files` });
  record({ section: 1, measure: 'whole command bracket (begin + end)', workspace: label, value: fmt.ms(m.bracket), baseline: `2 × git status ${fmt.ms(m.git0 + m.git1)}`, ratio: m.bracket / (m.git0 + m.git1), target: '—' });
  return env;
}

/**
 * The first (cold) snapshot alone, `iterations` times on workspace `ws`, each in a new journal,
 * interleaved with `git status` and with the same snapshot listed in JavaScript
 * (TAKEBACK_NATIVE_LIST=0) where the native listing is built. Issue 18's target (100k): ≤ 2.0×.
 */
function coldBench(ws, label, iterations) {
  refreshIndex(ws);
  const s = { git: [], tb: [], js: [] };
  for (let i = 0; i < iterations; i++) {
    s.git.push(time('git', ['status', '--porcelain'], { cwd: ws }));
    s.tb.push(tb(ws, home(`cold-${label}-${i}`), ['capture', 'begin', '--id', 'cold']));
    s.js.push(tb(ws, { ...home(`cold-js-${label}-${i}`), TAKEBACK_NATIVE_LIST: '0' }, ['capture', 'begin', '--id', 'cold']));
  }
  const m = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, median(v)]));
  extra[`cold-${label}`] = { samples: s, medians: m };
  const big = label.includes('100k');
  record({ section: 1, measure: `first (cold) snapshot, ${iterations} new journals`, workspace: label, value: fmt.ms(m.tb), baseline: `git status ${fmt.ms(m.git)}`, ratio: m.tb / m.git, ...(big ? { target: '≤ 2.0', met: m.tb / m.git <= 2.0 } : { target: '— (target: 100k)' }), note: `listed in JavaScript (TAKEBACK_NATIVE_LIST=0) ${fmt.ms(m.js)}, ${fmt.ratio(m.js / m.git)}` });
}

// ---------------------------------------------------------------------------------------------
// 2. A file tool call: the PreToolUse and PostToolUse hook processes, against `node -e 0`.

function hookBench(ws, env, iterations) {
  const file = join(ws, pickFiles(ws, 1, 7)[0]);
  const ev = (name, extraFields) =>
    JSON.stringify({ session_id: 'bench-session', cwd: ws, hook_event_name: name, permission_mode: 'acceptEdits', ...extraFields });
  // Each hook pair twice, interleaved with `node -e 0`: in-process (TAKEBACK_HOOK_DAEMON=0, as
  // with no daemon running), and handed to a capture daemon (`takeback hook-daemon`, started here
  // and stopped at the end).
  const inProcess = { ...env, TAKEBACK_HOOK_DAEMON: '0' };
  const viaDaemon = { ...env, TAKEBACK_HOOK_DAEMON: '1' };
  const daemon = spawn(NODE, [BIN, 'hook-daemon'], { env: viaDaemon, stdio: 'ignore' });
  try {
    waitForDaemon(env.TAKEBACK_HOME, 20_000);
    tb(ws, viaDaemon, ['hook', 'claude-code'], { input: ev('UserPromptSubmit', { prompt: 'bench: edit a file' }) });
    const s = { node: [], pre: [], post: [], pair: [], dPre: [], dPost: [], dPair: [] };
    const original = readFileSync(file);
    // Each hook as the agent runs it: the command `init` writes (its variables first), through bash.
    const hookCmd = `${HOOK_ENV_PREFIX}'${NODE}' '${BIN}' hook claude-code`;
    const runHook = (e, input) => time('bash', ['-c', hookCmd], { cwd: ws, env: e, input });
    const pair = (e, id, i) => {
      const input = { tool_name: 'Edit', tool_input: { file_path: file, old_string: 'a', new_string: 'b' }, tool_use_id: id };
      const pre = runHook(e, ev('PreToolUse', input));
      appendFileSync(file, `// hook bench ${id} ${i}\n`);
      const post = runHook(e, ev('PostToolUse', { ...input, tool_response: { filePath: file } }));
      return [pre, post];
    };
    s.bareNode = [];
    const bare = { ...process.env };
    delete bare.NODE_EXTRA_CA_CERTS;
    for (let i = 0; i < iterations; i++) {
      s.node.push(time(NODE, ['-e', '0']));
      s.bareNode.push(time(NODE, ['-e', '0'], { env: bare }));
      const [pre, post] = pair(inProcess, `toolu_bench_${i}`, i);
      s.pre.push(pre);
      s.post.push(post);
      s.pair.push(pre + post);
      const [dPre, dPost] = pair(viaDaemon, `toolu_benchd_${i}`, i);
      s.dPre.push(dPre);
      s.dPost.push(dPost);
      s.dPair.push(dPre + dPost);
    }
    tb(ws, viaDaemon, ['hook', 'claude-code'], { input: ev('Stop', {}) });
    writeFileSync(file, original);
    const sets = tbJson(ws, env, ['list', '--all']).sets.filter((x) => x.source.kind === 'tool');
    const recorded = sets.filter((x) => /^toolu_bench_\d/.test(x.source.toolCallId ?? '')).length;
    const dRecorded = sets.filter((x) => x.source.toolCallId?.startsWith('toolu_benchd_')).length;
    const m = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, median(v)]));
    extra.hook = { samples: s, medians: m, recorded, dRecorded };
    if (process.env.NODE_EXTRA_CA_CERTS) record({ section: 2, measure: '`node -e 0` without NODE_EXTRA_CA_CERTS (which this machine sets; the hooks start without it)', workspace: '—', value: fmt.ms(m.bareNode), baseline: `node -e 0 ${fmt.ms(m.node)}`, ratio: m.bareNode / m.node, target: '—' });
    record({ section: 2, measure: 'file tool call: PreToolUse + PostToolUse hooks, in-process (no daemon)', workspace: 'gen-10k', value: `${fmt.ms(m.pair)} (${fmt.ms(m.pre)} + ${fmt.ms(m.post)})`, baseline: `node -e 0 ${fmt.ms(m.node)}`, ratio: m.pair / m.node, target: '≤ 2.2', met: m.pair / m.node <= 2.2, note: `${recorded}/${iterations} edits recorded` });
    record({ section: 2, measure: 'file tool call: PreToolUse + PostToolUse hooks, through the capture daemon', workspace: 'gen-10k', value: `${fmt.ms(m.dPair)} (${fmt.ms(m.dPre)} + ${fmt.ms(m.dPost)})`, baseline: `node -e 0 ${fmt.ms(m.node)}`, ratio: m.dPair / m.node, target: '≤ 2.2', met: m.dPair / m.node <= 2.2, note: `${dRecorded}/${iterations} edits recorded` });
    const version = [];
    const direct = [];
    for (let i = 0; i < iterations; i++) {
      version.push(tb(ws, env, ['--version']));
      direct.push(time(NODE, [BIN, '--version'], { cwd: ws, env }));
    }
    record({ section: 2, measure: '`takeback --version` (start-up alone)', workspace: '—', value: fmt.ms(median(version)), baseline: `node -e 0 ${fmt.ms(m.node)}`, ratio: median(version) / m.node, target: '—' });
    record({ section: 2, measure: '`node bin/takeback.js --version` (Node started directly, so with NODE_EXTRA_CA_CERTS)', workspace: '—', value: fmt.ms(median(direct)), baseline: `node -e 0 ${fmt.ms(m.node)}`, ratio: median(direct) / m.node, target: '—' });
  } finally {
    daemon.kill('SIGTERM');
  }
}

// ---------------------------------------------------------------------------------------------
// 1 and 2 through Claude Code's http hooks (`init claude-code --http`): a file tool call's hook
// pair, and a Bash call's (a snapshot before, one after 10 files changed), each event fired at
// the daemon's port and at the command hook beside it at once (bench/http-hooks.mjs). Timed: the
// wait for both, which is what a running agent waits. Baselines in the same run, interleaved.

async function httpHookBench(ws, env, label, iterations, { fileCall, bashCall }) {
  const port = await freePort();
  const d = await startHttpDaemon({ node: NODE, bin: BIN, root: ROOT, env, port });
  const ctx = { ...d, port, cwd: ws, env };
  const ev = (name, fields = {}) => ({ session_id: 'bench-http', cwd: ws, hook_event_name: name, permission_mode: 'acceptEdits', ...fields });
  try {
    await fireEvent(ctx, ev('UserPromptSubmit', { prompt: 'bench: http hooks' }));
    const s = { node: [], pre: [], post: [], pair: [], git0: [], git1: [], bPre: [], bPost: [] };
    const file = join(ws, pickFiles(ws, 1, 11)[0]);
    const original = readFileSync(file);
    const pick = pickFiles(ws, 10, 12);
    const originals = pick.map((p) => readFileSync(join(ws, p)));
    for (let i = 0; i < iterations; i++) {
      if (fileCall) {
        s.node.push(time(NODE, ['-e', '0']));
        const input = { tool_name: 'Edit', tool_input: { file_path: file, old_string: 'a', new_string: 'b' }, tool_use_id: `toolu_http_${i}` };
        const pre = await fireEvent(ctx, ev('PreToolUse', input));
        appendFileSync(file, `// http hook bench ${i}\n`);
        const post = await fireEvent(ctx, ev('PostToolUse', { ...input, tool_response: { filePath: file } }));
        s.pre.push(pre);
        s.post.push(post);
        s.pair.push(pre + post);
      }
      if (bashCall) {
        const input = { tool_name: 'Bash', tool_input: { command: 'bench: append to 10 files' }, tool_use_id: `toolu_httpb_${i}` };
        s.git0.push(time('git', ['--no-optional-locks', 'status', '--porcelain'], { cwd: ws }));
        s.bPre.push(await fireEvent(ctx, ev('PreToolUse', input)));
        pick.forEach((p, k) => appendFileSync(join(ws, p), `// http bench edit ${i} ${k}\n`));
        s.git1.push(time('git', ['--no-optional-locks', 'status', '--porcelain'], { cwd: ws }));
        s.bPost.push(await fireEvent(ctx, ev('PostToolUse', { ...input, tool_response: {} })));
        // Put the files back (the user's doing) and let the daemon see it before the next round.
        pick.forEach((p, k) => writeFileSync(join(ws, p), originals[k]));
        git(ws, 'update-index', '-q', '--refresh');
        await fireEvent(ctx, ev('PreToolUse', { ...input, tool_use_id: `toolu_httpr_${i}` }));
        await fireEvent(ctx, ev('PostToolUse', { ...input, tool_use_id: `toolu_httpr_${i}`, tool_response: {} }));
        sleep(2100); // past the racy window, as in the snapshot bench
      }
    }
    await fireEvent(ctx, ev('Stop'));
    writeFileSync(file, original);
    const sets = tbJson(ws, env, ['list', '--all']).sets;
    const m = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, median(v)]));
    extra[`http-${label}`] = { samples: s, medians: m };
    if (fileCall) {
      const recorded = sets.filter((x) => /^toolu_http_\d/.test(x.source.toolCallId ?? '')).length;
      record({ section: 2, measure: 'file tool call: PreToolUse + PostToolUse as http hooks to the capture daemon (each with its command hook beside it)', workspace: label, value: `${fmt.ms(m.pair)} (${fmt.ms(m.pre)} + ${fmt.ms(m.post)})`, baseline: `node -e 0 ${fmt.ms(m.node)}`, ratio: m.pair / m.node, target: '≤ 2.2, and ≤ 20 ms', met: m.pair / m.node <= 2.2 && m.pair <= 20, note: `${recorded}/${iterations} edits recorded` });
    }
    if (bashCall) {
      const recorded = sets.filter((x) => /^toolu_httpb_\d/.test(x.source.toolCallId ?? '') && x.files.length === 10).length;
      record({ section: 1, measure: 'snapshot, unchanged, as a Bash call\'s PreToolUse http hook (the daemon scans)', workspace: label, value: fmt.ms(m.bPre), baseline: `git status ${fmt.ms(m.git0)}`, ratio: m.bPre / m.git0, target: '≤ 1.0', met: m.bPre / m.git0 <= 1.0 });
      record({ section: 1, measure: 'end of a command that changed 10 files, as a Bash call\'s PostToolUse http hook', workspace: label, value: fmt.ms(m.bPost), baseline: `git status ${fmt.ms(m.git1)}`, ratio: m.bPost / m.git1, target: '≤ 1.2', met: m.bPost / m.git1 <= 1.2, note: `${recorded}/${iterations} brackets recorded 10 files` });
    }
  } finally {
    d.child.kill('SIGTERM');
  }
}

// ---------------------------------------------------------------------------------------------
// Per-turn overhead with a 5 GiB sparse file in the workspace (untracked, not ignored), against
// the same turn without it, interleaved: a turn's hooks (UserPromptSubmit, then a Bash call's
// PreToolUse and PostToolUse, then Stop), in-process. test/sparse-file.test.ts shows the file is
// never read; this shows the turn costs what it costs without it.

function sparseBench(ws, iterations) {
  const env = home('sparse');
  const big = join(ws, 'bench-sparse-5g.img');
  const ev = (name, fields = {}) => JSON.stringify({ session_id: 'bench-sparse', cwd: ws, hook_event_name: name, ...fields });
  const turn = (i) => {
    const bash = { tool_name: 'Bash', tool_input: { command: 'true' }, tool_use_id: `toolu_sparse_${i}` };
    return (
      tb(ws, env, ['hook', 'claude-code'], { input: ev('UserPromptSubmit', { prompt: `sparse ${i}` }) }) +
      tb(ws, env, ['hook', 'claude-code'], { input: ev('PreToolUse', bash) }) +
      tb(ws, env, ['hook', 'claude-code'], { input: ev('PostToolUse', { ...bash, tool_response: {} }) }) +
      tb(ws, env, ['hook', 'claude-code'], { input: ev('Stop') })
    );
  };
  const s = { without: [], with: [] };
  try {
    tb(ws, env, ['hook', 'claude-code'], { input: ev('SessionStart', { source: 'startup' }) });
    for (let i = 0; i < iterations; i++) {
      rmSync(big, { force: true });
      turn(`w${i}`); // the scan that sees it go
      s.without.push(turn(`a${i}`));
      execFileSync('truncate', ['-s', '5G', big]);
      turn(`x${i}`); // the scan that sees it come
      s.with.push(turn(`b${i}`));
    }
  } finally {
    rmSync(big, { force: true });
  }
  const m = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, median(v)]));
  extra.sparse = { samples: s, medians: m };
  record({ section: 1, measure: 'a turn (prompt, a Bash call, stop: four hooks) with a 5 GiB sparse file in the workspace', workspace: 'gen-10k', value: fmt.ms(m.with), baseline: `without it ${fmt.ms(m.without)}`, ratio: m.with / m.without, target: '≈ 1 (does not grow)', met: m.with / m.without <= 1.1 });
}

// ---------------------------------------------------------------------------------------------
// 3. Preview and apply (undo, redo) of a turn that changed 500 files, against `cp` of those files.

function turnBench(ws, env, iterations) {
  const pick = pickFiles(ws, 500, 500);
  const originals = pick.map((p) => readFileSync(join(ws, p)));
  const stash = join(SCRATCH, 'stash-500');
  const copyTo = join(SCRATCH, 'copy-500');
  const rand = rng(500);
  tb(ws, env, ['turn', 'begin', '--id', 'bench500', '--label', 'rewrite 500 files']);
  // One tool call that rewrites 500 files (a file capture: it does not depend on the command scan).
  tb(ws, env, ['capture', 'begin', '--id', 'c500', '--tool', 'codemod', ...pick.map((p) => join(ws, p))]);
  for (const p of pick) {
    const text = sourceText(rand, 200 + Math.floor(rand() * 2000), 'w');
    writeFileSync(join(ws, p), text);
    mkdirSync(dirname(join(stash, p)), { recursive: true });
    writeFileSync(join(stash, p), text);
  }
  tb(ws, env, ['capture', 'end', '--id', 'c500']);
  tb(ws, env, ['turn', 'end', '--id', 'bench500']);
  cpSync(stash, copyTo, { recursive: true });
  const s = { preview: [], undo: [], redo: [], cp: [] };
  for (let i = 0; i < iterations; i++) {
    s.preview.push(tb(ws, env, ['preview', '--turn', 'bench500', '--json']));
    s.undo.push(tb(ws, env, ['undo', '--turn', 'bench500']));
    s.cp.push(time('cp', ['-r', `${stash}/.`, `${copyTo}/`]));
    s.redo.push(tb(ws, env, ['redo', '--turn', 'bench500']));
  }
  // The same through `node bin/takeback.js` (Node started directly, with this machine's NODE_EXTRA_CA_CERTS).
  const d = { preview: [], apply: [] };
  for (let i = 0; i < iterations; i++) {
    d.preview.push(time(NODE, [BIN, 'preview', '--turn', 'bench500', '--json'], { cwd: ws, env }));
    d.apply.push(time(NODE, [BIN, 'undo', '--turn', 'bench500'], { cwd: ws, env }));
    d.apply.push(time(NODE, [BIN, 'redo', '--turn', 'bench500'], { cwd: ws, env }));
  }
  const after = readFileSync(join(ws, pick[0]), 'utf8') === readFileSync(join(stash, pick[0]), 'utf8');
  tb(ws, env, ['undo', '--turn', 'bench500']);
  const restored = pick.every((p, k) => readFileSync(join(ws, p)).equals(originals[k]));
  pick.forEach((p, k) => writeFileSync(join(ws, p), originals[k])); // whatever happened above
  git(ws, 'update-index', '-q', '--refresh');
  const m = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, median(v)]));
  const apply = median([...s.undo, ...s.redo]);
  extra.turn500 = { samples: s, medians: m, apply, redoLeftAfter: after, undoRestored: restored };
  record({ section: 3, measure: 'preview of a 500-file turn', workspace: 'gen-10k', value: fmt.ms(m.preview), baseline: 'target 200 ms', ratio: m.preview / 200, target: '≤ 1.0 (200 ms)', met: m.preview <= 200 });
  record({ section: 3, measure: 'apply (undo / redo) of a 500-file turn', workspace: 'gen-10k', value: `${fmt.ms(apply)} (undo ${fmt.ms(m.undo)}, redo ${fmt.ms(m.redo)})`, baseline: `cp ${fmt.ms(m.cp)}`, ratio: apply / m.cp, target: '≤ 2.0', met: apply / m.cp <= 2.0, note: restored && after ? 'files checked after undo and redo' : 'FILES NOT AS EXPECTED' });
  extra.turn500.direct = d;
  record({ section: 3, measure: 'preview / apply of the 500-file turn by `node bin/takeback.js` (Node started directly, with NODE_EXTRA_CA_CERTS)', workspace: 'gen-10k', value: `${fmt.ms(median(d.preview))} / ${fmt.ms(median(d.apply))}`, baseline: `cp ${fmt.ms(m.cp)}`, ratio: median(d.apply) / m.cp, target: '—' });
}

// ---------------------------------------------------------------------------------------------
// 4. `list` with 10,000 change sets in the journal.

async function listBench(iterations) {
  const env = home('list');
  const ws = join(SCRATCH, 'list-ws');
  mkdirSync(ws, { recursive: true });
  const { openWorkspace } = await import(join(ROOT, 'dist/server/core/open-workspace.js'));
  const opened = openWorkspace({ workspace: ws, env });
  const rand = rng(10_000);
  const hex = () => Array.from({ length: 64 }, () => '0123456789abcdef'[Math.floor(rand() * 16)]).join('');
  const t0 = Date.now() - 30 * 24 * 3600 * 1000;
  opened.journal.write(() => {
    for (let t = 0; t < 1000; t++) {
      const turn = opened.journal.turns.begin({ agent: 'claude-code', session: 's', label: `turn ${t}: do something`, now: t0 + t * 60_000 });
      for (let k = 0; k < 10; k++) {
        const n = 1 + Math.floor(rand() * 3);
        const files = Array.from({ length: n }, (_, j) => ({
          path: `src/m${Math.floor(rand() * 100)}/f${t}_${k}_${j}.ts`,
          before: { exists: true, type: 'file', sha256: hex(), size: 1000, mode: 0o644 },
          after: { exists: true, type: 'file', sha256: hex(), size: 1100, mode: 0o644 },
          status: 'modified',
          added: 3,
          removed: 1,
        }));
        const source = k % 2 ? { kind: 'tool', tool: 'Edit', toolCallId: `toolu_${t}_${k}` } : { kind: 'command', command: 'npm test', tool: 'Bash', toolCallId: `toolu_${t}_${k}` };
        opened.journal.sets.add({ turn: turn.id, source, files, now: t0 + t * 60_000 + k });
      }
      opened.journal.turns.end(turn.id, t0 + t * 60_000 + 50);
    }
  });
  opened.journal.close();
  const s = { node: [], list: [], json: [], all: [] };
  for (let i = 0; i < iterations; i++) {
    s.node.push(time(NODE, ['-e', '0']));
    s.list.push(tb(ws, env, ['list']));
    s.json.push(tb(ws, env, ['list', '--json']));
    s.all.push(tb(ws, env, ['list', '--all', '--json']));
  }
  const m = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, median(v)]));
  extra.list = { samples: s, medians: m };
  record({ section: 4, measure: '`list` with 10,000 sets', workspace: '1,000 turns', value: fmt.ms(m.list), baseline: 'target 100 ms', ratio: m.list / 100, target: '≤ 1.0 (100 ms)', met: m.list <= 100, note: `node -e 0 alone: ${fmt.ms(m.node)}` });
  record({ section: 4, measure: '`list --json`', workspace: '1,000 turns', value: fmt.ms(m.json), baseline: 'target 100 ms', ratio: m.json / 100, target: '≤ 1.0 (100 ms)', met: m.json <= 100 });
  record({ section: 4, measure: '`list --all --json` (every set)', workspace: '1,000 turns', value: fmt.ms(m.all), baseline: 'target 100 ms', ratio: m.all / 100, target: '—' });
}

// ---------------------------------------------------------------------------------------------
// 5. Journal bytes: 1,000 one-line edits of a 1 MB text file, then 20 turns writing the same bytes.

async function storageBench(edits) {
  const env = home('storage');
  const ws = join(SCRATCH, 'storage-ws');
  mkdirSync(ws, { recursive: true });
  const file = join(ws, 'big.txt');
  const rand = rng(1);
  const lines = [];
  for (let n = 0; n < 1024 * 1024; ) {
    const l = `line ${lines.length}: ${Math.floor(rand() * 1e12).toString(36)} ${'lorem ipsum dolor sit amet '.slice(0, Math.floor(rand() * 27))}`;
    lines.push(l);
    n += l.length + 1;
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  const { openWorkspace } = await import(join(ROOT, 'dist/server/core/open-workspace.js'));
  const { captureBegin, captureEnd, turnBegin, turnEnd } = await import(join(ROOT, 'dist/server/service/capture.js'));
  const measure = () => {
    const blobs = treeBytes(join(env.TAKEBACK_HOME, 'blobs'));
    const db = treeBytes(join(env.TAKEBACK_HOME, 'workspaces'));
    return { blobs: blobs.bytes, blobDisk: blobs.disk, blobFiles: blobs.files, db: db.bytes, total: blobs.bytes + db.bytes, disk: blobs.disk + db.disk };
  };
  const t0 = Date.now();
  let beforeLast = null;
  for (let i = 0; i < edits; i++) {
    if (i === edits - 1) beforeLast = readFileSync(file);
    const opened = openWorkspace({ workspace: ws, env });
    captureBegin(opened, { id: `e${i}`, paths: [file], tool: 'Edit' });
    const k = Math.floor(rand() * lines.length);
    lines[k] = `${lines[k]} edited ${i}`;
    writeFileSync(file, `${lines.join('\n')}\n`);
    captureEnd(opened, { id: `e${i}` });
    opened.journal.close();
  }
  const editMs = (Date.now() - t0) / edits;
  const afterEdits = measure();
  const latest = readFileSync(file);
  for (let t = 0; t < 20; t++) {
    const opened = openWorkspace({ workspace: ws, env });
    turnBegin(opened, { id: `same${t}`, label: 'write the same contents again' });
    captureBegin(opened, { id: `w${t}`, paths: [file], tool: 'Write' });
    writeFileSync(file, t % 2 ? latest : beforeLast); // both kept already
    captureEnd(opened, { id: `w${t}` });
    turnEnd(opened, { id: `same${t}` });
    opened.journal.close();
  }
  const afterTurns = measure();
  extra.storage = { edits, editMs, afterEdits, afterTurns };
  record({ section: 5, measure: `journal bytes after ${edits} one-line edits of a 1 MB file`, workspace: 'one file', value: fmt.mb(afterEdits.total), baseline: `${edits} × 1 MB = ${fmt.mb(edits * latest.length)}`, ratio: afterEdits.total / (edits * latest.length), target: '— (see compression below)', note: `${afterEdits.blobFiles} blobs, ${fmt.mb(afterEdits.blobDisk)} on disk; ${fmt.ms(editMs)} an edit in-process` });
  // Does compressing blobs pay? (They are stored compressed at zlib level 1 from 4 KB up when that saves an eighth.)
  const { corpus, measure: zmeasure } = await import('./compression.mjs');
  const versions = [];
  for (let i = 0; i < 20; i++) {
    const k = Math.floor(rand() * lines.length);
    lines[k] = `${lines[k]} z${i}`;
    versions.push(Buffer.from(`${lines.join('\n')}\n`));
  }
  const z = {
    'versions of the 1 MB text file (20)': zmeasure(versions),
    "this project's node_modules": zmeasure(corpus(join(ROOT, 'node_modules'), 3000)),
    "takeback's own sources": zmeasure(corpus(join(ROOT, 'server'), 3000)),
  };
  extra.compression = z;
  for (const [name, r] of Object.entries(z)) {
    const l1 = r.rows.find((x) => x.level === 1);
    const l6 = r.rows.find((x) => x.level === 6);
    record({ section: 5, measure: `disk taken by blobs, compressed (zlib level 1 / 6): ${name}`, workspace: `${r.files} files`, value: `${fmt.mb(l1.disk)} / ${fmt.mb(l6.disk)}`, baseline: `raw ${fmt.mb(r.rawDisk)}`, ratio: l1.disk / r.rawDisk, target: '— (decides compression)', note: `level 1: ${Math.round(l1.compressMBs)} MB/s in, ${Math.round(l1.decompressMBs)} MB/s out; level 6: ${Math.round(l6.compressMBs)} MB/s in` });
  }
  const grew = afterTurns.blobs - afterEdits.blobs;
  record({ section: 5, measure: 'blob bytes added by 20 turns writing contents already kept', workspace: 'one file', value: `${grew} B (database +${((afterTurns.db - afterEdits.db) / 1024).toFixed(0)} KB)`, baseline: `1 MB file`, ratio: grew / latest.length, target: '0 (equal bytes stored once)', met: grew === 0 });
  return { env, ws };
}

// ---------------------------------------------------------------------------------------------
// 5. The retention sweep in slices, as `takeback serve` runs it in its idle time (gc/sweep.ts):
// the longest slice (what a request arriving mid-sweep can wait) and the whole sweep, against the
// same sweep in one go (`takeback gc`), each on its own store of `blobs` blobs of 1 KB, two hours
// old, half of them kept by sets of 10 files.

async function gcSliceBench(blobs) {
  const { utimesSync } = await import('node:fs');
  const { performance } = await import('node:perf_hooks');
  const { BlobStore } = await import(join(ROOT, 'dist/server/core/store/blobs.js'));
  const { GcSweep, collectGarbage } = await import(join(ROOT, 'dist/server/core/gc/sweep.js'));
  const { loadConfig } = await import(join(ROOT, 'dist/server/core/config.js'));
  const { openWorkspace } = await import(join(ROOT, 'dist/server/core/open-workspace.js'));
  const make = (name) => {
    const env = home(name);
    const ws = join(SCRATCH, `${name}-ws`);
    mkdirSync(ws, { recursive: true });
    const store = new BlobStore(env.TAKEBACK_HOME);
    const old = Date.now() / 1000 - 7200;
    const hashes = [];
    for (let i = 0; i < blobs; i++) {
      const h = store.put(Buffer.from(`blob ${i} ${name}\n`.padEnd(1024, 'x')));
      utimesSync(store.pathOf(h), old, old);
      hashes.push(h);
    }
    const opened = openWorkspace({ workspace: ws, env });
    opened.journal.write(() => {
      const turn = opened.journal.turns.begin({ agent: 'claude-code', session: 's', label: 'kept' });
      for (let k = 0; k < blobs / 2; k += 10) {
        const files = hashes.slice(k, k + 10).map((h, j) => ({ path: `f${k + j}.txt`, before: { exists: false }, after: { exists: true, type: 'file', sha256: h, size: 1024, mode: 0o644 }, status: 'added', added: 1, removed: 0 }));
        opened.journal.sets.add({ turn: turn.id, source: { kind: 'tool', tool: 'Write', toolCallId: `toolu_${k}` }, files });
      }
      opened.journal.turns.end(turn.id);
    });
    opened.journal.close();
    return env.TAKEBACK_HOME;
  };
  log(`gc slices: storing 2 × ${blobs} blobs`);
  const onceHome = make('gc-once');
  const slicedHome = make('gc-sliced');
  let t = performance.now();
  const once = collectGarbage({ home: onceHome, config: loadConfig(onceHome) });
  const onceMs = performance.now() - t;
  const sweep = new GcSweep({ home: slicedHome, config: loadConfig(slicedHome), nonBlocking: true });
  const slices = [];
  for (;;) {
    t = performance.now();
    const r = sweep.step(5);
    slices.push(performance.now() - t);
    if (r === 'done') break;
  }
  const longest = Math.max(...slices);
  const total = slices.reduce((a, b) => a + b, 0);
  const swept = sweep.report.use.unreferenced.count;
  extra.gcSlices = { blobs, onceMs, once: once.use, slices: { count: slices.length, longest, total, p99: [...slices].sort((a, b) => a - b)[Math.floor(slices.length * 0.99)] }, swept };
  record({ section: 5, measure: 'retention sweep in the sidecar, in 5 ms slices: longest slice / all slices together', workspace: `${blobs} blobs`, value: `${fmt.ms(longest)} / ${fmt.ms(total)}`, baseline: `in one go ${fmt.ms(onceMs)}`, ratio: longest / onceMs, target: '— (a request waits one slice at most)', note: `${slices.length} slices; swept ${swept} blobs, kept ${blobs - swept}` });
}

// ---------------------------------------------------------------------------------------------
// 6. Peak memory of a process holding the 100,000-file snapshot.

async function memoryBench(ws, env, label, iterations) {
  const kb = peakRss(NODE, [BIN, 'capture', 'begin', '--id', 'mem'], { cwd: ws, env });
  tb(ws, env, ['capture', 'end', '--id', 'mem']);
  const bare = peakRss(NODE, ['-e', '0']);
  const mb150 = 150 * 1048576;
  record({ section: 6, measure: `peak memory of a process scanning the ${label} snapshot`, workspace: label, value: kb ? fmt.mb(kb * 1024) : 'n/a', baseline: `node -e 0 ${bare ? fmt.mb(bare * 1024) : 'n/a'}`, ratio: kb ? (kb * 1024) / mb150 : NaN, target: '≤ 1.0 (150 MB)', met: kb ? kb * 1024 <= mb150 : undefined, note: 'the CLI (`capture begin`)' });
  // The sidecar: command captures in a running `takeback serve` (no process start), and its peak memory.
  const { Sidecar } = await import('./sidecar.mjs');
  const sc = new Sidecar(BIN, ws, env);
  try {
    await sc.start();
    const s = { scan: [], git: [] };
    for (let i = 0; i < iterations; i++) {
      s.git.push(time('git', ['status', '--porcelain'], { cwd: ws }));
      const t0 = process.hrtime.bigint();
      await sc.request('capture/begin', { id: `sc${i}`, tool: 'Bash', command: 'true' });
      await sc.request('capture/end', { id: `sc${i}` });
      s.scan.push(Number(process.hrtime.bigint() - t0) / 2e6); // one of the two scans
    }
    const peak = sc.peakRss();
    const m = { scan: median(s.scan), git: median(s.git) };
    extra.sidecar = { samples: s, medians: m, peak };
    record({ section: 1, measure: 'snapshot, unchanged, in a running sidecar (one scan of a capture/begin + end)', workspace: label, value: fmt.ms(m.scan), baseline: `git status ${fmt.ms(m.git)}`, ratio: m.scan / m.git, target: '≤ 1.0', met: m.scan / m.git <= 1.0 });
    record({ section: 6, measure: `sidecar peak memory holding the ${label} snapshot`, workspace: label, value: fmt.mb(peak), baseline: `node -e 0 ${bare ? fmt.mb(bare * 1024) : 'n/a'}`, ratio: peak / mb150, target: '≤ 1.0 (150 MB)', met: peak <= mb150, note: '`takeback serve`, after its scans' });
  } catch (e) {
    log(`sidecar not measured: ${e.message}`);
  } finally {
    await sc.stop();
  }
}

// ---------------------------------------------------------------------------------------------

function machine() {
  const cpu = cpus()[0]?.model ?? 'unknown';
  let nproc = String(cpus().length);
  try {
    nproc = execFileSync('nproc').toString().trim();
  } catch {
    // os.cpus() stands
  }
  const gitv = execFileSync('git', ['--version']).toString().trim();
  return { nproc, memory: `${(totalmem() / 1073741824).toFixed(1)} GB`, cpu, node: process.version, git: gitv, date: new Date().toISOString().slice(0, 10) };
}

function writeResults(mc, secs) {
  const file = join(ROOT, 'bench', 'RESULTS.md');
  const lines = [];
  lines.push('<!-- bench:begin (written by `npm run bench`; edit outside the markers) -->');
  lines.push(`Run of ${mc.date}${QUICK ? ' (`--quick`)' : ''}: ${mc.nproc} cores (${mc.cpu}), ${mc.memory}, Node ${mc.node}, ${mc.git}; ${Math.round(secs)} s in all.`);
  lines.push('Each figure is the median of several runs, against a baseline measured in the same run (interleaved).');
  lines.push('');
  lines.push('| # | measure | workspace | takeback | baseline | ratio | target | met |');
  lines.push('|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const met = r.met === undefined ? '' : r.met ? 'yes' : '**no**';
    lines.push(`| ${r.section} | ${r.measure}${r.note ? ` <br><small>${r.note}</small>` : ''} | ${r.workspace} | ${r.value} | ${r.baseline ?? ''} | ${r.ratio === undefined ? '' : fmt.ratio(r.ratio)} | ${r.target ?? ''} | ${met} |`);
  }
  lines.push('<!-- bench:end -->');
  const block = lines.join('\n');
  mkdirSync(join(ROOT, 'bench', 'out'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'out', 'last.json'), JSON.stringify({ machine: mc, quick: QUICK, rows, extra }, null, 2));
  // A run of some sections (--only) does not replace the table of a whole run.
  if (ONLY.length > 0) {
    log(`wrote bench/out/last.json (--only: ${file} left as it was)`);
    return;
  }
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '# takeback benchmarks\n\n<!-- bench:begin -->\n<!-- bench:end -->\n';
  const a = text.indexOf('<!-- bench:begin');
  const b = text.indexOf('<!-- bench:end -->');
  text = a >= 0 && b > a ? `${text.slice(0, a)}${block}${text.slice(b + '<!-- bench:end -->'.length)}` : `${text}\n${block}\n`;
  writeFileSync(file, text);
  log(`wrote ${file}`);
}

async function mainBench() {
  const started = Date.now();
  const mc = machine();
  log(`${mc.nproc} cores, ${mc.cpu}, ${mc.memory}, node ${mc.node}; cache ${CACHE}`);
  mkdirSync(CACHE, { recursive: true });
  const ws10k = generated(CACHE, 10_000, log);
  const ws100k = QUICK ? null : generated(CACHE, 100_000, log);
  const real = QUICK ? null : realTree(CACHE, join(ROOT, 'node_modules'), log);
  try {
    let env10k = null;
    if (want('snapshot')) {
      env10k = snapshotBench(ws10k, 'gen-10k', QUICK ? 5 : 7);
      if (ws100k) {
        const env100k = snapshotBench(ws100k, 'gen-100k', 5);
        if (want('memory')) await memoryBench(ws100k, env100k, 'gen-100k', 5);
      }
      if (real) snapshotBench(real, 'node_modules copy', 5);
    }
    if (!env10k) {
      env10k = home('snap-gen-10k');
      tb(ws10k, env10k, ['capture', 'begin', '--id', 'base']);
      tb(ws10k, env10k, ['capture', 'end', '--id', 'base']);
    }
    if (want('cold')) {
      coldBench(ws10k, 'gen-10k', QUICK ? 3 : 5);
      if (ws100k) coldBench(ws100k, 'gen-100k', 5);
    }
    if (want('hook')) hookBench(ws10k, env10k, 11);
    if (want('hook')) await httpHookBench(ws10k, env10k, 'gen-10k', 11, { fileCall: true });
    if (want('hook') && ws100k) {
      const env = home('http-100k');
      tb(ws100k, env, ['capture', 'begin', '--id', 'base']);
      tb(ws100k, env, ['capture', 'end', '--id', 'base']);
      await httpHookBench(ws100k, env, 'gen-100k', 5, { bashCall: true });
    }
    if (want('sparse')) sparseBench(ws10k, QUICK ? 3 : 5);
    if (want('turn')) turnBench(ws10k, env10k, QUICK ? 3 : 5);
    if (want('list')) await listBench(QUICK ? 5 : 9);
    if (want('storage')) await storageBench(QUICK ? 100 : 1000);
    if (want('gc')) await gcSliceBench(QUICK ? 3000 : 10_000);
    if (want('merge')) await mergeBench(record, QUICK ? 3 : 5, SCRATCH);
    if (want('fsync')) extra.fsync = await fsyncBench({ record, log, scratch: SCRATCH, iterations: QUICK ? 5 : 9 });
    if (want('peers') || want('hinted-scan')) {
      stopLeftDaemons();
      const trees = [['gen-1.8k', generated(CACHE, 1_800, log), QUICK ? 7 : 11], ['gen-10k', ws10k, QUICK ? 3 : 7], ...(ws100k ? [['gen-100k', ws100k, 5]] : [])];
      for (const [label, ws, n] of trees) {
        refreshIndex(ws);
        const env = peersHome(SCRATCH, label);
        const pick = pickFiles(ws, 10, 13);
        if (want('peers')) extra[`peers-${label}`] = await peersBench({ record, log, ws, label, iterations: n, pick, env, bin: BIN, node: NODE, scratch: SCRATCH, hookEnvPrefix: HOOK_ENV_PREFIX });
        if (want('hinted-scan')) extra[`hinted-scan-${label}`] = await hintedScanBench({ record, ws, label, iterations: n, pick, home: peersHome(SCRATCH, `${label}-scan`).TAKEBACK_HOME, root: ROOT });
      }
    }
    if (MILLION) {
      stopLeftDaemons();
      const ws1m = await generatedFast(CACHE, 1_000_000, log);
      refreshIndex(ws1m);
      extra.million = await millionBench({ record, log, ws: ws1m, label: 'gen-1M', iterations: QUICK ? 3 : 5, pick: pickFiles(ws1m, 10, 17), bin: BIN, node: NODE, scratch: SCRATCH, hookEnvPrefix: HOOK_ENV_PREFIX });
    }
    if (want('memory') && !want('snapshot') && ws100k) {
      const env = home('mem-100k');
      tb(ws100k, env, ['capture', 'begin', '--id', 'base']);
      tb(ws100k, env, ['capture', 'end', '--id', 'base']);
      await memoryBench(ws100k, env, 'gen-100k', 5);
    }
  } finally {
    writeResults(mc, (Date.now() - started) / 1000);
    rmSync(SCRATCH, { recursive: true, force: true });
  }
}

mainBench().catch((e) => {
  log(`failed: ${e.stack ?? e}`);
  process.exitCode = 1;
});
