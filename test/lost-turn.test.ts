// A turn whose session never comes back: a stand-in Claude Code (a real process running the real
// hooks: a session, a prompt, a Write) is killed before it can send Stop. An hour later the next
// start (the same session resumed, or another session) closes the turn at its last event, named
// by list and doctor as ended without its end event; what the person changed after the agent
// died never joins it. The hour is made by moving the journal's own times back, in the real
// journal file.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, hookLog, sandbox, setsOf, type Sandbox } from './support/takeback.js';
import { ageJournal, HOUR, hookEvent, hookOk } from './support/hook-events.js';

/**
 * A stand-in agent in a process of its own: it runs the real hook for SessionStart, a prompt,
 * and a Write of a.txt (PreToolUse, the write, PostToolUse), says so, and waits there as an agent
 * thinking would. Resolves with the process once it has said so (within 60 s, generous on a
 * loaded machine); it is killed when the test ends at the latest.
 */
async function agentAtWork(sb: Sandbox): Promise<ChildProcess> {
  const events = [
    hookEvent(sb, 'SessionStart', { source: 'startup' }),
    hookEvent(sb, 'UserPromptSubmit', { prompt: 'rewrite a' }),
    hookEvent(sb, 'PreToolUse', { tool_name: 'Write', tool_input: { file_path: sb.abs('a.txt'), content: 'agent\n' }, tool_use_id: 'toolu_w' }),
    hookEvent(sb, 'PostToolUse', { tool_name: 'Write', tool_input: { file_path: sb.abs('a.txt'), content: 'agent\n' }, tool_use_id: 'toolu_w' }),
  ];
  events.forEach((e, i) => fs.writeFileSync(path.join(sb.base, `ev${i}.json`), JSON.stringify(e)));
  const hook = (i: number) => `"${process.execPath}" "${BIN}" hook claude-code < "${sb.base}/ev${i}.json"`;
  const script = [hook(0), hook(1), hook(2), `printf 'agent\\n' > a.txt`, hook(3), 'echo at-work', 'exec sleep 600'].join(' && ');
  const agent = spawn('sh', ['-c', script], { cwd: sb.ws, env: sb.env, stdio: ['ignore', 'pipe', 'inherit'] });
  onTestFinished(() => {
    agent.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the stand-in agent said nothing within 60 s')), 60_000);
    agent.stdout!.setEncoding('utf8').on('data', (d: string) => {
      if (d.includes('at-work')) {
        clearTimeout(timer);
        resolve();
      }
    });
    agent.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the stand-in agent left first (exit ${code})`));
    });
  });
  return agent;
}

/** Kills `agent` with SIGKILL (no Stop hook, nothing said) and waits until it is gone. */
async function kill(agent: ChildProcess): Promise<void> {
  const gone = new Promise<void>((resolve) => agent.once('exit', () => resolve()));
  agent.kill('SIGKILL');
  await gone;
}

describe('a turn whose session never comes back', () => {
  it('the agent killed: an hour later another session closes its turn at its last event, named by list and doctor; the person’s later edit is in no turn', { timeout: 180_000 }, async () => {
    const sb = sandbox({ git: true, env: { TAKEBACK_LOG_LEVEL: 'debug' } });
    sb.write('a.txt', 'before\n');
    sb.write('b.txt', 'b\n');
    await kill(await agentAtWork(sb));
    // After the agent died, the person edits a file the agent never touched.
    sb.write('b.txt', 'the person\n');
    ageJournal(sb, 2 * HOUR);

    hookOk(sb, hookEvent(sb, 'SessionStart', { source: 'startup' }, 'sess-2'));
    expect(hookLog(sb)).toMatch(/closed turns left open at their last event \(end never heard\): t1/);

    const list = sb.json(['list']);
    // Nothing of the person's joined the turn: its only change is the agent's Write, its last event.
    const ofT1 = setsOf(list).filter((s: any) => s.turn === 't1');
    expect(list.turns.find((t: any) => t.id === 't1')).toMatchObject({ endLost: true, end: ofT1[0].time });
    expect(ofT1.flatMap((s: any) => s.files.map((f: any) => f.path))).toEqual(['a.txt']);
    expect(sb.tb(['list']).stdout).toMatch(/Turn t1 · "rewrite a" · claude-code.* · ended without its end event/);

    const d = sb.json(['doctor']);
    expect(d.turns).toMatchObject({ total: 1, open: 0, endLost: 1 });
    expect(d.problems.join('\n')).toMatch(/turn t1 \(claude-code, 'rewrite a'\) ended without its end event \(the agent killed/);
    expect(d.problems.join('\n')).not.toMatch(/never ended/);
    // Nothing was recorded as not kept: the turn's own change is kept, and its undo is whole.
    expect(d.unkept).toBeNull();
    expect(sb.tb(['undo', '--turn', 't1']).code).toBe(0);
    expect(sb.read('a.txt').toString()).toBe('before\n');
    expect(sb.read('b.txt').toString()).toBe('the person\n');
  });

  it('the same session resumed an hour later: its old turn is closed at its last event before the new one begins, the person’s edit in neither', { timeout: 180_000 }, async () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'before\n');
    sb.write('b.txt', 'b\n');
    await kill(await agentAtWork(sb));
    sb.write('b.txt', 'the person\n');
    ageJournal(sb, 2 * HOUR);

    hookOk(sb, hookEvent(sb, 'SessionStart', { source: 'resume' }));
    hookOk(sb, hookEvent(sb, 'UserPromptSubmit', { prompt: 'go on' }));
    const list = sb.json(['list']);
    expect(list.turns.map((t: any) => [t.id, t.endLost, t.end === null])).toEqual([
      ['t2', false, true],
      ['t1', true, false],
    ]);
    for (const s of setsOf(list)) for (const f of s.files) expect([s.turn, f.path]).toEqual(['t1', 'a.txt']);
  });

  it('a turn heard of within the hour, and a script’s turn however old, stay open', { timeout: 180_000 }, async () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'before\n');
    await kill(await agentAtWork(sb));
    ageJournal(sb, 10 * 60 * 1000);
    // Ten minutes quiet: its end may still come.
    hookOk(sb, hookEvent(sb, 'SessionStart', { source: 'startup' }, 'sess-2'));
    expect(sb.json(['list']).turns.find((t: any) => t.id === 't1')).toMatchObject({ end: null, endLost: false });
    expect(sb.tb(['turn', 'begin', '--id', 'script']).code).toBe(0);
    ageJournal(sb, 2 * HOUR);
    hookOk(sb, hookEvent(sb, 'SessionStart', { source: 'startup' }, 'sess-3'));
    const turns = sb.json(['list', '--all']).turns;
    expect(turns.find((t: any) => t.id === 't1').endLost).toBe(true);
    // A turn of no session is ended by its script, however long it takes.
    expect(turns.find((t: any) => t.id === 'script')).toMatchObject({ end: null, endLost: false });
  });
});
