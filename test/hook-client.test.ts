// The hook client (native/hook-client.c): `takeback hook <agent>` run as a command (bin/takeback.js
// through /bin/sh, as an agent runs it) hands the event to the capture daemon without starting
// Node, and starts the Node hook only when no daemon takes it. Real processes, the real binary
// over real stdio, a real daemon, or a test's own listener on the socket where one must answer.
//
// That a hook was handled without Node is shown by NODE_OPTIONS naming a module that does not
// exist: a Node started by that hook fails and says so on stderr. The daemon never gets the
// variable (it is not one the hook passes on).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, REPO_ROOT, sandbox, setsOf, filesOf, type Run, type Sandbox } from './support/takeback.js';
import { alive, until } from './support/procs.js';
import { answers, failures, handledBy, isDaemon, quiet, reapDaemons, socketFile, startDaemon } from './support/daemon.js';

const CLIENT = path.join(REPO_ROOT, 'native', 'build-hook', 'takeback-hook');
const built = fs.existsSync(CLIENT);
const SESSION = 'c11e0700-0000-4000-8000-000000000001';
/** Makes any Node started with it fail at once, loudly. */
const NO_NODE = { NODE_OPTIONS: '--require=/nonexistent/takeback-hook-client-test.cjs' };

function clientSandbox(env: NodeJS.ProcessEnv = {}): Sandbox {
  return sandbox({ git: true, env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '20000', TAKEBACK_LOG_LEVEL: 'debug', ...env } });
}

function ev(sb: Sandbox, name: string, extra: object = {}): string {
  return JSON.stringify({ session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra });
}

/** Runs `file ...args` (a script run as a command, or a program), `input` on stdin; resolves when it exits. */
function run(file: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input: string | Buffer }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** `takeback hook claude-code` as an agent runs it: bin/takeback.js as a command. */
function command(sb: Sandbox, input: string | Buffer, env: NodeJS.ProcessEnv = {}, bin = BIN): Promise<Run> {
  return run(bin, ['hook', 'claude-code'], { cwd: sb.ws, env: { ...sb.env, ...env }, input });
}

/** `node bin/takeback.js hook claude-code`: Node's own forwarder (server/cli/forward.ts). */
function viaNode(sb: Sandbox, input: string | Buffer, env: NodeJS.ProcessEnv = {}, bin = BIN): Promise<Run> {
  return run(process.execPath, [bin, 'hook', 'claude-code'], { cwd: sb.ws, env: { ...sb.env, ...env }, input });
}

