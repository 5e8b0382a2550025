// Helpers for the tests that drive the real `takeback` binary (bin/takeback.js, built to dist/)
// as a child process, on real temporary folders, with a private TAKEBACK_HOME and HOME.
//
// Nothing here reaches into takeback's code: what a test knows of takeback it learns from the
// command line, the files in the workspace, and the files under TAKEBACK_HOME.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = path.join(REPO_ROOT, 'bin', 'takeback.js');
export const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures');

/** What a finished process gave. */
export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOpts {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to stdin (then closed). Without it stdin is empty. */
  input?: string | Buffer;
  timeout?: number;
}

/**
 * Hooks run in-process, no capture daemon is started (it would outlive the test), unless a test
 * asks for one (test/hook-daemon.test.ts), or TAKEBACK_TEST_HOOK_DAEMON=1 runs every test's
 * hooks through daemons that leave after 2 s without an event.
 */
const HOOK_DAEMON: NodeJS.ProcessEnv = process.env.TAKEBACK_TEST_HOOK_DAEMON === '1' ? { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '2000' } : { TAKEBACK_HOOK_DAEMON: '0' };

/**
 * An environment with nothing of the caller's but PATH: no colour forcing, no stray TAKEBACK_*.
 * A capture daemon's watcher is @parcel/watcher's (`TAKEBACK_WATCHMAN=0`): no test starts the
 * machine's Watchman service; test/watchman.test.ts starts a private one and asks for it. The
 * command line's code cache is the suite's one folder (TAKEBACK_CODE_CACHE, vitest.config.ts), as
 * a person's is one for all their workspaces, not one for each test's TAKEBACK_HOME.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TAKEBACK_WATCHMAN: '0', TAKEBACK_CODE_CACHE: process.env.TAKEBACK_CODE_CACHE, ...HOOK_DAEMON, ...extra };
}

/** Runs `node bin/takeback.js ...args` and waits for it. */
export function tb(args: string[], opts: RunOpts = {}): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: opts.env ?? cleanEnv(),
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: opts.timeout ?? 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Starts `node bin/takeback.js ...args` without waiting. */
export function tbSpawn(args: string[], opts: RunOpts = {}): ChildProcess {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: opts.env ?? cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.end(opts.input ?? '');
  return child;
}

