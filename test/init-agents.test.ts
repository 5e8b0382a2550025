// `takeback init codex|gemini [--user] [--remove]`: the same rules as for Claude Code (merge,
// never clobber; idempotent; --remove takes out exactly what it added), each in its agent's own
// file and format: Codex's `.codex/hooks.json` or `$CODEX_HOME/hooks.json` (timeouts in whole
// seconds), Gemini CLI's `.gemini/settings.json` or `~/.gemini/settings.json` (named hooks,
// timeouts in ms, a command that stays quiet and exits 0 even when takeback is gone).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox, type Sandbox } from './support/takeback.js';

interface Case {
  agent: 'codex' | 'gemini';
  project: string[];
  user: (sb: Sandbox) => string;
  events: Record<string, string | undefined>;
  /** The user's own content, kept as it is. */
  theirs: object;
  entry: (command: string) => object;
  prompt: (sb: Sandbox) => object;
}

const CASES: Case[] = [
  {
    agent: 'codex',
    project: ['.codex', 'hooks.json'],
    user: (sb) => path.join(sb.base, 'codex-home', 'hooks.json'),
    events: { SessionStart: undefined, UserPromptSubmit: undefined, PreToolUse: 'Bash|apply_patch', PostToolUse: 'Bash|apply_patch', Stop: undefined },
    theirs: {
      description: 'my hooks',
      hooks: { PreToolUse: [{ matcher: '^Bash$', hooks: [{ type: 'command', command: 'echo pre', timeout: 5 }] }] },
    },
    entry: (command) => ({ type: 'command', command, timeout: 30 }),
    prompt: (sb) => ({ hook_event_name: 'UserPromptSubmit', session_id: 's1', turn_id: 'turn-1', cwd: sb.ws, prompt: 'hello from init' }),
  },
  {
    agent: 'gemini',
    project: ['.gemini', 'settings.json'],
    user: (sb) => path.join(sb.userHome, '.gemini', 'settings.json'),
    events: {
      SessionStart: undefined,
      BeforeAgent: undefined,
      BeforeTool: 'write_file|replace|run_shell_command',
      AfterTool: 'write_file|replace|run_shell_command',
      AfterAgent: undefined,
    },
    theirs: {
      security: { auth: { selectedType: 'gemini-api-key' } },
      hooks: { AfterAgent: [{ hooks: [{ name: 'notify', type: 'command', command: 'notify-send done', timeout: 5000 }] }] },
    },
    entry: (command) => ({ name: 'takeback', type: 'command', command: `${command} 2>/dev/null || true`, timeout: 30000 }),
    prompt: (sb) => ({ hook_event_name: 'BeforeAgent', session_id: 's1', cwd: sb.ws, prompt: 'hello from init', timestamp: '2026-11-30T00:00:00Z' }),
  },
];

/** The hook groups takeback added, by event. */
function ours(settings: any, agent: string): Record<string, any[]> {
  const out: Record<string, any[]> = {};
  for (const [event, groups] of Object.entries<any[]>(settings.hooks ?? {})) {
    for (const g of groups) if (g.hooks.some((h: any) => String(h.command).includes(`hook ${agent}`))) (out[event] ??= []).push(g);
  }
  return out;
}

for (const c of CASES) {
  describe(`init ${c.agent}`, () => {
    it('writes the project file; twice changes nothing; the command is a working hook; --remove gives back the same bytes', () => {
      const sb = sandbox({ git: true });
      const file = path.join(sb.ws, ...c.project);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const original = `${JSON.stringify(c.theirs, null, 2)}\n`;
      fs.writeFileSync(file, original);
      fs.mkdirSync(sb.abs('sub'));
      const r = sb.tb(['init', c.agent], { cwd: sb.abs('sub') });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`added takeback hooks to ${file}\n`);
      const text = fs.readFileSync(file, 'utf8');
      const s = JSON.parse(text);
      const added = ours(s, c.agent);
      expect(Object.keys(added).sort()).toEqual(Object.keys(c.events).sort());
      for (const [event, matcher] of Object.entries(c.events)) {
        expect(added[event], event).toHaveLength(1);
        expect(added[event]![0].matcher).toBe(matcher);
        const command = added[event]![0].hooks[0].command as string;
        expect(added[event]![0].hooks).toEqual([c.entry(command.replace(' 2>/dev/null || true', ''))]);
      }
      // Theirs is still there, unchanged.
      for (const [k, v] of Object.entries(c.theirs)) if (k !== 'hooks') expect(s[k]).toEqual(v);
      for (const [event, groups] of Object.entries<any[]>((c.theirs as any).hooks)) expect(s.hooks[event][0]).toEqual(groups[0]);

      expect(sb.tb(['init', c.agent]).stdout).toMatch(/^nothing to change in /);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);

      // Run the command as the agent does (a shell, the event on stdin).
      const command = Object.values(added)[0]![0].hooks[0].command;
      const h = spawnSync('sh', ['-c', command], { cwd: sb.ws, env: sb.env, input: JSON.stringify(c.prompt(sb)), encoding: 'utf8' });
      expect([h.status, h.stdout]).toEqual([0, '']);
      expect(sb.json(['list']).turns.map((t: any) => [t.agent, t.label])).toEqual([[c.agent, 'hello from init']]);

      expect(sb.tb(['init', c.agent, '--remove']).stdout).toMatch(/^removed takeback hooks from /);
      expect(fs.readFileSync(file, 'utf8')).toBe(original);
      // Another agent's init leaves this file alone.
      expect(sb.tb(['init', c.agent === 'codex' ? 'gemini' : 'codex']).code).toBe(0);
      expect(fs.readFileSync(file, 'utf8')).toBe(original);
    });

    it('--user writes the user file and leaves the project alone', () => {
      const sb = sandbox({ env: { CODEX_HOME: '' } });
      const env = { ...sb.env, CODEX_HOME: path.join(sb.base, 'codex-home') };
      const file = c.user(sb);
      expect(sb.tb(['init', c.agent, '--user'], { env }).code).toBe(0);
      expect(Object.keys(ours(JSON.parse(fs.readFileSync(file, 'utf8')), c.agent))).toHaveLength(Object.keys(c.events).length);
      expect(fs.existsSync(path.join(sb.ws, c.project[0]!))).toBe(false);
      const text = fs.readFileSync(file, 'utf8');
      expect(sb.tb(['init', c.agent, '--user'], { env }).stdout).toMatch(/^nothing to change/);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);
      expect(sb.tb(['init', c.agent, '--user', '--remove'], { env }).code).toBe(0);
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({});
    });
  });
}

describe('init gemini', () => {
  it('the hook command exits 0 and says nothing even when takeback is gone (Gemini blocks a tool on exit >= 2 with output)', () => {
    const sb = sandbox();
    expect(sb.tb(['init', 'gemini', '--command', '/nonexistent/takeback hook gemini']).code).toBe(0);
    const s = JSON.parse(fs.readFileSync(path.join(sb.ws, '.gemini', 'settings.json'), 'utf8'));
    const command = ours(s, 'gemini').BeforeTool![0].hooks[0].command;
    const h = spawnSync('sh', ['-c', command], { cwd: sb.ws, input: '{}', encoding: 'utf8' });
    expect([h.status, h.stdout, h.stderr]).toEqual([0, '', '']);
  });
});
