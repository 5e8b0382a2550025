// `takeback init qwen-code|copilot [--user] [--remove]`: merged into the agent's own file without
// touching what is there, twice changes nothing, the command written is a working hook that
// stays quiet and exits 0 even when takeback is gone, and --remove takes out exactly what init
// added: a file init made (and the folders made for it) goes again, a file that was there comes
// back byte for byte. Qwen Code's `.qwen/settings.json` of the folder it starts in (JSON with
// comments), or `$QWEN_HOME/settings.json`; Copilot CLI's `.github/hooks/takeback.json` of the
// repository, or `$COPILOT_HOME/hooks/takeback.json`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox, type Sandbox } from './support/takeback.js';

interface Case {
  agent: 'qwen-code' | 'copilot';
  /** The project file, under the folder init ran in. */
  project: string[];
  /** The user file with the agent's home variable set, and that variable. */
  user: (sb: Sandbox) => { file: string; env: Record<string, string> };
  matcher: string;
  /** The note init prints for the project, and for --user. */
  notes: [RegExp, RegExp];
  /** A prompt event of the agent, its agent turn id aside. */
  prompt: (sb: Sandbox) => object;
}

const CASES: Case[] = [
  {
    agent: 'qwen-code',
    project: ['.qwen', 'settings.json'],
    user: (sb) => ({ file: path.join(sb.base, 'qwen-home', 'settings.json'), env: { QWEN_HOME: path.join(sb.base, 'qwen-home') } }),
    matcher: 'write_file|edit|notebook_edit|run_shell_command',
    notes: [/this very folder[^]*folderTrust/, /every folder/],
    prompt: (sb) => ({ hook_event_name: 'UserPromptSubmit', session_id: 's1', prompt_id: 's1########0', cwd: sb.ws, prompt: 'hello from init' }),
  },
  {
    agent: 'copilot',
    project: ['.github', 'hooks', 'takeback.json'],
    user: (sb) => ({ file: path.join(sb.base, 'copilot-home', 'hooks', 'takeback.json'), env: { COPILOT_HOME: path.join(sb.base, 'copilot-home') } }),
    matcher: 'Write|Edit|Bash',
    notes: [/trusted folder[^]*without a word/, /every folder/],
    prompt: (sb) => ({ hook_event_name: 'UserPromptSubmit', session_id: 's1', cwd: sb.ws, prompt: 'hello from init', timestamp: '2026-12-01T00:00:00.000Z' }),
  },
];

const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop'];

