#!/usr/bin/env node
// `npm run demo`: takeback's main job in under a minute, with no agent installed.
//
// It copies a real package (`ignore`, from node_modules) into a scratch git repository, then
// plays a two-turn Claude Code session on it: every event goes to the SAME entry point Claude
// Code's hooks run (`takeback hook claude-code`, the event JSON on stdin), shaped like the
// payloads recorded from the real CLI (test/fixtures/claude-events/), and between each
// PreToolUse and PostToolUse the demo does what the tool does (writes the file, edits it, runs
// the real `sed -i`, `mv`, `rm`). Then it shows `takeback list`, `preview`, `undo` and `redo`,
// checking every step byte for byte. It exits non-zero if anything fails, and leaves the folder
// (with its private TAKEBACK_HOME) for you to explore.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { structuredPatch } from 'diff';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'takeback.js');
const SOURCE = path.join(ROOT, 'node_modules', 'ignore');
const started = Date.now();

// ---- output ------------------------------------------------------------------------------

const tty = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const paint = (code, end) => (s) => (tty ? `\u001b[${code}m${s}\u001b[${end}m` : s);
const bold = paint(1, 22);
const dim = paint(2, 22);
const green = paint(32, 39);
const red = paint(31, 39);
const cyan = paint(36, 39);
const out = (s = '') => process.stdout.write(`${s}\n`);
const heading = (s) => out(`\n${bold(cyan(`== ${s}`))}`);
const ok = (s) => out(green(`  ✓ ${s}`));

class DemoError extends Error {}
function fail(message) {
  throw new DemoError(message);
}

// ---- the scratch project -------------------------------------------------------------------

if (!fs.existsSync(path.join(ROOT, 'dist', 'server', 'cli', 'main.js'))) {
  process.stderr.write('takeback is not built: run `npm run demo` (it builds first) or `npm run build`.\n');
  process.exit(1);
}
if (!fs.existsSync(path.join(SOURCE, 'index.js'))) {
  process.stderr.write(`${SOURCE} is missing: run \`npm ci\` first.\n`);
  process.exit(1);
}

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-demo-')));
const project = path.join(base, 'project');
const home = path.join(base, 'takeback-home');
const env = { ...process.env, TAKEBACK_HOME: home };
delete env.TAKEBACK_LOG_LEVEL;
// takeback colours its own output on a terminal only; its output is relayed through a pipe here.
const cliEnv = { ...env, ...(tty && !env.FORCE_COLOR ? { FORCE_COLOR: '1' } : {}) };
// The replay's hooks run in-process: a capture daemon started by them would outlive the demo.
const hookEnv = { ...env, TAKEBACK_LOG_LEVEL: 'debug', TAKEBACK_HOOK_DAEMON: '0' };

function hasGit() {
  return spawnSync('git', ['--version'], { stdio: 'ignore' }).status === 0;
}
const GIT = hasGit();
function git(...args) {
  const r = spawnSync(
    'git',
    ['-c', 'user.name=takeback demo', '-c', 'user.email=demo@takeback.invalid', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args],
    { cwd: project, encoding: 'utf8' },
  );
  if (r.status !== 0) fail(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** Every path of the project (without .git): type, mode, bytes' SHA-256, link text. */
function tree() {
  const t = new Map();
  const walk = (rel) => {
    for (const name of fs.readdirSync(path.join(project, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === '.git') continue;
      const st = fs.lstatSync(path.join(project, r));
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) t.set(r, `link ${fs.readlinkSync(path.join(project, r))}`);
      else if (st.isDirectory()) {
        t.set(r, `dir ${mode}`);
        walk(r);
      } else t.set(r, `file ${mode} ${createHash('sha256').update(fs.readFileSync(path.join(project, r))).digest('hex')}`);
    }
  };
  walk('');
  return t;
}

/** Fails unless the project is byte for byte `expected`; says so in one line. */
function checkTree(expected, what) {
  const now = tree();
  const diff = [...new Set([...expected.keys(), ...now.keys()])].filter((p) => expected.get(p) !== now.get(p)).sort();
  if (diff.length) fail(`the project is not ${what}; differing: ${diff.join(', ')}`);
  ok(`every file is byte for byte ${what} (${[...now.values()].filter((v) => v.startsWith('file')).length} files checked)`);
}

// ---- takeback ------------------------------------------------------------------------------

/** Runs the takeback command line in the project; prints its output unless `quiet`. */
function takeback(args, { quiet = false, expect = 0 } = {}) {
  if (!quiet) out(`${dim('$')} ${bold(`takeback ${args.join(' ')}`)}`);
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: project, env: quiet ? env : cliEnv, encoding: 'utf8' });
  if (r.status !== expect) fail(`takeback ${args.join(' ')} exited ${r.status}:\n${r.stdout}${r.stderr}`);
  if (!quiet) out(r.stdout.replace(/\n+$/, '').replace(/^(?=.)/gm, '  '));
  return r.stdout;
}

