// opencode and Kilo Code, without the agents: what the adapter makes of the events the real
// opencode's plugin hooks gave (test/fixtures/opencode-events/, recorded through takeback's own
// plugin), `takeback init opencode|kilo [--user] [--remove]` on real folders, and the plugin file
// itself run by a real Node process as opencode runs it (imported, its hooks called in order):
// the events reach the journal through `takeback hook` or through the capture daemon's socket,
// nothing is thrown whatever goes wrong, and where takeback cannot be found it does nothing.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENTS } from '../server/agents/registry.js';
import type { AgentAction } from '../server/agents/spec.js';
import { settled } from './support/daemon.js';
import { alive, until } from './support/procs.js';
import { BIN, REPO_ROOT, sandbox, setsOf, tbSpawn, type Sandbox } from './support/takeback.js';

const WS = '/work-unit/project';
const SESSION = 'ses_dcd888196ffe25e8mcPLy81xI9';
const PLUGIN = path.join(REPO_ROOT, 'clients', 'opencode', 'takeback.js');

/** The recorded session, in the order the plugin handed the events over. */
const recorded = (): any[] =>
  fs
    .readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'opencode-events', 'session.jsonl'), 'utf8')
    .replaceAll('${WORKSPACE}', WS)
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

function actions(agent: string, ev: any): AgentAction[] {
  const spec = AGENTS[agent]!;
  return spec.actions(ev, spec.context(ev, '/fallback'));
}

describe('opencode: the recorded events', () => {
  it('the context: the agent, its session, the project folder', () => {
    const [created] = recorded();
    expect(AGENTS.opencode!.context(created, '/fallback')).toEqual({ agent: 'opencode', session: SESSION, cwd: WS });
    expect(AGENTS.kilo!.context(created, '/fallback')).toEqual({ agent: 'kilo', session: SESSION, cwd: WS });
  });

  it('the whole session: a baseline, a turn named by its message, each tool call paired by callID, the failed edit left to the turn end', () => {
    expect(recorded().map((ev) => actions('opencode', ev))).toEqual([
      [{ kind: 'session-start' }],
      [{ kind: 'turn-begin', prompt: '"Turn one: add b, fix a."', agentTurn: 'msg_232778096001DhBqdIiBy1JGTb' }],
      [{ kind: 'files-begin', pairing: { id: 'toolu_w1' }, tool: 'write', paths: [`${WS}/b.txt`] }],
      [{ kind: 'tool-end', pairing: { id: 'toolu_w1' }, tool: 'write' }],
      [{ kind: 'command-begin', pairing: { id: 'toolu_b1' }, tool: 'bash', command: "sed -i 's/hello/bye/' a.txt && mv b.txt c.txt && rm -f nothing" }],
      [{ kind: 'tool-end', pairing: { id: 'toolu_b1' }, tool: 'bash' }],
      // A relative filePath is the project folder's.
      [{ kind: 'files-begin', pairing: { id: 'toolu_e1' }, tool: 'edit', paths: [`${WS}/a.txt`] }],
      [{ kind: 'tool-end', pairing: { id: 'toolu_e1' }, tool: 'edit' }],
      // The edit that failed: opencode sends no tool.execute.after; the turn's end closes it.
      [{ kind: 'files-begin', pairing: { id: 'toolu_e2' }, tool: 'edit', paths: [`${WS}/a.txt`] }],
      [{ kind: 'turn-end' }],
    ]);
  });

  it('Kilo Code reads the same events the same way, under its own name', () => {
    const ev = recorded();
    expect(ev.map((e) => actions('kilo', e))).toEqual(ev.map((e) => actions('opencode', e)));
  });

  it('apply_patch begins a file capture of every path its patch names; multiedit of its filePath', () => {
    const patch = '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** Add File: /abs/new.ts\n+z\n*** Delete File: old.ts\n*** End Patch\n';
    const base = { hook_event_name: 'tool.execute.before', session_id: SESSION, cwd: WS, call_id: 'call_7' };
    expect(actions('opencode', { ...base, tool_name: 'apply_patch', tool_input: { patchText: patch } })).toEqual([
      { kind: 'files-begin', pairing: { id: 'call_7' }, tool: 'apply_patch', paths: [`${WS}/src/a.ts`, '/abs/new.ts', `${WS}/old.ts`] },
    ]);
    expect(actions('opencode', { ...base, tool_name: 'multiedit', tool_input: { filePath: 'm.txt', edits: [] } })).toEqual([
      { kind: 'files-begin', pairing: { id: 'call_7' }, tool: 'multiedit', paths: [`${WS}/m.txt`] },
    ]);
    expect(actions('opencode', { ...base, hook_event_name: 'tool.execute.after', tool_name: 'apply_patch', tool_input: {} })).toEqual([
      { kind: 'tool-end', pairing: { id: 'call_7' }, tool: 'apply_patch' },
    ]);
  });

  it('shapes it should not get yield nothing to capture rather than throwing', () => {
    const base = { session_id: SESSION, cwd: WS, call_id: 'c1' };
    expect(actions('opencode', { ...base, hook_event_name: 'tool.execute.before', tool_name: 'write', tool_input: {} })).toEqual([{ kind: 'ignore', why: 'write without a path: ignored' }]);
    expect(actions('opencode', { ...base, hook_event_name: 'tool.execute.before', tool_name: 'write', tool_input: { filePath: 7 } })).toEqual([{ kind: 'ignore', why: 'write without a path: ignored' }]);
    expect(actions('opencode', { ...base, hook_event_name: 'tool.execute.before', tool_name: 'read', tool_input: { filePath: 'a' } })).toEqual([{ kind: 'ignore', why: 'read: not captured' }]);
    expect(actions('opencode', { ...base, hook_event_name: 'tool.execute.after', tool_name: 'glob' })).toEqual([{ kind: 'ignore', why: 'glob: not captured' }]);
    expect(actions('opencode', { ...base, hook_event_name: 'tool.execute.before', tool_name: 'apply_patch', tool_input: { patchText: 3 } })).toEqual([
      { kind: 'files-begin', pairing: { id: 'c1' }, tool: 'apply_patch', paths: [] },
    ]);
    expect(actions('opencode', { ...base, hook_event_name: 'message.updated' })).toEqual([{ kind: 'ignore', why: 'message.updated: ignored' }]);
    expect(AGENTS.opencode!.context({ hook_event_name: 'session.idle', cwd: 5 } as any, '/fallback')).toEqual({ agent: 'opencode', session: null, cwd: '/fallback' });
  });
});

