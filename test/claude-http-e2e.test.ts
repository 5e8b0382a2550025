// The real Claude Code with takeback's http hooks (`takeback init claude-code --http`): its
// events are POSTed to the capture daemon, with a command hook beside each that runs the hook
// in-process whenever no daemon is ready. Session one starts with no daemon (its SessionStart
// hook, in-process, starts one); session two (--continue) finds it ready, and every event is
// handled by the daemon alone: its SessionStart (which Claude Code sends to command hooks only)
// handed over by the command hook through the daemon's socket, the others over http. Every tool call is recorded once, and undo/redo of a turn gives back the bytes.
//
// Needs the CLI: scripts/install-claude.sh (or CLAUDE=/path/to/claude). Skips with a message
// if none is found, and FAILS instead when TAKEBACK_REQUIRE_CLAUDE=1 (CI).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { CLAUDE_BIN, describeRun, runClaude } from './support/claude.js';
import type { ClaudeResult } from './support/claude.js';
import { failureLines } from './support/daemon.js';
import { startModelStub } from './support/model-stub.js';
import type { ModelStub, Step } from './support/model-stub.js';
import { BIN, sleep } from './support/takeback.js';
import { git, mkTemp, rmAll } from './support/workspace.js';
import { alive, freePort } from './support/procs.js';

const { bin: CLAUDE, version: VERSION, skipReason: SKIP_REASON } = gateAgent(CLAUDE_BIN, 'takeback http hooks with the real Claude Code', '[claude-http-e2e]');