// The session as Claude Code reports it to its hooks.
const session = randomUUID();
const slug = project.replace(/[^A-Za-z0-9]/g, '-');
const transcript = path.join(base, 'claude-home', '.claude', 'projects', slug, `${session}.jsonl`);
let promptId = null;
let hookCount = 0;
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const toolUseId = () => `toolu_01${[...randomBytes(22)].map((b) => B62[b % 62]).join('')}`;

/** Sends one hook event to `takeback hook claude-code`, as Claude Code does. */
function hook(event) {
  const payload = { session_id: session, transcript_path: transcript, cwd: project, ...(promptId ? { prompt_id: promptId, permission_mode: 'acceptEdits' } : {}), ...event };
  const r = spawnSync(process.execPath, [BIN, 'hook', 'claude-code'], { cwd: project, env: hookEnv, input: JSON.stringify(payload), encoding: 'utf8' });
  hookCount++;
  if (r.status !== 0 || r.stdout !== '') fail(`the hook must exit 0 and print nothing; it exited ${r.status} printing ${JSON.stringify(r.stdout + r.stderr)}`);
}

/** One tool call: PreToolUse, the tool's own change, PostToolUse. */
function tool(name, input, act, shown) {
  const id = toolUseId();
  hook({ hook_event_name: 'PreToolUse', tool_name: name, tool_input: input, tool_use_id: id });
  const t0 = Date.now();
  const response = act();
  hook({ hook_event_name: 'PostToolUse', tool_name: name, tool_input: input, tool_response: response, tool_use_id: id, duration_ms: Date.now() - t0 });
  out(`  ${bold(name.padEnd(5))} ${shown}  ${dim(id)}`);
  return id;
}

const abs = (rel) => path.join(project, rel);

function write(rel, content) {
  const file = abs(rel);
  const existed = fs.existsSync(file);
  const original = existed ? fs.readFileSync(file, 'utf8') : null;
  return tool('Write', { file_path: file, content }, () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    return {
      type: existed ? 'update' : 'create',
      filePath: file,
      content,
      structuredPatch: existed ? hunks(rel, original, content) : [],
      originalFile: original,
      userModified: false,
    };
  }, rel);
}

function hunks(rel, before, after) {
  return structuredPatch(rel, rel, before, after, '', '', { context: 3 }).hunks.map((h) => ({
    oldStart: h.oldStart,
    oldLines: h.oldLines,
    newStart: h.newStart,
    newLines: h.newLines,
    lines: h.lines,
  }));
}

function edit(rel, oldString, newString) {
  const file = abs(rel);
  const input = { file_path: file, old_string: oldString, new_string: newString, replace_all: false };
  return tool('Edit', input, () => {
    const original = fs.readFileSync(file, 'utf8');
    if (original.split(oldString).length !== 2) fail(`Edit: "${oldString}" is not found exactly once in ${rel}`);
    const updated = original.replace(oldString, () => newString);
    fs.writeFileSync(file, updated);
    return { filePath: file, oldString, newString, originalFile: original, structuredPatch: hunks(rel, original, updated), userModified: false, replaceAll: false };
  }, rel);
}