/** The plugin file takeback's init wrote, and its SETUP line parsed. */
function installed(file: string): { text: string; setup: any } {
  const text = fs.readFileSync(file, 'utf8');
  return { text, setup: JSON.parse(/^const SETUP = (\{.*\});$/m.exec(text)![1]!) };
}

describe('takeback init opencode | kilo', () => {
  it('copies the plugin into .opencode/plugins/ at the git top, naming this install; twice changes nothing; --remove takes out the file and the folders it made', () => {
    const sb = sandbox({ git: true });
    sb.write('sub/x.txt', 'x\n');
    const r = sb.tb(['init', 'opencode'], { cwd: sb.abs('sub') });
    const file = sb.abs('.opencode/plugins/takeback.js');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`installed takeback's plugin as ${file}`);
    expect(r.stdout).toContain('opencode loads the plugin when it starts');
    const { text, setup } = installed(file);
    expect(setup).toEqual({ agent: 'opencode', node: process.execPath, bin: BIN, socket: expect.stringMatching(/^capture-.*\.sock$/), made: 2 });
    // The shipped plugin with only its SETUP line filled in.
    expect(text.replace(/^const SETUP = .*$/m, '')).toBe(fs.readFileSync(PLUGIN, 'utf8').replace(/^const SETUP = .*$/m, ''));
    const again = sb.tb(['init', 'opencode']);
    expect(again.stdout).toContain(`nothing to change in ${file}`);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    const rm = sb.tb(['init', 'opencode', '--remove']);
    expect(rm.stdout).toContain(`removed takeback's plugin ${file}`);
    expect(sb.exists('.opencode')).toBe(false);
    expect(sb.tb(['init', 'opencode', '--remove']).stdout).toContain(`nothing to change in ${file}`);
  });

  it('--remove keeps a folder that was there, and one the agent has put its own files in', () => {
    const sb = sandbox({ git: true });
    sb.write('.kilo/kilo.json', '{}\n');
    sb.tb(['init', 'kilo']);
    expect(installed(sb.abs('.kilo/plugins/takeback.js')).setup).toMatchObject({ agent: 'kilo', made: 1 });
    sb.tb(['init', 'kilo', '--remove']);
    expect([sb.exists('.kilo/plugins'), sb.exists('.kilo/kilo.json')]).toEqual([false, true]);

    sb.tb(['init', 'opencode']);
    // opencode writes its own files beside the plugins folder at start.
    sb.write('.opencode/package.json', '{}\n');
    sb.write('.opencode/plugins/mine.js', 'export const Mine = async () => ({});\n');
    sb.tb(['init', 'opencode', '--remove']);
    expect([sb.exists('.opencode/plugins/takeback.js'), sb.exists('.opencode/plugins/mine.js'), sb.exists('.opencode/package.json')]).toEqual([false, true, true]);
  });

  it('--remove takes the folder init made also when the agent has installed its own plugin package there at start, but not one the user added to', () => {
    // What opencode 1.18 and Kilo Code 7.7 write into each config folder they read at start.
    const gitignore = (agent: string) =>
      agent === 'kilo' ? 'node_modules\npackage.json\npackage-lock.json\npnpm-lock.yaml\nbun.lock\nyarn.lock\n.gitignore\nagent-manager.json' : 'node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore';
    const agentInstall = (sb: Sandbox, dir: string, pkg: object) => {
      sb.write(`${dir}/.gitignore`, gitignore(dir.slice(1)));
      sb.write(`${dir}/package.json`, `${JSON.stringify(pkg, null, 2)}\n`);
      sb.write(`${dir}/node_modules/@opencode-ai/plugin/package.json`, '{"name":"@opencode-ai/plugin"}\n');
    };
    const sb = sandbox({ git: true });
    for (const agent of ['opencode', 'kilo']) {
      const dir = `.${agent}`;
      sb.tb(['init', agent]);
      agentInstall(sb, dir, { dependencies: { [agent === 'kilo' ? '@kilocode/plugin' : '@opencode-ai/plugin']: '1.18.33' } });
      expect(sb.tb(['init', agent, '--remove']).code).toBe(0);
      expect(sb.exists(dir), dir).toBe(false);
    }
    // Offline the install fails: only the .gitignore is written.
    sb.tb(['init', 'opencode']);
    sb.write('.opencode/.gitignore', 'node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore');
    sb.tb(['init', 'opencode', '--remove']);
    expect(sb.exists('.opencode')).toBe(false);
    // A dependency of the user's, a file of theirs: all of it stays.
    sb.tb(['init', 'opencode']);
    agentInstall(sb, '.opencode', { dependencies: { '@opencode-ai/plugin': '1.18.33', 'left-pad': '1.3.0' } });
    sb.tb(['init', 'opencode', '--remove']);
    expect(fs.readdirSync(sb.abs('.opencode')).sort()).toEqual(['.gitignore', 'node_modules', 'package.json']);
    fs.rmSync(sb.abs('.opencode'), { recursive: true });
    sb.tb(['init', 'opencode']);
    agentInstall(sb, '.opencode', { dependencies: { '@opencode-ai/plugin': '1.18.33' } });
    sb.write('.opencode/opencode.json', '{}\n');
    sb.tb(['init', 'opencode', '--remove']);
    expect(fs.readdirSync(sb.abs('.opencode')).sort()).toEqual(['.gitignore', 'node_modules', 'opencode.json', 'package.json']);
  });

  it('--user: $XDG_CONFIG_HOME/opencode/plugins/ (else ~/.config), and out again', () => {
    const sb = sandbox({ git: true });
    const r = sb.tb(['init', 'opencode', '--user']);
    const file = path.join(sb.userHome, '.config', 'opencode', 'plugins', 'takeback.js');
    expect(r.stdout).toContain(`installed takeback's plugin as ${file}`);
    expect(installed(file).setup.made).toBe(2);
    sb.tb(['init', 'opencode', '--user', '--remove']);
    expect([fs.existsSync(path.join(sb.userHome, '.config', 'opencode')), fs.existsSync(path.join(sb.userHome, '.config'))]).toEqual([false, true]);
    const xdg = path.join(sb.base, 'xdg');
    sb.tb(['init', 'kilo', '--user'], { env: { ...sb.env, XDG_CONFIG_HOME: xdg } });
    expect(installed(path.join(xdg, 'kilo', 'plugins', 'takeback.js')).setup.agent).toBe('kilo');
  });

  it('a file of that name that is not takeback\'s is refused and left as it is; --http is refused', () => {
    const sb = sandbox({ git: true });
    sb.write('.opencode/plugins/takeback.js', 'export const Other = async () => ({});\n');
    for (const args of [['init', 'opencode'], ['init', 'opencode', '--remove']]) {
      const r = sb.tb(args);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("is not takeback's plugin");
    }
    expect(sb.read('.opencode/plugins/takeback.js').toString()).toBe('export const Other = async () => ({});\n');
    const http = sb.tb(['init', 'opencode', '--http']);
    expect(http.code).not.toBe(0);
    expect(http.stderr).toContain('only Claude Code takes http hooks');
  });

  it("doctor checks the plugin here and for the user: installed and current as init writes it, not current when it names another install", () => {
    const sb = sandbox({ git: true });
    sb.tb(['init', 'opencode']);
    const file = sb.abs('.opencode/plugins/takeback.js');
    const mine = (d: any) => d.agents.filter((c: any) => c.agent === 'opencode');
    expect(mine(sb.json(['doctor']))).toEqual([
      { agent: 'opencode', scope: 'workspace', file, installed: 'all', current: true, trusted: null },
      { agent: 'opencode', scope: 'user', file: path.join(sb.userHome, '.config', 'opencode', 'plugins', 'takeback.js'), installed: 'none', current: null, trusted: null },
    ]);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^const SETUP = .*$/m, 'const SETUP = {"agent":"opencode","node":"/gone/node","bin":"/gone/takeback.js","socket":null,"made":2};'));
    const d = sb.json(['doctor']);
    expect(mine(d)[0]).toMatchObject({ installed: 'all', current: false });
    expect(d.problems.join('\n')).toContain(`takeback's opencode hooks in ${file}`);
  });

  it('a rewrite from another install points the plugin at this one', () => {
    const sb = sandbox({ git: true });
    sb.tb(['init', 'opencode']);
    const file = sb.abs('.opencode/plugins/takeback.js');
    const { text } = installed(file);
    fs.writeFileSync(file, text.replace(/^const SETUP = .*$/m, 'const SETUP = {"agent":"opencode","node":"/gone/node","bin":"/gone/takeback.js","socket":null,"made":2};'));
    expect(sb.tb(['init', 'opencode']).stdout).toContain(`installed takeback's plugin as ${file}`);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });
});