/** Runs `node bin/takeback.js ...args` asynchronously (for running several at once). */
export function tbAsync(args: string[], opts: RunOpts = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = tbSpawn(args, opts);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Pipes one hook event (an object, or raw text) into `takeback hook AGENT` (default `claude-code`). */
export function hook(event: unknown, opts: RunOpts & { agent?: string } = {}): Run {
  return tb(['hook', opts.agent ?? 'claude-code'], { ...opts, input: typeof event === 'string' ? event : JSON.stringify(event) });
}

export function hookAsync(event: unknown, opts: RunOpts = {}): Promise<Run> {
  return tbAsync(['hook', 'claude-code'], { ...opts, input: typeof event === 'string' ? event : JSON.stringify(event) });
}

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** One path of a {@link tree}: enough to compare two trees byte for byte. */
export type Entry =
  | { type: 'file'; mode: number; size: number; sha256: string }
  | { type: 'dir'; mode: number }
  | { type: 'symlink'; target: string }
  | { type: 'other'; mode: number };

/**
 * A snapshot of everything under `dir` (never following links): each path (relative, `/`
 * separators) with its type, permission bits, and a file's size and SHA-256 or a link's target.
 * `skip` leaves out paths (and everything under them) for which it returns true.
 */
export function tree(dir: string, skip: (rel: string) => boolean = () => false): Record<string, Entry> {
  const out: Record<string, Entry> = {};
  const walk = (relDir: string) => {
    for (const name of fs.readdirSync(path.join(dir, relDir)).sort()) {
      const rel = relDir ? `${relDir}/${name}` : name;
      if (skip(rel)) continue;
      const abs = path.join(dir, rel);
      const st = fs.lstatSync(abs);
      const mode = st.mode & 0o7777;
      if (st.isSymbolicLink()) out[rel] = { type: 'symlink', target: fs.readlinkSync(abs) };
      else if (st.isDirectory()) {
        out[rel] = { type: 'dir', mode };
        walk(rel);
      } else if (st.isFile()) {
        const bytes = fs.readFileSync(abs);
        out[rel] = { type: 'file', mode, size: bytes.length, sha256: sha256(bytes) };
      } else out[rel] = { type: 'other', mode };
    }
  };
  walk('');
  return out;
}

/** Skips `.git` folders wherever they are. */
export const skipGit = (rel: string) => rel === '.git' || rel.endsWith('/.git');

/** Every file and folder under `dir` (absolute paths), `dir` included. */
export function walkAll(dir: string): string[] {
  const out = [dir];
  for (const name of fs.readdirSync(dir)) {
    const abs = path.join(dir, name);
    const st = fs.lstatSync(abs);
    if (st.isDirectory()) out.push(...walkAll(abs));
    else out.push(abs);
  }
  return out;
}

/** A private world for one test: a workspace, a TAKEBACK_HOME, a HOME, and the CLI bound to them. */
export interface Sandbox {
  /** The temporary folder holding everything below. */
  base: string;
  /** The workspace (a real path). */
  ws: string;
  /** TAKEBACK_HOME (not created until takeback creates it). */
  home: string;
  /** HOME for the child processes (exists, empty). */
  userHome: string;
  env: NodeJS.ProcessEnv;
  /** `takeback ...args` in the workspace (or `opts.cwd`). */
  tb(args: string[], opts?: RunOpts): Run;
  tbAsync(args: string[], opts?: RunOpts): Promise<Run>;
  /** `takeback ...args --json`, expecting exit code `code` (default 0); returns the parsed output. */
  json(args: string[], opts?: RunOpts & { code?: number }): any;
  hook(event: unknown, opts?: RunOpts & { agent?: string }): Run;
  /** Runs `sh -c script` in the workspace (not through takeback), throwing if it fails. */
  sh(script: string, opts?: { cwd?: string; allowFail?: boolean }): string;
  /** Writes a workspace file (making its folders), with `mode` when given. */
  write(rel: string, content: string | Buffer, mode?: number): void;
  read(rel: string): Buffer;
  abs(rel: string): string;
  exists(rel: string): boolean;
  /** {@link tree} of the workspace without `.git`. */
  tree(skip?: (rel: string) => boolean): Record<string, Entry>;
  /** The workspace's journal folder under TAKEBACK_HOME (there is one workspace per sandbox). */
  journalDir(): string;
  /** The blob hashes in the store. */
  blobs(): string[];
  /** True when the store holds a blob for `content`. */
  hasBlob(content: string | Buffer): boolean;
}

/**
 * Makes a sandbox in a fresh temporary folder (removed when the test finishes, unless
 * TAKEBACK_KEEP_TMP is set). `git: true` runs `git init` in the workspace.
 */
export function sandbox(opts: { git?: boolean; env?: NodeJS.ProcessEnv } = {}): Sandbox {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-test-')));
  const ws = path.join(base, 'ws');
  const home = path.join(base, 'tbhome');
  const userHome = path.join(base, 'home');
  fs.mkdirSync(ws);
  fs.mkdirSync(userHome);
  try {
    onTestFinished(() => {
      if (!process.env.TAKEBACK_KEEP_TMP) fs.rmSync(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    });
  } catch {
    // Called outside a test (beforeAll): the caller cleans up.
  }
  const env = cleanEnv({ HOME: userHome, TAKEBACK_HOME: home, ...opts.env });
  if (opts.git) spawnSync('git', ['init', '-q', ws], { env });
  const run = (args: string[], o: RunOpts = {}) => tb(args, { cwd: ws, env, ...o });
  const sb: Sandbox = {
    base,
    ws,
    home,
    userHome,
    env,
    tb: run,
    tbAsync: (args, o = {}) => tbAsync(args, { cwd: ws, env, ...o }),
    json(args, o = {}) {
      const r = run([...args, '--json'], o);
      const want = o.code ?? 0;
      if (r.code !== want) throw new Error(`takeback ${args.join(' ')} --json: exit ${r.code} (wanted ${want})\n${r.stdout}\n${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    hook: (event, o = {}) => hook(event, { cwd: ws, env, ...o }),
    sh(script, o = {}) {
      const r = spawnSync('sh', ['-c', script], { cwd: o.cwd ?? ws, env, encoding: 'utf8' });
      if (r.status !== 0 && !o.allowFail) throw new Error(`sh -c ${script}: exit ${r.status}\n${r.stderr}`);
      return r.stdout;
    },
    write(rel, content, mode) {
      const abs = path.join(ws, rel);
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, content);
      if (mode !== undefined) fs.chmodSync(abs, mode);
    },
    read: (rel) => fs.readFileSync(path.join(ws, rel)),
    abs: (rel) => path.join(ws, rel),
    exists: (rel) => {
      try {
        fs.lstatSync(path.join(ws, rel));
        return true;
      } catch {
        return false;
      }
    },
    tree: (skip = skipGit) => tree(ws, skip),
    journalDir() {
      const dirs = fs.readdirSync(path.join(home, 'workspaces'));
      if (dirs.length !== 1) throw new Error(`expected one journal, found ${dirs.length}`);
      return path.join(home, 'workspaces', dirs[0]!);
    },
    blobs() {
      const dir = path.join(home, 'blobs');
      if (!fs.existsSync(dir)) return [];
      const out: string[] = [];
      for (const sub of fs.readdirSync(dir)) for (const name of fs.readdirSync(path.join(dir, sub))) out.push(sub + name);
      return out.sort();
    },
    hasBlob(content) {
      const h = sha256(content);
      return fs.existsSync(path.join(home, 'blobs', h.slice(0, 2), h.slice(2)));
    },
  };
  return sb;
}

/** The sets of `list --json`, oldest first (list gives newest first). */
export function setsOf(list: any): any[] {
  return [...list.sets].reverse();
}

/** `path → status` of a set's files, for compact assertions. */
export function filesOf(set: any): Record<string, string> {
  return Object.fromEntries(set.files.map((f: any) => [f.path, f.status]));
}

/** Sleeps without blocking the event loop. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Lines of `text` made of `n` numbered lines with a prefix. */
/** What takeback's hooks logged under the sandbox's home (`logs/hook.log`): '' when nothing was. */
export function hookLog(sb: Pick<Sandbox, 'home'>): string {
  try {
    return fs.readFileSync(path.join(sb.home, 'logs', 'hook.log'), 'utf8');
  } catch {
    return '';
  }
}

export function lines(prefix: string, n: number): string {
  let s = '';
  for (let i = 1; i <= n; i++) s += `${prefix} ${i}\n`;
  return s;
}

/**
 * A real writer of `sb`'s journal, in a process of its own: it takes the journal's write lock,
 * says so, and stops itself there (SIGSTOP), as a process stopped mid-write would. Resolves once
 * it holds the lock; it is killed when the test ends. Rejects when it leaves first or says
 * nothing within 30 s (a generous bound: a loaded machine is slow).
 */
export async function stoppedWriter(sb: Sandbox): Promise<ChildProcess> {
  const openJs = path.join(REPO_ROOT, 'dist', 'server', 'core', 'open-workspace.js');
  const script = `import { openWorkspace } from ${JSON.stringify(openJs)};
const e = openWorkspace({ cwd: ${JSON.stringify(sb.ws)} });
e.journal.write(() => { console.log('holding'); process.kill(process.pid, 'SIGSTOP'); });
e.journal.close();`;
  const writer = spawn(process.execPath, ['--input-type=module', '-e', script], { env: sb.env, stdio: ['ignore', 'pipe', 'inherit'] });
  onTestFinished(() => {
    writer.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no "holding" from the writer: ${out}`)), 30_000);
    writer.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('holding')) {
        clearTimeout(timer);
        resolve();
      }
    });
    writer.on('exit', (code) => reject(new Error(`the writer left (${code}) before holding the lock: ${out}`)));
  });
  return writer;
}