describe.skipIf(!CLAUDE)(CLAUDE ? `http hooks with the real Claude Code ${VERSION}` : `http hooks with the real Claude Code — ${SKIP_REASON}`, () => {
  let work: string;
  let home: string;
  let tbHome: string;
  let stub: ModelStub;
  let port: number;
  let run1: ClaudeResult;
  let run2: ClaudeResult;
  let daemon = 0;
  let daemonAtRun2 = 0;
  const before: Record<string, string> = {};
  let afterTurn1: Record<string, string | null> = {};
  let afterTurn2: Record<string, string | null> = {};
  const FILES = ['notes.md', 'f.txt', 'gone.txt', 'new/made.txt'];
  const snap = () => Object.fromEntries(FILES.map((f) => [f, fs.existsSync(path.join(work, f)) ? fs.readFileSync(path.join(work, f), 'utf8') : null]));
  const tb = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: work, env: { ...process.env, TAKEBACK_HOME: tbHome, NO_COLOR: '1' }, encoding: 'utf8' });
  const log = () => (fs.existsSync(path.join(tbHome, 'logs', 'hook.log')) ? fs.readFileSync(path.join(tbHome, 'logs', 'hook.log'), 'utf8') : '');
  const handled = () => [...log().matchAll(/\[(\d+)\] claude-code (\w+):/g)].map((m) => ({ event: m[2]!, pid: Number(m[1]) }));
  const readyFile = () => path.join(tbHome, 'run', `http-${port}.pid`);

  beforeAll(async () => {
    work = await mkTemp('takeback-claude-http-work-');
    home = await mkTemp('takeback-claude-http-home-');
    tbHome = path.join(await mkTemp('takeback-claude-http-tb-'), 'home');
    fs.writeFileSync(path.join(work, 'notes.md'), '# Notes\r\n\r\nThe quick brown fox.\r\n');
    fs.writeFileSync(path.join(work, 'f.txt'), 'a cat sat\n');
    fs.writeFileSync(path.join(work, 'gone.txt'), 'to be removed\n');
    git(work, 'init', '-q');
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'start');
    Object.assign(before, snap());
    port = await freePort();
    const init = tb('init', 'claude-code', '--http', '--port', String(port));
    if (init.status !== 0) throw new Error(`init --http failed: ${init.stdout}${init.stderr}`);
    const p = (f: string) => path.join(work, f);
    const script: Step[] = [
      [{ type: 'tool_use', name: 'Write', input: { file_path: p('new/made.txt'), content: 'made by the agent\n' } }],
      [{ type: 'tool_use', name: 'Bash', input: { command: "sed -i 's/cat/dog/' f.txt", description: 'Edit f.txt' } }],
      [{ type: 'text', text: 'Turn one is done.' }],
      [{ type: 'tool_use', name: 'Read', input: { file_path: p('notes.md') } }],
      [{ type: 'tool_use', name: 'Edit', input: { file_path: p('notes.md'), old_string: 'quick brown', new_string: 'slow red' } }],
      [{ type: 'tool_use', name: 'Bash', input: { command: 'rm gone.txt', description: 'Remove gone.txt' } }],
      [{ type: 'text', text: 'Turn two is done.' }],
    ];
    stub = await startModelStub(script);
    const env = { TAKEBACK_HOME: tbHome, TAKEBACK_LOG_LEVEL: 'debug', TAKEBACK_HOOK_DAEMON_IDLE_MS: '120000' };
    run1 = await runClaude({ cwd: work, home, baseUrl: stub.url, prompt: 'Turn one.', env, outputFormat: 'json', timeoutMs: 120_000 });
    afterTurn1 = snap();
    // The daemon run 1's SessionStart started is ready by now (or within a few seconds).
    const end = Date.now() + 20_000;
    const readyPid = () => {
      try {
        return Number(fs.readFileSync(readyFile(), 'utf8').split(' ')[0]);
      } catch {
        return 0;
      }
    };
    while (!(readyPid() && alive(readyPid())) && Date.now() < end) await sleep(100);
    daemonAtRun2 = readyPid();
    run2 = await runClaude({ cwd: work, home, baseUrl: stub.url, prompt: 'Turn two.', env, continueSession: true, timeoutMs: 120_000 });
    afterTurn2 = snap();
    daemon = readyPid();
  }, 300_000);

  afterAll(async () => {
    await stub?.close();
    for (const pid of new Set([daemon, daemonAtRun2, ...handled().map((h) => h.pid)])) if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    if (!process.env.KEEP_E2E) rmAll(work, home, path.dirname(tbHome));
  });

  it('both sessions ran their tools', () => {
    expect(run1.code, describeRun(run1)).toBe(0);
    expect(run2.code, describeRun(run2)).toBe(0);
    expect(afterTurn2).toEqual({ 'notes.md': '# Notes\r\n\r\nThe slow red fox.\r\n', 'f.txt': 'a dog sat\n', 'gone.txt': null, 'new/made.txt': 'made by the agent\n' });
  });

  it('session two: every event went to the daemon alone (SessionStart through its socket)', () => {
    expect(daemonAtRun2).toBeGreaterThan(0);
    expect(daemon).toBe(daemonAtRun2);
    const h = handled();
    const second = h.slice(h.map((e) => e.event).lastIndexOf('SessionStart'));
    expect(second.map((e) => e.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PreToolUse', 'PostToolUse', 'Stop']);
    expect(new Set(second.map((e) => e.pid))).toEqual(new Set([daemon]));
    expect(failureLines(log())).toEqual([]);
  });

  it('records every tool call once, in its turn', () => {
    const list = JSON.parse(tb('list', '--json').stdout);
    const sets = [...list.sets].reverse().map((s: any) => [s.turn, s.source.tool, Object.fromEntries(s.files.map((f: any) => [f.path, f.status]))]);
    expect(sets).toEqual([
      ['t1', 'Write', { new: 'created', 'new/made.txt': 'created' }],
      ['t1', 'Bash', { 'f.txt': 'modified' }],
      ['t2', 'Edit', { 'notes.md': 'modified' }],
      ['t2', 'Bash', { 'gone.txt': 'deleted' }],
    ]);
    expect(list.turns.map((t: any) => [t.id, t.label, t.end !== null])).toEqual([
      ['t2', 'Turn two.', true],
      ['t1', 'Turn one.', true],
    ]);
  });

  it('undo and redo of turn two give back the bytes', () => {
    expect(tb('undo', '--turn', 't2').status).toBe(0);
    expect(snap()).toEqual(afterTurn1);
    expect(tb('redo', '--turn', 't2').status).toBe(0);
    expect(snap()).toEqual(afterTurn2);
    expect(tb('undo', '--turn', 't1', '--force').status).toBe(0);
    expect(snap()['f.txt']).toBe(before['f.txt']);
  });
});
