// What other agents' checkpoints cost for one shell tool call, against takeback's default hooks,
// in the same run and on the same trees, with `git status` as the baseline measured between them.
//
// Each peer modelled on how it is described to keep a step, run as one shell command after the
// tool call (each keeps one snapshot a step and diffs it with the last):
//   - Cline / Roo Code: a shadow git repository (its own git folder, the workspace as work tree):
//     `git add -A` then `git commit` of everything;
//   - opencode: a separate git folder too, `git add .` then `git write-tree`;
//   - twinny: a copy of the workspace's own index, `git add -A` and `git write-tree` through it.
// takeback: a Bash call's PreToolUse and PostToolUse hooks, as Claude Code runs them (`sh -c
// <command>`, see AGENT_SHELL), in-process (TAKEBACK_HOOK_DAEMON=0) and through the capture daemon
// with its watcher trusted (the default: a session's first hook starts it; its watcher
// @parcel/watcher, and Watchman where `watchman` is installed, a server of the bench's own), in
// three forms of the command: Node started by path (this install by absolute path, without the
// hook client); the command `init` writes in a file the team may commit (`takeback` on PATH
// through a link, as npm makes it: bin/takeback.js's /bin/sh lines, then the hook client,
// native/hook-client.c); and the one it writes in a person's own file, the default (the hook
// client by absolute path, which the shell becomes).
//
// Every call appends a line to the same 10 tracked files, by a command run as the agent runs one:
// a shell process (`sh -c`, not timed), so that the PostToolUse comes no sooner after the
// PreToolUse's answer than an agent can send it; between calls the files are put back (the
// user's doing) and every tool takes one step that is not timed, and the racy window is let pass.
// The daemon's pairs each come after an idle spell of 2.1 s (as an agent's call comes after its
// model's turn), and each is compared with a `git status` taken after a spell as long just before
// it: a process started after a pause costs more than one started right after another (the peers
// and the in-process pair, run back to back, with the `git status` taken just before them).
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AGENT_SHELL, HINTS_LINE, RECORD_LINE, daemonListening, fmt, hookLogCount, median, npmGlobalLink, sleep, timeFromSmall, waitForDaemon, waitForRecords } from './measure.mjs';

// Every command is timed from a small process (measure.mjs timeFromSmall): a fork from the bench
// process costs more as it holds more, and in a whole run, after the sections before, it added
// about 7 ms to each command here, twice to a hook pair (two processes) and once to `git status`.
const time = timeFromSmall;

const GIT_ID = ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', '-c', 'gc.auto=0', '-c', 'core.fsmonitor=false'];

/** A shell-quoted word. */
const q = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;

/**
 * The peers' steps for workspace `ws`, their git folders under `scratch`: each `{ name, setup, step }`,
 * `step` a shell command that keeps the workspace as it is now.
 */
function peers(ws, scratch, label) {
  const git = `git ${GIT_ID.join(' ')}`;
  const shadow = join(scratch, `cline-${label}.git`);
  const opencode = join(scratch, `opencode-${label}.git`);
  const index = join(scratch, `twinny-${label}.index`);
  const sh = (dir) => `${git} --git-dir=${q(dir)} --work-tree=${q(ws)}`;
  return [
    {
      name: 'Cline/Roo-style shadow checkpoint (`add -A` + `commit`, own git folder)',
      setup: `git init -q --bare ${q(shadow)}`,
      step: `${sh(shadow)} add -A && ${sh(shadow)} commit -q --allow-empty --no-verify -m step`,
    },
    {
      name: 'opencode-style snapshot (`add .` + `write-tree`, own git folder)',
      setup: `git init -q --bare ${q(opencode)}`,
      step: `${sh(opencode)} add . && ${sh(opencode)} write-tree >/dev/null`,
    },
    {
      name: 'twinny-style temporary index (copy of the index, `add -A` + `write-tree`)',
      setup: 'true',
      step: `cp ${q(join(ws, '.git', 'index'))} ${q(index)} && GIT_INDEX_FILE=${q(index)} ${git} add -A && GIT_INDEX_FILE=${q(index)} ${git} write-tree >/dev/null`,
    },
  ];
}

