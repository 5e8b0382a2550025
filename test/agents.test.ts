// Every agent in one journal: `takeback hook codex` and `takeback hook gemini` fed events shaped
// as the real programs send them (test/fixtures/codex-events/, gemini-events/), through the real
// binary, on real files. Codex patches are captured by the paths their text names; Gemini's tool
// calls, which carry no id, pair by order; each set and turn records its agent and session;
// `list --agent` filters; two agents' turns open at once keep their sets apart; and a journal of
// the earlier schema is brought up to date on open.
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { patchPaths } from '../server/agents/codex-patch.js';
import { SCHEMA_VERSION } from '../server/core/journal/db.js';
import { filesOf, sandbox, setsOf, type Sandbox } from './support/takeback.js';

const codexEvent = (sb: Sandbox, name: string, extra: Record<string, unknown> = {}) => ({
  session_id: 'codex-session-1',
  transcript_path: null,
  cwd: sb.ws,
  model: 'gpt-5.5',
  permission_mode: 'bypassPermissions',
  hook_event_name: name,
  ...extra,
});

const geminiEvent = (sb: Sandbox, name: string, extra: Record<string, unknown> = {}) => ({
  session_id: 'gemini-session-1',
  transcript_path: path.join(sb.userHome, '.gemini', 'tmp', 'chats', 'session.json'),
  cwd: sb.ws,
  hook_event_name: name,
  timestamp: new Date().toISOString(),
  ...extra,
});

function codex(sb: Sandbox, ev: object) {
  const r = sb.hook(ev, { agent: 'codex' });
  expect([r.code, r.stdout]).toEqual([0, '']);
}
function gemini(sb: Sandbox, ev: object | string) {
  const r = sb.hook(ev, { agent: 'gemini' });
  expect([r.code, r.stdout]).toEqual([0, '']);
}

const PATCH = [
  '*** Begin Patch',
  '*** Update File: src/a.txt',
  '@@',
  '-alpha',
  '+ALPHA',
  '*** Add File: src/new.txt',
  '+brand new',
  '*** Delete File: old.txt',
  '*** Update File: b.txt',
  '*** Move to: lib/b.txt',
  '@@',
  '-beta',
  '+BETA',
  '*** End Patch',
  '',
].join('\n');

describe('Codex apply_patch paths', () => {
  it('reads update, add, delete and move lines, once each, in order', () => {
    expect(patchPaths(PATCH)).toEqual(['src/a.txt', 'src/new.txt', 'old.txt', 'b.txt', 'lib/b.txt']);
    expect(patchPaths('*** Begin Patch\r\n*** Update File: /abs/x.ts\r\n@@\r\n-a\r\n+b\r\n*** End Patch\r\n')).toEqual(['/abs/x.ts']);
    // Hunk text that looks like a header but is not at the start of a line, and an empty patch.
    expect(patchPaths('*** Begin Patch\n*** Update File: a\n@@\n- *** Add File: not-this\n*** End Patch')).toEqual(['a']);
    expect(patchPaths('')).toEqual([]);
  });
});