/**
 * A Node program that does what opencode does with a plugin file: imports it, calls the plugin
 * with the project folder, then for each step calls a hook (awaiting it, as opencode awaits
 * tool.execute.before/after and chat.message) or changes a file. Prints what the plugin returned
 * and whether anything was thrown.
 */
const DRIVER = `
import fs from 'node:fs';
const [plugin, directory, stepsFile] = process.argv.slice(2);
const steps = JSON.parse(fs.readFileSync(stepsFile, 'utf8'));
const mod = await import(plugin);
const hooks = await Object.values(mod)[0]({ directory, worktree: directory });
const out = { hooks: Object.keys(hooks).sort(), threw: [] };
for (const s of steps) {
  try {
    if (s.write) fs.writeFileSync(s.write, s.content);
    else if (hooks[s.hook]) await hooks[s.hook](...s.args);
  } catch (e) { out.threw.push(String(e)); }
}
console.log(JSON.stringify(out));
`;

/** Writes the plugin as `init` would, with `setup` over this install's SETUP, into `dir`. */
function pluginCopy(sb: Sandbox, setup: object = {}): string {
  const r = sb.tb(['init', 'opencode']);
  if (r.code !== 0) throw new Error(r.stderr);
  const file = sb.abs('.opencode/plugins/takeback.js');
  const text = fs.readFileSync(file, 'utf8');
  const merged = { ...JSON.parse(/^const SETUP = (\{.*\});$/m.exec(text)![1]!), ...setup };
  const out = path.join(sb.base, `plugin-${Object.keys(setup).join('-') || 'as-installed'}.mjs`);
  fs.writeFileSync(out, text.replace(/^const SETUP = .*$/m, `const SETUP = ${JSON.stringify(merged)};`));
  fs.rmSync(sb.abs('.opencode'), { recursive: true });
  return out;
}

