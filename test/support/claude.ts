// Drives the real Claude Code CLI (`claude -p`) against a scripted model (./model-stub.ts)
// on 127.0.0.1, with a private HOME and no other network, so that end-to-end tests can run
// real sessions whose real tools change real files and whose real hooks fire.
//
// Install the pinned CLI with scripts/install-claude.sh (into .cache/claude).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where scripts/install-claude.sh puts the CLI. */
export const CACHED_CLAUDE = path.join(REPO_ROOT, '.cache', 'claude', 'node_modules', '.bin', 'claude');
/** The version scripts/install-claude.sh installs and the fixtures were recorded with. */
export const PINNED_CLAUDE_VERSION = '2.1.332';
/** The model the harness asks for; the stub answers whatever is asked. */
export const DEFAULT_MODEL = 'claude-sonnet-4-5';

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The claude binary to test with: the CLAUDE environment variable first (a path, or a name
 * looked up on PATH), then .cache/claude/node_modules/.bin/claude, then `claude` on PATH.
 */
export function findClaude(): string | undefined {
  const fromEnv = process.env.CLAUDE;
  if (fromEnv) {
    if (fromEnv.includes(path.sep)) {
      if (isExecutable(fromEnv)) return path.resolve(fromEnv);
    } else {
      const onPath = whichOnPath(fromEnv);
      if (onPath) return onPath;
    }
  }
  if (isExecutable(CACHED_CLAUDE)) return CACHED_CLAUDE;
  return whichOnPath('claude');
}

function whichOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** `claude --version`'s number, e.g. "2.1.332", or undefined if it does not run. */
export function claudeVersion(bin: string | undefined = findClaude()): string | undefined {
  if (!bin) return undefined;
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) return undefined;
  return r.stdout.trim().split(/\s+/)[0];
}

export interface RunClaudeOptions {
  /** The project folder Claude works in (its tools' cwd; `.claude/settings.json` lives here). */
  cwd: string;
  prompt: string;
  /** The model stub's URL (ANTHROPIC_BASE_URL). */
  baseUrl: string;
  /** A private HOME (~/.claude, ~/.claude.json, sessions and transcripts go there). */
  home: string;
  /** If given, written to <cwd>/.claude/settings.json before the run (hooks live there). */
  settings?: object;
  /** Kill the run after this long (default 60 s); the result then has timedOut = true. */
  timeoutMs?: number;
  /** More command line arguments, appended last. */
  extraArgs?: string[];
  /** Continue the most recent session in `cwd` (`--continue`): a second turn of it. */
  continueSession?: boolean;
  /** Resume this session id (`--resume <id>`): a further turn of that session. */
  resume?: string;
  /** Start a new session with this id (`--session-id <uuid>`, must be a UUID). */
  sessionId?: string;
  /** `--output-format`; with "json" the result's `json` and `sessionId` are filled in. */
  outputFormat?: 'text' | 'json' | 'stream-json';
  /** Tools to allow (default "Bash,Write,Edit,Read"). */
  allowedTools?: string;
  /** Permission mode (default "acceptEdits"; "bypassPermissions" is refused as root). */
  permissionMode?: string;
  model?: string;
  /** Extra environment (e.g. for the hooks); applied last. */
  env?: Record<string, string | undefined>;
  /** The binary to run (default: findClaude()). */
  claude?: string;
}

export interface ClaudeResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** The full command line that ran (binary first). */
  argv: string[];
  /** Parsed stdout, with outputFormat "json". */
  json?: any;
  /** The session id, with outputFormat "json" (also in every hook payload). */
  sessionId?: string;
}

/** Variables taken from the test's own environment; everything else is left out. */
const INHERITED_ENV = /^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|TZ|SHELL|USER|LOGNAME|TERM|SYSTEMROOT|COMSPEC|PATHEXT|WINDIR)$/;

/**
 * The environment for a hermetic, offline, non-interactive run: only basic variables of ours
 * (no ANTHROPIC_*, CLAUDE*, proxies or credentials leak in), a private HOME and temp dir, the
 * stub as the API, and everything optional switched off.
 */
