// takeback end to end with the REAL Codex CLI, alone and then after the real Claude Code in the
// same folder.
//
// Part A: `takeback init codex` writes the project's .codex/hooks.json in a scratch copy of real
// source (commander's package folder, copied out of node_modules and committed to git), the
// project is trusted in a private $CODEX_HOME/config.toml, and the real `codex exec` (then
// `codex exec resume --last`) runs a two-turn session scripted by the Responses-API stub on
// 127.0.0.1: shell commands (`sed -i`, `mv`, `rm`, `printf >`) and apply_patch (update, add in a
// new folder, delete, update + move), its real hooks recording into a private TAKEBACK_HOME.
// The command line then lists every set (agent, session, Codex turn_id, prompts) and undoes
// every tool call one at a time, redoes them, undoes and redoes whole turns, each step checked
// byte for byte (bytes, mode, type, link text, folders) against trees the test knows
// independently of takeback.
//
// Part B: both agents' hooks in one folder, one journal. A Claude Code turn (Write, Edit, Bash),
// then a Codex turn that patches the file Claude edited and changes another by shell: undoing
// Claude's turn first would merge (Codex's patch of that file is on other lines, and stays); undoing Codex's turn
// gives back exactly what Claude Code left; then Claude's turn undoes cleanly; both redo.
//
// Needs the CLIs: scripts/install-codex.sh (or CODEX=/path/to/codex) and, for part B,
// scripts/install-claude.sh (or CLAUDE=/path/to/claude). Skips with a message when one is
// missing, and FAILS instead when TAKEBACK_REQUIRE_AGENTS=1 (codex; or TAKEBACK_REQUIRE_CODEX=1)
// or TAKEBACK_REQUIRE_CLAUDE=1 (claude).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { CLAUDE_BIN, describeRun, runClaude } from './support/claude.js';
import type { ClaudeResult } from './support/claude.js';
import { CODEX_BIN, REPO_ROOT, applyPatchCall, codexToolOutputs, describeCodexRun, makeCodexHookLog, patchText, projectTrustToml, runCodex, shellCall, startCodexStub, textItem } from './support/codex.js';
import type { CodexHookLog, CodexResult, CodexStub } from './support/codex.js';
import { startModelStub } from './support/model-stub.js';
import type { ModelStub } from './support/model-stub.js';
import { changedPaths, describeEntry, edited, entryOf, fileEntry, readTree, replaceOnce, sedLines, stateMatches, treeDiff, withChanges } from './support/trees.js';
import type { Tree } from './support/trees.js';
import { e2eHelpers, expectAppliedSets, expectHookGroups, git, mkTemp, reportTimings, rmAll, scratchWorkspace, takebackInit } from './support/workspace.js';

const { bin: CODEX, version: CODEX_VERSION, skipReason: CODEX_SKIP } = gateAgent(CODEX_BIN, 'takeback end to end with the real Codex CLI', '[codex-e2e]');
const { bin: CLAUDE, version: CLAUDE_VERSION, skipReason: CLAUDE_SKIP } = gateAgent(
  CLAUDE_BIN,
  'Claude Code, then Codex, in one folder',
  CODEX ? '[codex-e2e] Claude Code then Codex in one folder:' : undefined,
);

const SOURCE = path.join(REPO_ROOT, 'node_modules', 'commander');

/** The one line of commander's `file` that contains `needle` (checked: exactly one). */
function sourceLine(file: string, needle: string): string {
  const lines = fs.readFileSync(path.join(SOURCE, file), 'utf8').split('\n').filter((l) => l.includes(needle));
  if (lines.length !== 1) throw new Error(`${file}: expected one line with ${JSON.stringify(needle)}, found ${lines.length}`);
  return lines[0]!;
}

/** A scratch workspace: commander's published package folder (and a link to its readme), committed. */
const commanderWorkspace = (prefix: string) => scratchWorkspace(prefix, SOURCE, { name: 'README.md', target: 'Readme.md' }, 'commander, as published');

/** takeback's hook log under `tbHome`: checks that no event failed and returns it. */
function hookLog(tbHome: string): string {
  const log = fs.readFileSync(path.join(tbHome, 'logs', 'hook.log'), 'utf8');
  expect(log).not.toMatch(/hook (codex|claude-code) failed|input is not JSON|no hook_event_name|unknown agent/);
  return log;
}

// ---- the scripted work ----------------------------------------------------------------------

const PROMPT_1 = 'Turn one: soften the suggestions, move the ESM entry, add a greeting helper.';
const PROMPT_2 = 'Turn two: retitle the usage and finish the helper.';
const FINAL_1 = 'Turn one is done.';
const FINAL_2 = 'Turn two is done.';

