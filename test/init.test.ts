// `takeback init claude-code [--user] [--shared] [--remove]`: merges takeback's hooks into Claude
// Code's settings for one person (`--shared`: the team's) without touching anything else, changes
// nothing the second time, takes out exactly what it added, and refuses a file that is not JSON.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox, type Sandbox } from './support/takeback.js';

const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'StopFailure'];
const TOOL_MATCHER = 'Write|Edit|MultiEdit|NotebookEdit|Bash';

/** Where plain `init claude-code` writes: Claude Code's settings for one person. */
const settingsOf = (sb: Sandbox) => path.join(sb.ws, '.claude', 'settings.local.json');
/** Where `init claude-code --shared` writes: the settings the team commits. */
const sharedOf = (sb: Sandbox) => path.join(sb.ws, '.claude', 'settings.json');
const NOTE = "in Claude Code's settings for you alone (kept out of git); `--shared` writes the team's .claude/settings.json instead\n";

/** The user's own settings: other hooks (some on the same events), permissions, a model. */
const USER_SETTINGS = {
  model: 'opus',
  permissions: { allow: ['Bash(npm test:*)'], deny: [] },
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo pre-bash', timeout: 5 }] }],
    Stop: [{ hooks: [{ type: 'command', command: '/usr/local/bin/notify-done' }] }],
    Notification: [{ hooks: [{ type: 'command', command: 'notify-send claude' }] }],
  },
  env: { FOO: 'bar' },
};

/** The hook entries takeback added to `settings`, by event. */
function ours(settings: any): Record<string, any[]> {
  const out: Record<string, any[]> = {};
  for (const [event, groups] of Object.entries<any[]>(settings.hooks ?? {})) {
    for (const g of groups) if (g.hooks.some((h: any) => String(h.command).includes('hook claude-code'))) (out[event] ??= []).push(g);
  }
  return out;
}