export function claudeEnv(opts: { baseUrl: string; home: string; env?: Record<string, string | undefined> }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && INHERITED_ENV.test(k)) env[k] = v;
  const tmp = path.join(opts.home, 'tmp');
  Object.assign(env, {
    HOME: opts.home,
    USERPROFILE: opts.home,
    XDG_CONFIG_HOME: path.join(opts.home, '.config'),
    XDG_CACHE_HOME: path.join(opts.home, '.cache'),
    XDG_DATA_HOME: path.join(opts.home, '.local', 'share'),
    XDG_STATE_HOME: path.join(opts.home, '.local', 'state'),
    // Claude's own temp files (task output, /tmp/claude-<uid>/...) stay in the private home.
    CLAUDE_CODE_TMPDIR: tmp,
    TMPDIR: tmp,
    ANTHROPIC_BASE_URL: opts.baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-test-stub',
    NO_PROXY: '127.0.0.1,localhost',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
    CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
    CLAUDE_CODE_DISABLE_AUTO_MEMORY: '1',
    // A stub that is down should fail the run quickly, not after a long retry loop.
    CLAUDE_CODE_MAX_RETRIES: '0',
    NO_COLOR: '1',
  });
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** The argument list for one run (without the binary). */
export function claudeArgs(opts: RunClaudeOptions): string[] {
  const args = [
    '-p',
    opts.prompt,
    '--allowedTools',
    opts.allowedTools ?? 'Bash,Write,Edit,Read',
    '--permission-mode',
    opts.permissionMode ?? 'acceptEdits',
    '--model',
    opts.model ?? DEFAULT_MODEL,
  ];
  if (opts.outputFormat) args.push('--output-format', opts.outputFormat);
  if (opts.outputFormat === 'stream-json') args.push('--verbose'); // required by -p with stream-json
  if (opts.continueSession) args.push('--continue');
  if (opts.resume) args.push('--resume', opts.resume);
  if (opts.sessionId) args.push('--session-id', opts.sessionId);
  args.push(...(opts.extraArgs ?? []));
  return args;
}

/** Runs `claude -p` once (one turn). Resolves when it exits; never rejects for a failed run. */
export async function runClaude(opts: RunClaudeOptions): Promise<ClaudeResult> {
  const bin = opts.claude ?? findClaude();
  if (!bin) throw new Error('claude not found: run scripts/install-claude.sh or set CLAUDE=/path/to/claude');
  if (opts.continueSession && opts.resume) throw new Error('runClaude: use continueSession or resume, not both');

  if (opts.settings !== undefined) {
    fs.mkdirSync(path.join(opts.cwd, '.claude'), { recursive: true });
    fs.writeFileSync(path.join(opts.cwd, '.claude', 'settings.json'), JSON.stringify(opts.settings, null, 2) + '\n');
  }
  fs.mkdirSync(path.join(opts.home, 'tmp'), { recursive: true });

  const args = claudeArgs(opts);
  const env = claudeEnv(opts);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const started = Date.now();

  return new Promise<ClaudeResult>((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: opts.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that a timeout also ends the shells and hooks it started.
      detached: process.platform !== 'win32',
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const kill = () => {
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const result: ClaudeResult = {
        code,
        signal,
        stdout,
        stderr,
        timedOut,
        durationMs: Date.now() - started,
        argv: [bin, ...args],
      };
      if (opts.outputFormat === 'json') {
        try {
          result.json = JSON.parse(stdout);
          if (typeof result.json?.session_id === 'string') result.sessionId = result.json.session_id;
        } catch {
          /* left undefined: the caller's assertions will show stdout */
        }
      }
      resolve(result);
    });
  });
}

/** A short description of a run for assertion messages. */
export function describeRun(r: ClaudeResult): string {
  return [
    `claude exited ${r.code}${r.signal ? ` (${r.signal})` : ''}${r.timedOut ? ' after timing out' : ''} in ${r.durationMs} ms`,
    `argv: ${JSON.stringify(r.argv)}`,
    `stdout: ${r.stdout.slice(0, 2000)}`,
    `stderr: ${r.stderr.slice(0, 2000)}`,
  ].join('\n');
}
