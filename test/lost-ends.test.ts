// A journal left mid-way: tool calls whose PostToolUse never came (the hook process killed, the
// event lost) stay pending in the journal. An hour later, the next session's start, a new prompt,
// `list` or doctor closes them: what they left is recorded, named as capture gaps (never taken
// back as the agent's), and listed as changes that could not be kept; their turn, as quiet, is
// closed at its last event (test/lost-turn.test.ts).
// The hour is made by moving the journal's own times back, in the real journal file.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hookLog, sandbox, setsOf, type Sandbox } from './support/takeback.js';
import { ageJournal, HOUR, hookEvent, hookOk } from './support/hook-events.js';

/** A session that began a turn, a Write and a Bash call whose ends never came, and no Stop. */
function leftMidway(sb: Sandbox): void {
  sb.write('a.txt', 'before\n');
  hookOk(sb, hookEvent(sb, 'SessionStart', { source: 'startup' }));
  hookOk(sb, hookEvent(sb, 'UserPromptSubmit', { prompt: 'edit a, make b' }));
  hookOk(sb, hookEvent(sb, 'PreToolUse', { tool_name: 'Write', tool_input: { file_path: sb.abs('a.txt'), content: 'after\n' }, tool_use_id: 'toolu_write' }));
  sb.write('a.txt', 'after\n');
  hookOk(sb, hookEvent(sb, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'echo made > b.txt' }, tool_use_id: 'toolu_bash' }));
  sb.sh('echo made > b.txt');
  // The hook processes of both PostToolUse events and of the Stop were killed: nothing came.
}

describe('a journal left mid-way', () => {
  it('an hour later, the next session closes both tool calls: recorded, named as gaps (end never heard), said by list and doctor', () => {
    const sb = sandbox({ git: true, env: { TAKEBACK_LOG_LEVEL: 'debug' } });
    leftMidway(sb);
    ageJournal(sb, 2 * HOUR);
    // What the person did since may be taken for the Bash call's: named as a gap, never undone as its.
    sb.write('c.txt', 'the person\n');

    hookOk(sb, hookEvent(sb, 'SessionStart', { source: 'startup' }, 'sess-2'));
    expect(hookLog(sb)).toMatch(/closed tool calls left open \(end never heard\): toolu_write toolu_bash/);

    const list = sb.json(['list']);
    const sets = setsOf(list);
    const byCall = (id: string) => sets.find((s: any) => s.source.toolCallId === id);
    expect(byCall('toolu_write').files.map((f: any) => [f.path, f.status, f.gap])).toEqual([['a.txt', 'modified', 'not-kept']]);
    expect(byCall('toolu_bash').files.map((f: any) => [f.path, f.status, f.gap])).toEqual(expect.arrayContaining([['b.txt', 'created', 'not-kept']]));
    for (const s of sets) for (const f of s.files) expect(f.gap, `${s.id} ${f.path}`).toBe('not-kept');
    expect(sb.tb(['list']).stdout).toMatch(/2 changes could not be kept \(end never heard, at [^)]+\): named as capture gaps below/);

    const d = sb.json(['doctor']);
    expect(d.captures).toEqual({ open: 0, stale: 0 });
    expect(d.unkept).toMatchObject({ count: 2, causes: ['end-lost'] });
    expect(d.problems.join('\n')).toMatch(/2 changes could not be kept \(end never heard/);
    expect(d.problems.join('\n')).not.toMatch(/tool call\(s\) began over an hour ago/);
    // The turn, quiet as long, is closed at its last event (the Bash call's begin) and named by doctor.
    expect(d.problems.join('\n')).toMatch(/turn t1 .*ended without its end event/);
    expect(d.problems.join('\n')).not.toMatch(/never ended/);
    expect(list.turns.find((t: any) => t.id === 't1')).toMatchObject({ endLost: true });
    expect(list.turns.find((t: any) => t.id === 't1').end).toBeLessThan(Date.now() - HOUR);
    // Nothing was taken back: the agent's and the person's bytes are as they were.
    expect(sb.read('a.txt').toString()).toBe('after\n');
    expect(sb.read('c.txt').toString()).toBe('the person\n');
    // Taking the calls back leaves them as they are, and says so.
    expect(sb.tb(['undo', byCall('toolu_write').id]).code).toBe(6);
    expect(sb.read('a.txt').toString()).toBe('after\n');
  });

  it('list closes them too, as a new prompt does; a second look closes nothing more', () => {
    const sb = sandbox({ git: true });
    leftMidway(sb);
    ageJournal(sb, 2 * HOUR);
    expect(sb.tb(['list']).stdout).toMatch(/2 changes could not be kept \(end never heard/);
    const d = sb.json(['doctor']);
    expect(d.captures.open).toBe(0);
    expect(d.unkept.count).toBe(2);

    const sb2 = sandbox({ git: true });
    leftMidway(sb2);
    ageJournal(sb2, 2 * HOUR);
    hookOk(sb2, hookEvent(sb2, 'UserPromptSubmit', { prompt: 'go on' }));
    const d2 = sb2.json(['doctor']);
    expect(d2.captures.open).toBe(0);
    expect(d2.unkept).toMatchObject({ count: 2, causes: ['end-lost'] });
    expect(sb2.json(['doctor']).unkept.count).toBe(2);
  });

  it('a tool call younger than an hour is left open: its end still pairs and records as usual', () => {
    const sb = sandbox({ git: true });
    leftMidway(sb);
    ageJournal(sb, 10 * 60 * 1000);
    hookOk(sb, hookEvent(sb, 'SessionStart', { source: 'startup' }, 'sess-2'));
    expect(sb.json(['doctor']).captures.open).toBe(2);
    hookOk(sb, hookEvent(sb, 'PostToolUse', { tool_name: 'Write', tool_input: { file_path: sb.abs('a.txt'), content: 'after\n' }, tool_use_id: 'toolu_write' }));
    hookOk(sb, hookEvent(sb, 'PostToolUse', { tool_name: 'Bash', tool_input: { command: 'echo made > b.txt' }, tool_use_id: 'toolu_bash' }));
    hookOk(sb, hookEvent(sb, 'Stop'));
    const sets = setsOf(sb.json(['list']));
    for (const s of sets) for (const f of s.files) expect(f.gap ?? null, `${s.id} ${f.path}`).toBeNull();
    expect(sb.json(['doctor']).unkept).toBeNull();
    expect(sb.tb(['undo', '--turn', 't1']).code).toBe(0);
    expect(sb.read('a.txt').toString()).toBe('before\n');
    expect(fs.existsSync(sb.abs('b.txt'))).toBe(false);
  });
});