/**
 * Measures one shell tool call's capture by each peer and by takeback on workspace `ws` (a git
 * repository), `iterations` calls each, interleaved with `git status`; `pick`: the 10 files the
 * calls change. Records one row per peer and per takeback mode through `record`, with the ratio to
 * `git status` and, for takeback, to the fastest peer of the same run.
 */
export async function peersBench({ record, log, ws, label, iterations, pick, env, bin, node, scratch, hookEnvPrefix }) {
  const list = peers(ws, scratch, label);
  const originals = pick.map((p) => readFileSync(join(ws, p)));
  log(`peers on ${label}: first steps (not timed)`);
  for (const p of list) {
    time('sh', ['-c', p.setup], { cwd: ws });
    time('sh', ['-c', p.step], { cwd: ws });
  }
  const ev = (name, fields = {}) => JSON.stringify({ session_id: `bench-peers-${label}`, cwd: ws, hook_event_name: name, permission_mode: 'acceptEdits', ...fields });
  const { hookCommandLine } = await import(join(bin, '..', '..', 'dist', 'server', 'agents', 'hook-command.js'));
  const clientPath = join(bin, '..', '..', 'native', 'build-hook', 'takeback-hook');
  const client = existsSync(clientPath);
  const hookCmd = `${hookEnvPrefix}${q(node)} ${q(bin)} hook claude-code`;
  const sharedCmd = hookCommandLine('claude-code', { kind: 'path' }, hookEnvPrefix, { exec: true });
  const personalCmd = hookCommandLine('claude-code', { kind: 'client', client: q(clientPath), bin: q(bin) }, hookEnvPrefix, { exec: true });
  const runHook = (e, input, cmd = hookCmd) => time(AGENT_SHELL, ['-c', cmd], { cwd: ws, env: e, input });
  // `takeback` on PATH through npm's links, as `npm i -g` makes them.
  const onPath = npmGlobalLink(join(scratch, `peers-prefix-${label}`), dirname(dirname(bin)));
  const PATH = `${onPath}:${env.PATH ?? process.env.PATH}`;
  const inProcess = { ...env, PATH, TAKEBACK_HOOK_DAEMON: '0' };
  const viaDaemon = { ...env, PATH, TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_LOG_LEVEL: 'debug' };
  let n = 0;
  const bashCall = (e, cmd = hookCmd) => {
    const input = { tool_name: 'Bash', tool_input: { command: 'bench: append to 10 files' }, tool_use_id: `toolu_peers_${label}_${n++}` };
    const pre = runHook(e, ev('PreToolUse', input), cmd);
    time(AGENT_SHELL, ['-c', `k=0; for f in ${pick.map(q).join(' ')}; do printf '// peers bench %s %s\\n' ${n} $k >> "$f"; k=$((k+1)); done`], { cwd: ws });
    const post = runHook(e, ev('PostToolUse', { ...input, tool_response: {} }), cmd);
    return pre + post;
  };
  const putBack = () => pick.forEach((p, k) => writeFileSync(join(ws, p), originals[k]));
  const logged = (text) => hookLogCount(env.TAKEBACK_HOME, text);
  const hintsLogged = () => logged(HINTS_LINE);
  const recordsLogged = () => logged(RECORD_LINE);
  const recorded = (from, events) => waitForRecords(env.TAKEBACK_HOME, from, events);
  // The daemon is warm once an event neither finds its watcher untrusted nor starts it: it
  // synced (and hints follow), or chose to walk because a walk costs less.
  const warmLogged = () => logged(/\] watch: (synced|walk) before the event/);

  // A capture daemon, as a session's first hook starts it (its watcher @parcel/watcher, or
  // Watchman through a server of the bench's own), and its watcher made trusted: calls that change
  // nothing until both events of one sync with it or walk by choice (see warmLogged).
  const startDaemon = (extra) => {
    const daemon = spawn(node, [bin, 'hook-daemon'], { env: { ...viaDaemon, ...extra }, stdio: 'ignore' });
    waitForDaemon(env.TAKEBACK_HOME, 60_000);
    return daemon;
  };
  const warmUp = (tag) => {
    const from = warmLogged();
    for (let waited = 0; warmLogged() - from < 2; waited++) {
      if (waited > 60) throw new Error('the watcher was never trusted');
      const input = { tool_name: 'Bash', tool_input: { command: 'true' }, tool_use_id: `toolu_peers_warm_${label}_${tag}_${waited}` };
      runHook(viaDaemon, ev('PreToolUse', input));
      runHook(viaDaemon, ev('PostToolUse', { ...input, tool_response: {} }));
      sleep(500);
    }
  };
  const stopDaemon = (daemon) => {
    daemon.kill('SIGTERM');
    for (let waited = 0; daemonListening(env.TAKEBACK_HOME); waited += 50) {
      if (waited > 30_000) throw new Error('the capture daemon did not leave');
      sleep(50);
    }
  };
  // The command's forms (see the top): the key's suffix and the command.
  const forms = [['', hookCmd], ...(client ? [['Shared', sharedCmd], ['Personal', personalCmd]] : [])];
  /**
   * One daemon pair in each form, timed, each followed by an untimed one and the racy window; and
   * before each, after an idle spell as long, one `git status` (`s[key + 'Git']`), its baseline.
   */
  const daemonCalls = (s, key) => {
    for (const [form, cmd] of forms) {
      s[`${key}Git`].push(time('git', ['--no-optional-locks', 'status', '--porcelain'], { cwd: ws }));
      sleep(2100);
      const before = hintsLogged();
      const records = recordsLogged();
      s[`${key}${form}`].push(bashCall(viaDaemon, cmd));
      recorded(records, 2);
      s[`${key}${form}Hinted`] += hintsLogged() - before === 2 ? 1 : 0;
      putBack();
      bashCall(viaDaemon, cmd);
      sleep(2100);
    }
  };
  const perForm = (key) => Object.fromEntries(forms.flatMap(([form]) => [[`${key}${form}`, []], [`${key}${form}Hinted`, 0]]));
  const s = { git: [], inProcess: [], daemonGit: [], ...perForm('daemon'), wmGit: [], ...perForm('wm'), ...Object.fromEntries(list.map((_, i) => [`peer${i}`, []])) };
  let daemon = startDaemon({ TAKEBACK_WATCHMAN: '0' });
  let watchman = null;
  try {
    runHook(inProcess, ev('SessionStart', { source: 'startup' }));
    runHook(viaDaemon, ev('UserPromptSubmit', { prompt: 'bench: peers' }));
    warmUp('parcel');
    for (let i = 0; i < iterations; i++) {
      for (const [k, p] of list.entries()) {
        s.git.push(time('git', ['--no-optional-locks', 'status', '--porcelain'], { cwd: ws }));
        pick.forEach((f, j) => appendFileSync(join(ws, f), `// peers bench ${p.name.length} ${i} ${j}\n`));
        s[`peer${k}`].push(time('sh', ['-c', p.step], { cwd: ws }));
        putBack();
        time('sh', ['-c', p.step], { cwd: ws });
      }
      s.inProcess.push(bashCall(inProcess));
      putBack();
      bashCall(inProcess);
      sleep(2100); // past the racy window of the last scan
      daemonCalls(s, 'daemon');
    }
    // The same daemon with Watchman as its watcher, where `watchman` is installed: a Watchman
    // server of the bench's own (socket and state under `scratch`), stopped at the end.
    stopDaemon(daemon);
    daemon = null;
    watchman = startWatchman(scratch, label);
    if (watchman) {
      daemon = startDaemon({ TAKEBACK_WATCHMAN: '1', WATCHMAN_SOCK: watchman.sock });
      warmUp('watchman');
      sleep(2100);
      for (let i = 0; i < iterations; i++) daemonCalls(s, 'wm');
    } else log('peers: watchman is not installed: its rows are left out');
    runHook(viaDaemon, ev('Stop'));
    const m = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Array.isArray(v) ? (v.length ? median(v) : NaN) : v]));
    const fastest = Math.min(...list.map((_, k) => m[`peer${k}`]));
    for (const [k, p] of list.entries()) {
      record({ section: 7, measure: `one shell tool call's capture: ${p.name}`, workspace: label, value: fmt.ms(m[`peer${k}`]), baseline: `git status ${fmt.ms(m.git)}`, ratio: m[`peer${k}`] / m.git, target: '— (a peer)' });
    }
    const big = label.includes('100k');
    // Issue 18's per-call targets are the default hooks' (§3): the daemon, reached by the command
    // `init` writes by default. A hook with no daemon to serve it works as it did before (§1), and
    // the other forms of the command are shown beside the default: their rows carry no target.
    record({ section: 7, measure: 'one shell tool call\'s capture: takeback\'s hook pair, in-process (TAKEBACK_HOOK_DAEMON=0)', workspace: label, value: fmt.ms(m.inProcess), baseline: `git status ${fmt.ms(m.git)}; fastest peer ${fmt.ms(fastest)}`, ratio: m.inProcess / m.git, target: '— (no daemon; see the default row)', note: `${fmt.ratio(m.inProcess / fastest)} the fastest peer` });
    const defaultForm = client ? 'Personal' : '';
    const daemonRow = (measure, value, git, hinted, isDefault) =>
      record({
        section: 7,
        measure,
        workspace: label,
        value: fmt.ms(value),
        baseline: `git status ${fmt.ms(git)}; fastest peer ${fmt.ms(fastest)}`,
        ratio: value / git,
        target: !isDefault ? '— (see the default row)' : big ? '≤ 0.5× the fastest peer, ≤ 30 ms' : '≤ 1.0',
        met: !isDefault ? undefined : big ? value / fastest <= 0.5 && value <= 30 : value / git <= 1.0,
        note: `${fmt.ratio(value / fastest)} the fastest peer; ${hinted}/${iterations} calls had both scans given hints (the others walked: not trusted, or a walk costs less)`,
      });
    const viaWatcher = (w) => `through the capture daemon with its watcher (${w}) trusted`;
    const formName = {
      '': 'Node started by path (no hook client)',
      Shared: "the command of a shared settings file (`takeback` on PATH: its /bin/sh lines, then the hook client)",
      Personal: "the default: the command of a person's own settings file (the hook client by absolute path)",
    };
    if (!client) log('peers: the hook client is not built (native/build-hook/takeback-hook): its rows are left out');
    for (const [key, git, w] of [['daemon', m.daemonGit, '@parcel/watcher'], ...(watchman ? [['wm', m.wmGit, 'Watchman']] : [])]) {
      for (const [form] of forms) daemonRow(`one shell tool call's capture: takeback's hook pair, ${formName[form]}, ${viaWatcher(w)}`, m[`${key}${form}`], git, m[`${key}${form}Hinted`], form === defaultForm);
    }
    return { samples: s, medians: m };
  } finally {
    if (daemon) daemon.kill('SIGTERM');
    if (watchman) watchman.stop();
    putBack();
  }
}