const SED_1 = "sed -i 's/Did you mean/Perhaps you meant/' lib/suggestSimilar.js";
const MV = 'mv esm.mjs lib/esm.mjs';
const RM = 'rm package-support.json';
const PRINTF = "printf 'Changed by Codex.\\n' > CHANGES.txt";
const PRINTED = 'Changed by Codex.\n';
const SED_2 = "sed -i 's/Usage:/Use it as:/' lib/help.js";

const ERR_DOC = sourceLine('lib/error.js', 'human-readable description of the error');
const ERR_DOC_NEW = ERR_DOC.replace('human-readable description of the error', 'message for people');
const EXIT_DOC = sourceLine('lib/error.js', 'suggested exit code which could be used with process.exit');
const EXIT_DOC_NEW = EXIT_DOC.replace('suggested exit code', 'the exit code to suggest');
const OPT_REQUIRE = sourceLine('lib/option.js', "require('./error.js')");
const OPT_REQUIRE_NEW = OPT_REQUIRE.replace("'./error.js'", "'../error.js'");
const GREET_1 = 'const greet = (name) => `Hello, ${name}!`;';
const GREET_2 = 'const greet = (name) => `Hello again, ${name}!`;';
const GREET_EXPORT = 'module.exports = { greet };';

/** Turn 1's patch: update, add (in new folders), delete, and update + move (into a new folder). */
const PATCH_1 = patchText([
  { update: 'lib/error.js', hunks: [{ lines: [`-${ERR_DOC}`, `+${ERR_DOC_NEW}`] }] },
  { add: 'src/extras/greet.js', lines: [GREET_1, GREET_EXPORT] },
  { delete: 'typings/esm.d.mts' },
  { update: 'lib/option.js', moveTo: 'lib/parts/option.js', hunks: [{ lines: [`-${OPT_REQUIRE}`, `+${OPT_REQUIRE_NEW}`] }] },
]);
/** The paths PATCH_1 names, and what each one becomes. */
const PATCH_1_FILES: [string, string][] = [
  ['lib/error.js', 'modified'],
  ['lib/option.js', 'deleted'],
  ['lib/parts/option.js', 'created'],
  ['src/extras/greet.js', 'created'],
  ['typings/esm.d.mts', 'deleted'],
];
/** Turn 2's patch: update the file turn 1's patch added, delete the one its printf wrote. */
const PATCH_2 = patchText([
  { update: 'src/extras/greet.js', hunks: [{ lines: [`-${GREET_1}`, `+${GREET_2}`] }] },
  { delete: 'CHANGES.txt' },
]);
const PATCH_2_FILES: [string, string][] = [
  ['CHANGES.txt', 'deleted'],
  ['src/extras/greet.js', 'modified'],
];
/** A patch that does not apply (its hunk is not in the file): Codex fires PreToolUse and no PostToolUse. */
const PATCH_FAILING = patchText([{ update: 'lib/command.js', hunks: [{ lines: ['-no such line in commander', '+nor this one'] }] }]);

// ---- the tests ------------------------------------------------------------------------------

