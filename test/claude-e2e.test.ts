// takeback end to end with the REAL Claude Code: `takeback init claude-code` installs the hooks
// in a scratch copy of real source (commander's package folder, copied out of node_modules and
// committed to git), the real `claude -p` runs a two-turn session scripted by the model stub on
// 127.0.0.1 — Write (new file in new folders), Read + Edit, Bash `sed -i`, `mv`, `rm` and a real
// formatter (prettier 3, by absolute path) — and its real hooks record into a private
// TAKEBACK_HOME. Then the command line lists every set and undoes/redoes one tool call, a whole
// turn and everything after turn 1, each step checked byte for byte (bytes, mode, type, link
// text, folders) against trees the test knows independently of takeback.
//
// Needs the CLI: scripts/install-claude.sh (or CLAUDE=/path/to/claude). Skips with a message
// if none is found, and FAILS instead when TAKEBACK_REQUIRE_CLAUDE=1 (CI).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { CLAUDE_BIN, REPO_ROOT, describeRun, runClaude } from './support/claude.js';
import type { ClaudeResult } from './support/claude.js';
import { startModelStub } from './support/model-stub.js';
import type { ModelStub, Step } from './support/model-stub.js';
import { changedPaths, describeEntry, edited, fileEntry, fileOf, readTree, sedLines, stateMatches, takePaths, treeDiff, withChanges } from './support/trees.js';
import type { Tree } from './support/trees.js';
import { e2eHelpers, expectHookGroups, git, mkTemp, reportTimings, rmAll, scratchWorkspace, takebackInit } from './support/workspace.js';

const { bin: CLAUDE, version: VERSION, skipReason: SKIP_REASON } = gateAgent(CLAUDE_BIN, 'takeback end to end with the real Claude Code', '[claude-e2e]');

const PRETTIER = path.join(REPO_ROOT, 'node_modules', '.bin', 'prettier');
const SOURCE = path.join(REPO_ROOT, 'node_modules', 'commander');

const PROMPT_1 = 'Turn one: add a greeting helper, reword an error doc, soften the suggestions.';
const PROMPT_2 = 'Turn two: move the ESM entry, drop the support file, format, retitle the usage.';
const FINAL_1 = 'Turn one is done.';
const FINAL_2 = 'Turn two is done.';

const GREET = "const greet=(name)=>{return 'Hello, '+name+'!'}\nmodule.exports={greet}\n";
const EDIT1 = { file: 'lib/error.js', old: 'human-readable description of the error', new: 'message for people' };
const SED = "sed -i 's/Did you mean/Perhaps you meant/' lib/suggestSimilar.js";
const MV = 'mv esm.mjs lib/esm.mjs';
const RM = 'rm package-support.json';
const FORMAT = `${PRETTIER} --write src/extras/greet.js lib/error.js`;
const EDIT2 = { file: 'lib/help.js', old: "helper.styleTitle('Usage:')", new: "helper.styleTitle('Use it as:')" };

// ---- the test --------------------------------------------------------------------------------