/** The steps of one turn: a prompt, a write tool call around the file's change, a bash call, idle. */
function turnSteps(sb: Sandbox): any[] {
  const sid = 'ses_plugin_test';
  const tool = (hook: string, tool: string, callID: string, args: object) =>
    hook === 'tool.execute.before' ? { hook, args: [{ tool, sessionID: sid, callID }, { args }] } : { hook, args: [{ tool, sessionID: sid, callID, args }, { title: '', output: '', metadata: {} }] };
  const write = { filePath: sb.abs('notes.txt'), content: 'from the plugin\n' };
  return [
    { hook: 'event', args: [{ event: { type: 'session.created', properties: { sessionID: sid, info: { id: sid } } } }] },
    { hook: 'chat.message', args: [{ sessionID: sid }, { message: { id: 'msg_1' }, parts: [{ type: 'text', text: 'write the notes' }] }] },
    tool('tool.execute.before', 'read', 'call_r', { filePath: sb.abs('notes.txt') }),
    tool('tool.execute.before', 'write', 'call_w', write),
    { write: sb.abs('notes.txt'), content: write.content },
    tool('tool.execute.after', 'write', 'call_w', write),
    tool('tool.execute.before', 'bash', 'call_b', { command: 'rm old.txt' }),
    { write: sb.abs('old.txt'), content: '' },
    tool('tool.execute.after', 'bash', 'call_b', { command: 'rm old.txt' }),
    { hook: 'event', args: [{ event: { type: 'session.status', properties: { sessionID: sid, status: { type: 'idle' } } } }] },
    // The same idle again, as session.idle: the turn ends once.
    { hook: 'event', args: [{ event: { type: 'session.idle', properties: { sessionID: sid } } }] },
  ];
}