for (const c of CASES) {
  describe(`init ${c.agent}`, () => {
    it('a new project file: its hooks, a working command, a note; twice changes nothing; --remove deletes the file and the folders it made', () => {
      const sb = sandbox({ git: true });
      fs.mkdirSync(sb.abs('.github'), { recursive: true });
      fs.writeFileSync(sb.abs('.github/CODEOWNERS'), '* @me\n');
      const file = path.join(sb.ws, ...c.project);
      const r = sb.tb(['init', c.agent]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.split('\n')[0]).toBe(`added takeback hooks to ${file}`);
      expect(r.stdout).toMatch(c.notes[0]);
      const text = fs.readFileSync(file, 'utf8');
      const s = JSON.parse(text);
      expect(Object.keys(s.hooks)).toEqual(EVENTS);
      for (const e of EVENTS) {
        expect(s.hooks[e], e).toHaveLength(1);
        expect(s.hooks[e][0].matcher, e).toBe(e.includes('Tool') ? c.matcher : undefined);
        expect(s.hooks[e][0].hooks, e).toEqual([{ type: 'command', command: expect.stringMatching(new RegExp(`hook ${c.agent}\\b.* 2>/dev/null \\|\\| true$`)), timeout: 30 }]);
      }
      expect(sb.tb(['init', c.agent]).stdout).toMatch(/^nothing to change in /);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);

      const command = s.hooks.UserPromptSubmit[0].hooks[0].command;
      const h = spawnSync('sh', ['-c', command], { cwd: sb.ws, env: sb.env, input: JSON.stringify(c.prompt(sb)), encoding: 'utf8' });
      expect([h.status, h.stdout, h.stderr]).toEqual([0, '', '']);
      expect(sb.json(['list', '--agent', c.agent]).turns.map((t: any) => [t.agent, t.label])).toEqual([[c.agent, 'hello from init']]);

      expect(sb.tb(['init', c.agent, '--remove']).stdout).toBe(`removed takeback hooks from ${file}\n`);
      expect(fs.existsSync(file)).toBe(false);
      // The folders init made are gone; one that holds the user's files stays.
      expect(fs.existsSync(path.join(sb.ws, c.project[0]!))).toBe(c.agent === 'copilot');
      if (c.agent === 'copilot') expect(fs.readdirSync(sb.abs('.github'))).toEqual(['CODEOWNERS']);
      expect(sb.tb(['init', c.agent, '--remove']).stdout).toMatch(/^nothing to change in /);
    });

    it('a file that was there keeps the rest, and --remove gives back its very bytes', () => {
      const sb = sandbox({ git: true });
      const file = path.join(sb.ws, ...c.project);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const theirs = { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify-send done', timeout: 5 }] }] }, model: { name: 'mine' } };
      const original = `${JSON.stringify(theirs, null, 2)}\n`;
      fs.writeFileSync(file, original);
      expect(sb.tb(['init', c.agent]).code).toBe(0);
      const s = JSON.parse(fs.readFileSync(file, 'utf8'));
      expect(s.model).toEqual(theirs.model);
      expect(s.hooks.Stop[0]).toEqual(theirs.hooks.Stop[0]);
      expect(s.hooks.Stop).toHaveLength(2);
      expect(sb.tb(['init', c.agent, '--remove']).code).toBe(0);
      expect(fs.readFileSync(file, 'utf8')).toBe(original);
    });

    it('--user writes the user file under the agent\'s home variable, leaves the project alone, and --remove deletes it', () => {
      const sb = sandbox();
      const { file, env } = c.user(sb);
      const r = sb.tb(['init', c.agent, '--user'], { env: { ...sb.env, ...env } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(c.notes[1]);
      expect(Object.keys(JSON.parse(fs.readFileSync(file, 'utf8')).hooks)).toEqual(EVENTS);
      expect(fs.existsSync(path.join(sb.ws, c.project[0]!))).toBe(false);
      expect(sb.tb(['init', c.agent, '--user', '--remove'], { env: { ...sb.env, ...env } }).code).toBe(0);
      expect(fs.existsSync(file)).toBe(false);
    });

    it('the hook command exits 0 and says nothing when takeback is gone (the agent denies a tool on another exit with output)', () => {
      const sb = sandbox();
      expect(sb.tb(['init', c.agent, '--command', `/nonexistent/takeback hook ${c.agent}`]).code).toBe(0);
      const s = JSON.parse(fs.readFileSync(path.join(sb.ws, ...c.project), 'utf8'));
      const h = spawnSync('sh', ['-c', s.hooks.PreToolUse[0].hooks[0].command], { cwd: sb.ws, input: '{}', encoding: 'utf8' });
      expect([h.status, h.stdout, h.stderr]).toEqual([0, '', '']);
    });
  });
}

describe('init qwen-code', () => {
  it('writes the file of the folder Qwen starts in (it reads no other), comments kept', () => {
    const sb = sandbox({ git: true });
    fs.mkdirSync(sb.abs('pkg/app'), { recursive: true });
    expect(sb.tb(['init', 'qwen-code'], { cwd: sb.abs('pkg/app') }).stdout.split('\n')[0]).toBe(`added takeback hooks to ${sb.abs('pkg/app/.qwen/settings.json')}`);
    expect(fs.existsSync(sb.abs('.qwen'))).toBe(false);
    const file = sb.abs('.qwen/settings.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, '{\n  // my model\n  "model": { "name": "qwen3-coder" },\n}\n');
    expect(sb.tb(['init', 'qwen-code']).code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toContain('// my model');
    expect(fs.readFileSync(file, 'utf8')).toMatch(/hook qwen-code/);
    expect(sb.tb(['init', 'qwen-code', '--remove']).code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toContain('// my model');
    expect(fs.readFileSync(file, 'utf8')).not.toMatch(/hook qwen-code/);
  });

  it('--remove deletes the file init made also after Qwen has added its "$version" to it, and the folder made for it', () => {
    const sb = sandbox({ git: true });
    const file = sb.abs('.qwen/settings.json');
    expect(sb.tb(['init', 'qwen-code']).code).toBe(0);
    // What Qwen Code 0.24 does to a settings file it loads (seen in qwen-e2e).
    const withVersion = (text: string) => `${JSON.stringify({ ...JSON.parse(text), $version: 4 }, null, 2)}\n`;
    fs.writeFileSync(file, withVersion(fs.readFileSync(file, 'utf8')));
    expect(sb.tb(['init', 'qwen-code', '--remove']).stdout).toBe(`removed takeback hooks from ${file}\n`);
    expect(sb.exists('.qwen')).toBe(false);
    // Anything else in the file is the user's: the file stays, "$version" and all.
    expect(sb.tb(['init', 'qwen-code']).code).toBe(0);
    fs.writeFileSync(file, withVersion(fs.readFileSync(file, 'utf8')).replace('{\n', '{\n  "model": { "name": "qwen3-coder" },\n'));
    expect(sb.tb(['init', 'qwen-code', '--remove']).code).toBe(0);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ model: { name: 'qwen3-coder' }, $version: 4 });
  });
});