describe.skipIf(!CLAUDE)(CLAUDE ? `takeback end to end with the real Claude Code ${VERSION}` : `takeback end to end with the real Claude Code — ${SKIP_REASON}`, () => {
  let work: string; // the workspace: a git repository holding commander's package folder
  let home: string; // Claude's private HOME
  let tbHome: string; // takeback's private TAKEBACK_HOME (the journal)
  let stub: ModelStub;
  let run1: ClaudeResult;
  let run2: ClaudeResult;
  const timings: { what: string; ms: number }[] = [];

  /** The known trees: before turn 1, after each changing tool call (E[1..7]), after each turn. */
  let T0: Tree;
  let T1: Tree;
  let T2: Tree;
  const E: Tree[] = [];
  /** The changing tool calls, in order: tool, the stub's tool_use id, turn, command (Bash). */
  const calls: { tool: string; id: string; turn: string; command?: string; path?: string }[] = [];
  /** Set ids by tool_use id, once listed. */
  const setOf = new Map<string, string>();

  const { tb, states, expectTree, expectAllSets, expectGitClean } = e2eHelpers(() => work, () => tbHome, timings);
  const setId = (toolUseId: string) => {
    const id = setOf.get(toolUseId);
    if (!id) throw new Error(`no change set for ${toolUseId}`);
    return id;
  };

  beforeAll(async () => {
    // Real source nobody here wrote: commander's published package folder, and a link to its readme.
    work = await scratchWorkspace('takeback-e2e-work-', SOURCE, { name: 'README.md', target: 'Readme.md' }, 'commander, as published');
    home = await mkTemp('takeback-e2e-home-');
    tbHome = await mkTemp('takeback-e2e-journal-');

    // takeback's own installer writes the hooks (Claude Code's settings for this person, kept out of git).
    takebackInit(work, tbHome, ['claude-code']);
    T0 = readTree(work);

    const p = (rel: string) => path.join(work, rel);
    const script: Step[] = [
      // turn 1
      [
        { type: 'text', text: 'I will add the helper first.' },
        { type: 'tool_use', name: 'Write', input: { file_path: p('src/extras/greet.js'), content: GREET } },
      ],
      // Edit refuses a file that was not Read first in the session.
      [{ type: 'tool_use', name: 'Read', input: { file_path: p(EDIT1.file) } }],
      [{ type: 'tool_use', name: 'Edit', input: { file_path: p(EDIT1.file), old_string: EDIT1.old, new_string: EDIT1.new } }],
      [{ type: 'tool_use', name: 'Bash', input: { command: SED, description: 'Soften the suggestions' } }],
      [{ type: 'text', text: FINAL_1 }],
      // turn 2
      [{ type: 'tool_use', name: 'Bash', input: { command: MV, description: 'Move the ESM entry' } }],
      [{ type: 'tool_use', name: 'Bash', input: { command: RM, description: 'Drop the support file' } }],
      [{ type: 'tool_use', name: 'Bash', input: { command: FORMAT, description: 'Format the changed files' } }],
      [{ type: 'tool_use', name: 'Read', input: { file_path: p(EDIT2.file) } }],
      [{ type: 'tool_use', name: 'Edit', input: { file_path: p(EDIT2.file), old_string: EDIT2.old, new_string: EDIT2.new } }],
      [{ type: 'text', text: FINAL_2 }],
    ];
    stub = await startModelStub(script);
    const hookEnv = { TAKEBACK_HOME: tbHome, TAKEBACK_LOG_LEVEL: 'debug' };
    run1 = await runClaude({ cwd: work, home, baseUrl: stub.url, prompt: PROMPT_1, env: hookEnv, outputFormat: 'json', timeoutMs: 120_000 });
    T1 = readTree(work);
    run2 = await runClaude({ cwd: work, home, baseUrl: stub.url, prompt: PROMPT_2, env: hookEnv, continueSession: true, timeoutMs: 120_000 });
    T2 = readTree(work);
    console.info(`[claude-e2e] claude ${VERSION}: turn 1 took ${run1.durationMs} ms, turn 2 ${run2.durationMs} ms`);

    // The tool calls that change files, with the stub's ids (the Reads, 002 and 008, change nothing).
    const ids = stub.toolUseIds;
    calls.push(
      { tool: 'Write', id: ids[0]!, turn: 't1', path: 'src/extras/greet.js' },
      { tool: 'Edit', id: ids[2]!, turn: 't1', path: EDIT1.file },
      { tool: 'Bash', id: ids[3]!, turn: 't1', command: SED },
      { tool: 'Bash', id: ids[4]!, turn: 't2', command: MV },
      { tool: 'Bash', id: ids[5]!, turn: 't2', command: RM },
      { tool: 'Bash', id: ids[6]!, turn: 't2', command: FORMAT },
      { tool: 'Edit', id: ids[8]!, turn: 't2', path: EDIT2.file },
    );

    // The tree after each changing tool call, computed here from what each tool does — not from
    // takeback. New entries' modes (the umask's) are read from the trees after the turn; the
    // formatter's output is prettier's own, asked for separately on stdin.
    const prettier = (t: Tree, file: string) => {
      const r = spawnSync(PRETTIER, ['--stdin-filepath', path.join(work, file)], { cwd: work, input: fileOf(t, file).bytes });
      if (r.status !== 0) throw new Error(`prettier on ${file} failed: ${r.stderr}`);
      return fileEntry(r.stdout, fileOf(t, file).mode);
    };
    E[0] = T0;
    E[1] = withChanges(E[0], {
      src: T1.get('src'),
      'src/extras': T1.get('src/extras'),
      'src/extras/greet.js': fileEntry(Buffer.from(GREET), fileOf(T1, 'src/extras/greet.js').mode),
    });
    E[2] = withChanges(E[1], { [EDIT1.file]: edited(E[1], EDIT1.file, (s) => s.replace(EDIT1.old, EDIT1.new)) });
    E[3] = withChanges(E[2], { 'lib/suggestSimilar.js': edited(E[2], 'lib/suggestSimilar.js', sedLines('Did you mean', 'Perhaps you meant')) });
    E[4] = withChanges(E[3], { 'esm.mjs': undefined, 'lib/esm.mjs': E[3].get('esm.mjs') });
    E[5] = withChanges(E[4], { 'package-support.json': undefined });
    E[6] = withChanges(E[5], { 'src/extras/greet.js': prettier(E[5], 'src/extras/greet.js'), [EDIT1.file]: prettier(E[5], EDIT1.file) });
    E[7] = withChanges(E[6], { [EDIT2.file]: edited(E[6], EDIT2.file, (s) => s.replace(EDIT2.old, EDIT2.new)) });
  }, 300_000);

  afterAll(async () => {
    await stub?.close();
    reportTimings('[claude-e2e]', timings);
    if (process.env.KEEP_E2E) console.info(`[claude-e2e] kept ${work} (TAKEBACK_HOME=${tbHome})`);
    else rmAll(work, home, tbHome);
  });

  it('init wrote hooks to .claude/settings.local.json whose command runs takeback', () => {
    const settings = JSON.parse(fs.readFileSync(path.join(work, '.claude', 'settings.local.json'), 'utf8'));
    const tools = 'Write|Edit|MultiEdit|NotebookEdit|Bash';
    const expected: [string, string | undefined][] = [
      ['SessionStart', undefined],
      ['UserPromptSubmit', undefined],
      ['PreToolUse', tools],
      ['PostToolUse', tools],
      ['PostToolUseFailure', tools],
      ['Stop', undefined],
      ['StopFailure', undefined],
    ];
    const command = expectHookGroups(settings.hooks, expected, (hooks, event) => {
      expect(hooks, event).toHaveLength(1);
      expect(hooks[0].type).toBe('command');
    });
    expect(command).toMatch(/hook claude-code; fi$/);
    // The command as a shell runs it: takeback reads the event, logs it under TAKEBACK_HOME
    // (a probe home here, not the session's journal), prints nothing and exits 0.
    const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-e2e-probe-'));
    try {
      const r = spawnSync('/bin/sh', ['-c', command], {
        cwd: work,
        input: JSON.stringify({ hook_event_name: 'Notification', cwd: work, session_id: 'probe' }),
        env: { ...process.env, TAKEBACK_HOME: probe, TAKEBACK_LOG_LEVEL: 'debug' },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(fs.readFileSync(path.join(probe, 'logs', 'hook.log'), 'utf8')).toContain('claude-code Notification: Notification: ignored');
    } finally {
      fs.rmSync(probe, { recursive: true, force: true });
    }
  });

  it('both turns of the session ran every scripted tool call, and no hook failed', () => {
    expect(run1.code, describeRun(run1)).toBe(0);
    expect(run2.code, describeRun(run2)).toBe(0);
    expect(run1.json?.result, describeRun(run1)).toBe(FINAL_1);
    expect(run2.stdout.trim(), describeRun(run2)).toBe(FINAL_2);
    expect(stub.stepsUsed).toBe(11);
    expect(stub.toolUseIds).toHaveLength(9);
    // Every tool result sent back to the model is a success.
    const results = new Map<string, any>();
    for (const r of stub.stepRequests)
      for (const m of r.body?.messages ?? [])
        if (m.role === 'user' && Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') results.set(b.tool_use_id, b);
    expect([...results.keys()]).toEqual(stub.toolUseIds);
    for (const [id, b] of results) expect(b.is_error ?? false, `${id}: ${JSON.stringify(b.content)}`).toBe(false);
    // The hooks wrote to the private TAKEBACK_HOME, every event handled, none failed.
    const log = fs.readFileSync(path.join(tbHome, 'logs', 'hook.log'), 'utf8');
    expect(log).not.toMatch(/hook claude-code failed|input is not JSON|no hook_event_name/);
    for (const c of calls) expect(log, c.id).toMatch(new RegExp(`capture ${c.id} ended: set \\d+`));
    // The journal lives outside the workspace: nothing of takeback's in it.
    expect([...T2.keys()].filter((p) => /takeback|journal|\.db$/i.test(p))).toEqual([]);
  });

  it('the files are in the states the tools left, turn by turn (known trees)', () => {
    expect(treeDiff(E[3]!, T1), 'after turn 1 = after the sed').toEqual([]);
    expect(treeDiff(E[7]!, T2), 'after turn 2 = after the last Edit').toEqual([]);
    // Every step changed something, and the formatter really reformatted both files.
    for (let k = 1; k <= 7; k++) expect(changedPaths(E[k - 1]!, E[k]!).length, `step ${k}`).toBeGreaterThan(0);
    expect(changedPaths(E[5]!, E[6]!)).toEqual(['lib/error.js', 'src/extras/greet.js']);
    expect(fileOf(T2, 'src/extras/greet.js').bytes.toString()).toContain('return "Hello, " + name + "!";');
    // git agrees that the work differs from the commit (and the test's trees say exactly how).
    expect(git(work, 'status', '--porcelain').trim()).not.toBe('');
  });

  it('list --json: one set per changing tool call, with tool names, tool_use ids, command lines and turns', () => {
    const list = tb(['list', '--json']).json;
    expect(list.workspace).toBe(work);
    expect(list.capture).toEqual({ commands: true, reason: null, baseline: null });
    expect(list.turns.map((t: any) => [t.id, t.seq, t.agent, t.session, t.label])).toEqual([
      ['t2', 2, 'claude-code', run1.sessionId, PROMPT_2],
      ['t1', 1, 'claude-code', run1.sessionId, PROMPT_1],
    ]);
    for (const t of list.turns) expect(t.end, `turn ${t.id} ended`).not.toBeNull();
    const sets = [...list.sets].sort((a: any, b: any) => Number(a.id) - Number(b.id));
    expect(
      sets.map((s: any) => ({ turn: s.turn, source: s.source, state: s.state })),
      JSON.stringify(list.sets, null, 1),
    ).toEqual(
      calls.map((c) => ({
        turn: c.turn,
        source: c.command ? { kind: 'command', command: c.command, tool: 'Bash', toolCallId: c.id } : { kind: 'tool', tool: c.tool, toolCallId: c.id },
        state: 'applied',
      })),
    );
    // Newest first.
    expect(list.sets.map((s: any) => Number(s.id))).toEqual(sets.map((s: any) => Number(s.id)).reverse());
    sets.forEach((s: any, i: number) => setOf.set(calls[i]!.id, s.id));
    expect(sets.find((s: any) => s.source.toolCallId === calls[2]!.id).label).toBe(`Bash: ${SED}`);
    // The human listing names them too.
    const human = tb(['list']).stdout;
    for (const c of calls) expect(human).toContain((c.command ?? c.path!).slice(0, 60));
  });

  it('show --json: each set holds exactly the paths its tool call changed, before and after byte for byte', () => {
    for (let k = 1; k <= 7; k++) {
      const c = calls[k - 1]!;
      const detail = tb(['show', setId(c.id), '--json']).json;
      const changed = changedPaths(E[k - 1]!, E[k]!);
      // Exactly the paths that differ, folders the Write created (src, src/extras) included.
      expect(detail.files.map((f: any) => f.path).sort(), `${c.tool} ${c.id}`).toEqual(changed);
      for (const f of detail.files) {
        expect(stateMatches(f.before, E[k - 1]!.get(f.path)), `${c.id} ${f.path} before: ${JSON.stringify(f.before)} vs ${describeEntry(E[k - 1]!.get(f.path))}`).toBe(true);
        expect(stateMatches(f.after, E[k]!.get(f.path)), `${c.id} ${f.path} after: ${JSON.stringify(f.after)} vs ${describeEntry(E[k]!.get(f.path))}`).toBe(true);
        expect(f.undoable, `${c.id} ${f.path}`).toBe(true);
        expect(f.gap).toBeNull();
      }
    }
    expect(changedPaths(E[0]!, E[1]!)).toEqual(['src', 'src/extras', 'src/extras/greet.js']);
    const mv = tb(['show', setId(calls[3]!.id), '--json']).json;
    expect(mv.files.map((f: any) => [f.path, f.status]).sort()).toEqual([
      ['esm.mjs', 'deleted'],
      ['lib/esm.mjs', 'created'],
    ]);
  });

  it('undoes one tool call by id: the sed -i (which Claude Code\'s own checkpoints miss), then redoes it', () => {
    const sed = setId(calls[2]!.id);
    const preview = tb(['preview', sed, '--json']).json;
    expect(preview.files.map((f: any) => [f.path, f.action, f.conflict])).toEqual([['lib/suggestSimilar.js', 'put-back', null]]);
    expect(preview.files[0].diff).toContain('-    return `\\n(Perhaps you meant ${similar[0]}?)`;');
    expect(preview.files[0].diff).toContain('+    return `\\n(Did you mean ${similar[0]}?)`;');
    expectTree(T2, 'preview writes nothing');

    const undo = tb(['undo', sed, '--json']).json;
    expect(undo.applied.map((f: any) => [f.path, f.action])).toEqual([['lib/suggestSimilar.js', 'put-back']]);
    expect(undo.conflicts).toEqual([]);
    expectTree(takePaths(T2, T0, ['lib/suggestSimilar.js']), 'after undoing the sed');
    const st = states();
    expect(st.get(sed)).toBe('undone');
    for (const c of calls) if (c !== calls[2]) expect(st.get(setId(c.id)), c.id).toBe('applied');

    // Undoing it again changes nothing; redo brings the sed's bytes back.
    tb(['undo', sed]);
    expectTree(takePaths(T2, T0, ['lib/suggestSimilar.js']), 'undo twice');
    tb(['redo', sed]);
    expectTree(T2, 'after redoing the sed');
  });

  it('undoes the mv alone (a delete and a create), then redoes it', () => {
    const mv = setId(calls[3]!.id);
    tb(['undo', mv]);
    expectTree(takePaths(T2, E[3]!, ['esm.mjs', 'lib/esm.mjs']), 'after undoing the mv');
    tb(['redo', mv]);
    expectTree(T2, 'after redoing the mv');
  });

  it('undoes a whole turn (--turn 2): the tree after turn 1, byte for byte; redo brings turn 2 back', () => {
    const preview = tb(['preview', '--turn', '2', '--json']).json;
    expect(preview.conflicts).toBe(0);
    expect(preview.files.map((f: any) => f.path).sort()).toEqual(changedPaths(T1, T2));
    const undo = tb(['undo', '--turn', '2', '--json']).json;
    expect(undo.conflicts).toEqual([]);
    expectTree(T1, 'after undo --turn 2');
    const st = states();
    for (const c of calls) expect(st.get(setId(c.id)), c.id).toBe(c.turn === 't2' ? 'undone' : 'applied');
    tb(['redo', '--turn', '2']);
    expectTree(T2, 'after redo --turn 2');
  });

  it('undoes everything after turn 1, then turn 1 too (the committed tree); redoes both', () => {
    tb(['undo', '--after-turn', '1']);
    expectTree(T1, 'after undo --after-turn 1');
    tb(['undo', '--turn', '1']);
    expectTree(T0, 'after undoing both turns');
    expectGitClean();
    expectAllSets('undone');
    tb(['redo', '--turn', '1']);
    expectTree(T1, 'after redo --turn 1');
    tb(['redo', '--after-turn', '1']);
    expectTree(T2, 'after redo --after-turn 1');
  });

  it('refuses to undo a tool call whose file a later one changed (a conflict, nothing written)', () => {
    const write = setId(calls[0]!.id); // greet.js, reformatted later by prettier
    const r = tb(['undo', write, '--json'], 1);
    expect(r.json.written).toBe(false);
    expect(r.json.conflicts.map((c: any) => c.path)).toContain('src/extras/greet.js');
    expectTree(T2, 'a refused undo writes nothing');
  });

  it('undo and redo again, each step byte for byte: after turn 1, one Edit, --last', () => {
    tb(['undo', '--after-turn', '1']);
    expectTree(T1, 'again: undo --after-turn 1');
    const edit1 = setId(calls[1]!.id);
    tb(['undo', edit1]);
    expectTree(takePaths(T1, T0, [EDIT1.file]), 'again: the turn-1 Edit undone');
    tb(['redo', edit1]);
    expectTree(T1, 'again: the turn-1 Edit redone');
    tb(['redo', '--after-turn', '1']);
    expectTree(T2, 'again: redo --after-turn 1');
    // --last: the newest set (the turn-2 Edit of help.js).
    const undo = tb(['undo', '--last', '--json']).json;
    expect(undo.sets).toEqual([setId(calls[6]!.id)]);
    expectTree(E[6]!, 'again: undo --last');
    tb(['redo', '--last']);
    expectTree(T2, 'again: redo --last');
    expectAllSets('applied');
  });
});