describe('init claude-code', () => {
  it('adds the hooks to a new project settings file; twice changes nothing; the hook command works; --remove takes them out', () => {
    const sb = sandbox({ git: true });
    fs.mkdirSync(sb.abs('sub/dir'), { recursive: true });
    // Run from a subfolder: the settings go to the git root's .claude/.
    const r = sb.tb(['init', 'claude-code'], { cwd: sb.abs('sub/dir') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`added takeback hooks to ${settingsOf(sb)}\n${NOTE}`);
    // The personal file stays out of git (the repository's own exclude list, never committed).
    expect(sb.sh('git status --porcelain --untracked-files=all')).not.toContain('.claude');
    const text = fs.readFileSync(settingsOf(sb), 'utf8');
    const s = JSON.parse(text);
    expect(Object.keys(s)).toEqual(['hooks']);
    expect(Object.keys(s.hooks)).toEqual(EVENTS);
    const added = ours(s);
    for (const e of EVENTS) {
      expect(added[e], e).toHaveLength(1);
      const g = added[e]![0];
      expect(g.matcher).toBe(['PreToolUse', 'PostToolUse', 'PostToolUseFailure'].includes(e) ? TOOL_MATCHER : undefined);
      expect(g.hooks).toEqual([{ type: 'command', command: expect.stringMatching(/hook claude-code; fi$/), timeout: 30 }]);
    }

    const again = sb.tb(['init', 'claude-code']);
    expect(again.stdout).toMatch(/^nothing to change in /);
    expect(fs.readFileSync(settingsOf(sb), 'utf8')).toBe(text);

    // The command it wrote is a working hook: run it as Claude Code would (sh -c, event on stdin).
    const command = added.SessionStart![0].hooks[0].command;
    const ev = { hook_event_name: 'UserPromptSubmit', session_id: 's1', cwd: sb.ws, prompt: 'hello from init' };
    const h = spawnSync('sh', ['-c', command], { cwd: sb.ws, env: sb.env, input: JSON.stringify(ev), encoding: 'utf8' });
    expect([h.status, h.stdout]).toEqual([0, '']);
    expect(sb.json(['list']).turns.map((t: any) => t.label)).toEqual(['hello from init']);

    const rm = sb.tb(['init', 'claude-code', '--remove']);
    expect(rm.stdout).toBe(`removed takeback hooks from ${settingsOf(sb)}\n`);
    // What init made and nothing else: the file it made goes, with the folder, and its line in
    // the repository's exclude list.
    expect(fs.existsSync(settingsOf(sb))).toBe(false);
    expect(fs.existsSync(path.dirname(settingsOf(sb)))).toBe(false);
    expect(fs.readFileSync(sb.abs('.git/info/exclude'), 'utf8')).not.toContain('takeback');
    expect(sb.tb(['init', 'claude-code', '--remove']).stdout).toMatch(/^nothing to change/);
  });

  for (const [layout, stringify] of [
    ['two spaces', (v: unknown) => `${JSON.stringify(v, null, 2)}\n`],
    ['four spaces, no final newline', (v: unknown) => JSON.stringify(v, null, 4)],
    ['tabs', (v: unknown) => `${JSON.stringify(v, null, '\t')}\n`],
    ['one line', (v: unknown) => `${JSON.stringify(v)}\n`],
  ] as const) {
    it(`leaves other hooks and settings alone, and --remove gives back the same bytes (${layout})`, () => {
      const sb = sandbox();
      const original = stringify(USER_SETTINGS);
      fs.mkdirSync(path.dirname(settingsOf(sb)));
      fs.writeFileSync(settingsOf(sb), original);
      expect(sb.tb(['init', 'claude-code']).code).toBe(0);
      const text = fs.readFileSync(settingsOf(sb), 'utf8');
      const s = JSON.parse(text);
      // Everything of the user's is still there, first, unchanged.
      expect(s.model).toBe('opus');
      expect(s.permissions).toEqual(USER_SETTINGS.permissions);
      expect(s.env).toEqual(USER_SETTINGS.env);
      expect(s.hooks.PreToolUse[0]).toEqual(USER_SETTINGS.hooks.PreToolUse[0]);
      expect(s.hooks.Stop[0]).toEqual(USER_SETTINGS.hooks.Stop[0]);
      expect(s.hooks.Notification).toEqual(USER_SETTINGS.hooks.Notification);
      expect(Object.keys(ours(s)).sort()).toEqual([...EVENTS].sort());
      expect(s.hooks.PreToolUse).toHaveLength(2);
      // Twice: byte for byte the same.
      sb.tb(['init', 'claude-code']);
      expect(fs.readFileSync(settingsOf(sb), 'utf8')).toBe(text);
      // --remove: exactly what it added.
      expect(sb.tb(['init', 'claude-code', '--remove']).code).toBe(0);
      expect(fs.readFileSync(settingsOf(sb), 'utf8')).toBe(original);
    });
  }

  it('--user writes $HOME/.claude/settings.json and leaves the project alone', () => {
    const sb = sandbox();
    const file = path.join(sb.userHome, '.claude', 'settings.json');
    expect(sb.tb(['init', 'claude-code', '--user']).code).toBe(0);
    expect(Object.keys(ours(JSON.parse(fs.readFileSync(file, 'utf8'))))).toHaveLength(EVENTS.length);
    expect(fs.existsSync(path.join(sb.ws, '.claude'))).toBe(false);
    const text = fs.readFileSync(file, 'utf8');
    sb.tb(['init', 'claude-code', '--user']);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    sb.tb(['init', 'claude-code', '--user', '--remove']);
    expect(fs.existsSync(file)).toBe(false); // init made it: it goes when it is left empty
  });

  it('--user honours $CLAUDE_CONFIG_DIR, where Claude Code keeps the user settings then', () => {
    const sb = sandbox();
    const dir = path.join(sb.base, 'claude-config');
    expect(sb.tb(['init', 'claude-code', '--user'], { env: { ...sb.env, CLAUDE_CONFIG_DIR: dir } }).code).toBe(0);
    expect(Object.keys(ours(JSON.parse(fs.readFileSync(path.join(dir, 'settings.json'), 'utf8'))))).toHaveLength(EVENTS.length);
    expect(fs.existsSync(path.join(sb.userHome, '.claude'))).toBe(false);
  });

  it('a settings file that is not a JSON object is refused (exit 2) and left untouched', () => {
    const sb = sandbox();
    fs.mkdirSync(path.dirname(settingsOf(sb)));
    for (const bad of ['{ "model": "opus", ', '[1, 2]', '"text"', '{"hooks": {} } trailing']) {
      fs.writeFileSync(settingsOf(sb), bad);
      const old = new Date('2020-01-01T00:00:00Z');
      fs.utimesSync(settingsOf(sb), old, old);
      for (const args of [['init', 'claude-code'], ['init', 'claude-code', '--remove']]) {
        const r = sb.tb(args);
        expect(r.code, bad).toBe(2);
        expect(r.stderr).toMatch(/nothing was changed/);
        expect(fs.readFileSync(settingsOf(sb), 'utf8')).toBe(bad);
        expect(fs.statSync(settingsOf(sb)).mtime).toEqual(old);
      }
    }
    expect(fs.readdirSync(path.dirname(settingsOf(sb)))).toEqual(['settings.local.json']); // no temp files left
  });
});

describe('init claude-code --shared', () => {
  it("writes the team's settings.json and takes takeback's hooks out of the personal file; plain init moves them back; --remove takes out both files init made", () => {
    const sb = sandbox({ git: true });
    expect(sb.tb(['init', 'claude-code']).code).toBe(0);
    const personal = fs.readFileSync(settingsOf(sb), 'utf8');
    const r = sb.tb(['init', 'claude-code', '--shared']);
    expect(r.stdout).toBe(`added takeback hooks to ${sharedOf(sb)}\nremoved takeback hooks from ${settingsOf(sb)}\n`);
    expect(Object.keys(ours(JSON.parse(fs.readFileSync(sharedOf(sb), 'utf8')))).sort()).toEqual([...EVENTS].sort());
    expect(fs.existsSync(settingsOf(sb))).toBe(false); // init made it, and it is left empty: it goes
    // The shared file is the team's: git sees it.
    expect(sb.sh('git status --porcelain --untracked-files=all')).toContain('.claude/settings.json');
    expect(sb.tb(['init', 'claude-code', '--shared']).stdout).toBe(`nothing to change in ${sharedOf(sb)}\n`);
    const back = sb.tb(['init', 'claude-code']);
    expect(back.stdout).toBe(`added takeback hooks to ${settingsOf(sb)}\nremoved takeback hooks from ${sharedOf(sb)}\n${NOTE}`);
    expect(fs.readFileSync(settingsOf(sb), 'utf8')).toBe(personal);
    sb.tb(['init', 'claude-code', '--shared']);
    expect(sb.tb(['init', 'claude-code', '--remove']).code).toBe(0);
    expect([fs.existsSync(settingsOf(sb)), fs.existsSync(sharedOf(sb)), fs.existsSync(sb.abs('.claude'))]).toEqual([false, false, false]);
    // Only Claude Code has a file for one person; http hooks hold a token and never go to the shared file.
    for (const args of [['init', 'codex', '--shared'], ['init', 'claude-code', '--shared', '--http']]) expect(sb.tb(args).code, args.join(' ')).toBe(2);
  });
});

describe('init and its registries', () => {
  it('an unknown name is a usage error that names every agent and editor it knows', () => {
    const sb = sandbox();
    const r = sb.tb(['init', 'emacs']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown agent or editor emacs (known: claude-code, codex, gemini, qwen-code, copilot, cline, opencode, kilo, helix, jetbrains, vscode)');
  });
});
