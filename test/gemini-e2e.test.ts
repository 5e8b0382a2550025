// takeback end to end with the REAL Google Gemini CLI: `takeback init gemini` installs the hooks
// in a scratch copy of real source (picomatch's package folder, copied out of node_modules and
// committed to git), the real `gemini -p` runs a two-turn session (the second with `--resume
// latest`) scripted by the Gemini stub on 127.0.0.1 — write_file (a new file in new folders, an
// overwrite, a relative path), replace (absolute and RELATIVE paths), run_shell_command (`sed -i`,
// `mv`, `rm`, `mkdir` + `cp` + `ln -s` + `chmod`) — and its real hooks record into a private
// TAKEBACK_HOME. Gemini gives no tool call id, so takeback pairs each AfterTool with its
// BeforeTool by order (`pairedBy: "order"`). Then the command line lists every set and undoes
// every tool call one by one (newest first) back to the committed tree, redoes them one by one,
// and undoes/redoes whole turns, each step checked byte for byte (bytes, mode, type, link text,
// folders) against trees the test computes independently of takeback.
//
// Needs the CLI: scripts/install-gemini.sh (or GEMINI=/path/to/gemini). Skips with a message if
// none is found, and FAILS instead when TAKEBACK_REQUIRE_AGENTS=1 (CI).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { GEMINI_BIN, REPO_ROOT, describeGeminiRun, geminiFunctionResponses, replace, runGemini, runShell, startGeminiStub, text, writeFile } from './support/gemini.js';
import type { GeminiResult, GeminiStep, GeminiStub } from './support/gemini.js';
import { BIN } from './support/takeback.js';
import { changedPaths, describeEntry, edited, expectedStatus, fileEntry, fileOf, readTree, replaceOnce, sedLines, stateMatches, treeDiff, withChanges } from './support/trees.js';
import type { Tree } from './support/trees.js';
import { e2eHelpers, expectAppliedSets, expectHookGroups, git, mkTemp, reportTimings, rmAll, scratchWorkspace, takebackInit } from './support/workspace.js';

const { bin: GEMINI, version: VERSION, skipReason: SKIP_REASON } = gateAgent(GEMINI_BIN, 'takeback end to end with the real Gemini CLI', '[gemini-e2e]');

// Not a package whose code is in dist/: the command scan skips build output folders by name.
const SOURCE = path.join(REPO_ROOT, 'node_modules', 'picomatch');

const PROMPT_1 = 'Turn one: add a greeter, relicense, reword errors, move the posix entry.';
const PROMPT_2 = 'Turn two: add docs, retune the parser message, rewrite the posix entry.';
const FINAL_1 = 'Turn one is done.';
const FINAL_2 = 'Turn two is done.';

const GREET = "export function greet(name) {\n  return 'Hello, ' + name + '!';\n}\n";
const LICENSE = 'Scratch copy of picomatch, relicensed for the takeback e2e test only.\n';
const POSIX = "'use strict';\n\n// The posix flavour, moved here.\nmodule.exports = require('./picomatch');\n";
const EDIT_PICO = { file: 'lib/picomatch.js', old: 'Expected pattern to be a non-empty string', new: 'A pattern must be a non-empty string' };
const EDIT_GREET = { file: 'src/extras/greet.js', old: "'Hello, '", new: "'Hi there, '" };
const EDIT_PARSE = { file: 'lib/parse.js', old: 'Expected the input to be a string', new: 'Expected the glob to be a string' };
const SED = "sed -i 's/Expected a string/Expected the input to be a string/' lib/parse.js";
const MV = 'mv posix.js lib/posix-entry.js';
const RM = 'rm lib/scan.js';
const DOCS = 'mkdir -p docs/api && cp LICENSE docs/api/LICENSE.copy && ln -s ../../README.md docs/api/README.md && chmod 755 index.js';

/** One changing tool call of the script, in the order gemini ran them. */
interface Call {
  tool: 'write_file' | 'replace' | 'run_shell_command';
  turn: 't1' | 't2';
  /** The path as the model sent it (file tools): absolute or relative. */
  arg?: string;
  /** The workspace-relative path (file tools). */
  path?: string;
  command?: string;
}

// ---- the test --------------------------------------------------------------------------------