describe.skipIf(!CODEX)(CODEX ? `takeback end to end with the real Codex CLI ${CODEX_VERSION}` : `takeback end to end with the real Codex CLI — ${CODEX_SKIP}`, () => {
  let work: string; // the workspace: a git repository holding commander's package folder
  let codexHome: string; // Codex's private CODEX_HOME (= HOME)
  let tbHome: string; // takeback's private TAKEBACK_HOME (the journal)
  let aside: string; // a logging hook of the test's own, outside the workspace
  let stub: CodexStub;
  let turnLog: CodexHookLog;
  let run1: CodexResult;
  let run2: CodexResult;
  let agentTurns: string[]; // Codex's turn_id of each turn, as a hook of the test's own saw them
  const timings: { what: string; ms: number }[] = [];

  /** The known trees: before turn 1, after each tool call (E[1..7]), after each turn. */
  let T0: Tree;
  let T1: Tree;
  let T2: Tree;
  const E: Tree[] = [];
  /** The tool calls, in order: the stub's call id, turn, command (shell) or patch. */
  const calls: { id: string; turn: string; command?: string; patch?: [string, string][] }[] = [];
  /** Set ids by call id, once listed. */
  const setOf = new Map<string, string>();
  /** The call id of turn 2's patch that did not apply. */
  let failedPatch: string;

  const { tb, states, expectTree, expectAllSets, expectGitClean, expectPreview } = e2eHelpers(() => work, () => tbHome, timings);
  const setId = (callId: string) => {
    const id = setOf.get(callId);
    if (!id) throw new Error(`no change set for ${callId}`);
    return id;
  };

  beforeAll(async () => {
    work = await commanderWorkspace('takeback-codex-e2e-work-');
    codexHome = await mkTemp('takeback-codex-e2e-home-');
    tbHome = await mkTemp('takeback-codex-e2e-journal-');
    aside = await mkTemp('takeback-codex-e2e-aside-');

    // takeback's own installer writes the project's hooks, then that is committed too.
    takebackInit(work, tbHome, ['codex']);
    T0 = readTree(work);

    // A hook of the test's own in $CODEX_HOME/hooks.json logs each turn's turn_id.
    turnLog = makeCodexHookLog(aside);
    stub = await startCodexStub({
      steps: [
        [textItem('I will soften the suggestions first.'), shellCall(SED_1)],
        [shellCall(MV)],
        [shellCall(RM)],
        [shellCall(PRINTF)],
        [applyPatchCall(PATCH_1)],
        [textItem(FINAL_1)],
      ],
    });
    const common = {
      cwd: work,
      codexHome,
      baseUrl: stub.url,
      // The project's .codex/hooks.json runs only in a trusted project (and with hooks trusted:
      // runCodex passes --dangerously-bypass-hook-trust).
      extraConfig: projectTrustToml(work),
      homeHooks: turnLog.hooksJson('turns', { events: ['UserPromptSubmit', 'Stop'] }),
      env: { TAKEBACK_HOME: tbHome, TAKEBACK_LOG_LEVEL: 'debug' },
      timeoutMs: 60_000,
    };
    run1 = await runCodex({ ...common, prompt: PROMPT_1 });
    T1 = readTree(work);
    stub.push([shellCall(SED_2)], [applyPatchCall(PATCH_2)], [applyPatchCall(PATCH_FAILING)], [textItem(FINAL_2)]);
    run2 = await runCodex({ ...common, prompt: PROMPT_2, resume: 'last' });
    T2 = readTree(work);
    agentTurns = turnLog
      .read()
      .filter((e) => e.hook_event_name === 'UserPromptSubmit')
      .map((e) => e.turn_id);
    console.info(`[codex-e2e] codex ${CODEX_VERSION}: turn 1 took ${run1.durationMs} ms, turn 2 ${run2.durationMs} ms`);

    const ids = stub.callIds;
    calls.push(
      { id: ids[0]!, turn: 't1', command: SED_1 },
      { id: ids[1]!, turn: 't1', command: MV },
      { id: ids[2]!, turn: 't1', command: RM },
      { id: ids[3]!, turn: 't1', command: PRINTF },
      { id: ids[4]!, turn: 't1', patch: PATCH_1_FILES },
      { id: ids[5]!, turn: 't2', command: SED_2 },
      { id: ids[6]!, turn: 't2', patch: PATCH_2_FILES },
    );
    failedPatch = ids[7]!;

    // The tree after each tool call, computed here from what each tool does — not from
    // takeback. New entries' modes (the umask's) are read from the trees after the turn.
    E[0] = T0;
    E[1] = withChanges(E[0], { 'lib/suggestSimilar.js': edited(E[0], 'lib/suggestSimilar.js', sedLines('Did you mean', 'Perhaps you meant')) });
    E[2] = withChanges(E[1], { 'esm.mjs': undefined, 'lib/esm.mjs': E[1].get('esm.mjs') });
    E[3] = withChanges(E[2], { 'package-support.json': undefined });
    E[4] = withChanges(E[3], { 'CHANGES.txt': fileEntry(Buffer.from(PRINTED), entryOf(T1, 'CHANGES.txt').mode) });
    E[5] = withChanges(E[4], {
      'lib/error.js': edited(E[4], 'lib/error.js', replaceOnce(ERR_DOC, ERR_DOC_NEW)),
      src: entryOf(T1, 'src'),
      'src/extras': entryOf(T1, 'src/extras'),
      'src/extras/greet.js': fileEntry(Buffer.from(`${GREET_1}\n${GREET_EXPORT}\n`), entryOf(T1, 'src/extras/greet.js').mode),
      'typings/esm.d.mts': undefined,
      'lib/option.js': undefined,
      'lib/parts': entryOf(T1, 'lib/parts'),
      'lib/parts/option.js': edited(E[4], 'lib/option.js', replaceOnce(OPT_REQUIRE, OPT_REQUIRE_NEW), entryOf(T1, 'lib/parts/option.js').mode),
    });
    E[6] = withChanges(E[5], { 'lib/help.js': edited(E[5], 'lib/help.js', sedLines('Usage:', 'Use it as:')) });
    E[7] = withChanges(E[6], { 'src/extras/greet.js': edited(E[6], 'src/extras/greet.js', replaceOnce(GREET_1, GREET_2)), 'CHANGES.txt': undefined });
  }, 180_000);

  afterAll(async () => {
    await stub?.close();
    reportTimings('[codex-e2e] codex session:', timings);
    if (process.env.KEEP_E2E) console.info(`[codex-e2e] kept ${work} (TAKEBACK_HOME=${tbHome}, CODEX_HOME=${codexHome})`);
    else rmAll(work, codexHome, tbHome, aside);
  });

  it('init wrote the project .codex/hooks.json whose command runs takeback; the project is trusted', () => {
    const file = JSON.parse(fs.readFileSync(path.join(work, '.codex', 'hooks.json'), 'utf8'));
    const expected: [string, string | undefined][] = [
      ['SessionStart', undefined],
      ['UserPromptSubmit', undefined],
      ['PreToolUse', 'Bash|apply_patch'],
      ['PostToolUse', 'Bash|apply_patch'],
      ['Stop', undefined],
    ];
    expect(Object.keys(file)).toEqual(['hooks']);
    const command = expectHookGroups(file.hooks, expected, (hooks, event) => {
      expect(hooks, event).toEqual([{ type: 'command', command: expect.any(String), timeout: 30 }]);
    });
    expect(command).toMatch(/takeback\.js hook codex; elif /);
    // Codex's own state stayed out of the workspace: only the hooks file is in .codex.
    expect(fs.readdirSync(path.join(work, '.codex'))).toEqual(['hooks.json']);
    const config = fs.readFileSync(path.join(codexHome, 'config.toml'), 'utf8');
    expect(config).toContain(`[projects.${JSON.stringify(work)}]\ntrust_level = "trusted"`);
    expect(run1.argv).toContain('--dangerously-bypass-hook-trust');
    expect(run1.stderr).not.toContain('Untrusted project-local configuration');
  });

  it('both turns ran every scripted tool call, one session, and no hook failed', () => {
    expect(run1.code, describeCodexRun(run1)).toBe(0);
    expect(run2.code, describeCodexRun(run2)).toBe(0);
    expect(run1.stdout.trim(), describeCodexRun(run1)).toBe(FINAL_1);
    expect(run2.stdout.trim(), describeCodexRun(run2)).toBe(FINAL_2);
    expect(run1.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(run2.sessionId).toBe(run1.sessionId);
    expect(stub.stepsUsed).toBe(10);
    expect(stub.callIds).toHaveLength(8);
    // Every tool call succeeded, as Codex told the model, but the patch meant to fail.
    const out = codexToolOutputs(stub);
    expect([...out.keys()]).toEqual(stub.callIds);
    calls.forEach((c) => {
      expect(out.get(c.id), c.id).toMatch(c.command ? /Process exited with code 0/ : /Success\. Updated the following files:/);
    });
    expect(out.get(failedPatch)).toMatch(/^apply_patch verification failed/);
    // The test's own hook saw two turns with two turn_ids.
    expect(agentTurns).toHaveLength(2);
    for (const t of agentTurns) expect(t).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(agentTurns).size).toBe(2);
    // takeback's hooks wrote to the private TAKEBACK_HOME: every tool call captured and ended
    // with a set, each turn ended with nothing left unclaimed.
    const log = hookLog(tbHome);
    for (const c of calls) expect(log, c.id).toMatch(new RegExp(`capture ${c.id} ended: set \\d+`));
    // The patch that did not apply: begun (it names lib/command.js), never ended by a PostToolUse;
    // Stop closes it, and as it changed nothing it makes no set.
    expect(log).toMatch(new RegExp(`capture ${failedPatch} begun \\(apply_patch ${work}/lib/command\\.js\\)`));
    expect(log).not.toContain(`capture ${failedPatch} ended`);
    expect(log).toMatch(/codex Stop: turn t1 ended\n/);
    expect(log).toMatch(/codex Stop: turn t2 ended\n/);
    expect(log).not.toContain('changed during the turn');
    // Nothing left open in the journal.
    const doctor = tb(['doctor', '--json']).json;
    expect(doctor.captures.open).toBe(0);
    expect(doctor.turns).toEqual({ total: 2, open: 0, endLost: 0 });
    // The journal lives outside the workspace.
    expect([...T2.keys()].filter((p) => /takeback|journal|\.db$/i.test(p))).toEqual([]);
  });

  it('the files are in the states the tools left, turn by turn (known trees)', () => {
    expect(treeDiff(E[5]!, T1), 'after turn 1 = after the patch').toEqual([]);
    expect(treeDiff(E[7]!, T2), 'after turn 2 = after the second patch').toEqual([]);
    for (let k = 1; k <= 7; k++) expect(changedPaths(E[k - 1]!, E[k]!).length, `step ${k}`).toBeGreaterThan(0);
    expect(git(work, 'status', '--porcelain').trim()).not.toBe('');
  });

  it('list --json: two codex turns (session, turn_id, prompt), one set per tool call with agent and session', () => {
    const list = tb(['list', '--json']).json;
    expect(list.workspace).toBe(work);
    expect(list.turns.map((t: any) => [t.id, t.seq, t.agent, t.session, t.agentTurn, t.label])).toEqual([
      ['t2', 2, 'codex', run1.sessionId, agentTurns[1], PROMPT_2],
      ['t1', 1, 'codex', run1.sessionId, agentTurns[0], PROMPT_1],
    ]);
    for (const t of list.turns) expect(t.end, `turn ${t.id} ended`).not.toBeNull();
    const sets = [...list.sets].sort((a: any, b: any) => Number(a.id) - Number(b.id));
    expectAppliedSets(
      list,
      sets,
      'codex',
      run1.sessionId,
      calls.map((c) => ({
        turn: c.turn,
        source: c.command ? { kind: 'command', command: c.command, tool: 'Bash', toolCallId: c.id } : { kind: 'tool', tool: 'apply_patch', toolCallId: c.id },
      })),
    );
    expect(list.sets.map((s: any) => Number(s.id))).toEqual(sets.map((s: any) => Number(s.id)).reverse());
    expect(sets.filter((s: any) => s.source.toolCallId === failedPatch)).toEqual([]);
    sets.forEach((s: any, i: number) => setOf.set(calls[i]!.id, s.id));
    for (const c of calls) if (c.command) expect(sets.find((s: any) => s.source.toolCallId === c.id).label).toBe(`Bash: ${c.command}`);
    // The human listing names the prompts and the commands.
    const human = tb(['list']).stdout;
    for (const s of [PROMPT_1, PROMPT_2, SED_1, MV, RM, SED_2]) expect(human).toContain(s.slice(0, 60));
  });

  it('list --agent codex: the same turns and sets; --agent claude-code: none', () => {
    const all = tb(['list', '--json']).json;
    const codex = tb(['list', '--agent', 'codex', '--json']).json;
    expect(codex.turns).toEqual(all.turns);
    expect(codex.sets).toEqual(all.sets);
    const claude = tb(['list', '--agent', 'claude-code', '--json']).json;
    expect(claude.turns).toEqual([]);
    expect(claude.sets).toEqual([]);
  });

  it('show --json: each set holds exactly the paths its tool call changed, statuses and states byte for byte', () => {
    for (let k = 1; k <= 7; k++) {
      const c = calls[k - 1]!;
      const detail = tb(['show', setId(c.id), '--json']).json;
      expect(detail.agent).toBe('codex');
      expect(detail.session).toBe(run1.sessionId);
      // Exactly the paths that differ, folders the patch created included.
      expect(detail.files.map((f: any) => f.path).sort(), `${c.command ?? 'apply_patch'} ${c.id}`).toEqual(changedPaths(E[k - 1]!, E[k]!));
      for (const f of detail.files) {
        expect(stateMatches(f.before, E[k - 1]!.get(f.path)), `${c.id} ${f.path} before: ${JSON.stringify(f.before)} vs ${describeEntry(E[k - 1]!.get(f.path))}`).toBe(true);
        expect(stateMatches(f.after, E[k]!.get(f.path)), `${c.id} ${f.path} after: ${JSON.stringify(f.after)} vs ${describeEntry(E[k]!.get(f.path))}`).toBe(true);
        expect(f.undoable, `${c.id} ${f.path}`).toBe(true);
        expect(f.gap).toBeNull();
      }
      if (c.patch) {
        // The files are exactly those the patch names (update, add, delete, move from and to).
        const files = detail.files.filter((f: any) => f.type !== 'dir').map((f: any) => [f.path, f.status]);
        expect(files.sort(), c.id).toEqual(c.patch);
      }
    }
    // The folders turn 1's patch created come with it.
    const dirs = tb(['show', setId(calls[4]!.id), '--json']).json.files.filter((f: any) => f.type === 'dir');
    expect(dirs.map((f: any) => [f.path, f.status]).sort()).toEqual([
      ['lib/parts', 'created'],
      ['src', 'created'],
      ['src/extras', 'created'],
    ]);
    // The shell calls, each with what it changed.
    const files = (c: number) => tb(['show', setId(calls[c]!.id), '--json']).json.files.map((f: any) => [f.path, f.status]).sort();
    expect(files(0)).toEqual([['lib/suggestSimilar.js', 'modified']]);
    expect(files(1)).toEqual([
      ['esm.mjs', 'deleted'],
      ['lib/esm.mjs', 'created'],
    ]);
    expect(files(2)).toEqual([['package-support.json', 'deleted']]);
    expect(files(3)).toEqual([['CHANGES.txt', 'created']]);
    expect(files(5)).toEqual([['lib/help.js', 'modified']]);
  });

  it('undoes every tool call one at a time, newest first, down to the committed tree; redoes each, oldest first', () => {
    for (let k = 7; k >= 1; k--) {
      const c = calls[k - 1]!;
      const r = tb(['undo', setId(c.id), '--json']).json;
      expect(r.conflicts, c.id).toEqual([]);
      expect(r.sets).toEqual([setId(c.id)]);
      expect(r.applied.map((f: any) => f.path).sort(), c.id).toEqual(changedPaths(E[k - 1]!, E[k]!));
      expectTree(E[k - 1]!, `after undoing call ${k} (${c.command ?? 'apply_patch'})`);
    }
    expectTree(T0, 'every call undone');
    expectGitClean();
    expectAllSets('undone');
    for (let k = 1; k <= 7; k++) {
      const c = calls[k - 1]!;
      const r = tb(['redo', setId(c.id), '--json']).json;
      expect(r.conflicts, c.id).toEqual([]);
      expectTree(E[k]!, `after redoing call ${k} (${c.command ?? 'apply_patch'})`);
    }
    expectTree(T2, 'every call redone');
    expectAllSets('applied');
  });

  it('undoes turn 2, then turn 1 (the committed tree); redoes both', () => {
    expectPreview(['--turn', 't2'], T1, T2);
    expect(tb(['undo', '--turn', 't2', '--json']).json.conflicts).toEqual([]);
    expectTree(T1, 'after undo --turn t2');
    const st = states();
    for (const c of calls) expect(st.get(setId(c.id)), c.id).toBe(c.turn === 't2' ? 'undone' : 'applied');
    expect(tb(['undo', '--turn', 't1', '--json']).json.conflicts).toEqual([]);
    expectTree(T0, 'after undo --turn t1');
    expectGitClean();
    tb(['redo', '--turn', 't1']);
    expectTree(T1, 'after redo --turn t1');
    tb(['redo', '--turn', 't2']);
    expectTree(T2, 'after redo --turn t2');
    expectAllSets('applied');
  });
});

