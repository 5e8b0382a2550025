// `takeback doctor` checks each agent's hooks in this workspace and for the user: installed (for
// every event init writes), current (the command init writes now, for this install), and trusted
// where the agent asks for trust (Codex's project and hook trust in config.toml, Gemini CLI's
// trusted folders). A workspace with no hooks for any agent says so, naming every agent init
// can hook, never "no problems found".
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox, type Sandbox } from './support/takeback.js';

const NO_AGENT = 'no agent is hooked here: run takeback init claude-code (or codex, gemini, qwen-code, copilot, cline, opencode, kilo; --user for every folder)';

/** The sandbox with private homes for Codex and Gemini CLI (their trust lives there). */
function agentSandbox(): Sandbox & { codexHome: string } {
  const sb = sandbox({ git: true });
  const codexHome = path.join(sb.base, 'codex-home');
  fs.mkdirSync(codexHome);
  sb.env.CODEX_HOME = codexHome;
  return Object.assign(sb, { codexHome });
}

const checkOf = (d: any, agent: string, file: string) => d.agents.find((c: any) => c.agent === agent && c.file === file);

describe('doctor: the agents hooked here', () => {
  it('no hooks anywhere: says no agent is hooked here (text and JSON), not "no problems found"', () => {
    const sb = agentSandbox();
    const text = sb.tb(['doctor']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`! ${NO_AGENT}`);
    expect(text.stdout).not.toContain('no problems found');
    const d = sb.json(['doctor']);
    expect(d.problems).toEqual([]);
    // The line names every agent doctor checks, each one `init` can hook.
    const line = text.stdout.split('\n').find((l) => l.includes('no agent is hooked here'))!;
    for (const agent of new Set<string>(d.agents.map((c: any) => c.agent))) expect(line, agent).toMatch(new RegExp(`[ (]${agent}[ ,;)]`));
    expect(d.agents.map((c: any) => [c.agent, c.scope, c.installed])).toEqual([
      ['claude-code', 'workspace', 'none'],
      ['claude-code', 'workspace', 'none'],
      ['claude-code', 'user', 'none'],
      ['codex', 'workspace', 'none'],
      ['codex', 'user', 'none'],
      ['gemini', 'workspace', 'none'],
      ['gemini', 'user', 'none'],
      ['qwen-code', 'workspace', 'none'],
      ['qwen-code', 'user', 'none'],
      ['copilot', 'workspace', 'none'],
      ['copilot', 'user', 'none'],
      ['cline', 'workspace', 'none'],
      ['cline', 'user', 'none'],
      ['opencode', 'workspace', 'none'],
      ['opencode', 'user', 'none'],
      ['kilo', 'workspace', 'none'],
      ['kilo', 'user', 'none'],
    ]);
  });

  it('qwen-code, copilot and cline hooked by init here: every event, in the files and folder each reads', () => {
    const sb = agentSandbox();
    for (const a of ['qwen-code', 'copilot', 'cline']) expect(sb.tb(['init', a]).code).toBe(0);
    const d = sb.json(['doctor']);
    const mine = d.agents.filter((c: any) => ['qwen-code', 'copilot', 'cline'].includes(c.agent) && c.scope === 'workspace');
    expect(mine.map((c: any) => [c.agent, c.file, c.installed])).toEqual([
      ['qwen-code', sb.abs('.qwen/settings.json'), 'all'],
      ['copilot', sb.abs('.github/hooks/takeback.json'), 'all'],
      ['cline', sb.abs('.cline/hooks'), 'all'],
    ]);
    // A folder Copilot CLI has not been told to trust (its own trust is below).
    expect(mine.find((c: any) => c.agent === 'copilot')).toMatchObject({ trusted: false, trust: expect.stringMatching(/does not trust/) });
  });

  it('copilot: the repository\'s hooks are trusted once config.json\'s trustedFolders holds this folder or one above it (as Copilot CLI keeps it)', () => {
    const sb = agentSandbox();
    const copilotHome = path.join(sb.base, 'copilot-home');
    sb.env.COPILOT_HOME = copilotHome;
    expect(sb.tb(['init', 'copilot']).code).toBe(0);
    const file = sb.abs('.github/hooks/takeback.json');
    const copilot = () => checkOf(sb.json(['doctor']), 'copilot', file);
    expect(copilot()).toMatchObject({ installed: 'all', current: true, trusted: false, trust: expect.stringMatching(/does not trust .* yet.*without a word.*Yes, and remember this folder/) });
    expect(sb.json(['doctor']).problems).toEqual([expect.stringMatching(new RegExp(`^copilot will not run takeback's hooks in ${file}: Copilot CLI does not trust ${sb.ws} yet`))]);
    // The file as Copilot CLI writes it when a folder is trusted for good.
    const config = path.join(copilotHome, 'config.json');
    fs.mkdirSync(copilotHome);
    for (const [folders, trusted] of [
      [[path.join(sb.ws, 'sub')], false],
      [[sb.ws], true],
      [[sb.base], true],
    ] as const) {
      fs.writeFileSync(config, `// User settings belong in settings.json.\n// This file is managed automatically.\n${JSON.stringify({ firstLaunchAt: '2026-12-01T19:43:08.553Z', trustedFolders: folders }, null, 2)}\n`);
      expect(copilot().trusted, JSON.stringify(folders)).toBe(trusted);
    }
    expect(sb.json(['doctor']).problems).toEqual([]);
    // Every folder trusted for the run.
    fs.rmSync(config);
    expect(checkOf(sb.json(['doctor'], { env: { ...sb.env, COPILOT_ALLOW_ALL: 'true' } }), 'copilot', file)).toMatchObject({ trusted: true });
  });

  it('qwen-code: with folder trust on, trusted as Qwen Code decides: no rule (not trusted), the deepest rule, DO_NOT_TRUST on a tie; off, not asked', () => {
    const sb = agentSandbox();
    const qwenHome = path.join(sb.base, 'qwen-home');
    sb.env.QWEN_HOME = qwenHome;
    expect(sb.tb(['init', 'qwen-code']).code).toBe(0);
    const file = sb.abs('.qwen/settings.json');
    const qwen = () => checkOf(sb.json(['doctor']), 'qwen-code', file);
    expect(qwen()).toMatchObject({ installed: 'all', current: true, trusted: null });
    fs.mkdirSync(qwenHome);
    fs.writeFileSync(path.join(qwenHome, 'settings.json'), '{ // mine\n "security": { "folderTrust": { "enabled": true } } }\n');
    expect(qwen()).toMatchObject({ trusted: false, trust: expect.stringMatching(/does not trust .* yet.*\/trust/) });
    expect(sb.json(['doctor']).problems).toEqual([expect.stringMatching(new RegExp(`^qwen-code will not run takeback's hooks in ${file}: folder trust is on and Qwen Code does not trust ${sb.ws} yet`))]);
    const folders = path.join(qwenHome, 'trustedFolders.json');
    for (const [rules, trusted] of [
      [{ [sb.ws]: 'TRUST_FOLDER' }, true],
      [{ [path.join(sb.ws, 'x')]: 'TRUST_PARENT' }, true],
      [{ [sb.base]: 'DO_NOT_TRUST', [sb.ws]: 'TRUST_FOLDER' }, true],
      [{ [sb.base]: 'TRUST_FOLDER', [sb.ws]: 'DO_NOT_TRUST' }, false],
      [{ [sb.ws]: 'TRUST_FOLDER', [path.join(sb.ws, 'y')]: 'TRUST_PARENT', [`${sb.ws}/`]: 'DO_NOT_TRUST' }, false],
      [{ [path.join(sb.ws, 'sub')]: 'TRUST_FOLDER' }, false],
    ] as const) {
      fs.writeFileSync(folders, JSON.stringify(rules));
      expect(qwen().trusted, JSON.stringify(rules)).toBe(trusted);
    }
    fs.writeFileSync(folders, JSON.stringify({ [sb.base]: 'TRUST_FOLDER' }));
    expect(sb.json(['doctor']).problems).toEqual([]);
    // QWEN_CODE_TRUSTED_FOLDERS_PATH names another file.
    const other = path.join(sb.base, 'other-trust.json');
    fs.writeFileSync(other, JSON.stringify({ [sb.ws]: 'DO_NOT_TRUST' }));
    expect(checkOf(sb.json(['doctor'], { env: { ...sb.env, QWEN_CODE_TRUSTED_FOLDERS_PATH: other } }), 'qwen-code', file)).toMatchObject({ trusted: false });
  });

  it("cline: a hook program of an older takeback's is not current, named with the init that rewrites it (then doctor is content)", () => {
    const sb = agentSandbox();
    expect(sb.tb(['init', 'cline']).code).toBe(0);
    const dir = sb.abs('.cline/hooks');
    expect(checkOf(sb.json(['doctor']), 'cline', dir)).toEqual({ agent: 'cline', scope: 'workspace', file: dir, installed: 'all', current: true, trusted: null });
    expect(sb.json(['doctor']).problems).toEqual([]);
    // The script another install wrote: the same marker, another takeback's command.
    const program = path.join(dir, 'PostToolUse');
    const text = fs.readFileSync(program, 'utf8');
    const old = text.replace(/^if .*$/m, "NODE_EXTRA_CA_CERTS= '/opt/node/bin/node' '/srv/old/bin/takeback.js' hook cline >/dev/null 2>&1");
    expect(old).not.toBe(text);
    fs.writeFileSync(program, old);
    const d = sb.json(['doctor']);
    expect(checkOf(d, 'cline', dir)).toMatchObject({ installed: 'all', current: false });
    expect(d.problems).toEqual([`takeback's cline hooks in ${dir} run another takeback than this one, or an older command: run \`takeback init cline\` again`]);
    expect(sb.tb(['init', 'cline']).code).toBe(0);
    expect(fs.readFileSync(program, 'utf8')).toBe(text);
    expect(checkOf(sb.json(['doctor']), 'cline', dir)).toMatchObject({ installed: 'all', current: true });
    expect(sb.json(['doctor']).problems).toEqual([]);
  });

  it('claude-code hooked by init: every event, current, no trust asked; no problems', () => {
    const sb = agentSandbox();
    expect(sb.tb(['init', 'claude-code']).code).toBe(0);
    const d = sb.json(['doctor']);
    expect(checkOf(d, 'claude-code', path.join(sb.ws, '.claude', 'settings.local.json'))).toEqual({
      agent: 'claude-code',
      scope: 'workspace',
      file: path.join(sb.ws, '.claude', 'settings.local.json'),
      installed: 'all',
      current: true,
      trusted: null,
    });
    expect(d.problems).toEqual([]);
    const text = sb.tb(['doctor']).stdout;
    expect(text).toContain(`hooks:      claude-code (workspace: ${path.join(sb.ws, '.claude', 'settings.local.json')}): every event, current\n`);
    expect(text).toContain('no problems found');
    expect(text).not.toContain(NO_AGENT);
  });

  it("an older takeback's command, or some events only: not current, named with the init that repairs it (then doctor is content)", () => {
    const sb = agentSandbox();
    const file = path.join(sb.ws, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file));
    const old = "NODE_EXTRA_CA_CERTS= '/opt/node/bin/node' '/srv/old/bin/takeback.js' hook claude-code";
    fs.writeFileSync(file, JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: old, timeout: 30 }] }] } }));
    const d = sb.json(['doctor']);
    expect(checkOf(d, 'claude-code', file)).toMatchObject({ installed: 'some', current: false });
    expect(d.problems).toEqual([
      `takeback's claude-code hooks in ${file} are there for some events only: run \`takeback init claude-code --shared\` again`,
      `takeback's claude-code hooks in ${file} run another takeback than this one, or an older command: run \`takeback init claude-code --shared\` again`,
    ]);
    expect(sb.tb(['init', 'claude-code', '--shared']).code).toBe(0);
    expect(checkOf(sb.json(['doctor']), 'claude-code', file)).toMatchObject({ installed: 'all', current: true });
    expect(sb.json(['doctor']).problems).toEqual([]);
  });

  it('codex: not trusted until config.toml trusts the project and each hook; the user file needs the hooks trusted only', () => {
    const sb = agentSandbox();
    expect(sb.tb(['init', 'codex']).code).toBe(0);
    const file = path.join(sb.ws, '.codex', 'hooks.json');
    let d = sb.json(['doctor']);
    expect(checkOf(d, 'codex', file)).toMatchObject({ scope: 'workspace', installed: 'all', current: true, trusted: false, trust: expect.stringMatching(/does not trust this project/) });
    expect(d.problems).toEqual([expect.stringMatching(new RegExp(`^codex will not run takeback's hooks in ${file}: Codex does not trust this project yet`))]);
    // The project trusted, the hooks not yet.
    const config = path.join(sb.codexHome, 'config.toml');
    const project = `[projects.${JSON.stringify(sb.ws)}]\ntrust_level = "trusted"\n`;
    fs.writeFileSync(config, project);
    d = sb.json(['doctor']);
    expect(checkOf(d, 'codex', file)).toMatchObject({ trusted: false, trust: expect.stringMatching(/^5 of takeback's hooks here are not trusted in Codex/) });
    // Each hook trusted as Codex's /hooks review keeps it: by file, event, group and place.
    const events = ['session_start', 'user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop'];
    const trust = (f: string) => events.map((e) => `[hooks.state.${JSON.stringify(`${f}:${e}:0:0`)}]\ntrusted_hash = "sha256:00"\n`).join('\n');
    fs.writeFileSync(config, `${project}\n${trust(file)}`);
    d = sb.json(['doctor']);
    expect(checkOf(d, 'codex', file)).toMatchObject({ trusted: true });
    expect(d.problems).toEqual([]);
    // --user: the user's hooks.json; trusted once its hooks are, whatever the project.
    expect(sb.tb(['init', 'codex', '--remove']).code).toBe(0);
    expect(sb.tb(['init', 'codex', '--user']).code).toBe(0);
    const user = path.join(sb.codexHome, 'hooks.json');
    fs.writeFileSync(config, '');
    expect(checkOf(sb.json(['doctor']), 'codex', user)).toMatchObject({ scope: 'user', installed: 'all', trusted: false });
    fs.writeFileSync(config, trust(user));
    expect(checkOf(sb.json(['doctor']), 'codex', user)).toMatchObject({ scope: 'user', trusted: true });
  });

  it("gemini: trusted as Gemini CLI decides: no rule (not yet), TRUST_FOLDER or TRUST_PARENT, DO_NOT_TRUST, folder trust off", () => {
    const sb = agentSandbox();
    expect(sb.tb(['init', 'gemini']).code).toBe(0);
    const file = path.join(sb.ws, '.gemini', 'settings.json');
    const folders = path.join(sb.userHome, '.gemini', 'trustedFolders.json');
    const gemini = () => checkOf(sb.json(['doctor']), 'gemini', file);
    expect(gemini()).toMatchObject({ installed: 'all', current: true, trusted: false, trust: expect.stringMatching(/does not trust .* yet/) });
    fs.mkdirSync(path.dirname(folders), { recursive: true });
    for (const [rules, trusted] of [
      [{ [sb.ws]: 'TRUST_FOLDER' }, true],
      [{ [path.join(sb.ws, 'x')]: 'TRUST_PARENT' }, true],
      [{ [sb.base]: 'TRUST_FOLDER', [sb.ws]: 'DO_NOT_TRUST' }, false],
      [{ [path.join(sb.ws, 'sub')]: 'TRUST_FOLDER' }, false],
    ] as const) {
      fs.writeFileSync(folders, JSON.stringify(rules));
      expect(gemini().trusted, JSON.stringify(rules)).toBe(trusted);
    }
    // Folder trust switched off in the user's settings: every folder is trusted.
    fs.writeFileSync(path.join(sb.userHome, '.gemini', 'settings.json'), '{ // mine\n "security": { "folderTrust": { "enabled": false } } }\n');
    expect(gemini()).toMatchObject({ trusted: true });
    expect(sb.json(['doctor']).problems).toEqual([]);
  });
});