describe.skipIf(!GEMINI)(GEMINI ? `takeback end to end with the real Gemini CLI ${VERSION}` : `takeback end to end with the real Gemini CLI — ${SKIP_REASON}`, () => {
  let work: string; // the workspace: a git repository holding picomatch's package folder
  let home: string; // gemini's private HOME
  let tbHome: string; // takeback's private TAKEBACK_HOME (the journal)
  let stub: GeminiStub;
  let run1: GeminiResult;
  let run2: GeminiResult;
  const timings: { what: string; ms: number }[] = [];

  /** The known trees: before turn 1, after each changing tool call (E[1..10]), after each turn. */
  let T0: Tree;
  let T1: Tree;
  let T2: Tree;
  const E: Tree[] = [];
  const p = (rel: string) => path.join(work, rel);
  let calls: Call[] = [];
  /** The set ids, oldest first: one per call of `calls` when takeback got them all. */
  let ids: string[] = [];

  const env = () => ({ ...process.env, TAKEBACK_HOME: tbHome, NO_COLOR: '1' });

  const { tb, states, expectTree, expectAllSets, expectGitClean, expectPreview } = e2eHelpers(() => work, () => tbHome, timings);
  const describeCall = (c: Call, k: number) => `#${k} ${c.turn} ${c.tool} ${c.command ?? c.arg}`;

  beforeAll(async () => {
    // Real source nobody here wrote: picomatch's published package folder, and a link to its readme.
    work = await scratchWorkspace('takeback-gemini-e2e-work-', SOURCE, { name: 'Readme', target: 'README.md' }, 'picomatch, as published');
    home = await mkTemp('takeback-gemini-e2e-home-');
    tbHome = await mkTemp('takeback-gemini-e2e-journal-');

    // takeback's own installer writes the hooks (project settings), then that is committed too.
    takebackInit(work, tbHome, ['gemini']);
    T0 = readTree(work);

    calls = [
      { tool: 'write_file', turn: 't1', arg: p('src/extras/greet.js'), path: 'src/extras/greet.js' },
      { tool: 'write_file', turn: 't1', arg: p('LICENSE'), path: 'LICENSE' },
      { tool: 'replace', turn: 't1', arg: p(EDIT_PICO.file), path: EDIT_PICO.file },
      { tool: 'replace', turn: 't1', arg: EDIT_GREET.file, path: EDIT_GREET.file }, // relative
      { tool: 'run_shell_command', turn: 't1', command: SED },
      { tool: 'run_shell_command', turn: 't1', command: MV },
      { tool: 'run_shell_command', turn: 't1', command: RM },
      { tool: 'run_shell_command', turn: 't2', command: DOCS },
      { tool: 'replace', turn: 't2', arg: p(EDIT_PARSE.file), path: EDIT_PARSE.file },
      { tool: 'write_file', turn: 't2', arg: 'lib/posix-entry.js', path: 'lib/posix-entry.js' }, // relative
    ];
    const turn1: GeminiStep[] = [
      [text('I will add the helper first.'), writeFile(calls[0]!.arg!, GREET)],
      // write_file over an existing file (no read needed first).
      [writeFile(calls[1]!.arg!, LICENSE)],
      [replace(calls[2]!.arg!, EDIT_PICO.old, EDIT_PICO.new, 'Reword the pattern error.')],
      // A relative path: the hook payload keeps it relative; takeback resolves it against cwd.
      [replace(calls[3]!.arg!, EDIT_GREET.old, EDIT_GREET.new, 'Greet less formally.')],
      [runShell(SED)],
      [runShell(MV)],
      [runShell(RM)],
      [text(FINAL_1)],
    ];
    const turn2: GeminiStep[] = [
      [text('Docs first.'), runShell(DOCS)],
      // The line the sed of turn 1 changed, changed again.
      [replace(calls[8]!.arg!, EDIT_PARSE.old, EDIT_PARSE.new, 'Retune the message.')],
      // Over the file the mv of turn 1 made, by a relative path.
      [writeFile(calls[9]!.arg!, POSIX)],
      [text(FINAL_2)],
    ];
    stub = await startGeminiStub({ steps: turn1 });
    // The hooks inherit gemini's environment: TAKEBACK_HOME must be in it. geminiEnv passes on
    // none of the test's own CI variables; GITHUB_SHA/GITHUB_ACTIONS are removed explicitly anyway
    // (with GITHUB_SHA set gemini gives hooks only an allow-list, without TAKEBACK_HOME).
    const hookEnv = { TAKEBACK_HOME: tbHome, TAKEBACK_LOG_LEVEL: 'debug', GITHUB_SHA: undefined, GITHUB_ACTIONS: undefined };
    run1 = await runGemini({ cwd: work, home, baseUrl: stub.url, prompt: PROMPT_1, env: hookEnv, outputFormat: 'json', timeoutMs: 60_000 });
    T1 = readTree(work);
    stub.push(...turn2);
    run2 = await runGemini({ cwd: work, home, baseUrl: stub.url, prompt: PROMPT_2, env: hookEnv, outputFormat: 'json', resume: 'latest', timeoutMs: 60_000 });
    T2 = readTree(work);
    console.info(`[gemini-e2e] gemini ${VERSION}: turn 1 took ${run1.durationMs} ms, turn 2 ${run2.durationMs} ms`);

    // The tree after each changing tool call, computed here from what each tool does — not from
    // takeback. New entries' modes (the umask's) and the new link's are read from the trees after
    // the turns.
    E[0] = T0;
    E[1] = withChanges(E[0], {
      src: T1.get('src'),
      'src/extras': T1.get('src/extras'),
      'src/extras/greet.js': fileEntry(Buffer.from(GREET), fileOf(T1, 'src/extras/greet.js').mode),
    });
    E[2] = withChanges(E[1], { LICENSE: fileEntry(Buffer.from(LICENSE), fileOf(E[1], 'LICENSE').mode) });
    E[3] = withChanges(E[2], { [EDIT_PICO.file]: edited(E[2], EDIT_PICO.file, replaceOnce(EDIT_PICO.old, EDIT_PICO.new)) });
    E[4] = withChanges(E[3], { [EDIT_GREET.file]: edited(E[3], EDIT_GREET.file, replaceOnce(EDIT_GREET.old, EDIT_GREET.new)) });
    E[5] = withChanges(E[4], { 'lib/parse.js': edited(E[4], 'lib/parse.js', sedLines('Expected a string', 'Expected the input to be a string')) });
    E[6] = withChanges(E[5], { 'posix.js': undefined, 'lib/posix-entry.js': E[5].get('posix.js') });
    E[7] = withChanges(E[6], { 'lib/scan.js': undefined });
    const index = fileOf(E[7], 'index.js');
    E[8] = withChanges(E[7], {
      docs: T2.get('docs'),
      'docs/api': T2.get('docs/api'),
      'docs/api/LICENSE.copy': fileEntry(fileOf(E[7], 'LICENSE').bytes, fileOf(T2, 'docs/api/LICENSE.copy').mode),
      'docs/api/README.md': { type: 'symlink', mode: T2.get('docs/api/README.md')?.mode ?? 0o777, target: '../../README.md' },
      'index.js': fileEntry(index.bytes, 0o755),
    });
    E[9] = withChanges(E[8], { [EDIT_PARSE.file]: edited(E[8], EDIT_PARSE.file, replaceOnce(EDIT_PARSE.old, EDIT_PARSE.new)) });
    E[10] = withChanges(E[9], { 'lib/posix-entry.js': fileEntry(Buffer.from(POSIX), fileOf(E[9], 'lib/posix-entry.js').mode) });

    // The set ids, oldest first (checked against the calls in the list --json test).
    const listed = spawnSync(process.execPath, [BIN, 'list', '--json'], { cwd: work, env: env(), encoding: 'utf8' });
    try {
      ids = (JSON.parse(listed.stdout).sets as { id: string }[]).map((s) => s.id).reverse();
    } catch {
      /* left empty: the list test says why */
    }
  }, 180_000);

  afterAll(async () => {
    await stub?.close();
    reportTimings('[gemini-e2e]', timings);
    if (process.env.KEEP_E2E) console.info(`[gemini-e2e] kept ${work} (TAKEBACK_HOME=${tbHome}, HOME=${home})`);
    else rmAll(work, home, tbHome);
  });

  it('init wrote takeback\'s hooks to .gemini/settings.json, and they run takeback', () => {
    const settings = JSON.parse(fs.readFileSync(path.join(work, '.gemini', 'settings.json'), 'utf8'));
    const tools = 'write_file|replace|run_shell_command';
    const expected: [string, string | undefined][] = [
      ['SessionStart', undefined],
      ['BeforeAgent', undefined],
      ['BeforeTool', tools],
      ['AfterTool', tools],
      ['AfterAgent', undefined],
    ];
    const command = expectHookGroups(settings.hooks, expected, (hooks, event) => {
      expect(hooks, event).toHaveLength(1);
      expect(hooks[0]).toMatchObject({ name: 'takeback', type: 'command' });
      // Gemini's hook timeouts are in milliseconds.
      expect(hooks[0].timeout, event).toBeGreaterThanOrEqual(1000);
    });
    // It stays quiet and exits 0 even if takeback is gone (a failing hook with text would block the tool).
    expect(command).toMatch(/takeback\.js hook gemini; elif /);
    // The hook fired with the environment it needs: the private journal got the log.
    expect(fs.existsSync(path.join(tbHome, 'logs', 'hook.log'))).toBe(true);
  });

  it('both turns ran every scripted tool call with success, in one gemini session, and no hook failed', () => {
    expect(run1.code, describeGeminiRun(run1)).toBe(0);
    expect(run2.code, describeGeminiRun(run2)).toBe(0);
    expect(run1.json?.response, describeGeminiRun(run1)).toContain(FINAL_1);
    expect(run2.json?.response, describeGeminiRun(run2)).toContain(FINAL_2);
    expect(run1.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(run2.sessionId, 'the resumed run is the same session').toBe(run1.sessionId);
    expect(stub.stepsUsed).toBe(12);
    // Nothing on stderr says a hook warned or blocked.
    for (const r of [run1, run2]) expect(r.stderr, describeGeminiRun(r)).not.toMatch(/Hook system message|blocked/i);
    // Every tool result sent back to the model is a success.
    const responses = geminiFunctionResponses(stub);
    expect(responses.map((r) => r.name)).toEqual(calls.map((c) => c.tool));
    for (const r of responses) {
      expect(r.response.error, JSON.stringify(r)).toBeUndefined();
      if (r.name === 'run_shell_command') expect(r.response.output, JSON.stringify(r)).not.toMatch(/Exit Code: [1-9]/);
    }
    // The hooks wrote to the private TAKEBACK_HOME, every event handled, none failed.
    const log = fs.readFileSync(path.join(tbHome, 'logs', 'hook.log'), 'utf8');
    expect(log).not.toMatch(/hook gemini failed|input is not JSON|no hook_event_name|no begin|not captured/);
    expect(log.match(/gemini AfterTool: capture o[0-9a-f]{16} ended: set \d+/g) ?? [], log).toHaveLength(calls.length);
    expect(log.match(/gemini AfterAgent: turn t\d+ ended/g) ?? [], log).toHaveLength(2);
    // No tool call or turn is left open.
    const doctor = tb(['doctor', '--json']).json;
    expect(doctor.captures.open, JSON.stringify(doctor)).toBe(0);
    expect(doctor.turns).toEqual({ total: 2, open: 0, endLost: 0 });
    // The journal lives outside the workspace, and so does gemini's own state.
    expect([...T2.keys()].filter((k) => /takeback|journal|\.db$|^\.gemini\/(?!settings\.json$)/i.test(k))).toEqual([]);
  });

  it('the files are in the states the tools left, turn by turn (known trees)', () => {
    expect(treeDiff(T1, E[7]!), 'after turn 1 = after the rm').toEqual([]);
    expect(treeDiff(T2, E[10]!), 'after turn 2 = after the last write_file').toEqual([]);
    for (let k = 1; k <= calls.length; k++) expect(changedPaths(E[k - 1]!, E[k]!).length, describeCall(calls[k - 1]!, k)).toBeGreaterThan(0);
    expect(fileOf(T2, 'src/extras/greet.js').bytes.toString()).toBe(GREET.replace("'Hello, '", "'Hi there, '"));
    expect(fileOf(T2, 'lib/parse.js').bytes.toString()).toContain("throw new TypeError('Expected the glob to be a string');");
    expect(T2.get('index.js')?.mode).toBe(0o755);
    expect(git(work, 'status', '--porcelain').trim()).not.toBe('');
  });

  it('list --json: one set per changing tool call, agent "gemini", the session, paired by order, the files each touched', () => {
    const list = tb(['list', '--json']).json;
    expect(list.workspace).toBe(work);
    expect(list.capture).toEqual({ commands: true, reason: null, baseline: null });
    expect(list.turns.map((t: any) => [t.id, t.seq, t.agent, t.session, t.agentTurn, t.label])).toEqual([
      ['t2', 2, 'gemini', run1.sessionId, null, PROMPT_2],
      ['t1', 1, 'gemini', run1.sessionId, null, PROMPT_1],
    ]);
    for (const t of list.turns) expect(t.end, `turn ${t.id} ended`).not.toBeNull();
    // Newest first; no "changed during this turn" set: every change was some tool call's.
    const sets = [...list.sets].reverse();
    expect(list.sets.map((s: any) => Number(s.id))).toEqual(sets.map((s: any) => Number(s.id)).reverse());
    expectAppliedSets(
      list,
      sets,
      'gemini',
      run1.sessionId,
      calls.map((c) => ({
        turn: c.turn,
        source: c.command
          ? { kind: 'command', command: c.command, tool: 'run_shell_command', toolCallId: expect.stringMatching(/^o[0-9a-f]{16}$/), pairedBy: 'order' }
          : { kind: 'tool', tool: c.tool, toolCallId: expect.stringMatching(/^o[0-9a-f]{16}$/), pairedBy: 'order' },
      })),
    );
    expect(sets.map((s: any) => s.id)).toEqual(ids);
    expect(new Set(sets.map((s: any) => s.source.toolCallId)).size).toBe(calls.length);
    // Each set's files: exactly the paths its call changed, folders included, with their status.
    sets.forEach((s: any, i: number) => {
      const [before, after] = [E[i]!, E[i + 1]!];
      expect(
        s.files.map((f: any) => [f.path, f.status, f.type]).sort(),
        `${describeCall(calls[i]!, i + 1)}: ${JSON.stringify(s.files)}`,
      ).toEqual(changedPaths(before, after).map((k) => [k, expectedStatus(before.get(k), after.get(k)), (after.get(k) ?? before.get(k))!.type]));
      for (const f of s.files) expect(f.undoable, `${s.id} ${f.path}`).toBe(true);
    });
    expect(sets[0].files.map((f: any) => [f.path, f.status])).toEqual([
      ['src', 'created'],
      ['src/extras', 'created'],
      ['src/extras/greet.js', 'created'],
    ]);
    expect(sets[1].files.map((f: any) => [f.path, f.status])).toEqual([['LICENSE', 'modified']]);
    // The relative replace: the path resolved against gemini's cwd.
    expect(sets[3].files.map((f: any) => [f.path, f.status])).toEqual([['src/extras/greet.js', 'modified']]);
    expect(sets[5].files.map((f: any) => [f.path, f.status]).sort()).toEqual([
      ['lib/posix-entry.js', 'created'],
      ['posix.js', 'deleted'],
    ]);
    expect(sets[6].files.map((f: any) => [f.path, f.status])).toEqual([['lib/scan.js', 'deleted']]);
    expect(sets[7].files.map((f: any) => [f.path, f.status]).sort()).toEqual([
      ['docs', 'created'],
      ['docs/api', 'created'],
      ['docs/api/LICENSE.copy', 'created'],
      ['docs/api/README.md', 'created'],
      ['index.js', 'mode'],
    ]);
    expect(sets[9].files.map((f: any) => [f.path, f.status])).toEqual([['lib/posix-entry.js', 'modified']]);
  });

  it('list --agent: gemini has every set and turn, claude-code none', () => {
    const all = tb(['list', '--json']).json;
    const g = tb(['list', '--agent', 'gemini', '--json']).json;
    expect(g.sets.map((s: any) => s.id)).toEqual(all.sets.map((s: any) => s.id));
    expect(g.turns.map((t: any) => t.id)).toEqual(['t2', 't1']);
    const c = tb(['list', '--agent', 'claude-code', '--json']).json;
    expect(c.sets).toEqual([]);
    expect(c.turns).toEqual([]);
    expect(tb(['list', '--agent', 'claude-code']).stdout).toContain('No changes by claude-code in this workspace (agents with changes here: gemini).');
  });

  it('the human listing says "paired by order" for every set, and names each call', () => {
    const human = tb(['list']).stdout;
    expect(human.match(/\(paired by order\)/g) ?? [], human).toHaveLength(calls.length);
    expect(human).toContain(`Turn t1 · "${PROMPT_1}" · gemini`);
    expect(human).toContain(`Turn t2 · "${PROMPT_2}" · gemini`);
    for (const c of calls) expect(human, describeCall(c, 0)).toContain((c.command ?? c.path!).slice(0, 40));
    const show = tb(['show', ids[4]!]).stdout;
    expect(show).toContain('paired by order (the agent gives no tool call id)');
    expect(show).toContain('lib/parse.js');
  });

  it('show --json: each set holds exactly the paths its call changed, before and after byte for byte', () => {
    calls.forEach((c, i) => {
      const detail = tb(['show', ids[i]!, '--json']).json;
      expect(detail.agent).toBe('gemini');
      expect(detail.source.pairedBy).toBe('order');
      expect(detail.files.map((f: any) => f.path).sort(), describeCall(c, i + 1)).toEqual(changedPaths(E[i]!, E[i + 1]!));
      for (const f of detail.files) {
        const what = `${describeCall(c, i + 1)} ${f.path}`;
        expect(stateMatches(f.before, E[i]!.get(f.path), { linkMode: false }), `${what} before: ${JSON.stringify(f.before)} vs ${describeEntry(E[i]!.get(f.path))}`).toBe(true);
        expect(stateMatches(f.after, E[i + 1]!.get(f.path), { linkMode: false }), `${what} after: ${JSON.stringify(f.after)} vs ${describeEntry(E[i + 1]!.get(f.path))}`).toBe(true);
        expect(f.gap, what).toBeNull();
      }
    });
  });

  it('undoes every tool call one at a time, newest first, down to the committed tree; then redoes them one by one', () => {
    for (let k = calls.length; k >= 1; k--) {
      const undo = tb(['undo', ids[k - 1]!, '--json']).json;
      expect(undo.conflicts, describeCall(calls[k - 1]!, k)).toEqual([]);
      expect(undo.sets).toEqual([ids[k - 1]]);
      expectTree(E[k - 1]!, `after undoing ${describeCall(calls[k - 1]!, k)}`);
    }
    expectTree(T0, 'everything undone');
    expectGitClean();
    expectAllSets('undone');
    for (let k = 1; k <= calls.length; k++) {
      const redo = tb(['redo', ids[k - 1]!, '--json']).json;
      expect(redo.conflicts, describeCall(calls[k - 1]!, k)).toEqual([]);
      expectTree(E[k]!, `after redoing ${describeCall(calls[k - 1]!, k)}`);
    }
    expectTree(T2, 'everything redone');
    expectAllSets('applied');
  });

  it('undoes turn 2 as a whole (the tree after turn 1), then turn 1 (the committed tree); redoes both', () => {
    expectPreview(['--turn', '2'], T1, T2);

    tb(['undo', '--turn', '2']);
    expectTree(T1, 'after undo --turn 2');
    const st = states();
    calls.forEach((c, i) => expect(st.get(ids[i]!), describeCall(c, i + 1)).toBe(c.turn === 't2' ? 'undone' : 'applied'));
    tb(['undo', '--turn', 't1']);
    expectTree(T0, 'after undo --turn t1');
    expectGitClean();
    tb(['redo', '--turn', '1']);
    expectTree(T1, 'after redo --turn 1');
    tb(['redo', '--turn', '2']);
    expectTree(T2, 'after redo --turn 2');
  });

  it('--after-turn 1 rewinds to the end of turn 1 and back; a set of turn 1 under a later change is refused', () => {
    tb(['undo', '--after-turn', '1']);
    expectTree(T1, 'after undo --after-turn 1');
    // The sed of turn 1 on its own: its line is the one turn 2's replace changed again (undone now).
    tb(['undo', ids[4]!]);
    expectTree(withChanges(T1, { 'lib/parse.js': E[4]!.get('lib/parse.js') }), 'after undoing the sed alone');
    tb(['redo', ids[4]!]);
    expectTree(T1, 'after redoing the sed');
    tb(['redo', '--after-turn', '1']);
    expectTree(T2, 'after redo --after-turn 1');
    // With turn 2 in place, undoing the sed alone would lose the replace on top of it: refused.
    const r = tb(['undo', ids[4]!, '--json'], 1);
    expect(r.json.written).toBe(false);
    expect(r.json.conflicts.map((c: any) => c.path)).toContain('lib/parse.js');
    expectTree(T2, 'a refused undo writes nothing');
    expectAllSets('applied');
  });
});
