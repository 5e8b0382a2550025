#!/usr/bin/env node
// Two or three builds of takeback measured alternated in one run, on the same shapes as bench/run.mjs's
// sections 2 (a file tool call's hook pair, in-process), 3 (preview, undo and redo of a 500-file
// turn) and 4 (`list` with 10,000 sets), each build with a workspace and a home of its own:
//   node bench/ab.mjs --a=/path/to/old/checkout --b=/path/to/new/checkout [--c=…] [--rounds=7] [--only=hook,turn,list]
// Each checkout must be built (`npm ci`, `npm run build`). Round by round the builds take turns,
// the first of a round rotating, so the machine's drift (the load of other work, the disk)
// falls on each; `node -e 0` (with and without NODE_EXTRA_CA_CERTS) and `cp -r` of the 500
// files are timed in the same rounds. Printed: medians of wall-clock and of CPU (user + system,
// from wait4), and the load average at the start and the end. `--json=FILE` keeps every
// sample, `--keep[=DIR]` the workspaces and homes (for a profile). One build alone (`--a` only) is a quick measure, for a bisection.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generated, git, rng, sourceText } from './gen.mjs';
import { median } from './measure.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    return [m[1], m[2] ?? '1'];
  }),
);
const NODE = process.execPath;
const ROUNDS = Number(args.rounds ?? 7);
const ONLY = (args.only ?? 'turn,list,hook').split(',');
const CACHE = process.env.TAKEBACK_BENCH_CACHE ?? join(tmpdir(), 'takeback-bench');
const SCRATCH = args.keep && args.keep !== '1' ? args.keep : join(tmpdir(), `takeback-ab-${process.pid}`);
const { HOOK_ENV_PREFIX } = await import(join(ROOT, 'dist/server/cli/self.js'));
const log = (s) => process.stderr.write(`[ab] ${s}\n`);
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

const builds = [['a', args.a], ['b', args.b], ['c', args.c]].filter(([, dir]) => dir).map(([name, dir]) => ({ name, dir, bin: join(dir, 'bin', 'takeback.js') }));
if (builds.length === 0) throw new Error('usage: node bench/ab.mjs --a=CHECKOUT [--b=CHECKOUT] [--c=CHECKOUT] [--rounds=N] [--only=hook,turn,list]');

// The child's wall-clock and CPU time (user + system, from wait4's rusage, to the microsecond),
// both taken by a small Python parent around fork/exec, so that neither counts this process's work.
const WAIT4 = `
import os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
wall = (time.perf_counter() - t0) * 1000
sys.stderr.write("ab-time %.3f %.3f\\n" % (wall, (ru.ru_utime + ru.ru_stime) * 1000))
sys.exit(os.waitstatus_to_exitcode(status))
`;

/** Runs `cmd args`: { wall, cpu } in ms (cpu: the child's user + system time, its threads and children included). */
function run(cmd, argv, opts = {}) {
  const r = spawnSync('python3', ['-c', WAIT4, cmd, ...argv], {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    input: opts.input,
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'],
  });
  const m = /ab-time ([\d.]+) ([\d.]+)\s*$/.exec(String(r.stderr));
  if (r.status !== 0 || !m) throw new Error(`${cmd} ${argv.join(' ')} exited ${r.status}: ${String(r.stderr).slice(0, 2000)}`);
  return { wall: Number(m[1]), cpu: Number(m[2]) };
}

const samples = {}; // key -> { wall: [], cpu: [] }
function keep(key, t) {
  const s = (samples[key] ??= { wall: [], cpu: [] });
  s.wall.push(t.wall);
  s.cpu.push(t.cpu);
  return t;
}

/** The rounds: each round runs `step(build)` for every build, the first build rotating round by round. */
function rounds(label, step, extra) {
  for (let i = 0; i < ROUNDS; i++) {
    const k = i % builds.length;
    const order = [...builds.slice(k), ...builds.slice(0, k)];
    for (const b of order) step(b, i);
    extra?.(i);
  }
  log(`${label}: ${ROUNDS} rounds done, load ${load()}`);
}

const bare = { ...process.env };
delete bare.NODE_EXTRA_CA_CERTS;
const nodeBaselines = () => {
  keep('node -e 0', run(NODE, ['-e', '0']));
  keep('node -e 0, no NODE_EXTRA_CA_CERTS', run(NODE, ['-e', '0'], { env: bare }));
};

