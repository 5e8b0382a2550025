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
      // Codex reads the project's .codex from the git top down: init from a subfolder writes there.
      // (Gemini reads the folder it starts in only: see below.)
      const r = sb.tb(['init', c.agent], { cwd: c.agent === 'codex' ? sb.abs('sub') : sb.ws });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.split('\n')[0]).toBe(`added takeback hooks to ${file}`);
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
      const made = sb.tb(['init', c.agent, '--user'], { env });
      expect(made.code).toBe(0);
      // The note after a user-wide init speaks of trust, not of this folder.
      expect(made.stdout).toMatch(/trust/);
      expect(made.stdout).not.toMatch(/this very folder|run `codex` here/);
      expect(Object.keys(ours(JSON.parse(fs.readFileSync(file, 'utf8')), c.agent))).toHaveLength(Object.keys(c.events).length);
      expect(fs.existsSync(path.join(sb.ws, c.project[0]!))).toBe(false);
      const text = fs.readFileSync(file, 'utf8');
      expect(sb.tb(['init', c.agent, '--user'], { env }).stdout).toMatch(/^nothing to change/);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);
      expect(sb.tb(['init', c.agent, '--user', '--remove'], { env }).code).toBe(0);
      expect(fs.existsSync(file)).toBe(false); // init made it: it goes when it is left empty
    });
  });
}

describe('init: what the agents themselves accept', () => {
  it('gemini: the file of the folder it runs in (Gemini reads no other), comments kept, $GEMINI_CLI_HOME for --user, a note on trust', () => {
    const sb = sandbox({ git: true });
    fs.mkdirSync(sb.abs('pkg/app'), { recursive: true });
    const r = sb.tb(['init', 'gemini'], { cwd: sb.abs('pkg/app') });
    expect(r.stdout).toBe(`added takeback hooks to ${sb.abs('pkg/app/.gemini/settings.json')}\n${r.stdout.split('\n')[1]}\n`);
    expect(r.stdout).toMatch(/trusted/);
    expect(fs.existsSync(sb.abs('.gemini'))).toBe(false);

    // JSON with comments and a trailing comma, as Gemini reads it: kept, only "hooks" written.
    const file = sb.abs('.gemini/settings.json');
    fs.mkdirSync(path.dirname(file));
    const original = '{\n  // my theme\n  "theme": "Dracula", /* inline */\n  "general": { "vimMode": true, },\n}\n';
    fs.writeFileSync(file, original);
    expect(sb.tb(['init', 'gemini']).code).toBe(0);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toContain('// my theme');
    expect(text).toContain('/* inline */');
    expect(text).toMatch(/hook gemini/);
    expect(sb.tb(['init', 'gemini']).stdout).toMatch(/^nothing to change/);
    expect(sb.tb(['init', 'gemini', '--remove']).code).toBe(0);
    const back = fs.readFileSync(file, 'utf8');
    expect(back).toContain('// my theme');
    expect(back).not.toMatch(/hook gemini/);

    const cliHome = path.join(sb.base, 'gemini-cli-home');
    expect(sb.tb(['init', 'gemini', '--user'], { env: { ...sb.env, GEMINI_CLI_HOME: cliHome } }).code).toBe(0);
    expect(fs.readFileSync(path.join(cliHome, '.gemini', 'settings.json'), 'utf8')).toMatch(/hook gemini/);
  });

  it('codex: comments are refused (Codex reads plain JSON); the trust note is said', () => {
    const sb = sandbox();
    const r = sb.tb(['init', 'codex']);
    expect(r.stdout).toMatch(/trust/);
    expect(r.stdout).toMatch(/\/hooks/);
    fs.writeFileSync(sb.abs('.codex/hooks.json'), '{ // no\n}\n');
    expect(sb.tb(['init', 'codex']).code).toBe(2);
  });

  it('a hook command the user edited around ours is kept; hooks of a shape the agent cannot read are refused, untouched', () => {
    const sb = sandbox();
    expect(sb.tb(['init', 'codex']).code).toBe(0);
    const file = sb.abs('.codex/hooks.json');
    const s = JSON.parse(fs.readFileSync(file, 'utf8'));
    const stop = s.hooks.Stop[0].hooks[0];
    stop.command = `TAKEBACK_HOME=/srv/tb ${stop.command}`;
    fs.writeFileSync(file, `${JSON.stringify(s, null, 2)}\n`);
    const edited = fs.readFileSync(file, 'utf8');
    expect(sb.tb(['init', 'codex']).stdout).toMatch(/^nothing to change/);
    expect(fs.readFileSync(file, 'utf8')).toBe(edited);
    for (const bad of ['{"hooks": []}', '{"hooks": "abc"}', '{"hooks": {"Stop": {}}}', '{"hooks": {"Stop": [null]}}', '{"hooks": {"Stop": [{"hooks": 3}]}}']) {
      fs.writeFileSync(file, bad);
      const r = sb.tb(['init', 'codex']);
      expect([r.code, r.stderr.includes('nothing was changed')], bad).toEqual([2, true]);
      expect(fs.readFileSync(file, 'utf8')).toBe(bad);
    }
  });
});

describe('list --agent', () => {
  it('an agent with no changes here: says so, and names the agents that have some', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    sb.tb(['run', '--', 'sh', '-c', 'echo b > a.txt']);
    const r = sb.tb(['list', '--agent', 'Gemini']);
    expect([r.code, r.stdout]).toEqual([0, 'No changes by Gemini in this workspace (agents with changes here: cli).\n']);
  });
});

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
