// Claude Code's http hooks (`takeback init claude-code --http`): each event is POSTed to the
// capture daemon on 127.0.0.1 while a command hook beside it — a line of shell — does nothing if
// the daemon's ready file names a live process, and runs the full hook in-process (starting the
// daemon) if not. Real processes and the real binary; the hooks are fired as Claude Code fires
// them (all of an event's hooks at once, test/support/claude-hook-runner.ts; the real Claude
// Code does the same in test/claude-http-e2e.test.ts). Which process handled an event is read
// from the debug log (each line carries the pid that wrote it).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { fireHooks } from './support/claude-hook-runner.js';
import { BIN, filesOf, sandbox, setsOf, stoppedWriter, type Sandbox } from './support/takeback.js';
import { alive, freePort, until } from './support/procs.js';

const SESSION = 'h77p0000-0000-4000-8000-000000000001';

interface Http {
  sb: Sandbox;
  port: number;
  settings: string;
  ready: string;
  fire(name: string, extra?: object): ReturnType<typeof fireHooks>;
  /** `event → pids that handled it`, from the debug log. */
  handledBy(): { event: string; pid: number }[];
  /** Log lines other than the debug lines of handled events and of daemons started. */
  failures(): string[];
  /** The debug lines of the daemons hooks started. */
  starts(): string[];
  readyPid(): number | null;
}

async function httpSandbox(env: NodeJS.ProcessEnv = {}): Promise<Http> {
  const sb = sandbox({ git: true, env: { TAKEBACK_LOG_LEVEL: 'debug', TAKEBACK_HOOK_DAEMON_IDLE_MS: '20000', ...env } });
  const port = await freePort();
  const r = sb.tb(['init', 'claude-code', '--http', '--port', String(port)]);
  expect(r.code, r.stderr).toBe(0);
  const settings = path.join(sb.ws, '.claude', 'settings.local.json');
  const ready = path.join(sb.home, 'run', `http-${port}.pid`);
  const log = () => {
    try {
      return fs.readFileSync(path.join(sb.home, 'logs', 'hook.log'), 'utf8');
    } catch {
      return '';
    }
  };
  const h: Http = {
    sb,
    port,
    settings,
    ready,
    fire: (name, extra = {}) => fireHooks(settings, { session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra } as any, sb.ws, sb.env),
    handledBy: () => [...log().matchAll(/\[(\d+)\] claude-code (\w+):/g)].map((m) => ({ event: m[2]!, pid: Number(m[1]) })),
    failures: () =>
      log()
        .split('\n')
        .filter((l) => l && !/\] claude-code \w+: /.test(l) && !/\] hook: started a capture daemon/.test(l)),
    starts: () => log().split('\n').filter((l) => /\] hook: started a capture daemon/.test(l)),
    readyPid() {
      try {
        return Number(fs.readFileSync(ready, 'utf8').split(' ')[0]);
      } catch {
        return null;
      }
    },
  };
  // Every daemon that handled an event of this sandbox goes when the test ends.
  onTestFinished(() => {
    for (const { pid } of h.handledBy()) if (alive(pid) && pid !== process.pid) try { process.kill(pid, 'SIGKILL'); } catch {}
    const p = h.readyPid();
    if (p && alive(p)) process.kill(p, 'SIGKILL');
  });
  return h;
}

/** True when something listens on 127.0.0.1:`port`. */
function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    c.once('connect', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
  });
}

/**
 * A daemon for `h`'s port that became ready and was then killed, left a zombie (its parent, a
 * shell that exec'd into a sleep, never reaps it): its ready file and socket stay behind, and
 * `kill -0` still succeeds on its pid. Returns that pid.
 */
async function zombieDaemon(h: Http): Promise<number> {
  const parent = spawn('sh', ['-c', `"$0" "$1" hook-daemon & exec sleep 60`, process.execPath, BIN], { env: { ...h.sb.env, TAKEBACK_HOOK_HTTP_PORT: String(h.port) }, stdio: 'ignore' });
  onTestFinished(() => void parent.kill('SIGKILL'));
  await until('the daemon to be ready', () => h.readyPid() !== null && alive(h.readyPid()!));
  const daemon = h.readyPid()!;
  process.kill(daemon, 'SIGKILL');
  await until('the daemon to be a zombie', () => /^Z/.test(fs.readFileSync(`/proc/${daemon}/stat`, 'utf8').split(') ')[1] ?? ''));
  expect(alive(daemon)).toBe(true); // kill -0 cannot tell
  return daemon;
}