/**
 * A Watchman server of the bench's own (socket, state and log under `scratch`), or null where
 * `watchman` is not installed: `{ sock, stop }`.
 */
export function startWatchman(scratch, label) {
  if (spawnSync('watchman', ['--version'], { stdio: 'ignore' }).status !== 0) return null;
  const dir = join(scratch, `watchman-${label}`);
  mkdirSync(dir, { recursive: true });
  const sock = join(dir, 'sock');
  const child = spawn('watchman', ['--foreground', '--no-save-state', `--sockname=${sock}`, `--statefile=${join(dir, 'state')}`, `--logfile=${join(dir, 'log')}`, `--pidfile=${join(dir, 'pid')}`], { stdio: 'ignore' });
  for (let waited = 0; spawnSync('watchman', [`--sockname=${sock}`, '--no-spawn', 'version'], { stdio: 'ignore' }).status !== 0; waited += 100) {
    if (waited > 30_000) {
      child.kill('SIGTERM');
      throw new Error('watchman did not start');
    }
    sleep(100);
  }
  return { sock, stop: () => child.kill('SIGTERM') };
}

/** A private TAKEBACK_HOME for the peers bench of `label` under `scratch`. */
export function peersHome(scratch, label) {
  const h = join(scratch, `home-peers-${label}`);
  mkdirSync(h, { recursive: true });
  return { ...process.env, TAKEBACK_HOME: h, TAKEBACK_LOG_LEVEL: '' };
}


