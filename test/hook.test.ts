// `takeback hook claude-code`: never in the agent's way (exit 0, nothing on stdout, failures
// logged under $TAKEBACK_HOME/logs/hook.log), and the recorded events of a real Claude Code
// session (test/fixtures/claude-events/) replayed against a real folder give the right sets.
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, filesOf, hook, hookAsync, hookLog, sandbox, setsOf, type Sandbox } from './support/takeback.js';

const EVENTS = path.join(FIXTURES, 'claude-events');

/** A recorded event with its placeholders filled in for sandbox `sb`. */
function fixture(sb: Sandbox, name: string): any {
  return JSON.parse(fill(sb, fs.readFileSync(path.join(EVENTS, name), 'utf8')));
}

function fill(sb: Sandbox, text: string): string {
  return text
    .replaceAll('${WORKSPACE_SLUG}', sb.ws.replace(/[^A-Za-z0-9]/g, '-'))
    .replaceAll('${WORKSPACE}', sb.ws)
    .replaceAll('${HOME}', sb.userHome);
}

describe('the hook never stands in the way', () => {
  it('garbage, empty input, unknown events and bad fields: exit 0, stdout empty, failures logged', () => {
    const sb = sandbox();
    const cases: [string, unknown, RegExp | null][] = [
      ['garbage', 'this is {not json', /input is not JSON \(17 bytes, sha256 [0-9a-f]{64}\)/],
      ['empty stdin', '', /input is not JSON \(0 bytes, sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\)/],
      ['a JSON array', '[1,2]', /no hook_event_name/],
      ['no event name', { session_id: 's' }, /no hook_event_name/],
      ['an unknown event', { hook_event_name: 'Notification', cwd: sb.ws, message: 'hi' }, null],
      [
        'a tool_use_id unfit for an id (kept as its hash, never as a name)',
        { hook_event_name: 'PreToolUse', cwd: sb.ws, tool_name: 'Write', tool_input: { file_path: `${sb.ws}/a.txt` }, tool_use_id: '../../etc/x' },
        null,
      ],
      ['a cwd that does not exist', { hook_event_name: 'UserPromptSubmit', cwd: path.join(sb.base, 'gone'), prompt: 'x' }, /hook claude-code failed: .*no such folder/],
      ['a Post with no Pre', { hook_event_name: 'PostToolUse', cwd: sb.ws, tool_name: 'Write', tool_use_id: 'toolu_never' }, null],
      ['a Stop with no turn', { hook_event_name: 'Stop', cwd: sb.ws, session_id: 's' }, null],
      ['a Write without a path', { hook_event_name: 'PreToolUse', cwd: sb.ws, tool_name: 'Write', tool_input: {}, tool_use_id: 'toolu_x' }, null],
    ];
    for (const [name, input, logged] of cases) {
      const before = hookLog(sb);
      const r = sb.hook(input);
      expect(r.code, name).toBe(0);
      expect(r.stdout, name).toBe('');
      const added = hookLog(sb).slice(before.length);
      if (logged) expect(added, name).toMatch(logged);
    }
    expect(fs.statSync(path.join(sb.home, 'logs', 'hook.log')).mode & 0o777).toBe(0o600);
    // None of it recorded anything.
    expect(sb.json(['list']).sets).toEqual([]);
  });

  it('an event that is not JSON is logged by its length and digest, none of its text', () => {
    const sb = sandbox();
    const token = `ghp_${'A1b2C3d4E5'.repeat(3)}123456`;
    const text = `{"hook_event_name": "PreToolUse", "tool_input": {"command": "curl -H 'Authorization: ${token}'"`;
    expect(sb.hook(text).code).toBe(0);
    const log = hookLog(sb);
    expect(log).toContain(`input is not JSON (${Buffer.byteLength(text)} bytes, sha256 ${createHash('sha256').update(text).digest('hex')})`);
    expect(log).not.toContain(token);
    expect(log).not.toContain('PreToolUse');
  });

  it('a tool call id with any characters pairs its Pre and Post (by a hash of the id)', () => {
    const sb = sandbox();
    const id = '../../etc/x y:z';
    const pre = { hook_event_name: 'PreToolUse', cwd: sb.ws, tool_name: 'Write', tool_input: { file_path: `${sb.ws}/a.txt` }, tool_use_id: id };
    expect(sb.hook(pre).code).toBe(0);
    fs.writeFileSync(sb.abs('a.txt'), 'new\n');
    expect(sb.hook({ ...pre, hook_event_name: 'PostToolUse' }).code).toBe(0);
    const sets = sb.json(['list']).sets;
    expect(sets).toHaveLength(1);
    expect(sets[0].source.toolCallId).toMatch(/^h[0-9a-f]{40}$/);
    expect(sets[0].files.map((f: any) => [f.path, f.status])).toEqual([['a.txt', 'created']]);
    expect(fs.existsSync(path.join(sb.base, 'etc'))).toBe(false);
  });

  it('an unknown agent and an unwritable TAKEBACK_HOME: exit 0, stdout empty', () => {
    const sb = sandbox();
    const r1 = sb.tb(['hook', 'cursor'], { input: '{}' });
    expect([r1.code, r1.stdout]).toEqual([0, '']);
    expect(hookLog(sb)).toMatch(/unknown agent cursor/);
    // TAKEBACK_HOME below a regular file: nothing can be made there, not even the log (even as root).
    const file = path.join(sb.base, 'a-file');
    fs.writeFileSync(file, '');
    const env = { ...sb.env, TAKEBACK_HOME: path.join(file, 'home') };
    for (const name of ['session-start.json', 'user-prompt-submit.json', 'pre-tool-use-write.json', 'post-tool-use-write-create.json', 'stop.json']) {
      const r = hook(fixture(sb, name), { cwd: sb.ws, env });
      expect(r.code, name).toBe(0);
      expect(r.stdout, name).toBe('');
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('');
  });

  it('with TAKEBACK_LOG_LEVEL=debug every event is logged', async () => {
    const sb = sandbox({ env: { TAKEBACK_LOG_LEVEL: 'debug' } });
    sb.hook(fixture(sb, 'session-start.json'));
    sb.hook(fixture(sb, 'user-prompt-submit.json'));
    expect(hookLog(sb)).toMatch(/claude-code SessionStart: session start: snapshot/);
    expect(hookLog(sb)).toMatch(/claude-code UserPromptSubmit: turn t1 begun/);
    // The sweep the session's start launched in the background ends before the home is removed.
    const gcJson = path.join(sb.home, 'gc.json');
    for (let end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
      try {
        if (JSON.parse(fs.readFileSync(gcJson, 'utf8')).finished) break;
      } catch {
        // not written yet
      }
    }
  });
});

/** Does what the tool of a PreToolUse event did (between its Pre and Post hooks). */
function runTool(sb: Sandbox, ev: any): void {
  const input = ev.tool_input;
  if (ev.tool_name === 'Write') {
    fs.mkdirSync(path.dirname(input.file_path), { recursive: true });
    fs.writeFileSync(input.file_path, input.content);
  } else if (ev.tool_name === 'Edit') {
    const text = fs.readFileSync(input.file_path, 'utf8');
    fs.writeFileSync(input.file_path, input.replace_all ? text.replaceAll(input.old_string, input.new_string) : text.replace(input.old_string, input.new_string));
  } else if (ev.tool_name === 'Bash') {
    spawnSync('sh', ['-c', input.command], { cwd: ev.cwd, env: sb.env });
  } else throw new Error(`no tool ${ev.tool_name}`);
}

describe('replaying a real Claude Code session', () => {
  it('records one set per tool call, in two turns, and undoes and redoes them byte for byte', () => {
    const sb = sandbox();
    sb.write('notes.md', '# Notes\n\nThe quick brown fox.\n');
    sb.write('f.txt', 'a cat sat\n');
    sb.write('x', 'x contents\n');
    sb.write('z', 'z contents\n');
    const start = sb.tree();
    const events = fill(sb, fs.readFileSync(path.join(EVENTS, 'session.jsonl'), 'utf8'))
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l));
    expect(events).toHaveLength(20);
    let endOfTurn1: Record<string, unknown> | null = null;
    let stops = 0;
    for (const ev of events) {
      const r = sb.hook(ev);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('');
      if (ev.hook_event_name === 'PreToolUse') runTool(sb, ev);
      if (ev.hook_event_name === 'Stop' && ++stops === 1) endOfTurn1 = sb.tree();
    }
    const end = sb.tree();
    expect(hookLog(sb)).toBe(''); // no failures

    const list = sb.json(['list']);
    expect(list.turns.map((t: any) => [t.id, t.agent, t.session, t.label, t.end !== null])).toEqual([
      ['t2', 'claude-code', events[0].session_id, 'Turn two: a few more changes.', true],
      ['t1', 'claude-code', events[0].session_id, 'Turn one: add the new module, fix the notes, tidy the files.', true],
    ]);
    const sets = setsOf(list);
    expect(sets.map((s: any) => [s.turn, s.source.toolCallId ?? null, s.source.tool ?? null, filesOf(s)])).toEqual([
      ['t1', 'toolu_stub_001', 'Write', { src: 'created', 'src/lib': 'created', 'src/lib/new.ts': 'created' }],
      ['t1', 'toolu_stub_003', 'Edit', { 'notes.md': 'modified' }],
      ['t1', 'toolu_stub_004', 'Bash', { 'f.txt': 'modified', x: 'deleted', y: 'created', z: 'deleted' }],
      ['t1', 'toolu_stub_005', 'Bash', { 'partial.txt': 'created' }], // PostToolUseFailure, yet recorded
      // out/ is build output, scanned like any other folder outside git.
      ['t2', 'toolu_stub_006', 'Bash', { 'f.txt': 'modified', out: 'created', 'out/y.copy': 'created' }],
      ['t2', 'toolu_stub_007', 'Edit', { 'src/lib/new.ts': 'modified' }],
      ['t2', 'toolu_stub_008', 'Write', { 'notes.md': 'modified' }],
    ]);
    expect(sets[2].source.command).toBe("sed -i 's/a/b/' f.txt && mv x y && rm z");
    expect(sets[2].label).toBe("Bash: sed -i 's/a/b/' f.txt && mv x y && rm z");

    const outside = (rel: string) => rel === '.git';
    const strip = (t: Record<string, unknown>) => Object.fromEntries(Object.entries(t).filter(([p]) => !outside(p)));
    // Undo one tool call, then the whole of turn 2, then everything after turn 1... and back.
    sb.json(['undo', sets[6].id]);
    expect(sb.read('notes.md').toString()).toBe('# Notes\n\nThe slow red fox.\n');
    sb.json(['undo', '--turn', 't2']);
    expect(strip(sb.tree())).toEqual(strip(endOfTurn1!));
    sb.json(['undo', '--after-turn', 't1']); // nothing left after turn 1: skipped, writes nothing
    sb.json(['undo', '--turn', '1']);
    expect(strip(sb.tree())).toEqual(strip(start));
    sb.json(['redo', '--turn', 't1']);
    expect(strip(sb.tree())).toEqual(strip(endOfTurn1!));
    sb.json(['redo', '--after-turn', 't1']);
    expect(sb.tree()).toEqual(end);
  });

  it('a new prompt in a session whose turn never stopped ends that turn first', () => {
    const sb = sandbox();
    const submit = fixture(sb, 'user-prompt-submit.json');
    sb.hook(fixture(sb, 'session-start.json'));
    sb.hook(submit);
    sb.write('during.txt', 'made with no tool call\n');
    sb.hook({ ...submit, prompt: 'Second prompt\nmore lines', prompt_id: 'a-second-prompt' });
    const list = sb.json(['list']);
    expect(list.turns.map((t: any) => [t.id, t.label, t.end === null])).toEqual([
      ['t2', 'Second prompt', true],
      ['t1', submit.prompt, false],
    ]);
    expect(list.sets).toHaveLength(1);
    expect(list.sets[0]).toMatchObject({ turn: 't1', source: { kind: 'turn' }, label: 'changed during this turn' });
    expect(filesOf(list.sets[0])).toEqual({ 'during.txt': 'created' });
  });

  it('one prompt handled by several processes at once (the http hook and the command hook beside it, as a daemon starts) begins one turn', async () => {
    const sb = sandbox();
    const submit = fixture(sb, 'user-prompt-submit.json');
    sb.write('a.txt', 'a\n');
    sb.hook(fixture(sb, 'session-start.json'));
    for (let round = 1; round <= 3; round++) {
      const event = { ...submit, prompt: `prompt ${round}`, prompt_id: `prompt-${round}` };
      const runs = await Promise.all(Array.from({ length: 4 }, () => hookAsync(event, { cwd: sb.ws, env: sb.env })));
      expect(runs.map((r) => [r.code, r.stdout])).toEqual(runs.map(() => [0, '']));
    }
    const turns = sb.json(['list']).turns;
    expect(turns.map((t: any) => [t.label, t.agentTurn])).toEqual([
      ['prompt 3', 'prompt-3'],
      ['prompt 2', 'prompt-2'],
      ['prompt 1', 'prompt-1'],
    ]);
  });

  it('a prompt that failed (StopFailure, as Claude Code sends it instead of Stop) ends its turn', () => {
    const sb = sandbox();
    const failure = fixture(sb, 'stop-failure.json');
    sb.hook({ ...fixture(sb, 'user-prompt-submit.json'), session_id: failure.session_id, prompt_id: failure.prompt_id });
    sb.write('during.txt', 'made before the error\n');
    expect(sb.hook(failure)).toMatchObject({ code: 0, stdout: '' });
    const list = sb.json(['list']);
    expect(list.turns.map((t: any) => [t.id, t.end !== null])).toEqual([['t1', true]]);
    expect(list.sets.map((s: any) => [s.turn, filesOf(s)])).toEqual([['t1', { 'during.txt': 'created' }]]);
    expect(sb.json(['doctor']).turns).toEqual({ total: 1, open: 0, endLost: 0 });
  });

  it('doctor names a turn open for over an hour and what ends it; an agent’s turn quiet as long is closed at its last event and named', () => {
    const sb = sandbox();
    const submit = fixture(sb, 'user-prompt-submit.json');
    sb.hook(submit);
    sb.tb(['turn', 'begin', '--label', 'a script of mine']);
    expect(sb.json(['doctor']).problems).toEqual([]);
    // Both began two hours ago, as far as the journal knows.
    const db = new Database(path.join(sb.journalDir(), 'journal.db'));
    db.prepare('UPDATE turns SET started_at = started_at - ?').run(2 * 60 * 60 * 1000);
    db.close();
    // The agent's turn, with nothing heard of it for two hours, is closed at doctor's start; the script's stays open.
    const lost = `turn t1 (claude-code, '${submit.prompt}') ended without its end event (the agent killed, or its stop event lost): closed at a later start at its last event, nothing seen after it taken for the turn's`;
    const problems = sb.json(['doctor']).problems;
    expect(problems).toEqual([
      "turn t2 (cli, 'a script of mine') began 2 h ago and never ended (its prompt may have failed before the agent stopped, or the agent was killed): `takeback turn end --id t2` ends it",
      lost,
    ]);
    expect(sb.tb(['doctor']).stdout).toContain(`! ${problems[0]}`);
    sb.hook({ ...submit, prompt: 'Next prompt', prompt_id: 'the-next-prompt' });
    sb.tb(['turn', 'end', '--id', 't2']);
    expect(sb.json(['doctor']).problems).toEqual([lost]);
    expect(sb.json(['list']).turns.map((t: any) => [t.id, t.end === null])).toEqual([
      ['t3', true],
      ['t2', false],
      ['t1', false],
    ]);
  });

  it('doctor leaves alone a turn that began over an hour ago and is still at work, and names it once it has been quiet as long', () => {
    const sb = sandbox();
    sb.tb(['turn', 'begin', '--label', 'a long script']);
    const db = new Database(path.join(sb.journalDir(), 'journal.db'));
    db.prepare('UPDATE turns SET started_at = started_at - ?').run(3 * 60 * 60 * 1000);
    // A command of no session joins the script's turn: the turn is at work now.
    expect(sb.tb(['run', '--', 'sh', '-c', 'echo made > made.txt']).code).toBe(0);
    expect(sb.json(['list']).sets.map((s: any) => s.turn)).toEqual(['t1']);
    expect(sb.json(['doctor']).problems).toEqual([]);
    db.prepare('UPDATE sets SET created_at = created_at - ?').run(2 * 60 * 60 * 1000);
    db.close();
    expect(sb.json(['doctor']).problems).toEqual([
      "turn t1 (cli, 'a long script') began 3 h ago, nothing heard of it for 2 h, and never ended (its prompt may have failed before the agent stopped, or the agent was killed): `takeback turn end --id t1` ends it",
    ]);
  });
});