/** The status of a POST sent with exactly these headers (fetch would not send our Host). */
function rawStatus(port: number, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/takeback/hook/claude-code', headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The order {@link bothHalves} runs an event's two hooks in. */
type Order = 'post first' | 'command first' | 'at once';

/**
 * The two hooks of event `name` (with `extra`) as Claude Code runs them: `post` sends it to the
 * http hook (resolves its status, null when refused), `command` runs the command hook beside it
 * (resolves its exit code, stdout and stderr).
 */
function halvesOf(h: Http, name: string, extra: object): { post: () => Promise<number | null>; command: () => Promise<[number | null, string, string]> } {
  const ev: { tool_name?: string; [k: string]: unknown } = { session_id: SESSION, cwd: h.sb.ws, hook_event_name: name, ...extra };
  const body = JSON.stringify(ev);
  const group = (JSON.parse(fs.readFileSync(h.settings, 'utf8')).hooks[name] as any[]).find((g) => !g.matcher || new RegExp(`^(?:${g.matcher})$`).test(ev.tool_name ?? ''));
  const hooks: any[] = group.hooks;
  const http = hooks.find((x) => x.type === 'http');
  const command = hooks.find((x) => x.type === 'command');
  return {
    post: () =>
      fetch(http.url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...http.headers }, body }).then(
        (r) => r.text().then(() => r.status),
        () => null,
      ),
    command: () =>
      new Promise((resolve) => {
        const p = spawn('bash', ['-c', command.command], { cwd: h.sb.ws, env: h.sb.env, stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        p.stdout.on('data', (d) => (out += d));
        p.stderr.on('data', (d) => (err += d));
        p.stdin.end(body);
        p.on('close', (code) => resolve([code, out, err]));
      }),
  };
}

/** Runs event `name`'s two hooks ({@link halvesOf}) in `order`, each waited for before the other starts, or both at once. */
async function bothHalves(h: Http, name: string, extra: object, order: Order): Promise<{ status: number | null; command: [number | null, string, string] }> {
  const { post, command } = halvesOf(h, name, extra);
  if (order === 'at once') {
    const [status, code] = await Promise.all([post(), command()]);
    return { status, command: code };
  }
  if (order === 'post first') {
    const status = await post();
    return { status, command: await command() };
  }
  const code = await command();
  return { status: await post(), command: code };
}

/**
 * An http sandbox whose daemon (started by the session's first hook) listens and never writes its
 * ready file: every later event's POST reaches it, and every command hook beside it, finding no
 * ready file, records the event too — the state of every hook while a new daemon starts, held.
 */
async function startingSandbox(): Promise<Http> {
  const h = await httpSandbox({ TAKEBACK_HOOK_DAEMON_READY_MS: '600000' });
  h.sb.write('f.txt', 'a cat sat\n');
  h.sb.write('x', 'x\n');
  await h.fire('SessionStart', { source: 'startup' });
  await until('the daemon to listen', () => listens(h.port));
  return h;
}

/** {@link httpSandbox} with the files of {@link turn} written, its session started and its daemon ready. */
async function readySandbox(): Promise<Http> {
  const h = await httpSandbox();
  h.sb.write('f.txt', 'a cat sat\n');
  h.sb.write('x', 'x\n');
  await h.fire('SessionStart', { source: 'startup' });
  await until('the daemon to be ready', () => h.readyPid() !== null && alive(h.readyPid()!));
  return h;
}

const WRITE = { tool_name: 'Write', tool_use_id: 'toolu_w1', tool_input: { file_path: '', content: 'new\n' } };
const BASH = { tool_name: 'Bash', tool_use_id: 'toolu_b1', tool_input: { command: "sed -i 's/a/b/' f.txt && mv x y" } };

/** One turn after the session's start: a Write and a Bash call, each between its Pre and Post hooks. */
async function turn(h: Http): Promise<void> {
  const { sb } = h;
  const write = { ...WRITE, tool_input: { ...WRITE.tool_input, file_path: sb.abs('src/new.txt') } };
  const quiet = (r: Awaited<ReturnType<typeof fireHooks>>, what: string) =>
    expect(r.commands.map((c) => [c.code, c.stdout, c.stderr]), what).toEqual(r.commands.map(() => [0, '', '']));
  quiet(await h.fire('UserPromptSubmit', { prompt: 'write and run' }), 'UserPromptSubmit');
  quiet(await h.fire('PreToolUse', write), 'Pre Write');
  sb.write('src/new.txt', 'new\n');
  quiet(await h.fire('PostToolUse', { ...write, tool_response: {} }), 'Post Write');
  quiet(await h.fire('PreToolUse', BASH), 'Pre Bash');
  sb.sh(BASH.tool_input.command);
  quiet(await h.fire('PostToolUse', { ...BASH, tool_response: {} }), 'Post Bash');
  quiet(await h.fire('Stop'), 'Stop');
}

/** What `list` says, without ids and times. */
function recorded(sb: Sandbox): unknown {
  const list = sb.json(['list']);
  return {
    turns: list.turns.map((t: any) => [t.id, t.agent, t.session, t.label, t.end !== null]),
    sets: setsOf(list).map((s: any) => [s.turn, s.source.kind, s.source.tool ?? null, s.source.toolCallId ?? null, filesOf(s)]),
  };
}

const EXPECTED = {
  turns: [['t1', 'claude-code', SESSION, 'write and run', true]],
  sets: [
    ['t1', 'tool', 'Write', 'toolu_w1', { src: 'created', 'src/new.txt': 'created' }],
    ['t1', 'command', 'Bash', 'toolu_b1', { 'f.txt': 'modified', x: 'deleted', y: 'created' }],
  ],
};

describe('init claude-code --http', () => {
  it('writes an http hook and a command hook beside it for each event (SessionStart: the command alone), in settings.local.json, 0600; plain init and --remove switch back exactly', async () => {
    const h = await httpSandbox();
    const { sb, port } = h;
    const s = JSON.parse(fs.readFileSync(h.settings, 'utf8'));
    const token = fs.readFileSync(path.join(sb.home, 'http-token'), 'utf8').trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.statSync(path.join(sb.home, 'http-token')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(h.settings).mode & 0o777).toBe(0o600);
    expect(Object.keys(s.hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'StopFailure']);
    expect(s.hooks.SessionStart).toEqual([{ hooks: [{ type: 'command', command: expect.stringMatching(new RegExp(`^if .*; then TAKEBACK_HOOK_HTTP_PORT=${port} .*takeback.* hook claude-code; (elif .*)?fi$`)), timeout: 30 }] }]);
    for (const ev of ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'StopFailure']) {
      const [group] = s.hooks[ev];
      expect(group.hooks[0]).toEqual({ type: 'http', url: `http://127.0.0.1:${port}/takeback/hook/claude-code`, headers: { Authorization: `Bearer ${token}` }, timeout: 30 });
      expect(group.hooks[1].type).toBe('command');
      expect(group.hooks[1].command).toContain(`/run/http-${port}.pid`);
      expect(group.hooks[1].command).toMatch(new RegExp(`\\|\\| if .*; then TAKEBACK_HOOK_HTTP_PORT=${port} .*takeback.* hook claude-code; (elif .*)?fi$`));
    }
    expect(s.hooks.PreToolUse[0].matcher).toBe('Write|Edit|MultiEdit|NotebookEdit|Bash');
    // The file with the token is kept out of git (the repository's own info/exclude).
    expect(sb.sh('git status --porcelain --untracked-files=all')).not.toContain('settings.local.json');
    expect(fs.readFileSync(path.join(sb.ws, '.git', 'info', 'exclude'), 'utf8')).toContain('/.claude/settings.local.json');
    expect(sb.json(['doctor']).problems).toEqual([]);
    // Twice: nothing changes.
    const before = fs.readFileSync(h.settings, 'utf8');
    expect(sb.tb(['init', 'claude-code', '--http', '--port', String(port)]).stdout).toContain('nothing to change in');
    expect(fs.readFileSync(h.settings, 'utf8')).toBe(before);
    // Plain init: command hooks in the same settings.local.json, the http hooks gone.
    const plain = sb.tb(['init', 'claude-code']);
    expect(plain.stdout).toContain(`added takeback hooks to ${h.settings}`);
    expect(JSON.stringify(JSON.parse(fs.readFileSync(h.settings, 'utf8')))).not.toContain('http');
    // --shared: command hooks in settings.json, taken out of settings.local.json.
    const shared = sb.tb(['init', 'claude-code', '--shared']);
    expect(shared.stdout).toContain(`added takeback hooks to ${path.join(sb.ws, '.claude', 'settings.json')}`);
    expect(shared.stdout).toContain(`removed takeback hooks from ${h.settings}`);
    expect(fs.existsSync(h.settings)).toBe(false); // made by init, left empty: gone
    expect(JSON.stringify(JSON.parse(fs.readFileSync(path.join(sb.ws, '.claude', 'settings.json'), 'utf8')))).not.toContain('http');
    // Back to http: out of settings.json again; --remove takes them out of both.
    sb.tb(['init', 'claude-code', '--http', '--port', String(port)]);
    expect(fs.existsSync(path.join(sb.ws, '.claude', 'settings.json'))).toBe(false);
    expect(fs.readFileSync(h.settings, 'utf8')).toBe(before);
    sb.tb(['init', 'claude-code', '--remove']);
    expect(fs.existsSync(h.settings)).toBe(false);
    // --user --http: the user's settings; other agents and bad ports are refused.
    const user = sb.tb(['init', 'claude-code', '--user', '--http', '--port', String(port)]);
    expect(user.code).toBe(0);
    // Hooks in the project's file and the user's: doctor says every event is handled twice.
    sb.tb(['init', 'claude-code', '--shared']);
    expect(sb.json(['doctor']).problems.join('\n')).toMatch(/claude-code hooks are in .*settings\.json and .*settings\.json: every event is handled twice/);
    sb.tb(['init', 'claude-code', '--remove']);
    expect(JSON.parse(fs.readFileSync(path.join(sb.userHome, '.claude', 'settings.json'), 'utf8')).hooks.Stop[0].hooks[0].type).toBe('http');
    expect(sb.tb(['init', 'codex', '--http']).code).toBe(2);
    expect(sb.tb(['init', 'claude-code', '--http', '--port', '70000']).code).toBe(2);
    expect(sb.tb(['init', 'claude-code', '--port', '3000']).code).toBe(2);
  });
});