// ---- Part B: Claude Code, then Codex, in one folder ---------------------------------------------

const CLAUDE_PROMPT = 'Claude: add a hello helper, reword the error doc, soften the suggestions.';
const CODEX_PROMPT = 'Codex: reword the exit code doc and retitle the usage.';
const CLAUDE_FINAL = 'Claude is done.';
const CODEX_FINAL = 'Codex is done.';
const HELLO = "export const hello = (name) => 'Hello, ' + name;\n";
const S = 'lib/error.js'; // Claude edits it, then Codex patches it
const W = 'src/hello.js'; // Claude writes it
const C = 'lib/suggestSimilar.js'; // Claude's sed
const X = 'lib/help.js'; // Codex's sed
const CLAUDE_SED = `sed -i 's/Did you mean/Perhaps you meant/' ${C}`;
const CODEX_SED = `sed -i 's/Usage:/Use it as:/' ${X}`;
const CODEX_PATCH = patchText([{ update: S, hunks: [{ lines: [`-${EXIT_DOC}`, `+${EXIT_DOC_NEW}`] }] }]);

describe.skipIf(!CODEX || !CLAUDE)(
  CODEX && CLAUDE
    ? `Claude Code ${CLAUDE_VERSION}, then Codex ${CODEX_VERSION}, in one folder: one journal`
    : `Claude Code, then Codex, in one folder — ${!CODEX ? CODEX_SKIP : CLAUDE_SKIP}`,
  () => {
    let work: string;
    let claudeHome: string; // Claude's private HOME
    let codexHome: string; // Codex's private CODEX_HOME (= HOME)
    let tbHome: string;
    let claudeStub: ModelStub;
    let codexStub: CodexStub;
    let claudeRun: ClaudeResult;
    let codexRun: CodexResult;
    let T0: Tree;
    let TA: Tree; // what Claude Code left
    let TB: Tree; // then what Codex left
    let expectedA: Tree;
    let expectedB: Tree;
    let claudeTurn: any;
    let codexTurn: any;
    const timings: { what: string; ms: number }[] = [];

    const { tb, expectTree, expectGitClean } = e2eHelpers(() => work, () => tbHome, timings);

    beforeAll(async () => {
      work = await commanderWorkspace('takeback-codex-e2e-both-');
      claudeHome = await mkTemp('takeback-codex-e2e-claude-home-');
      codexHome = await mkTemp('takeback-codex-e2e-codex-home-');
      tbHome = await mkTemp('takeback-codex-e2e-both-journal-');
      takebackInit(work, tbHome, ['claude-code', 'codex'], 'takeback hooks for both agents');
      T0 = readTree(work);
      const hookEnv = { TAKEBACK_HOME: tbHome, TAKEBACK_LOG_LEVEL: 'debug' };

      const p = (rel: string) => path.join(work, rel);
      claudeStub = await startModelStub([
        [
          { type: 'text', text: 'I will add the helper first.' },
          { type: 'tool_use', name: 'Write', input: { file_path: p(W), content: HELLO } },
        ],
        // Edit refuses a file that was not Read first in the session.
        [{ type: 'tool_use', name: 'Read', input: { file_path: p(S) } }],
        [{ type: 'tool_use', name: 'Edit', input: { file_path: p(S), old_string: 'human-readable description of the error', new_string: 'message for people' } }],
        [{ type: 'tool_use', name: 'Bash', input: { command: CLAUDE_SED, description: 'Soften the suggestions' } }],
        [{ type: 'text', text: CLAUDE_FINAL }],
      ]);
      claudeRun = await runClaude({ cwd: work, home: claudeHome, baseUrl: claudeStub.url, prompt: CLAUDE_PROMPT, env: hookEnv, outputFormat: 'json', timeoutMs: 60_000 });
      TA = readTree(work);

      codexStub = await startCodexStub({ steps: [[applyPatchCall(CODEX_PATCH)], [shellCall(CODEX_SED)], [textItem(CODEX_FINAL)]] });
      codexRun = await runCodex({
        cwd: work,
        codexHome,
        baseUrl: codexStub.url,
        prompt: CODEX_PROMPT,
        extraConfig: projectTrustToml(work),
        env: hookEnv,
        timeoutMs: 60_000,
      });
      TB = readTree(work);
      console.info(`[codex-e2e] one folder: claude ${CLAUDE_VERSION} took ${claudeRun.durationMs} ms, codex ${CODEX_VERSION} ${codexRun.durationMs} ms`);

      // What each agent's tools do, computed here.
      expectedA = withChanges(T0, {
        src: entryOf(TA, 'src'),
        [W]: fileEntry(Buffer.from(HELLO), entryOf(TA, W).mode),
        [S]: edited(T0, S, replaceOnce(ERR_DOC, ERR_DOC_NEW)),
        [C]: edited(T0, C, sedLines('Did you mean', 'Perhaps you meant')),
      });
      expectedB = withChanges(expectedA, {
        [S]: edited(expectedA, S, replaceOnce(EXIT_DOC, EXIT_DOC_NEW)),
        [X]: edited(expectedA, X, sedLines('Usage:', 'Use it as:')),
      });
    }, 180_000);

    afterAll(async () => {
      await claudeStub?.close();
      await codexStub?.close();
      reportTimings('[codex-e2e] one folder:', timings);
      if (process.env.KEEP_E2E) console.info(`[codex-e2e] kept ${work} (TAKEBACK_HOME=${tbHome})`);
      else rmAll(work, claudeHome, codexHome, tbHome);
    });

    it('both agents ran their turn, each with its own hooks, and no hook failed', () => {
      expect(claudeRun.code, describeRun(claudeRun)).toBe(0);
      expect(claudeRun.json?.result, describeRun(claudeRun)).toBe(CLAUDE_FINAL);
      expect(claudeStub.toolUseIds).toHaveLength(4);
      expect(codexRun.code, describeCodexRun(codexRun)).toBe(0);
      expect(codexRun.stdout.trim(), describeCodexRun(codexRun)).toBe(CODEX_FINAL);
      expect(codexStub.callIds).toHaveLength(2);
      const out = codexToolOutputs(codexStub);
      expect(out.get(codexStub.callIds[0]!)).toMatch(/Success\. Updated the following files:\nM lib\/error\.js/);
      expect(out.get(codexStub.callIds[1]!)).toMatch(/Process exited with code 0/);
      const log = hookLog(tbHome);
      expect(log).toMatch(/claude-code Stop: turn t1 ended\n/);
      expect(log).toMatch(/codex Stop: turn t2 ended\n/);
      expect(log).not.toContain('changed during the turn');
      // Both hooks files are there, each for its agent.
      expect(fs.existsSync(path.join(work, '.claude', 'settings.local.json'))).toBe(true);
      expect(fs.existsSync(path.join(work, '.codex', 'hooks.json'))).toBe(true);
    });

    it('the trees: what Claude Code left, then what Codex left (known trees)', () => {
      expect(treeDiff(TA, expectedA), 'after Claude Code').toEqual([]);
      expect(treeDiff(TB, expectedB), 'after Codex').toEqual([]);
      expect(changedPaths(TA, TB)).toEqual([X, S].sort());
    });

    it('list: a claude-code turn and a codex turn, each set with its agent', () => {
      const list = tb(['list', '--json']).json;
      expect(list.turns.map((t: any) => [t.id, t.agent, t.session, t.label])).toEqual([
        ['t2', 'codex', codexRun.sessionId, CODEX_PROMPT],
        ['t1', 'claude-code', claudeRun.sessionId, CLAUDE_PROMPT],
      ]);
      [codexTurn, claudeTurn] = list.turns;
      expect(claudeTurn.agentTurn).toMatch(/^[0-9a-f-]{36}$/); // Claude Code's prompt_id
      expect(codexTurn.agentTurn).toMatch(/^[0-9a-f-]{36}$/);
      const sets = [...list.sets].sort((a: any, b: any) => Number(a.id) - Number(b.id));
      const ids = claudeStub.toolUseIds;
      expect(
        sets.map((s: any) => ({ turn: s.turn, agent: s.agent, session: s.session, source: s.source, files: s.files.map((f: any) => f.path).sort() })),
        JSON.stringify(list.sets, null, 1),
      ).toEqual([
        { turn: 't1', agent: 'claude-code', session: claudeRun.sessionId, source: { kind: 'tool', tool: 'Write', toolCallId: ids[0] }, files: ['src', W] },
        { turn: 't1', agent: 'claude-code', session: claudeRun.sessionId, source: { kind: 'tool', tool: 'Edit', toolCallId: ids[2] }, files: [S] },
        {
          turn: 't1',
          agent: 'claude-code',
          session: claudeRun.sessionId,
          source: { kind: 'command', command: CLAUDE_SED, tool: 'Bash', toolCallId: ids[3] },
          files: [C],
        },
        {
          turn: 't2',
          agent: 'codex',
          session: codexRun.sessionId,
          source: { kind: 'tool', tool: 'apply_patch', toolCallId: codexStub.callIds[0] },
          files: [S],
        },
        {
          turn: 't2',
          agent: 'codex',
          session: codexRun.sessionId,
          source: { kind: 'command', command: CODEX_SED, tool: 'Bash', toolCallId: codexStub.callIds[1] },
          files: [X],
        },
      ]);
      expect(tb(['list', '--agent', 'claude-code', '--json']).json.sets.map((s: any) => s.agent)).toEqual(['claude-code', 'claude-code', 'claude-code']);
      expect(tb(['list', '--agent', 'codex', '--json']).json.sets.map((s: any) => s.agent)).toEqual(['codex', 'codex']);
    });

    it("undoing Claude Code's turn first would keep Codex's patch of the same file (two lines further): the preview merges it, with no conflict; nothing is written", () => {
      const r = tb(['preview', '--turn', claudeTurn.id, '--json']);
      expect(r.json.conflicts).toBe(0);
      expect(r.json.files.find((f: any) => f.path === S)).toMatchObject({ action: 'put-back', conflict: null, merged: true });
      expectTree(TB, "a preview writes nothing: Codex's changes are in place");
      // The human form says so too, and names the file.
      const human = tb(['preview', '--turn', claudeTurn.id]);
      expect(human.stdout).toContain(`${S}: put back, keeping later changes`);
      expectTree(TB, 'still nothing written');
    });

    it("undoing Codex's turn gives back exactly what Claude Code left; then Claude's turn undoes to the commit; both redo", () => {
      expect(tb(['undo', '--turn', codexTurn.id, '--json']).json.conflicts).toEqual([]);
      expectTree(TA, "after undoing Codex's turn: Claude Code's tree");
      expect(tb(['undo', '--turn', claudeTurn.id, '--json']).json.conflicts).toEqual([]);
      expectTree(T0, "after undoing Claude Code's turn too");
      expectGitClean();
      tb(['redo', '--turn', claudeTurn.id]);
      expectTree(TA, "after redoing Claude Code's turn");
      tb(['redo', '--turn', codexTurn.id]);
      expectTree(TB, "after redoing Codex's turn");
      const st = tb(['list', '--json']).json.sets.map((s: any) => s.state);
      expect(st).toEqual(['applied', 'applied', 'applied', 'applied', 'applied']);
    });
  },
);