describe('takeback hook codex', () => {
  it('a turn by turn_id: a shell call and a patch that updates, adds, deletes and moves; undone and redone byte for byte', () => {
    const sb = sandbox({ git: true });
    sb.write('src/a.txt', 'alpha\n');
    sb.write('old.txt', 'old\r\nbytes\r\n', 0o600);
    sb.write('b.txt', 'beta\n', 0o755);
    sb.write('notes.md', 'the quick fox\n');
    sb.sh('git add -A && git -c user.email=t@t -c user.name=t commit -qm init');
    const start = sb.tree();

    codex(sb, codexEvent(sb, 'SessionStart', { source: 'startup' }));
    codex(sb, codexEvent(sb, 'UserPromptSubmit', { turn_id: 'turn-A', prompt: 'Patch things up\nplease' }));
    // A shell call.
    const bash = { tool_name: 'Bash', tool_use_id: 'call_sh1', turn_id: 'turn-A', tool_input: { command: "sed -i 's/quick/slow/' notes.md" } };
    codex(sb, codexEvent(sb, 'PreToolUse', bash));
    sb.sh("sed -i 's/quick/slow/' notes.md");
    codex(sb, codexEvent(sb, 'PostToolUse', { ...bash, tool_response: 'exit code 0' }));
    // A patch: the paths come from its text; what it does is done here as Codex would.
    const patch = { tool_name: 'apply_patch', tool_use_id: 'call_p1', turn_id: 'turn-A', tool_input: { command: PATCH } };
    codex(sb, codexEvent(sb, 'PreToolUse', patch));
    sb.write('src/a.txt', 'ALPHA\n');
    sb.write('src/new.txt', 'brand new\n');
    fs.rmSync(sb.abs('old.txt'));
    fs.mkdirSync(sb.abs('lib'));
    fs.renameSync(sb.abs('b.txt'), sb.abs('lib/b.txt'));
    fs.writeFileSync(sb.abs('lib/b.txt'), 'BETA\n');
    codex(sb, codexEvent(sb, 'PostToolUse', { ...patch, tool_response: 'Success. Updated the following files: ...' }));
    codex(sb, codexEvent(sb, 'Stop', { turn_id: 'turn-A', stop_hook_active: false, last_assistant_message: 'done' }));
    const after = sb.tree();

    const list = sb.json(['list']);
    expect(list.turns).toEqual([expect.objectContaining({ id: 't1', agent: 'codex', session: 'codex-session-1', agentTurn: 'turn-A', label: 'Patch things up' })]);
    expect(list.turns[0].end).not.toBeNull();
    const [shell, patchSet] = setsOf(list);
    expect(shell).toMatchObject({ agent: 'codex', session: 'codex-session-1', turn: 't1', source: { kind: 'command', tool: 'Bash', toolCallId: 'call_sh1' } });
    expect(filesOf(shell)).toEqual({ 'notes.md': 'modified' });
    expect(patchSet).toMatchObject({ agent: 'codex', turn: 't1', source: { kind: 'tool', tool: 'apply_patch', toolCallId: 'call_p1' } });
    expect(filesOf(patchSet)).toEqual({ 'src/a.txt': 'modified', 'src/new.txt': 'created', 'old.txt': 'deleted', 'b.txt': 'deleted', lib: 'created', 'lib/b.txt': 'created' });
    expect(list.sets).toHaveLength(2);

    // Undo the patch alone, then the whole turn; redo it all.
    expect(sb.tb(['undo', patchSet.id]).code).toBe(0);
    const noPatch = sb.tree();
    expect(noPatch['notes.md']).toEqual(after['notes.md']);
    for (const p of ['src/a.txt', 'old.txt', 'b.txt']) expect(noPatch[p], p).toEqual(start[p]);
    expect(noPatch['src/new.txt']).toBeUndefined();
    expect(noPatch['lib/b.txt']).toBeUndefined();
    expect(sb.tb(['undo', '--turn', 't1']).code).toBe(0);
    expect(sb.tree()).toEqual(start);
    expect(sb.tb(['redo', '--turn', 't1']).code).toBe(0);
    expect(sb.tree()).toEqual(after);
  });

  it('a patch no hook saw is still recorded at Stop as changed during this turn; a tool call with no prompt event begins a turn', () => {
    const sb = sandbox();
    sb.write('a.txt', 'one\n');
    codex(sb, codexEvent(sb, 'SessionStart', { source: 'startup' }));
    // No UserPromptSubmit: the first tool call's turn_id begins the turn.
    const bash = { tool_name: 'Bash', tool_use_id: 'c1', turn_id: 'turn-B', tool_input: { command: 'touch made.txt' } };
    codex(sb, codexEvent(sb, 'PreToolUse', bash));
    sb.write('made.txt', '');
    codex(sb, codexEvent(sb, 'PostToolUse', bash));
    // A patch applied with no hook at all (as some Codex versions did).
    sb.write('a.txt', 'two\n');
    codex(sb, codexEvent(sb, 'Stop', { turn_id: 'turn-B' }));
    const list = sb.json(['list']);
    expect(list.turns).toEqual([expect.objectContaining({ agent: 'codex', agentTurn: 'turn-B', label: null })]);
    const sets = setsOf(list);
    expect(sets.map((s: any) => [s.label, filesOf(s)])).toEqual([
      ['Bash: touch made.txt', { 'made.txt': 'created' }],
      ['changed during this turn', { 'a.txt': 'modified' }],
    ]);
    expect(sets[1].agent).toBe('codex');
    // Codex reports its tool calls: the turn's undo leaves what no tool call claimed, and says so.
    const undo = sb.tb(['undo', '--turn', 't1']);
    expect(undo.code).toBe(0);
    expect(undo.stdout).toContain(`#${sets[1].id} left as they are: changed during the turn by no tool call`);
    expect(sb.read('a.txt').toString()).toBe('two\n');
    expect(sb.exists('made.txt')).toBe(false);
    // Named by id, it is taken back.
    expect(sb.tb(['undo', sets[1].id]).code).toBe(0);
    expect(sb.read('a.txt').toString()).toBe('one\n');
  });
});