function bash(command, description) {
  return tool('Bash', { command, description }, () => {
    const r = spawnSync('/bin/sh', ['-c', command], { cwd: project, encoding: 'utf8' });
    if (r.status !== 0) fail(`\`${command}\` failed (exit ${r.status}): ${r.stderr}`);
    return { stdout: r.stdout, stderr: r.stderr, interrupted: false, isImage: false, noOutputExpected: false };
  }, command);
}

function turn(prompt, finalText, body) {
  promptId = randomUUID();
  out(`\n${bold('You:')} ${prompt}`);
  hook({ hook_event_name: 'UserPromptSubmit', prompt });
  body();
  hook({ hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: finalText, background_tasks: [], session_crons: [] });
  out(`${bold('Agent:')} ${finalText}`);
}

// GNU sed takes `-i`, BSD sed (macOS) `-i ''`.
const SED_I = spawnSync('sed', ['--version'], { stdio: 'ignore' }).status === 0 ? 'sed -i' : "sed -i ''";

// ---- the demo ------------------------------------------------------------------------------

function main() {
  out(bold('takeback — undo for AI coding agents'));
  out('An agent (here a replay of Claude Code) changes a project with file tools and shell commands;');
  out('takeback records every change per tool call and per turn, then lists, previews, undoes and redoes them.');

  heading('1. A scratch project: a copy of a real package, committed to git');
  fs.mkdirSync(project, { recursive: true });
  fs.cpSync(SOURCE, project, { recursive: true });
  if (GIT) {
    git('init', '-q');
    git('add', '-A');
    git('commit', '-q', '-m', 'ignore, as published');
  }
  const initial = tree();
  out(`  project:        ${project}  ${dim(`(the \`ignore\` package from node_modules${GIT ? ', in git' : ''})`)}`);
  out(`  journal:        ${home}  ${dim('(TAKEBACK_HOME: kept outside the project)')}`);
  out(`  takeback is:    node ${BIN}`);

  heading('2. The agent works: two turns, each tool call sent to `takeback hook claude-code`');
  out(dim('  (the same hook events a real Claude Code session sends: SessionStart, UserPromptSubmit,'));
  out(dim('   PreToolUse → the tool changes the files → PostToolUse, Stop)'));
  hook({ hook_event_name: 'SessionStart', source: 'startup' });
  const pkg = fs.readFileSync(abs('package.json'), 'utf8');
  const version = /"version": "([^"]+)"/.exec(pkg)?.[1] ?? fail('no version in package.json');
  const bumped = version.replace(/^(\d+)\.(\d+)\..*$/, (_, a, b) => `${a}.${Number(b) + 1}.0`);
  const ids = {};

  turn('Add a helper that filters paths, fix the README grammar, and drop the legacy build.', 'Added src/util/filter-paths.js, fixed the README, removed legacy.js.', () => {
    ids.write = write(
      'src/util/filter-paths.js',
      "'use strict'\n\nconst ignore = require('../../index.js')\n\n// Keeps the paths that the .gitignore rules do not ignore.\nmodule.exports = (rules, paths) => ignore().add(rules).filter(paths)\n",
    );
    ids.edit = edit('index.js', "const isString = subject => typeof subject === 'string'", "const isString = (subject) => typeof subject === 'string'");
    ids.sed = bash(`${SED_I} -e 's/five hundreds/five hundred/' -e 's/which implemented/which is implemented/' README.md`, 'Fix the README grammar');
    ids.rm = bash('rm legacy.js', 'Drop the legacy build');
  });
  if (fs.readFileSync(abs('README.md')).equals(fs.readFileSync(path.join(SOURCE, 'README.md')))) fail('the sed changed nothing in README.md');
  const afterTurn1 = tree();
  turn(`Move the helper up a level and bump the version to ${bumped}.`, `Moved it to src/filter-paths.js; version ${bumped}.`, () => {
    ids.mv = bash('mv src/util/filter-paths.js src/filter-paths.js', 'Move the helper');
    ids.bump = edit('package.json', `"version": "${version}"`, `"version": "${bumped}"`);
  });
  const afterSession = tree();
  out(`\n  ${hookCount} hook events sent. ${GIT ? 'What git sees now (git status --short):' : ''}`);
  if (GIT) out(git('status', '--short').trimEnd().replace(/^/gm, '    '));

  // The hook never fails the agent (it logs instead): make sure it recorded everything.
  const listed = JSON.parse(takeback(['list', '--json'], { quiet: true }));
  const setOf = new Map(listed.sets.map((s) => [s.source.toolCallId, s.id]));
  for (const [what, id] of Object.entries(ids)) {
    if (!setOf.has(id)) {
      const log = path.join(home, 'logs', 'hook.log');
      fail(`no change set was recorded for the ${what} tool call ${id}; the hook log says:\n${fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '(no log)'}`);
    }
  }
  if (listed.sets.length !== Object.keys(ids).length) fail(`expected ${Object.keys(ids).length} change sets, found ${listed.sets.length}`);

  heading('3. What takeback recorded: one change set per tool call, grouped by turn (newest first)');
  takeback(['list']);

  heading('4. Preview taking back turn 2 (nothing is written yet)');
  const before = tree();
  takeback(['preview', '--turn', '2']);
  checkTree(before, 'unchanged by the preview');

  heading('5. Undo turn 2');
  takeback(['undo', '--turn', '2']);
  checkTree(afterTurn1, 'as it was after turn 1');

  heading("6. Undo one tool call: the `sed -i` on README.md (a shell change the agent's own checkpoints miss)");
  takeback(['undo', setOf.get(ids.sed)]);
  const readme = fs.readFileSync(abs('README.md'));
  if (!readme.equals(fs.readFileSync(path.join(SOURCE, 'README.md')))) fail('README.md is not back to its original bytes');
  ok('README.md is back to its original bytes; the rest of turn 1 is still in place');

  heading('7. Undo the rest of turn 1: the project is as committed');
  takeback(['undo', '--turn', '1']);
  checkTree(initial, 'as committed before the agent started');
  if (GIT) {
    const status = git('status', '--porcelain');
    if (status !== '') fail(`git status is not clean:\n${status}`);
    ok('git status: clean — src/ is gone, legacy.js is back');
  }

  heading('8. Changed your mind? Redo both turns');
  takeback(['redo', '--turn', '1']);
  takeback(['redo', '--turn', '2']);
  checkTree(afterSession, 'as the agent left it');

  heading('Explore it yourself');
  out(`  cd ${project}`);
  out(`  export TAKEBACK_HOME=${home}`);
  out(`  alias takeback="node ${BIN}"     ${dim('# or install it: npm i -g ' + ROOT)}`);
  out(`  takeback list`);
  out(`  takeback show ${setOf.get(ids.mv)}              ${dim('# one change in full: before and after of each file')}`);
  out(`  takeback preview --turn 1`);
  out(`  takeback undo --last         ${dim('# and: takeback redo --last')}`);
  out(`  takeback doctor`);
  out(`  ${dim(`hook log: ${path.join(home, 'logs', 'hook.log')} · remove it all with: rm -rf ${base}`)}`);
  out(`\n${green(bold(`Demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s.`))}`);
}

try {
  main();
} catch (e) {
  process.stderr.write(`\n${red(bold('demo failed:'))} ${e instanceof DemoError ? e.message : (e?.stack ?? String(e))}\n`);
  process.stderr.write(`the scratch folder is left in ${base}\n`);
  process.exit(1);
}
