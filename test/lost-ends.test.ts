// A journal left mid-way: a turn whose end never came (the hook process killed, the event lost)
// and a tool call whose PostToolUse never came stay open in the journal. An hour later, the next
// session's start, a new prompt, `list` or doctor closes them: what they left is recorded, named
// as capture gaps (never taken back as the agent's), and listed as changes that could not be kept.
// The hour is made by moving the journal's own times back, in the real journal file.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { hookLog, sandbox, setsOf, type Sandbox } from './support/takeback.js';

const HOUR = 60 * 60 * 1000;

function event(sb: Sandbox, name: string, extra: Record<string, unknown> = {}, session = 'sess-1'): Record<string, unknown> {
  return { hook_event_name: name, session_id: session, cwd: sb.ws, ...extra };
}

function hookOk(sb: Sandbox, ev: unknown): void {
  const r = sb.hook(ev, { timeout: 25_000 });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe('');
}

/** Moves every time the journal holds `ms` into the past, as if it had all happened that long ago. */
function age(sb: Sandbox, ms: number): void {
  const db = new Database(path.join(sb.journalDir(), 'journal.db'), { timeout: 20_000 });
  try {
    db.prepare('UPDATE turns SET started_at = started_at - ?, ended_at = ended_at - ?').run(ms, ms);
    db.prepare('UPDATE captures SET started_at = started_at - ?').run(ms);
    db.prepare('UPDATE sets SET created_at = created_at - ?').run(ms);
  } finally {
    db.close();
  }
}

/** A session that began a turn, a Write and a Bash call whose ends never came, and no Stop. */
function leftMidway(sb: Sandbox): void {
  sb.write('a.txt', 'before\n');
  hookOk(sb, event(sb, 'SessionStart', { source: 'startup' }));
  hookOk(sb, event(sb, 'UserPromptSubmit', { prompt: 'edit a, make b' }));
  hookOk(sb, event(sb, 'PreToolUse', { tool_name: 'Write', tool_input: { file_path: sb.abs('a.txt'), content: 'after\n' }, tool_use_id: 'toolu_write' }));
  sb.write('a.txt', 'after\n');
  hookOk(sb, event(sb, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'echo made > b.txt' }, tool_use_id: 'toolu_bash' }));
  sb.sh('echo made > b.txt');
  // The hook processes of both PostToolUse events and of the Stop were killed: nothing came.
}

describe('a journal left mid-way', () => {
  it('an hour later, the next session closes the turn and both tool calls: recorded, named as gaps (end never heard), said by list and doctor', () => {
    const sb = sandbox({ git: true, env: { TAKEBACK_LOG_LEVEL: 'debug' } });
    leftMidway(sb);
    age(sb, 2 * HOUR);
    // What the person did since is theirs, not the agent's: never taken back as the agent's.
    sb.write('c.txt', 'the person\n');

    hookOk(sb, event(sb, 'SessionStart', { source: 'startup' }, 'sess-2'));
    expect(hookLog(sb)).toMatch(/closed what was left open \(end never heard\): t1 /);

    const list = sb.json(['list']);
    expect(list.turns.map((t: any) => [t.id, t.end !== null])).toEqual([['t1', true]]);
    const sets = setsOf(list);
    const byCall = (id: string) => sets.find((s: any) => s.source.toolCallId === id);
    expect(byCall('toolu_write').files.map((f: any) => [f.path, f.status, f.gap])).toEqual([['a.txt', 'modified', 'not-kept']]);
    expect(byCall('toolu_bash').files.map((f: any) => [f.path, f.status, f.gap])).toEqual(
      expect.arrayContaining([['b.txt', 'created', 'not-kept']]),
    );
    for (const s of sets) for (const f of s.files) expect(f.gap, `${s.id} ${f.path}`).toBe('not-kept');
    const text = sb.tb(['list']).stdout;
    expect(text).not.toContain('in progress');
    expect(text).toMatch(/3 changes could not be kept \(end never heard, at [^)]+\): named as capture gaps below/);

    const d = sb.json(['doctor']);
    expect(d.captures).toEqual({ open: 0, stale: 0 });
    expect(d.turns.open).toBe(0);
    expect(d.unkept).toMatchObject({ count: 3, causes: ['end-lost'] });
    expect(d.problems.join('\n')).toMatch(/3 changes could not be kept \(end never heard/);
    // Nothing was taken back: the agent's and the person's bytes are as they were.
    expect(sb.read('a.txt').toString()).toBe('after\n');
    expect(sb.read('c.txt').toString()).toBe('the person\n');
  });

  it('list closes them too, and a new prompt of the same session; a second start closes nothing more', () => {
    const sb = sandbox({ git: true });
    leftMidway(sb);
    age(sb, 2 * HOUR);
    expect(sb.tb(['list']).stdout).toMatch(/could not be kept \(end never heard/);
    const d = sb.json(['doctor']);
    expect(d.turns.open).toBe(0);
    expect(d.captures.open).toBe(0);
    expect(d.unkept.count).toBe(3);

    const sb2 = sandbox({ git: true });
    leftMidway(sb2);
    age(sb2, 2 * HOUR);
    hookOk(sb2, event(sb2, 'UserPromptSubmit', { prompt: 'go on' }));
    const d2 = sb2.json(['doctor']);
    expect(d2.turns).toEqual({ total: 2, open: 1 }); // the new prompt's turn
    expect(d2.captures.open).toBe(0);
    expect(d2.unkept).toMatchObject({ count: 3, causes: ['end-lost'] });
    expect(sb2.json(['doctor']).unkept.count).toBe(3);
  });

  it('a tool call and a turn younger than an hour are left open: their ends still pair and record as usual', () => {
    const sb = sandbox({ git: true });
    leftMidway(sb);
    age(sb, 10 * 60 * 1000);
    hookOk(sb, event(sb, 'SessionStart', { source: 'startup' }, 'sess-2'));
    expect(sb.json(['doctor']).captures.open).toBe(2);
    hookOk(sb, event(sb, 'PostToolUse', { tool_name: 'Write', tool_input: { file_path: sb.abs('a.txt'), content: 'after\n' }, tool_use_id: 'toolu_write' }));
    hookOk(sb, event(sb, 'PostToolUse', { tool_name: 'Bash', tool_input: { command: 'echo made > b.txt' }, tool_use_id: 'toolu_bash' }));
    hookOk(sb, event(sb, 'Stop'));
    const sets = setsOf(sb.json(['list']));
    for (const s of sets) for (const f of s.files) expect(f.gap ?? null, `${s.id} ${f.path}`).toBeNull();
    expect(sb.json(['doctor']).unkept).toBeNull();
    expect(sb.tb(['undo', '--turn', 't1']).code).toBe(0);
    expect(sb.read('a.txt').toString()).toBe('before\n');
    expect(fs.existsSync(sb.abs('b.txt'))).toBe(false);
  });

  it("a script's turn (no session) is left open however long: its script ends it", () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'x\n');
    expect(sb.tb(['turn', 'begin']).code).toBe(0);
    age(sb, 2 * HOUR);
    expect(sb.json(['doctor']).turns.open).toBe(1);
    expect(sb.tb(['turn', 'end']).code).toBe(0);
    expect(sb.json(['doctor']).unkept).toBeNull();
  });
});