describe('takeback hook codex: a patch that failed part-way', () => {
  it('gets no PostToolUse from Codex: its capture is ended at Stop and recorded as its own set', () => {
    const sb = sandbox();
    sb.write('a.txt', 'alpha\n');
    codex(sb, codexEvent(sb, 'UserPromptSubmit', { turn_id: 'turn-F', prompt: 'patch' }));
    const patch = {
      tool_name: 'apply_patch',
      tool_use_id: 'call_fail',
      turn_id: 'turn-F',
      tool_input: { command: '*** Begin Patch\n*** Add File: made.txt\n+x\n*** Update File: a.txt\n@@\n-nope\n+NOPE\n*** End Patch\n' },
    };
    codex(sb, codexEvent(sb, 'PreToolUse', patch));
    sb.write('made.txt', 'x\n'); // the first hunk applied, the second did not
    codex(sb, codexEvent(sb, 'Stop', { turn_id: 'turn-F' }));
    const sets = setsOf(sb.json(['list']));
    expect(sets.map((s: any) => [s.label, filesOf(s)])).toEqual([['apply_patch made.txt', { 'made.txt': 'created' }]]);
    expect(sb.tb(['undo', sets[0].id]).code).toBe(0);
    expect(sb.exists('made.txt')).toBe(false);
  });
});