function setup(b) {
  b.home = join(SCRATCH, `home-${b.name}`);
  mkdirSync(b.home, { recursive: true });
  b.env = { ...process.env, TAKEBACK_HOME: b.home, TAKEBACK_LOG_LEVEL: '' };
  b.ws = join(SCRATCH, `ws-${b.name}`);
  execFileSync('cp', ['-a', generated(CACHE, 10_000, log), b.ws]);
  git(b.ws, 'update-index', '-q', '--refresh');
  const tb = (argv, opts = {}) => execFileSync(NODE, [b.bin, ...argv], { cwd: b.ws, env: b.env, stdio: ['pipe', 'ignore', 'inherit'], ...opts });
  b.tb = tb;
  tb(['capture', 'begin', '--id', 'base']);
  tb(['capture', 'end', '--id', 'base']);
}

/** The 500 files bench/run.mjs's turnBench picks (same seed), rewritten by one tool call of one turn. */
function setupTurn(b) {
  const EXCLUDED = ['.git', 'node_modules', 'dist', 'build', 'out', 'target', 'coverage', '.cache', '__pycache__', '.venv', 'venv'];
  const all = git(b.ws, 'ls-files', '-z')
    .split('\0')
    .filter((p) => p && !p.split('/').some((s) => EXCLUDED.includes(s)) && !p.endsWith('.gitignore'));
  const rand0 = rng(500);
  const pick = new Set();
  while (pick.size < Math.min(500, all.length)) pick.add(all[Math.floor(rand0() * all.length)]);
  b.pick = [...pick];
  b.stash = join(SCRATCH, `stash-${b.name}`);
  b.copyTo = join(SCRATCH, `copy-${b.name}`);
  const rand = rng(500);
  b.tb(['turn', 'begin', '--id', 'bench500', '--label', 'rewrite 500 files']);
  b.tb(['capture', 'begin', '--id', 'c500', '--tool', 'codemod', ...b.pick.map((p) => join(b.ws, p))]);
  for (const p of b.pick) {
    const text = sourceText(rand, 200 + Math.floor(rand() * 2000), 'w');
    writeFileSync(join(b.ws, p), text);
    mkdirSync(dirname(join(b.stash, p)), { recursive: true });
    writeFileSync(join(b.stash, p), text);
  }
  b.tb(['capture', 'end', '--id', 'c500']);
  b.tb(['turn', 'end', '--id', 'bench500']);
  cpSync(b.stash, b.copyTo, { recursive: true });
}

function turn() {
  for (const b of builds) setupTurn(b);
  rounds('turn', (b) => {
    keep(`${b.name} preview`, run(b.bin, ['preview', '--turn', 'bench500', '--json'], { cwd: b.ws, env: b.env }));
    keep(`${b.name} apply`, run(b.bin, ['undo', '--turn', 'bench500'], { cwd: b.ws, env: b.env }));
    keep('cp -r of the 500 files', run('cp', ['-r', `${b.stash}/.`, `${b.copyTo}/`]));
    keep(`${b.name} apply`, run(b.bin, ['redo', '--turn', 'bench500'], { cwd: b.ws, env: b.env }));
  }, nodeBaselines);
  for (const b of builds) {
    const same = b.pick.every((p) => readFileSync(join(b.ws, p)).equals(readFileSync(join(b.stash, p))));
    if (!same) throw new Error(`${b.name}: the files after redo are not the turn's`);
  }
}

/** bench/run.mjs's listBench journal (same seed), made by each build's own journal code in a child. */
function setupList(b) {
  b.listHome = join(SCRATCH, `list-home-${b.name}`);
  b.listWs = join(SCRATCH, `list-ws-${b.name}`);
  mkdirSync(b.listWs, { recursive: true });
  b.listEnv = { ...process.env, TAKEBACK_HOME: b.listHome, TAKEBACK_LOG_LEVEL: '' };
  const script = `
    import { existsSync } from 'node:fs';
    const rng = (await import(${JSON.stringify(join(ROOT, 'bench/gen.mjs'))})).rng;
    const dist = ${JSON.stringify(join(b.dir, 'dist/server/core'))};
    const opened = existsSync(dist + '/open-workspace.js')
      ? (await import(dist + '/open-workspace.js')).openWorkspace({ workspace: process.argv[1], env: process.env })
      : (await import(dist + '/engine.js')).openEngine({ workspace: process.argv[1], env: process.env });
    const rand = rng(10_000);
    const hex = () => Array.from({ length: 64 }, () => '0123456789abcdef'[Math.floor(rand() * 16)]).join('');
    const t0 = Date.now() - 30 * 24 * 3600 * 1000;
    opened.journal.write(() => {
      for (let t = 0; t < 1000; t++) {
        const turn = opened.journal.turns.begin({ agent: 'claude-code', session: 's', label: 'turn ' + t + ': do something', now: t0 + t * 60_000 });
        for (let k = 0; k < 10; k++) {
          const n = 1 + Math.floor(rand() * 3);
          const files = Array.from({ length: n }, (_, j) => ({
            path: 'src/m' + Math.floor(rand() * 100) + '/f' + t + '_' + k + '_' + j + '.ts',
            before: { exists: true, type: 'file', sha256: hex(), size: 1000, mode: 0o644 },
            after: { exists: true, type: 'file', sha256: hex(), size: 1100, mode: 0o644 },
            status: 'modified', added: 3, removed: 1,
          }));
          const source = k % 2 ? { kind: 'tool', tool: 'Edit', toolCallId: 'toolu_' + t + '_' + k } : { kind: 'command', command: 'npm test', tool: 'Bash', toolCallId: 'toolu_' + t + '_' + k };
          opened.journal.sets.add({ turn: turn.id, source, files, now: t0 + t * 60_000 + k });
        }
        opened.journal.turns.end(turn.id, t0 + t * 60_000 + 50);
      }
    });
    opened.journal.close();`;
  execFileSync(NODE, ['--input-type=module', '-e', script, b.listWs], { env: b.listEnv, stdio: 'inherit' });
}