/**
 * The scans of a shell tool call's bracket alone, in this process (no process start, no hook):
 * a warm scan before and one after 10 files changed, with a watcher's hints naming those files
 * against the walk, interleaved on workspace `ws` with its own journal under `home`, `iterations`
 * of each; `root` is the takeback install whose compiled modules are used. Records one row.
 */
export async function hintedScanBench({ record, ws, label, iterations, pick, home, root }) {
  const { performance } = await import('node:perf_hooks');
  const { openWorkspace } = await import(join(root, 'dist/server/core/open-workspace.js'));
  const { scanAndCommit } = await import(join(root, 'dist/server/core/capture/scan-commit.js'));
  const opened = openWorkspace({ workspace: ws, env: { ...process.env, TAKEBACK_HOME: home } });
  const originals = pick.map((p) => readFileSync(join(ws, p)));
  const scan = (hints) => opened.journal.write(() => scanAndCommit(opened, undefined, hints));
  const s = { walk: [], hinted: [], changedWalk: 0, changedHinted: 0 };
  try {
    scan();
    sleep(2100);
    scan();
    for (let i = 0; i < iterations * 2; i++) {
      const hinted = i % 2 === 1;
      sleep(2100); // past the racy window of the last scan
      const before = hinted ? { paths: new Set(), sinceMs: 0 } : undefined;
      const t0 = performance.now();
      scan(before);
      const t1 = performance.now();
      pick.forEach((p, k) => appendFileSync(join(ws, p), `// hinted scan bench ${i} ${k}\n`));
      const after = hinted ? { paths: new Set(pick), sinceMs: 0 } : undefined;
      const t2 = performance.now();
      const r = scan(after);
      const t3 = performance.now();
      (hinted ? s.hinted : s.walk).push(t1 - t0 + (t3 - t2));
      if (r.changes.length === pick.length) s[hinted ? 'changedHinted' : 'changedWalk']++;
      pick.forEach((p, k) => writeFileSync(join(ws, p), originals[k]));
      sleep(2100);
      scan();
    }
  } finally {
    pick.forEach((p, k) => writeFileSync(join(ws, p), originals[k]));
    opened.journal.close();
  }
  const m = { walk: median(s.walk), hinted: median(s.hinted) };
  record({ section: 7, measure: 'the two scans of a shell tool call\'s bracket in process (10 files changed): with a watcher\'s hints, against the stat walk', workspace: label, value: fmt.ms(m.hinted), baseline: `walk ${fmt.ms(m.walk)}`, ratio: m.hinted / m.walk, target: '— (the scan\'s part of ≤ 30 ms)', note: `${s.changedHinted}/${iterations} hinted and ${s.changedWalk}/${iterations} walked brackets found the 10 files` });
  return { samples: s, medians: m };
}