describe('takeback hook gemini', () => {
  it('tool calls without ids pair by order (same tool and input first); list says so', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    sb.write('b.txt', 'b\n');
    gemini(sb, geminiEvent(sb, 'SessionStart', { source: 'startup' }));
    gemini(sb, geminiEvent(sb, 'BeforeAgent', { prompt: 'Edit both files' }));
    const wa = { tool_name: 'write_file', tool_input: { file_path: sb.abs('a.txt'), content: 'A\n' } };
    const rb = { tool_name: 'replace', tool_input: { file_path: 'b.txt', old_string: 'b', new_string: 'B', instruction: 'upper' } };
    // Both begin, then end in the other order: each end finds its own begin by tool and input.
    gemini(sb, geminiEvent(sb, 'BeforeTool', wa));
    gemini(sb, geminiEvent(sb, 'BeforeTool', rb));
    sb.write('a.txt', 'A\n');
    sb.write('b.txt', 'B\n');
    gemini(sb, geminiEvent(sb, 'AfterTool', { ...rb, tool_response: { llmContent: 'ok' } }));
    gemini(sb, geminiEvent(sb, 'AfterTool', { ...wa, tool_response: { llmContent: 'ok' } }));
    // A shell call.
    const sh = { tool_name: 'run_shell_command', tool_input: { command: 'rm a.txt', description: 'remove' } };
    gemini(sb, geminiEvent(sb, 'BeforeTool', sh));
    fs.rmSync(sb.abs('a.txt'));
    gemini(sb, geminiEvent(sb, 'AfterTool', sh));
    gemini(sb, geminiEvent(sb, 'AfterAgent', { prompt: 'Edit both files', prompt_response: 'done' }));

    const list = sb.json(['list']);
    expect(list.turns).toEqual([expect.objectContaining({ agent: 'gemini', session: 'gemini-session-1', label: 'Edit both files' })]);
    expect(list.turns[0].end).not.toBeNull();
    const sets = setsOf(list);
    expect(sets.map((s: any) => [s.source.tool, s.source.pairedBy, filesOf(s)])).toEqual([
      ['replace', 'order', { 'b.txt': 'modified' }],
      ['write_file', 'order', { 'a.txt': 'modified' }],
      ['run_shell_command', 'order', { 'a.txt': 'deleted' }],
    ]);
    for (const s of sets) expect(s).toMatchObject({ agent: 'gemini', session: 'gemini-session-1', turn: 't1' });
    expect(sb.tb(['list']).stdout).toMatch(/#1 {2}replace b\.txt .*\(paired by order\)/);
    expect(sb.tb(['show', sets[0].id]).stdout).toMatch(/paired by order/);

    expect(sb.tb(['undo', '--turn', 't1']).code).toBe(0);
    expect([sb.read('a.txt').toString(), sb.read('b.txt').toString()]).toEqual(['a\n', 'b\n']);
  });

  it('an AfterTool with no BeforeTool, a session with none open, garbage: exit 0, nothing recorded', () => {
    const sb = sandbox();
    gemini(sb, geminiEvent(sb, 'AfterTool', { tool_name: 'write_file', tool_input: { file_path: 'x' } }));
    gemini(sb, geminiEvent(sb, 'BeforeTool', { tool_name: 'write_file', tool_input: {} }));
    gemini(sb, geminiEvent(sb, 'Notification', {}));
    gemini(sb, 'not json');
    expect(sb.json(['list']).sets).toEqual([]);
  });
});