function list() {
  for (const b of builds) setupList(b);
  rounds('list', (b) => {
    keep(`${b.name} list`, run(b.bin, ['list'], { cwd: b.listWs, env: b.listEnv }));
    keep(`${b.name} list --json`, run(b.bin, ['list', '--json'], { cwd: b.listWs, env: b.listEnv }));
  }, nodeBaselines);
}

/** bench/run.mjs's hookBench, in-process (TAKEBACK_HOOK_DAEMON=0): an Edit's PreToolUse, the edit, its PostToolUse. */
function hook() {
  for (const b of builds) {
    b.hookEnv = { ...b.env, TAKEBACK_HOOK_DAEMON: '0' };
    b.file = join(b.ws, git(b.ws, 'ls-files', '-z').split('\0').filter((p) => p.endsWith('.ts') || p.endsWith('.js') || p.endsWith('.md'))[7]);
    b.ev = (name, extra) => JSON.stringify({ session_id: 'bench-session', cwd: b.ws, hook_event_name: name, permission_mode: 'acceptEdits', ...extra });
    b.tb(['hook', 'claude-code'], { input: b.ev('UserPromptSubmit', { prompt: 'bench: edit a file' }), env: b.hookEnv });
  }
  rounds('hook', (b, i) => {
    const cmd = `${HOOK_ENV_PREFIX}'${NODE}' '${b.bin}' hook claude-code`;
    const input = { tool_name: 'Edit', tool_input: { file_path: b.file, old_string: 'a', new_string: 'b' }, tool_use_id: `toolu_bench_${i}` };
    const pre = keep(`${b.name} PreToolUse`, run('bash', ['-c', cmd], { cwd: b.ws, env: b.hookEnv, input: b.ev('PreToolUse', input) }));
    appendFileSync(b.file, `// hook bench ${i}\n`);
    const post = keep(`${b.name} PostToolUse`, run('bash', ['-c', cmd], { cwd: b.ws, env: b.hookEnv, input: b.ev('PostToolUse', { ...input, tool_response: { filePath: b.file } }) }));
    keep(`${b.name} hook pair`, { wall: pre.wall + post.wall, cpu: pre.cpu + post.cpu });
  }, nodeBaselines);
}

mkdirSync(SCRATCH, { recursive: true });
const started = load();
log(`load at the start ${started}; ${builds.map((b) => `${b.name} = ${b.dir}`).join(', ')}`);
try {
  for (const b of builds) setup(b);
  // As bench/run.mjs: the hooks before the 500-file turn.
  if (ONLY.includes('hook')) hook();
  if (ONLY.includes('turn')) turn();
  if (ONLY.includes('list')) list();
} finally {
  if (args.keep) log(`kept ${SCRATCH}`);
  else rmSync(SCRATCH, { recursive: true, force: true });
}
const out = Object.entries(samples).map(([k, s]) => `${k.padEnd(40)} wall ${median(s.wall).toFixed(0).padStart(5)} ms  cpu ${median(s.cpu).toFixed(0).padStart(5)} ms  (n ${s.wall.length}, wall ${Math.min(...s.wall).toFixed(0)}–${Math.max(...s.wall).toFixed(0)})`);
process.stdout.write(`load ${started} -> ${load()}\n${out.join('\n')}\n`);
if (args.json) writeFileSync(args.json, JSON.stringify({ load: [started, load()], builds: builds.map((b) => b.dir), samples }, null, 1));