/** The socket path Node's rule gives (server/daemon/address.ts) for the install at `root` and the home `env` resolves to. */
function nodeSocketPath(root: string, env: NodeJS.ProcessEnv): string {
  const url = (f: string) => pathToFileURL(path.join(root, 'dist', 'server', f)).href;
  const script = `const { takebackHome } = await import(${JSON.stringify(url('core/home.js'))}); const { socketPath } = await import(${JSON.stringify(url('daemon/address.js'))}); process.stdout.write(socketPath(takebackHome()));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
}

interface Listener {
  /** Each request line received, parsed, without its `deadline` (see {@link deadlines}). */
  requests: unknown[];
  /** Each request's `deadline` less the monotonic clock when it came (ms): how long its client would still wait for a claim. */
  deadlines: number[];
  /** Each line a client sent after its request ("go"). */
  after: string[];
  /** Connections made. */
  connections(): number;
}

/**
 * A stand-in daemon on `socket`: it claims each event and answers ok once it hears "go"
 * (`claims`), or takes the event with no "go" and answers ok at once (`takes`), or takes the
 * connection and says nothing. Closed when the test ends.
 */
async function listen(socket: string, claims: boolean | 'takes'): Promise<Listener> {
  fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 });
  const requests: unknown[] = [];
  const deadlines: number[] = [];
  const after: string[] = [];
  let connections = 0;
  const sockets: net.Socket[] = [];
  const server = net.createServer((sock) => {
    connections++;
    sockets.push(sock);
    let buf = '';
    let lines = 0;
    sock.setEncoding('utf8');
    sock.on('error', () => {});
    sock.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (lines++ === 0) {
          const { deadline, ...req } = JSON.parse(line);
          requests.push(req);
          deadlines.push(deadline - Number(process.hrtime.bigint() / 1_000_000n));
          if (claims === 'takes') sock.end('{"claim":true,"taken":true}\n{"ok":true}\n');
          else if (claims) sock.write('{"claim":true}\n');
        } else {
          after.push(line);
          if (line === '{"go":true}') sock.end('{"ok":true}\n');
        }
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, resolve);
  });
  onTestFinished(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });
  return { requests, deadlines, after, connections: () => connections };
}

/** An event whose text holds what JSON must escape: quotes, a backslash, control characters, U+2028, a letter outside the BMP. */
function oddEvent(sb: Sandbox): string {
  return ev(sb, 'PreToolUse', { tool_name: 'Bash', tool_use_id: 'toolu_odd', tool_input: { command: 'printf "a\\tb\\n" \u0001 \u001f \u007f é \u2028 😀 \\\\' } });
}

/** Environment variables of every kind the hook passes on, or not. */
const ODD_ENV: NodeJS.ProcessEnv = {
  GIT_AUTHOR_NAME: 'Zoë "quoted" \\ back\nline',
  TAKEBACK_EXTRA_SETTING: 'x\ty\u0002',
  XDG_CONFIG_HOME: '/nowhere/config',
  NOT_PASSED_ON: 'secret',
  NODE_EXTRA_CA_CERTS: '/nonexistent/ca.pem',
};

/**
 * This checkout installed as `npm i -g .` does under `prefix`: the package folder a link in
 * `<prefix>/lib/node_modules`, and `<prefix>/bin/takeback` a relative link to its script through
 * it. Returns `<prefix>/bin`.
 */
function npmGlobalInstall(prefix: string): string {
  fs.mkdirSync(path.join(prefix, 'lib', 'node_modules'), { recursive: true });
  fs.mkdirSync(path.join(prefix, 'bin'));
  fs.symlinkSync(REPO_ROOT, path.join(prefix, 'lib', 'node_modules', 'takeback'));
  fs.symlinkSync('../lib/node_modules/takeback/bin/takeback.js', path.join(prefix, 'bin', 'takeback'));
  return path.join(prefix, 'bin');
}

describe.runIf(built)('the hook client', () => {
  it('and Node\'s forwarder compute the same socket path and send the same request (TAKEBACK_HOME, XDG_STATE_HOME or HOME; a symlink on PATH)', async () => {
    const sb = clientSandbox();
    const homes: [string, NodeJS.ProcessEnv][] = [
      ['TAKEBACK_HOME', {}],
      ['XDG_STATE_HOME, not normalised', { TAKEBACK_HOME: '', XDG_STATE_HOME: `${sb.base}//state/./x/../` }],
      ['HOME, a trailing slash', { TAKEBACK_HOME: undefined, XDG_STATE_HOME: undefined, HOME: `${sb.userHome}/` }],
    ];
    // takeback on PATH as npm installs it: a link to a link to the script, the first one relative.
    const lib = path.join(sb.base, 'lib');
    const onPath = path.join(sb.base, 'bin');
    fs.mkdirSync(lib);
    fs.mkdirSync(onPath);
    fs.symlinkSync(BIN, path.join(lib, 'takeback.js'));
    fs.symlinkSync('../lib/takeback.js', path.join(onPath, 'takeback'));
    // And as `npm i -g .` does: a link to the script inside a link to the package's folder.
    const globalBin = npmGlobalInstall(path.join(sb.base, 'prefix'));
    for (const [what, homeEnv] of homes) {
      const env: NodeJS.ProcessEnv = { ...sb.env, ...ODD_ENV, ...homeEnv };
      for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
      const socket = nodeSocketPath(REPO_ROOT, env);
      const daemon = await listen(socket, true);
      quiet(await run(BIN, ['hook', 'claude-code'], { cwd: sb.ws, env: { ...env, ...NO_NODE }, input: oddEvent(sb) }), `${what}: the client`);
      const pathEnv = { ...env, ...NO_NODE, PATH: `${onPath}:${env.PATH}` };
      quiet(await run('/bin/sh', ['-c', 'takeback hook claude-code'], { cwd: sb.ws, env: pathEnv, input: oddEvent(sb) }), `${what}: the client through PATH`);
      const globalEnv = { ...env, ...NO_NODE, PATH: `${globalBin}:${env.PATH}` };
      quiet(await run('/bin/sh', ['-c', 'takeback hook claude-code'], { cwd: sb.ws, env: globalEnv, input: oddEvent(sb) }), `${what}: the client as npm i -g installs it`);
      const { NODE_EXTRA_CA_CERTS: _, ...nodeEnv } = env;
      quiet(await run(process.execPath, [BIN, 'hook', 'claude-code'], { cwd: sb.ws, env: nodeEnv, input: oddEvent(sb) }), `${what}: Node`);
      expect(daemon.requests, what).toHaveLength(4);
      const [client, throughPath, throughGlobal, node] = daemon.requests as any[];
      expect(node.env.NOT_PASSED_ON, what).toBeUndefined();
      expect(node.text, what).toBe(oddEvent(sb));
      expect(client, what).toEqual(node);
      expect(throughPath, what).toEqual({ ...node, env: { ...node.env, PATH: pathEnv.PATH } });
      expect(throughGlobal, what).toEqual({ ...node, env: { ...node.env, PATH: globalEnv.PATH } });
      // Each names when it stops waiting for a claim: at most 3 s on, and not passed yet.
      for (const left of daemon.deadlines) {
        expect(left, what).toBeGreaterThan(0);
        expect(left, what).toBeLessThanOrEqual(3000);
      }
      expect(daemon.after, what).toEqual(Array(4).fill('{"go":true}'));
    }
  });

  it('and Node\'s forwarder, their event taken at the claim: no "go", done at the answer', async () => {
    const sb = clientSandbox();
    const daemon = await listen(nodeSocketPath(REPO_ROOT, sb.env), 'takes');
    quiet(await command(sb, ev(sb, 'Stop'), NO_NODE), 'the client');
    quiet(await viaNode(sb, ev(sb, 'Stop'), {}), 'Node');
    expect(daemon.requests).toHaveLength(2);
    expect(daemon.requests[0]).toEqual(daemon.requests[1]);
    expect(daemon.after).toEqual([]);
    // Neither ran the event itself: nothing in a journal, nothing said in the log.
    expect(fs.existsSync(path.join(sb.home, 'workspaces'))).toBe(false);
  });

  it('is found through npm\'s links (`npm i -g`, and node_modules/.bin) by the shell\'s own tests, with no readlink or node on PATH', async () => {
    const sb = clientSandbox();
    const globalBin = npmGlobalInstall(path.join(sb.base, 'prefix'));
    const project = path.join(sb.base, 'project', 'node_modules');
    fs.mkdirSync(path.join(project, '.bin'), { recursive: true });
    fs.symlinkSync(REPO_ROOT, path.join(project, 'takeback'));
    fs.symlinkSync('../takeback/bin/takeback.js', path.join(project, '.bin', 'takeback'));
    const daemon = await listen(nodeSocketPath(REPO_ROOT, sb.env), true);
    // Only takeback's own folder on PATH: following the link with `readlink` would find nothing
    // to run, and the Node it would fall back to is not there either.
    for (const onPath of [globalBin, path.join(project, '.bin')]) {
      quiet(await run('/bin/sh', ['-c', 'takeback hook claude-code'], { cwd: sb.ws, env: { ...sb.env, ...NO_NODE, PATH: onPath }, input: ev(sb, 'Stop') }), onPath);
    }
    expect(daemon.requests).toHaveLength(2);
    expect((daemon.requests as any[]).map((r) => r.agent)).toEqual(['claude-code', 'claude-code']);
  });

  it('and Node agree on an install whose folder and version are not ASCII (UTF-16 code units in the hash, JSON escapes in package.json)', async () => {
    const sb = clientSandbox();
    const root = path.join(sb.base, 'opt', 'tåkeback-😀');
    for (const part of ['bin', 'dist', path.join('native', 'build-hook')]) fs.cpSync(path.join(REPO_ROOT, part), path.join(root, part), { recursive: true });
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'));
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
    // A "version" in an object before the package's own, and the package's own with escapes.
    const text = JSON.stringify({ config: { version: 'not this one' }, name: pkg.name, version: '0.0.0-placeholder', type: pkg.type }, null, 2).replace('0.0.0-placeholder', '9.1.0-\\u00fc\\u0041\\ud83d\\ude00');
    fs.writeFileSync(path.join(root, 'package.json'), text);
    const bin = path.join(root, 'bin', 'takeback.js');
    const socket = nodeSocketPath(root, sb.env);
    expect(path.basename(socket)).toMatch(/^capture-9\.1\.0-üA😀-[0-9a-f]{8}\.sock$/);
    const daemon = await listen(socket, true);
    quiet(await command(sb, ev(sb, 'Stop'), NO_NODE, bin), 'the client');
    quiet(await viaNode(sb, ev(sb, 'Stop'), {}, bin), 'Node');
    expect(daemon.requests).toHaveLength(2);
    expect(daemon.requests[0]).toEqual(daemon.requests[1]);
  });

  it('hands a session\'s events to a live daemon without starting Node, and they are recorded', async () => {
    const sb = clientSandbox();
    const daemon = await startDaemon(sb);
    sb.write('f.txt', 'a cat sat\n');
    quiet(await command(sb, ev(sb, 'SessionStart', { source: 'startup' }), NO_NODE), 'SessionStart');
    quiet(await command(sb, ev(sb, 'UserPromptSubmit', { prompt: 'run it' }), NO_NODE), 'UserPromptSubmit');
    const bash = { tool_name: 'Bash', tool_use_id: 'toolu_c1', tool_input: { command: "sed -i 's/a/b/' f.txt" } };
    quiet(await command(sb, ev(sb, 'PreToolUse', bash), NO_NODE), 'PreToolUse');
    sb.sh("sed -i 's/a/b/' f.txt");
    quiet(await command(sb, ev(sb, 'PostToolUse', { ...bash, tool_response: {} }), NO_NODE), 'PostToolUse');
    quiet(await command(sb, ev(sb, 'Stop'), NO_NODE), 'Stop');
    // list first: it waits for the record of the Stop, which the daemon answers before it.
    const sets = setsOf(sb.json(['list']));
    expect(sets.map((s: any) => [s.turn, s.source.toolCallId, filesOf(s)])).toEqual([['t1', 'toolu_c1', { 'f.txt': 'modified' }]]);
    const by = handledBy(sb);
    expect(by.map((h) => h.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']);
    expect(new Set(by.map((h) => h.pid))).toEqual(new Set([daemon.pid]));
    expect(failures(sb)).toEqual([]);
  });

  it('with no daemon: the event is recorded once, in process, and a session start starts a daemon that takes the next one', async () => {
    const sb = clientSandbox();
    reapDaemons(sb);
    quiet(await command(sb, ev(sb, 'SessionStart', { source: 'startup' })), 'SessionStart');
    await until('a daemon to answer', async () => {
      const f = socketFile(sb);
      return f !== null && (await answers(f));
    }, 60_000);
    quiet(await command(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' }), NO_NODE), 'UserPromptSubmit');
    const by = handledBy(sb);
    expect(by.map((h) => h.event)).toEqual(['SessionStart', 'UserPromptSubmit']);
    expect(isDaemon(by[0]!.pid)).toBe(false);
    expect(isDaemon(by[1]!.pid)).toBe(true);
    expect(failures(sb)).toEqual([]);
    expect(sb.json(['list']).turns).toHaveLength(1);
  });

  it('a daemon that never claims the event: after the wait, the Node hook records it once and does not ask the daemon again', async () => {
    const sb = clientSandbox();
    const daemon = await listen(nodeSocketPath(REPO_ROOT, sb.env), false);
    quiet(await command(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })), 'UserPromptSubmit');
    const w = { tool_name: 'Write', tool_use_id: 'toolu_n1', tool_input: { file_path: sb.abs('n1.txt'), content: '1\n' } };
    quiet(await command(sb, ev(sb, 'PreToolUse', w)), 'PreToolUse');
    sb.write('n1.txt', '1\n');
    quiet(await command(sb, ev(sb, 'PostToolUse', { ...w, tool_response: {} })), 'PostToolUse');
    expect(daemon.connections()).toBe(3); // one for each hook: the client's
    expect(handledBy(sb).map((h) => h.event)).toEqual(['UserPromptSubmit', 'PreToolUse', 'PostToolUse']);
    expect(setsOf(sb.json(['list'])).map((s: any) => [s.source.toolCallId, filesOf(s)])).toEqual([['toolu_n1', { 'n1.txt': 'created' }]]);
    expect(failures(sb)).toEqual([]);
  });

  it('a real daemon stopped (SIGSTOP) past the wait: the hook records the event itself, once', async () => {
    const sb = clientSandbox();
    const daemon = await startDaemon(sb);
    quiet(await command(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' }), NO_NODE));
    daemon.kill('SIGSTOP');
    onTestFinished(() => {
      daemon.kill('SIGCONT');
    });
    const w = { tool_name: 'Write', tool_use_id: 'toolu_s1', tool_input: { file_path: sb.abs('s1.txt'), content: '1\n' } };
    quiet(await command(sb, ev(sb, 'PreToolUse', w)));
    daemon.kill('SIGCONT');
    sb.write('s1.txt', '1\n');
    quiet(await command(sb, ev(sb, 'PostToolUse', { ...w, tool_response: {} }), NO_NODE));
    // list first: it waits for the daemon's record of the end (a tool call's end whose begin the
    // daemon did not see is answered before its record), and the log is read after it.
    expect(setsOf(sb.json(['list'])).map((s: any) => [s.source.toolCallId, filesOf(s)])).toEqual([['toolu_s1', { 's1.txt': 'created' }]]);
    expect(handledBy(sb).map((h) => [h.event, h.pid === daemon.pid])).toEqual([
      ['UserPromptSubmit', true],
      ['PreToolUse', false],
      ['PostToolUse', true],
    ]);
    expect(failures(sb)).toEqual([]);
  });

  it('gives Node the same stdin bytes when no daemon runs, past a pipe\'s buffer too (a 2 MB Write)', async () => {
    const sb = clientSandbox();
    const content = 'x'.repeat(2 * 1024 * 1024 - 1) + '\n';
    // A tool call's hooks start no daemon: both run in process.
    const w = { tool_name: 'Write', tool_use_id: 'toolu_big', tool_input: { file_path: sb.abs('big.txt'), content } };
    quiet(await command(sb, ev(sb, 'PreToolUse', w)));
    sb.write('big.txt', content);
    quiet(await command(sb, ev(sb, 'PostToolUse', { ...w, tool_response: {} })));
    expect(socketFile(sb)).toBeNull();
    expect(setsOf(sb.json(['list'])).map((s: any) => [s.source.toolCallId, filesOf(s)])).toEqual([['toolu_big', { 'big.txt': 'created' }]]);
    expect(failures(sb)).toEqual([]);
  });

  it('never prints and exits 0: garbage or non-UTF-8 stdin, a home that is a file, a socket path too long', async () => {
    const sb = clientSandbox();
    const daemon = await startDaemon(sb);
    for (const input of ['not json at all', '', Buffer.from([0xff, 0xfe, 0x00, 0x7b]), '{"hook_event_name":'])
      quiet(await command(sb, input), `stdin ${JSON.stringify(input.toString())}`);
    expect(alive(daemon.pid!)).toBe(true);

    const file = path.join(sb.base, 'a-file');
    fs.writeFileSync(file, 'not a folder');
    quiet(await command(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { TAKEBACK_HOME: file }), 'a home that is a file');
    // A home nobody may enter (root may enter any: there the home is only written as usual).
    const shut = path.join(sb.base, 'shut');
    fs.mkdirSync(path.join(shut, 'run'), { recursive: true });
    fs.chmodSync(shut, 0o000);
    try {
      quiet(await command(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { TAKEBACK_HOME: shut }), 'a home that cannot be entered');
    } finally {
      fs.chmodSync(shut, 0o700);
    }

    const deep = path.join(sb.base, 'h'.repeat(60), 'o'.repeat(60));
    const far = clientSandbox({ TAKEBACK_HOME: deep });
    quiet(await command(far, ev(far, 'UserPromptSubmit', { prompt: 'p' })), 'a socket path too long');
    expect(far.json(['list']).turns).toHaveLength(1); // recorded in process
    expect(fs.existsSync(path.join(deep, 'run'))).toBe(false); // and no daemon tried
  });

  it('TAKEBACK_HOOK_DAEMON off (each of its values, any case): the hook runs in process; TAKEBACK_NATIVE=0: Node forwards', async () => {
    const sb = clientSandbox();
    const daemon = await startDaemon(sb);
    const { SWITCH_OFF } = (await import(pathToFileURL(path.join(REPO_ROOT, 'dist', 'server', 'core', 'switch.js')).href)) as { SWITCH_OFF: string[] };
    for (const value of [...SWITCH_OFF, 'OFF', 'False']) quiet(await command(sb, ev(sb, 'UserPromptSubmit', { prompt: value }), { TAKEBACK_HOOK_DAEMON: value }), value);
    expect(handledBy(sb).some((h) => h.pid === daemon.pid)).toBe(false);
    expect(handledBy(sb)).toHaveLength(SWITCH_OFF.length + 2);
    const r = await command(sb, ev(sb, 'UserPromptSubmit', { prompt: 'n' }), { TAKEBACK_NATIVE: '0', ...NO_NODE });
    expect(r.stderr).toMatch(/takeback-hook-client-test/); // Node was started
    quiet(await command(sb, ev(sb, 'UserPromptSubmit', { prompt: 'm' }), { TAKEBACK_NATIVE: '0' }));
    expect(handledBy(sb).at(-1)!.pid).toBe(daemon.pid);
  });
});

describe('the Node hook told of a hand-over', () => {
  it('by a client that asked another socket: logs it and hands the event to the daemon itself', async () => {
    const sb = clientSandbox();
    const daemon = await startDaemon(sb);
    quiet(await viaNode(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { TAKEBACK_HOOK_FORWARDED: `no-daemon ${sb.home}/run/capture-elsewhere.sock` }));
    expect(handledBy(sb)).toEqual([{ event: 'UserPromptSubmit', pid: daemon.pid }]);
    expect(failures(sb)).toEqual([expect.stringMatching(/the hook client asked for "no-daemon .*capture-elsewhere\.sock", not this install's socket .*: the event goes to the daemon from Node$/)]);
  });
});

describe('the hook client\'s build', () => {
  it('never fails the install: without a compiler it says so, exits 0 and leaves no program; with one it builds it', () => {
    const sb = sandbox();
    // The build script and the source in a folder of their own, as an install has them.
    for (const f of ['scripts/build-native.mjs', 'native/hook-client.c']) {
      fs.mkdirSync(path.join(sb.base, 'pkg', path.dirname(f)), { recursive: true });
      fs.copyFileSync(path.join(REPO_ROOT, f), path.join(sb.base, 'pkg', f));
    }
    const program = path.join(sb.base, 'pkg', 'native', 'build-hook', 'takeback-hook');
    const build = (env: NodeJS.ProcessEnv) => spawnSync(process.execPath, [path.join(sb.base, 'pkg', 'scripts', 'build-native.mjs'), 'hook'], { env: { ...process.env, TAKEBACK_NATIVE: undefined, ...env }, encoding: 'utf8' });
    const none = build({ CC: path.join(sb.base, 'no-such-cc') });
    expect([none.status, none.stdout]).toEqual([0, '']);
    expect(none.stderr).toMatch(/^takeback: hook client not built \(hooks start Node\): no C compiler/);
    expect(fs.existsSync(program)).toBe(false);
    if (!built) return; // no compiler here either
    const ok = build({});
    expect([ok.status, ok.stderr]).toEqual([0, 'takeback: hook client built (native/build-hook/takeback-hook)\n']);
    expect(fs.statSync(program).mode & 0o111).not.toBe(0);
    // Given no event to hand over (no arguments), it does nothing and says nothing.
    expect(spawnSync(program, [], { encoding: 'utf8' })).toMatchObject({ status: 0, stdout: '', stderr: '' });
    // A compiler that fails leaves no program behind either, nor one whose program does not run.
    expect(build({ CC: 'false' })).toMatchObject({ status: 0 });
    expect(fs.existsSync(program)).toBe(false);
    const badCc = path.join(sb.base, 'bad-cc');
    fs.writeFileSync(badCc, '#!/bin/sh\nwhile [ "$1" != -o ]; do shift; done\nprintf \'#!/bin/sh\\nexit 3\\n\' > "$2" && chmod +x "$2"\n', { mode: 0o755 });
    const bad = build({ CC: badCc });
    expect([bad.status, bad.stderr]).toEqual([0, 'takeback: hook client not built (hooks start Node): the program built does not run here\n']);
    expect(fs.existsSync(program)).toBe(false);
    expect(fs.readdirSync(path.dirname(program))).toEqual([]);
  });

  it('is there where CI requires the native parts (npm ci built it); without it a hook starts Node', async () => {
    if (process.env.TAKEBACK_REQUIRE_NATIVE === '1') expect(built, 'npm ci did not build native/build-hook/takeback-hook (scripts/build-native.mjs)').toBe(true);
    if (!built) console.warn('native/build-hook/takeback-hook not there: hooks run as a command start Node');
    // Linked against musl where musl-gcc is installed (.ci/run installs it): a static glibc
    // program carries glibc's tunables parser, whose variable's name a musl one never holds.
    const musl = spawnSync('musl-gcc', ['--version'], { stdio: 'ignore' }).status === 0;
    if (process.env.TAKEBACK_REQUIRE_NATIVE === '1') expect(musl, 'musl-gcc is not installed (.ci/run installs musl-tools)').toBe(true);
    if (built && musl) expect(fs.readFileSync(CLIENT).includes('GLIBC_TUNABLES')).toBe(false);
    // Either way a hook run as a command records its event.
    const sb = clientSandbox({ TAKEBACK_HOOK_DAEMON: '0' });
    quiet(await command(sb, ev(sb, 'UserPromptSubmit', { prompt: 'p' })));
    expect(sb.json(['list']).turns).toHaveLength(1);
  });
});