describe('every agent in one journal', () => {
  it('two agents at work at once: each set is its own turn and agent; drift stays with its turn; list --agent filters', () => {
    const sb = sandbox();
    sb.write('shared.txt', 'v0\n');
    sb.write('c.txt', 'c0\n');
    sb.write('g.txt', 'g0\n');
    const claude = (ev: object) => expect(sb.hook({ session_id: 'claude-1', cwd: sb.ws, ...ev }).code).toBe(0);
    claude({ hook_event_name: 'SessionStart', source: 'startup' });
    claude({ hook_event_name: 'UserPromptSubmit', prompt: 'claude turn' });
    gemini(sb, geminiEvent(sb, 'BeforeAgent', { prompt: 'gemini turn' }));
    // Interleaved tool calls of both.
    const cw = { tool_name: 'Edit', tool_use_id: 'toolu_1', tool_input: { file_path: sb.abs('c.txt') } };
    const gw = { tool_name: 'write_file', tool_input: { file_path: sb.abs('g.txt'), content: 'g1\n' } };
    claude({ hook_event_name: 'PreToolUse', ...cw });
    gemini(sb, geminiEvent(sb, 'BeforeTool', gw));
    sb.write('g.txt', 'g1\n');
    sb.write('c.txt', 'c1\n');
    claude({ hook_event_name: 'PostToolUse', ...cw });
    gemini(sb, geminiEvent(sb, 'AfterTool', gw));
    // Both change shared.txt in turn: Claude first, then Gemini.
    const cs = { tool_name: 'Write', tool_use_id: 'toolu_2', tool_input: { file_path: sb.abs('shared.txt') } };
    claude({ hook_event_name: 'PreToolUse', ...cs });
    sb.write('shared.txt', 'claude\n');
    claude({ hook_event_name: 'PostToolUse', ...cs });
    const gs = { tool_name: 'replace', tool_input: { file_path: sb.abs('shared.txt'), old_string: 'claude', new_string: 'gemini' } };
    gemini(sb, geminiEvent(sb, 'BeforeTool', gs));
    sb.write('shared.txt', 'gemini\n');
    gemini(sb, geminiEvent(sb, 'AfterTool', gs));
    claude({ hook_event_name: 'Stop' });
    gemini(sb, geminiEvent(sb, 'AfterAgent', {}));

    const list = sb.json(['list']);
    const turns = Object.fromEntries(list.turns.map((t: any) => [t.agent, t.id]));
    expect(turns).toEqual({ 'claude-code': 't1', gemini: 't2' });
    const sets = setsOf(list).map((s: any) => [s.agent, s.turn, filesOf(s)]);
    expect(sets).toEqual([
      ['claude-code', 't1', { 'c.txt': 'modified' }],
      ['gemini', 't2', { 'g.txt': 'modified' }],
      ['claude-code', 't1', { 'shared.txt': 'modified' }],
      ['gemini', 't2', { 'shared.txt': 'modified' }],
    ]);
    expect(sb.json(['list', '--agent', 'gemini']).sets.every((s: any) => s.agent === 'gemini')).toBe(true);
    expect(sb.json(['list', '--agent', 'gemini']).turns.map((t: any) => t.id)).toEqual(['t2']);
    expect(sb.json(['list', '--agent', 'codex']).sets).toEqual([]);
    expect(sb.tb(['list', '--agent', 'claude-code']).stdout).not.toMatch(/g\.txt/);
    // The text list names each turn's agent and (shortened) session.
    const human = sb.tb(['list']).stdout;
    expect(human).toMatch(/Turn t1 · "claude turn" · claude-code \(session claude-1\)/);
    expect(human).toMatch(/Turn t2 · "gemini turn" · gemini \(session gemini-s\)/);

    // Undo Claude's turn: its own file goes back; the shared file, changed by Gemini since, is a conflict.
    const r = sb.json(['undo', '--turn', 't1'], { code: 1 });
    expect(r.conflicts.map((c: any) => c.path)).toEqual(['shared.txt']);
    expect(sb.read('c.txt').toString()).toBe('c1\n'); // all or nothing: nothing written
    // Undo Gemini's turn: it takes back only its own; shared.txt gets Claude's text back.
    expect(sb.tb(['undo', '--turn', 't2']).code).toBe(0);
    expect([sb.read('g.txt').toString(), sb.read('shared.txt').toString(), sb.read('c.txt').toString()]).toEqual(['g0\n', 'claude\n', 'c1\n']);
    // Now Claude's turn undoes cleanly.
    expect(sb.tb(['undo', '--turn', 't1']).code).toBe(0);
    expect([sb.read('shared.txt').toString(), sb.read('c.txt').toString()]).toEqual(['v0\n', 'c0\n']);
  });

  it("one agent's turn ending or beginning while another agent's command runs leaves what moved to that command", () => {
    const sb = sandbox();
    sb.write('notes.md', 'the quick fox\n');
    sb.write('f.txt', 'a cat sat\n');
    sb.write('g.txt', 'g\n');
    const claude = (ev: object) => expect(sb.hook({ session_id: 'CL1', cwd: sb.ws, ...ev }).code).toBe(0);
    const bash = (id: string, command: string) => ({ tool_name: 'Bash', tool_use_id: id, tool_input: { command } });
    claude({ hook_event_name: 'SessionStart', source: 'startup' });
    claude({ hook_event_name: 'UserPromptSubmit', prompt: 'claude work' });
    gemini(sb, geminiEvent(sb, 'BeforeAgent', { prompt: 'gemini work' }));
    const rep = { tool_name: 'replace', tool_input: { file_path: 'notes.md', old_string: 'quick', new_string: 'slow' } };
    gemini(sb, geminiEvent(sb, 'BeforeTool', rep));
    sb.write('notes.md', 'the slow fox\n');
    gemini(sb, geminiEvent(sb, 'AfterTool', rep));
    // Claude's build runs across Gemini's turn end and a Codex prompt.
    claude({ hook_event_name: 'PreToolUse', ...bash('toolu_1', './build.sh') });
    sb.write('f.txt', 'claude build output\n');
    gemini(sb, geminiEvent(sb, 'AfterAgent', {}));
    codex(sb, codexEvent(sb, 'UserPromptSubmit', { turn_id: 'tx', prompt: 'codex turn' }));
    sb.write('g.txt', 'claude again\n');
    claude({ hook_event_name: 'PostToolUse', ...bash('toolu_1', './build.sh') });
    claude({ hook_event_name: 'Stop' });
    codex(sb, codexEvent(sb, 'Stop', { turn_id: 'tx' }));

    const sets = setsOf(sb.json(['list']));
    expect(sets.map((x: any) => [x.agent, x.label, filesOf(x)])).toEqual([
      ['gemini', 'replace notes.md', { 'notes.md': 'modified' }],
      ['claude-code', 'Bash: ./build.sh', { 'f.txt': 'modified', 'g.txt': 'modified' }],
    ]);
    // Undoing Gemini's turn takes back only its own change.
    const gTurn = sb.json(['list', '--agent', 'gemini']).turns[0].id;
    expect(sb.tb(['undo', '--turn', gTurn]).code).toBe(0);
    expect([sb.read('notes.md').toString(), sb.read('f.txt').toString()]).toEqual(['the quick fox\n', 'claude build output\n']);
  });

  it('a Gemini AfterTool is never paired with another tool; a cancelled shell call is closed when its turn ends', () => {
    const sb = sandbox();
    sb.write('notes.md', 'old\n');
    gemini(sb, geminiEvent(sb, 'BeforeAgent', { prompt: 't' }));
    gemini(sb, geminiEvent(sb, 'BeforeTool', { tool_name: 'run_shell_command', tool_input: { command: 'sleep 100' } }));
    sb.write('notes.md', 'new\n');
    gemini(sb, geminiEvent(sb, 'AfterTool', { tool_name: 'write_file', tool_input: { file_path: 'notes.md', content: 'new\n' } }));
    gemini(sb, geminiEvent(sb, 'AfterAgent', {}));
    const sets = setsOf(sb.json(['list']));
    // The write_file end found no write_file begin; the shell call, still open at AfterAgent,
    // records what moved during it.
    expect(sets.map((x: any) => [x.label, filesOf(x)])).toEqual([['run_shell_command: sleep 100', { 'notes.md': 'modified' }]]);
    expect(sb.json(['doctor']).captures.open).toBe(0);
  });

  it('outside git, a hook whose cwd is a subfolder records into the workspace its session began in', () => {
    const sb = sandbox();
    sb.write('sub/s.txt', 'a\n');
    sb.write('top.txt', 'b\n');
    codex(sb, codexEvent(sb, 'SessionStart', { source: 'startup' }));
    codex(sb, codexEvent(sb, 'UserPromptSubmit', { turn_id: 'turn-1', prompt: 'p' }));
    const call = { turn_id: 'turn-1', tool_name: 'Bash', tool_use_id: 'call_1', tool_input: { command: 'echo x > s.txt; echo y > ../top.txt' } };
    codex(sb, { ...codexEvent(sb, 'PreToolUse', call), cwd: sb.abs('sub') });
    sb.write('sub/s.txt', 'x\n');
    sb.write('top.txt', 'y\n');
    codex(sb, { ...codexEvent(sb, 'PostToolUse', call), cwd: sb.abs('sub') });
    codex(sb, codexEvent(sb, 'Stop', { turn_id: 'turn-1' }));
    const sets = setsOf(sb.json(['list']));
    expect(sets.map((x: any) => [x.label, filesOf(x)])).toEqual([['Bash: echo x > s.txt; echo y > ../top.txt', { 'sub/s.txt': 'modified', 'top.txt': 'modified' }]]);
    expect(fs.readdirSync(path.join(sb.home, 'workspaces'))).toHaveLength(1);
  });

  it('outside git, a journal that only a list or a doctor made claims no subfolder', () => {
    const sb = sandbox();
    sb.write('proj/sub/x.txt', 'a\n');
    // Looked at from the top once: a journal for the top folder, holding nothing.
    expect(sb.tb(['list']).code).toBe(0);
    expect(sb.tb(['doctor']).code).toBe(0);
    const sub = sb.abs('proj/sub');
    expect(sb.tb(['run', '--', 'sh', '-c', 'echo b > x.txt'], { cwd: sub }).code).toBe(0);
    expect(sb.json(['doctor'], { cwd: sub }).workspace).toBe(sub);
    expect(setsOf(sb.json(['list'], { cwd: sub })).map((x: any) => filesOf(x))).toEqual([{ 'x.txt': 'modified' }]);
    expect(setsOf(sb.json(['list']))).toEqual([]);
    // Once the top folder has recorded something, a folder below it belongs to it (as above).
    expect(sb.tb(['run', '--', 'sh', '-c', 'echo c > top.txt']).code).toBe(0);
    sb.write('proj/other/y.txt', 'a\n');
    expect(sb.json(['doctor'], { cwd: sb.abs('proj/other') }).workspace).toBe(sb.ws);
  });

  it('sets recorded from the command line say cli; turn begin defaults to cli', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    expect(sb.tb(['turn', 'begin', '--label', 'by hand']).code).toBe(0);
    expect(sb.tb(['run', 'sh', '-c', 'echo b > a.txt']).code).toBe(0);
    expect(sb.tb(['turn', 'end']).code).toBe(0);
    const list = sb.json(['list', '--agent', 'cli']);
    expect(list.turns.map((t: any) => t.agent)).toEqual(['cli']);
    expect(list.sets.map((s: any) => [s.agent, filesOf(s)])).toEqual([['cli', { 'a.txt': 'modified' }]]);
  });

  it('a journal of the earlier schema is brought up to date on open; its sets take their turns agent', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    // Make the journal, then put it back to the first schema by hand.
    expect(sb.tb(['list']).code).toBe(0);
    const file = path.join(sb.journalDir(), 'journal.db');
    const db = new Database(file);
    db.exec(`DROP TABLE turns; DROP TABLE sets; DROP TABLE captures; DROP TABLE drift;
      CREATE TABLE turns (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, agent TEXT, session TEXT, label TEXT, started_at INTEGER NOT NULL, ended_at INTEGER);
      CREATE TABLE sets (id INTEGER PRIMARY KEY AUTOINCREMENT, turn TEXT, source TEXT NOT NULL, created_at INTEGER NOT NULL, state TEXT NOT NULL, files TEXT NOT NULL, history TEXT NOT NULL);
      CREATE TABLE captures (id TEXT PRIMARY KEY, kind TEXT NOT NULL, turn TEXT, tool TEXT, command TEXT, started_at INTEGER NOT NULL, files TEXT NOT NULL);
      CREATE TABLE drift (path TEXT PRIMARY KEY, turn TEXT NOT NULL, before TEXT NOT NULL, after TEXT NOT NULL) WITHOUT ROWID;
      PRAGMA user_version = 0;`);
    db.prepare('INSERT INTO turns VALUES (?, 1, ?, ?, ?, ?, ?)').run('t1', 'claude-code', 's1', 'old turn', 1000, 2000);
    db.prepare('INSERT INTO sets (turn, source, created_at, state, files, history) VALUES (?, ?, ?, ?, ?, ?)').run(
      't1',
      JSON.stringify({ kind: 'turn' }),
      1500,
      'applied',
      JSON.stringify([{ path: 'a.txt', before: { exists: false }, after: { exists: false }, status: 'created', added: 0, removed: 0 }]),
      '[]',
    );
    db.prepare("INSERT INTO drift VALUES ('x.txt', 't9', '{\"exists\":false}', '{\"exists\":false}')").run();
    db.close();
    const list = sb.json(['list', '--all']);
    expect(list.sets.map((s: any) => [s.agent, s.session])).toEqual([['claude-code', 's1']]);
    expect(list.turns[0]).toMatchObject({ agent: 'claude-code', agentTurn: null });
    const check = new Database(file, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(check.prepare('SELECT turn, path FROM drift').all()).toEqual([{ turn: 't9', path: 'x.txt' }]);
    check.close();
  });

  it("several changes of two agents in one file: one agent's turn is taken back merged, keeping the other's lines; both at once give the file as it was; redo --last gives each step back exactly", () => {
    const sb = sandbox();
    const TEN = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join('');
    const put = (text: string, n: number, line: string) => text.replace(`line ${n}\n`, `${line}\n`);
    sb.write('app.txt', TEN);
    const claude = (ev: object) => expect(sb.hook({ session_id: 'claude-1', cwd: sb.ws, ...ev }).code).toBe(0);
    claude({ hook_event_name: 'SessionStart', source: 'startup' });
    claude({ hook_event_name: 'UserPromptSubmit', prompt: 'rename two lines' });
    let text = TEN;
    for (const [n, id] of [[2, 'toolu_a'], [3, 'toolu_b']] as const) {
      const call = { tool_name: 'Edit', tool_use_id: id, tool_input: { file_path: sb.abs('app.txt') } };
      claude({ hook_event_name: 'PreToolUse', ...call });
      text = put(text, n, `claude ${n}`);
      sb.write('app.txt', text);
      claude({ hook_event_name: 'PostToolUse', ...call });
    }
    claude({ hook_event_name: 'Stop' });
    gemini(sb, geminiEvent(sb, 'BeforeAgent', { prompt: 'and line 8' }));
    const gs = { tool_name: 'replace', tool_input: { file_path: sb.abs('app.txt'), old_string: 'line 8', new_string: 'gemini 8' } };
    gemini(sb, geminiEvent(sb, 'BeforeTool', gs));
    const both = put(text, 8, 'gemini 8');
    sb.write('app.txt', both);
    gemini(sb, geminiEvent(sb, 'AfterTool', gs));
    gemini(sb, geminiEvent(sb, 'AfterAgent', {}));

    const list = sb.json(['list']);
    expect(setsOf(list).map((s: any) => [s.agent, s.turn])).toEqual([
      ['claude-code', 't1'],
      ['claude-code', 't1'],
      ['gemini', 't2'],
    ]);
    // Claude's turn (two changes to the file) is taken back, Gemini's later line kept.
    const undone = sb.json(['undo', '--turn', 't1']);
    expect(undone).toMatchObject({ written: true, conflicts: [] });
    expect(undone.applied).toEqual([expect.objectContaining({ path: 'app.txt', merged: true })]);
    expect(sb.read('app.txt').toString()).toBe(put(TEN, 8, 'gemini 8'));
    expect(sb.json(['redo', '--last']).written).toBe(true);
    expect(sb.read('app.txt').toString()).toBe(both);

    // All three changes of both agents at once: the file as it was before either.
    const ids = setsOf(sb.json(['list'])).map((s: any) => s.id);
    expect(sb.json(['undo', ...ids])).toMatchObject({ written: true, conflicts: [] });
    expect(sb.read('app.txt').toString()).toBe(TEN);
    expect(sb.json(['redo', '--last']).written).toBe(true);
    expect(sb.read('app.txt').toString()).toBe(both);
  });
});