/** Every path under `dir` (none when it is missing), sorted. */
function walk(dir: string): string[] {
  return fs.existsSync(dir) ? (fs.readdirSync(dir, { recursive: true }) as string[]).sort() : [];
}

/** {@link drive} without blocking this process (a server of the test's own answers meanwhile). */
function driveAsync(sb: Sandbox, plugin: string, steps: object[]): Promise<{ hooks: string[]; threw: string[] }> {
  const driver = path.join(sb.base, 'driver.mjs');
  const stepsFile = path.join(sb.base, 'steps.json');
  fs.writeFileSync(driver, DRIVER);
  fs.writeFileSync(stepsFile, JSON.stringify(steps));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [driver, plugin, sb.ws, stepsFile], { cwd: sb.ws, env: sb.env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`driver exited ${code}: ${stdout}`))));
  });
}

/** Runs the plugin file `plugin` through DRIVER with `steps` in `sb`'s workspace, with `env`. */
function drive(sb: Sandbox, plugin: string, steps: object[], env: NodeJS.ProcessEnv = sb.env): { hooks: string[]; threw: string[] } {
  const driver = path.join(sb.base, 'driver.mjs');
  const stepsFile = path.join(sb.base, 'steps.json');
  fs.writeFileSync(driver, DRIVER);
  fs.writeFileSync(stepsFile, JSON.stringify(steps));
  const r = spawnSync(process.execPath, [driver, plugin, sb.ws, stepsFile], { cwd: sb.ws, env, encoding: 'utf8', timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout);
}

describe('the plugin, run as opencode runs it', () => {
  it('hands each event to takeback hook: the turn, the write and the bash call recorded, read not sent, the turn ended once', () => {
    const sb = sandbox({ git: true, env: { TAKEBACK_LOG_LEVEL: 'debug' } });
    sb.write('old.txt', 'old\n');
    const out = drive(sb, pluginCopy(sb), turnSteps(sb));
    expect(out).toEqual({ hooks: ['chat.message', 'event', 'tool.execute.after', 'tool.execute.before'], threw: [] });
    const list = sb.json(['list', '--agent', 'opencode']);
    expect(list.turns.map((t: any) => [t.id, t.agent, t.session, t.agentTurn, t.label, t.end !== null])).toEqual([['t1', 'opencode', 'ses_plugin_test', 'msg_1', 'write the notes', true]]);
    expect(setsOf(list).map((s: any) => [s.source.tool, s.source.toolCallId, s.files.map((f: any) => [f.path, f.status])])).toEqual([
      ['write', 'call_w', [['notes.txt', 'created']]],
      ['bash', 'call_b', [['old.txt', 'modified']]],
    ]);
    const log = fs.readFileSync(path.join(sb.home, 'logs', 'hook.log'), 'utf8');
    expect(log.match(/opencode session\.idle: turn t1 ended/g), log).toHaveLength(1);
    expect(log).not.toMatch(/call_r|failed|plugin opencode/);
    sb.tb(['undo', '--turn', '1']);
    expect([sb.exists('notes.txt'), sb.read('old.txt').toString()]).toEqual([false, 'old\n']);
  });

  it('with the capture daemon on, the events go to its socket (recorded by the daemon\'s process)', async () => {
    const sb = sandbox({ git: true, env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '20000', TAKEBACK_LOG_LEVEL: 'debug' } });
    sb.write('old.txt', 'old\n');
    const daemon = tbSpawn(['hook-daemon'], { cwd: sb.ws, env: sb.env });
    try {
      await until('the daemon socket', () => fs.existsSync(path.join(sb.home, 'run')) && fs.readdirSync(path.join(sb.home, 'run')).some((n) => n.endsWith('.sock')), 60_000);
      const out = drive(sb, pluginCopy(sb), turnSteps(sb));
      expect(out.threw).toEqual([]);
      // The turn's end is answered as it is claimed: its record (and its log line) may come after.
      await settled(sb);
      const log = fs.readFileSync(path.join(sb.home, 'logs', 'hook.log'), 'utf8');
      const pids = [...log.matchAll(/\[(\d+)\] opencode [\w.]+:/g)].map((m) => Number(m[1]));
      expect(pids.length, log).toBe(7);
      expect(new Set(pids), log).toEqual(new Set([daemon.pid]));
      expect(setsOf(sb.json(['list'])).map((s: any) => s.source.toolCallId)).toEqual(['call_w', 'call_b']);
    } finally {
      daemon.kill('SIGTERM');
      await until('the daemon to leave', () => !alive(daemon.pid!), 30_000).catch(() => daemon.kill('SIGKILL'));
    }
  });

  it('a daemon that claims an event and never answers holds the tool call HOOK_TIMEOUT_MS at most; the event is not recorded twice', async () => {
    const sb = sandbox({ git: true, env: { TAKEBACK_HOOK_DAEMON: '1' } });
    const plugin = pluginCopy(sb);
    const socket = path.join(sb.home, 'run', JSON.parse(/^const SETUP = (\{.*\});$/m.exec(fs.readFileSync(plugin, 'utf8'))![1]!).socket);
    fs.mkdirSync(path.dirname(socket), { recursive: true });
    let requests = 0;
    const server = net.createServer((sock) => {
      sock.on('data', () => {
        if (requests++ === 0) sock.write('{"claim":true}\n');
      });
      sock.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(socket, r));
    try {
      const steps = turnSteps(sb).slice(3, 4); // tool.execute.before of the write
      expect(steps[0].args[0].tool).toBe('write');
      const out = await driveAsync(sb, plugin, steps);
      expect(out).toEqual({ hooks: ['chat.message', 'event', 'tool.execute.after', 'tool.execute.before'], threw: [] });
      expect(fs.readFileSync(path.join(sb.home, 'logs', 'hook.log'), 'utf8')).toMatch(/plugin opencode: the capture daemon took over 30000 ms; going on without waiting/);
      // The daemon had it: the command line was not run for it as well.
      expect(fs.existsSync(path.join(sb.home, 'workspaces'))).toBe(false);
    } finally {
      server.close();
    }
  }, 120_000);

  it('where takeback cannot be found it does nothing: no hooks, no journal, no log', () => {
    const sb = sandbox({ git: true });
    const plugin = pluginCopy(sb, { node: null, bin: '/nowhere/bin/takeback.js' });
    const before = walk(sb.home);
    const out = drive(sb, plugin, turnSteps(sb), { ...sb.env, PATH: '/nowhere' });
    expect(out).toEqual({ hooks: [], threw: [] });
    expect(walk(sb.home)).toEqual(before);
    expect(before.some((p) => p.includes('hook.log') || p.includes('workspaces'))).toBe(false);
  });

  it('a takeback that fails or cannot start is logged and swallowed: the hooks resolve, nothing is thrown', () => {
    const sb = sandbox({ git: true });
    // A "node" that exits 1 for every event, and a bin that is there.
    const failing = path.join(sb.base, 'failing-node');
    fs.writeFileSync(failing, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    expect(drive(sb, pluginCopy(sb, { node: failing }), turnSteps(sb)).threw).toEqual([]);
    // A bin that cannot be executed at all (a folder named like it is found, then fails to start).
    const unstartable = path.join(sb.base, 'bin-dir');
    fs.mkdirSync(path.join(unstartable, 'takeback'), { recursive: true });
    fs.chmodSync(path.join(unstartable, 'takeback'), 0o755);
    const out = drive(sb, pluginCopy(sb, { node: null, bin: null }), turnSteps(sb), { ...sb.env, PATH: `${unstartable}:/usr/bin:/bin` });
    expect(out.threw).toEqual([]);
    expect(fs.readFileSync(path.join(sb.home, 'logs', 'hook.log'), 'utf8')).toMatch(/plugin opencode: cannot run .*takeback/);
  });

  it('the last event outlives the agent: a process that exits right after the idle event still ends the turn', async () => {
    const sb = sandbox({ git: true, env: { TAKEBACK_LOG_LEVEL: 'debug' } });
    sb.write('old.txt', 'old\n');
    const steps = turnSteps(sb);
    const idle = steps.splice(-2);
    drive(sb, pluginCopy(sb), steps);
    // Calls the idle hook without awaiting it and exits at once (as `opencode run` does).
    const plugin = pluginCopy(sb);
    const quick = path.join(sb.base, 'quick.mjs');
    fs.writeFileSync(quick, `const m = await import(${JSON.stringify(plugin)}); const h = await Object.values(m)[0]({ directory: ${JSON.stringify(sb.ws)} });\n` +
      `await h['chat.message']({ sessionID: 'ses_plugin_test' }, { message: { id: 'msg_1' }, parts: [] });\n` +
      `h.event(${JSON.stringify(idle[0]!.args[0])}); process.exit(0);\n`);
    const child = spawn(process.execPath, [quick], { cwd: sb.ws, env: sb.env, stdio: 'ignore' });
    await new Promise((r) => child.once('exit', r));
    await until('the turn to end', () => sb.json(['list']).turns[0]?.end !== null, 60_000);
    expect(sb.json(['list']).turns.map((t: any) => t.id)).toEqual(['t1']);
  });
});