describe('http hooks', () => {
  it('a new daemon writes its ready file well after its port opens: an event sent just before it listened is never left to nobody', async () => {
    // Claude Code sends each event to the http hook and the command hook at once. Were the ready
    // file (which tells the command hook to stand down) written as the port opens, an http
    // request refused a moment earlier and a command hook that found the file just after would
    // both leave the event (a session's first prompt, whose turn then went missing).
    const h = await httpSandbox();
    h.sb.write('f.txt', 'a\n');
    await h.fire('SessionStart', { source: 'startup' });
    const connects = () =>
      new Promise<boolean>((resolve) => {
        const c = net.connect(h.port, '127.0.0.1');
        c.once('connect', () => (c.destroy(), resolve(true)));
        c.once('error', () => resolve(false));
      });
    let opened = 0;
    await until('the daemon to listen', async () => {
      if (!(await connects())) return false;
      opened = Date.now();
      return true;
    });
    expect(fs.existsSync(h.ready)).toBe(false);
    await until('the ready file', () => h.readyPid() !== null && alive(h.readyPid()!));
    expect(Date.now() - opened).toBeGreaterThanOrEqual(1000);
  });

  it('with no daemon the command hooks record and start one; then the daemon takes every event, once, and the records are those of in-process hooks', async () => {
    const h = await httpSandbox();
    const { sb } = h;
    sb.write('f.txt', 'a cat sat\n');
    sb.write('x', 'x\n');
    // The session's start: a command hook only, in-process; it starts the daemon.
    const start = await h.fire('SessionStart', { source: 'startup' });
    expect(start.http).toEqual([]);
    expect(start.commands).toEqual([{ code: 0, stdout: '', stderr: '' }]);
    await until('the daemon to be ready', () => h.readyPid() !== null && alive(h.readyPid()!));
    const daemon = h.readyPid()!;
    expect(fs.statSync(h.ready).mode & 0o777).toBe(0o600);
    expect(sb.json(['doctor']).daemon.http).toEqual([{ port: h.port, pid: daemon, alive: true }]);
    expect(sb.tb(['doctor']).stdout).toContain(`daemon:     serving http hooks on 127.0.0.1:${h.port} (pid ${daemon})`);
    await turn(h);
    expect(recorded(sb)).toEqual(EXPECTED);
    const by = h.handledBy();
    expect(by.map((e) => e.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PreToolUse', 'PostToolUse', 'Stop']);
    expect(by[0]!.pid).not.toBe(daemon);
    expect(new Set(by.slice(1).map((e) => e.pid))).toEqual(new Set([daemon]));
    expect(h.failures()).toEqual([]);

    // SIGTERM: the ready file goes first; events a moment later are still answered (the grace
    // period) and then, the port closed, handled by the command hooks in-process, once.
    process.kill(daemon, 'SIGTERM');
    await until('the ready file to go', () => !fs.existsSync(h.ready));
    await until('the daemon to exit', () => !alive(daemon));
    const late = await h.fire('UserPromptSubmit', { prompt: 'after' });
    expect(late.http[0]!.status).toBeNull(); // refused: nobody listens
    expect(h.handledBy().filter((e) => e.event === 'UserPromptSubmit')).toHaveLength(2);
    expect(sb.json(['list']).turns.map((t: any) => t.label)).toEqual(['after', 'write and run']);
  });

  it('without a daemon every event is recorded in-process, exactly as plain command hooks record it', async () => {
    // The port is taken by something else: the daemon cannot serve it and leaves; the POSTs go
    // to that other server (and are refused there); the command hooks record everything.
    const other = net.createServer((c) => c.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
    const h = await httpSandbox();
    await new Promise<void>((resolve) => other.listen(h.port, '127.0.0.1', () => resolve()));
    onTestFinished(() => void other.close());
    const { sb } = h;
    sb.write('f.txt', 'a cat sat\n');
    sb.write('x', 'x\n');
    await h.fire('SessionStart', { source: 'startup' });
    await until('the daemon to give up the port', () => /cannot take http hooks on 127\.0\.0\.1:\d+ \(EADDRINUSE\)/.test(h.failures().join('\n')));
    await turn(h);
    expect(recorded(sb)).toEqual(EXPECTED);
    expect(h.readyPid()).toBeNull();
    const pids = h.handledBy().map((e) => e.pid);
    expect(new Set(pids).size).toBe(pids.length); // each event its own hook process
  });

  it('a new daemon whose port is still held a moment (a daemon leaving answers there for its grace) waits and takes it, rather than serving without http hooks', async () => {
    const other = net.createServer((c) => c.destroy());
    const h = await httpSandbox();
    await new Promise<void>((resolve) => other.listen(h.port, '127.0.0.1', () => resolve()));
    onTestFinished(() => void other.close());
    await h.fire('SessionStart', { source: 'startup' });
    const log = () => h.failures().join('\n');
    await until('the daemon to find the port taken', () => /127\.0\.0\.1:\d+ (is taken; waiting|\(EADDRINUSE\))/.test(log()));
    await new Promise<void>((resolve) => other.close(() => resolve()));
    await until('the daemon to be ready', () => h.readyPid() !== null && alive(h.readyPid()!));
    expect(log()).not.toMatch(/cannot take http hooks/);
    await h.fire('UserPromptSubmit', { prompt: 'once the port was free', prompt_id: 'p-free' });
    expect(h.handledBy().at(-1)).toEqual({ event: 'UserPromptSubmit', pid: h.readyPid() });
  });

  it('a killed daemon (its ready file left behind) is survived: the command hooks record in-process and start another', async () => {
    const h = await readySandbox();
    const { sb } = h;
    const first = h.readyPid()!;
    process.kill(first, 'SIGKILL');
    await until('the daemon to die', () => !alive(first));
    expect(h.readyPid()).toBe(first); // stale
    expect(sb.json(['doctor']).problems.join('\n')).toContain(`the capture daemon for http hooks on port ${h.port} (pid ${first}) is gone`);
    await turn(h);
    expect(recorded(sb)).toEqual(EXPECTED);
    // The first event after the kill ran in-process and started a new daemon.
    await until('a new daemon', () => h.readyPid() !== null && h.readyPid() !== first && alive(h.readyPid()!));
    expect(h.failures()).toEqual([]);
  });

  it('hooks whose token the daemon does not take (another home, a token made anew) run in-process: recorded once, and logged, and named by doctor', async () => {
    const h = await httpSandbox();
    const { sb } = h;
    sb.write('f.txt', 'a cat sat\n');
    sb.write('x', 'x\n');
    // The home's token is made anew after init (its file deleted): the daemon takes the new one.
    fs.rmSync(path.join(sb.home, 'http-token'));
    await h.fire('SessionStart', { source: 'startup' });
    await until('the daemon to be ready', () => h.readyPid() !== null && alive(h.readyPid()!));
    await turn(h);
    expect(recorded(sb)).toEqual(EXPECTED);
    const daemon = h.readyPid()!;
    expect(h.handledBy().some((e) => e.pid === daemon)).toBe(false); // every event in-process
    const log = h.failures().join('\n');
    expect(log).toMatch(/refused an http request \(401 wrong token\)/);
    expect(log).toMatch(/http hooks in .* carry a token the capture daemon of this TAKEBACK_HOME does not take/);
    expect(sb.json(['doctor']).problems.join('\n')).toMatch(/the http hooks in .*settings\.local\.json carry a token that .*http-token does not hold/);
    // init --http again: the hooks take the daemon's token, and the daemon takes the events.
    sb.tb(['init', 'claude-code', '--http', '--port', String(h.port)]);
    expect(sb.json(['doctor']).problems).toEqual([]);
    await h.fire('UserPromptSubmit', { prompt: 'again', prompt_id: 'p-again' });
    expect(h.handledBy().at(-1)).toEqual({ event: 'UserPromptSubmit', pid: daemon });
  });

  it('a killed daemon not yet reaped (a zombie: kill -0 still succeeds) is passed over: its port is closed, the command hooks record', async () => {
    const h = await httpSandbox();
    const { sb } = h;
    sb.write('f.txt', 'a cat sat\n');
    sb.write('x', 'x\n');
    const daemon = await zombieDaemon(h);
    await h.fire('SessionStart', { source: 'startup' });
    await turn(h);
    expect(recorded(sb)).toEqual(EXPECTED);
    // And the first hook that found it dead started another (a zombie is not taken for alive).
    await until('a new daemon', () => h.readyPid() !== null && h.readyPid() !== daemon && alive(h.readyPid()!));
  });

  it("a new daemon takes a dead daemon's ready file away before its port opens: a prompt whose POST was refused just before is recorded by its command hook", async () => {
    // The order a loaded machine can give at a session's start, forced: the prompt's POST is
    // refused (no daemon listens yet); a new daemon opens the port and is held there before its
    // ready file; only then does the prompt's command hook look. Were the zombie's ready file
    // still there, the hook would find a pid kill -0 passes and a port that answers, and stand
    // down: the prompt would be left to nobody (no turn, its tool calls outside any turn).
    const h = await httpSandbox();
    const { sb } = h;
    const zombie = await zombieDaemon(h);
    const ev = JSON.stringify({ session_id: SESSION, cwd: sb.ws, hook_event_name: 'UserPromptSubmit', prompt: 'sent while a daemon started' });
    const [post, command] = JSON.parse(fs.readFileSync(h.settings, 'utf8')).hooks.UserPromptSubmit[0].hooks;
    const refused = await fetch(post.url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...post.headers }, body: ev }).then(
      (r) => r.status,
      () => null,
    );
    expect(refused).toBeNull();
    // Started as a hook starts one, its start stamped: the prompt's hook below starts no other.
    fs.writeFileSync(path.join(sb.home, 'run', `http-${h.port}.starting`), '');
    const next = spawn(process.execPath, [BIN, 'hook-daemon'], { env: { ...sb.env, TAKEBACK_HOOK_HTTP_PORT: String(h.port), TAKEBACK_HOOK_DAEMON_READY_MS: '600000' }, stdio: 'ignore' });
    onTestFinished(() => void next.kill('SIGKILL'));
    await until('the new daemon to listen', () => listens(h.port));
    const r = spawnSync('bash', ['-c', command.command], { cwd: sb.ws, env: sb.env, input: ev, encoding: 'utf8' });
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(sb.json(['list']).turns.map((t: any) => t.label)).toEqual(['sent while a daemon started']);
    expect(h.handledBy().map((e) => e.event)).toEqual(['UserPromptSubmit']); // once
    expect(h.readyPid()).toBeNull(); // the zombie's gone, the new daemon's not yet written
    expect(alive(zombie)).toBe(true);
  });

  it("a session's first hook with no daemon starts one daemon, not one from the hook and another from its forwarder", async () => {
    // Two daemons started at once race for the socket and the port: one can end up with the
    // port and the other with the socket, and the one with the port then leaves. (The
    // forwarder runs only with the daemon on, as a person's hooks have it.)
    const h = await httpSandbox({ TAKEBACK_HOOK_DAEMON: '1' });
    const starts = () => h.starts();
    const start = await h.fire('SessionStart', { source: 'startup' });
    expect(start.commands).toEqual([{ code: 0, stdout: '', stderr: '' }]);
    expect(starts()).toHaveLength(1);
    expect(starts()[0]).toContain(`for http hooks on 127.0.0.1:${h.port}`);
    await until('the daemon to be ready', () => h.readyPid() !== null && alive(h.readyPid()!));
    // A second session's start a moment later finds it ready and starts none.
    await h.fire('SessionStart', { source: 'startup' });
    expect(starts()).toHaveLength(1);
  });

  it('the daemon keeps the journal open between events: an undo by another process, and the journal deleted and made anew, are seen', async () => {
    const h = await readySandbox();
    const { sb } = h;
    const daemon = h.readyPid()!;
    await turn(h);
    expect(recorded(sb)).toEqual(EXPECTED);
    // Another process undoes the turn; the daemon's next command bracket starts from that tree.
    expect(sb.tb(['undo', '--turn', 't1']).code).toBe(0);
    expect(sb.exists('y')).toBe(false);
    const bash = { tool_name: 'Bash', tool_use_id: 'toolu_b2', tool_input: { command: 'echo z > z.txt' } };
    await h.fire('UserPromptSubmit', { prompt: 'after the undo', prompt_id: 'p-2' });
    await h.fire('PreToolUse', bash);
    sb.sh(bash.tool_input.command);
    await h.fire('PostToolUse', { ...bash, tool_response: {} });
    await h.fire('Stop');
    const sets = setsOf(sb.json(['list']));
    expect(sets.map((x: any) => [x.turn, x.state, filesOf(x)])).toEqual([
      ['t1', 'undone', { src: 'created', 'src/new.txt': 'created' }],
      ['t1', 'undone', { 'f.txt': 'modified', x: 'deleted', y: 'created' }],
      ['t2', 'applied', { 'z.txt': 'created' }],
    ]);
    // The journal deleted under the daemon: the next events go to a journal made anew, not to the deleted file.
    fs.rmSync(sb.journalDir(), { recursive: true });
    await h.fire('UserPromptSubmit', { prompt: 'a new journal', prompt_id: 'p-3' });
    expect(sb.json(['list']).turns.map((t: any) => t.label)).toEqual(['a new journal']);
    expect(h.handledBy().filter((e) => e.event === 'UserPromptSubmit').at(-1)!.pid).toBe(daemon);
  });

  it('the same prompt handled twice (the http hook and the command hook, as a daemon comes or goes) begins one turn', async () => {
    const h = await httpSandbox();
    const { sb } = h;
    const ev = { session_id: SESSION, cwd: sb.ws, hook_event_name: 'UserPromptSubmit', prompt: 'once', prompt_id: 'p-once' };
    expect(sb.hook(ev).code).toBe(0);
    expect(sb.hook(ev).code).toBe(0);
    expect(sb.json(['list']).turns.map((t: any) => t.label)).toEqual(['once']);
    expect(sb.hook({ ...ev, prompt: 'twice', prompt_id: 'p-twice' }).code).toBe(0);
    expect(sb.json(['list']).turns.map((t: any) => t.label)).toEqual(['twice', 'once']);
  });

  it('while a new daemon is not yet ready, each event reaches both halves and is recorded once, whichever records it first: a prompt without an id is one turn, each tool call one set', async () => {
    // The prompt carries no prompt_id (Claude Code leaves it out at times; earlier versions
    // never sent it): what tells the second half's prompt for the first's is the session, the
    // prompt's text and a turn that holds nothing yet.
    const h = await startingSandbox();
    const { sb } = h;
    const write = { ...WRITE, tool_input: { ...WRITE.tool_input, file_path: sb.abs('src/new.txt') } };
    const steps: [string, object, Order, (() => void)?][] = [
      ['UserPromptSubmit', { prompt: 'write and run' }, 'post first'],
      ['PreToolUse', write, 'command first', () => sb.write('src/new.txt', 'new\n')],
      ['PostToolUse', { ...write, tool_response: {} }, 'at once'],
      ['PreToolUse', BASH, 'at once', () => sb.sh(BASH.tool_input.command)],
      ['PostToolUse', { ...BASH, tool_response: {} }, 'post first'],
      ['Stop', {}, 'command first'],
    ];
    for (const [name, extra, order, then] of steps) {
      expect(await bothHalves(h, name, extra, order), `${name}, ${order}`).toEqual({ status: 200, command: [0, '', ''] });
      then?.();
    }
    expect(recorded(sb)).toEqual(EXPECTED);
    // Each event of the turn was handled twice: by the daemon and by a command hook in-process.
    expect(h.readyPid()).toBeNull();
    const by = h.handledBy().slice(1);
    expect(by.map((e) => e.event)).toEqual(steps.flatMap(([name]) => [name, name]));
    for (let i = 0; i < by.length; i += 2) expect(by[i]!.pid, by[i]!.event).not.toBe(by[i + 1]!.pid);
    // The same prompt sent again once the turn has ended is a turn of its own (both halves again: one).
    await bothHalves(h, 'UserPromptSubmit', { prompt: 'write and run' }, 'command first');
    await bothHalves(h, 'UserPromptSubmit', { prompt: 'write and run' }, 'post first');
    expect(sb.json(['list']).turns.map((t: any) => [t.id, t.label])).toEqual([
      ['t2', 'write and run'],
      ['t1', 'write and run'],
    ]);
    expect(h.failures()).toEqual([]);
  });

  it('while a new daemon is not yet ready, a half that finds the journal held queues its event: folded in after its twin recorded it, it begins no second turn and no second tool call', async () => {
    // A writer holds the journal's lock (stopped) while the command half runs: it waits its
    // second and queues the event in the spill; the next event folds it in, after the daemon
    // recorded the same event. Folded as it stands, the prompt would end the turn and begin
    // another, and the tool call's begin would replace the one kept, its changes named not kept.
    const h = await startingSandbox();
    const { sb } = h;
    // The daemon's half first, with the lock free: it records the event. Then the command half, behind the lock.
    const behindTheLock = async (name: string, extra: object) => {
      const { post, command } = halvesOf(h, name, extra);
      const status = await post();
      const writer = await stoppedWriter(sb);
      const r = { status, command: await command() };
      const gone = new Promise((resolve) => writer.once('exit', resolve));
      writer.kill('SIGCONT');
      await gone;
      return r;
    };
    const steps: [string, object, (() => void)?][] = [
      ['UserPromptSubmit', { prompt: 'write and run' }],
      ['PreToolUse', BASH, () => sb.sh(BASH.tool_input.command)],
      ['PostToolUse', { ...BASH, tool_response: {} }],
      ['Stop', {}],
    ];
    for (const [name, extra, then] of steps) {
      expect(await behindTheLock(name, extra), name).toEqual({ status: 200, command: [0, '', ''] });
      then?.();
    }
    const queued = h.failures().filter((l) => /the journal cannot take the event now \(journal-busy/.test(l));
    expect(queued.map((l) => /queued ([\w-]+)/.exec(l)?.[1])).toEqual(['turn-begin', 'command-begin', 'end', 'turn-end']);
    // The last one is folded in by the next command that writes.
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    const list = sb.json(['list']);
    expect(list.turns.map((t: any) => [t.id, t.label, t.end !== null])).toEqual([['t1', 'write and run', true]]);
    expect(setsOf(list).filter((x: any) => x.turn === 't1').map((x: any) => [x.source.toolCallId ?? null, filesOf(x), x.files.map((f: any) => f.gap ?? null)])).toEqual([
      ['toolu_b1', { 'f.txt': 'modified', x: 'deleted', y: 'created' }, [null, null, null]],
    ]);
    expect(sb.json(['doctor']).unkept).toBeNull(); // nothing named as not kept
  });

  it('the daemon refuses requests without the token, naming another host, or not JSON, and records nothing for them', async () => {
    const h = await httpSandbox();
    const { sb, port } = h;
    await h.fire('SessionStart', { source: 'startup' });
    await until('the daemon to be ready', () => h.readyPid() !== null && alive(h.readyPid()!));
    const token = fs.readFileSync(path.join(sb.home, 'http-token'), 'utf8').trim();
    const body = JSON.stringify({ session_id: SESSION, cwd: sb.ws, hook_event_name: 'UserPromptSubmit', prompt: 'forged' });
    const url = `http://127.0.0.1:${port}/takeback/hook/claude-code`;
    const send = async (headers: Record<string, string>, opts: { method?: string; url?: string } = {}) =>
      (await fetch(opts.url ?? url, { method: opts.method ?? 'POST', headers, body: opts.method === 'GET' ? undefined : body })).status;
    expect(await send({ 'Content-Type': 'application/json' })).toBe(401);
    expect(await send({ 'Content-Type': 'application/json', Authorization: `Bearer ${'0'.repeat(64)}` })).toBe(401);
    expect(await send({ 'Content-Type': 'text/plain', Authorization: `Bearer ${token}` })).toBe(415);
    expect(await rawStatus(port, { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, Host: `evil.example:${port}` }, body)).toBe(403);
    expect(await rawStatus(port, { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, Host: `localhost:${port}` }, '{')).toBe(200); // taken, not JSON: logged
    expect(await send({ Authorization: `Bearer ${token}` }, { method: 'GET' })).toBe(405);
    expect(await send({ 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, { url: `http://127.0.0.1:${port}/other` })).toBe(404);
    expect(sb.json(['list']).turns).toEqual([]);
    expect(h.failures().join('\n')).toMatch(/input is not JSON/);
    // The right request is taken.
    expect(await send({ 'Content-Type': 'application/json', Authorization: `Bearer ${token}` })).toBe(200);
    expect(sb.json(['list']).turns.map((t: any) => t.label)).toEqual(['forged']);
  });
});
