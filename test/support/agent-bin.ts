// What the drivers of the real agent CLIs (./claude.ts, ./codex.ts, ./gemini.ts) share: finding
// an agent's binary (an environment variable, the copy scripts/install-<name>.sh puts in .cache,
// or PATH), asking its version with a throwaway HOME, building a hermetic environment, and running
// it once with a timeout.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isExecutableFile, onPath } from './path-lookup.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** How to find one agent's CLI and ask its version, and what a test that needs it is told to do without it. */
export interface AgentBin {
  /** The command's name, e.g. "claude": also the name of its folder in .cache and of its install script. */
  name: string;
  /** The environment variable naming the binary to use (a path, or a name looked up on PATH), e.g. "CLAUDE". */
  envVar: string;
  /** Where scripts/install-<name>.sh puts the CLI: .cache/<name>/node_modules/.bin/<name>. */
  cached: string;
  /** Variables that, set to "1", make a missing binary fail the tests instead of skipping them (the first is the one named). */
  requireVars: string[];
  /** The version number in what `--version` prints. */
  parseVersion: (stdout: string) => string | undefined;
  /** More variables for `--version`, given its throwaway HOME. */
  versionEnv?: (home: string) => Record<string, string>;
}

/** The AgentBin of the CLI `name`, installed by scripts/install-<name>.sh into .cache/<name>. */
export function agentBin(a: Omit<AgentBin, 'cached'>): AgentBin {
  return { ...a, cached: path.join(REPO_ROOT, '.cache', a.name, 'node_modules', '.bin', a.name) };
}

/** "run scripts/install-claude.sh, or set CLAUDE=/path/to/claude". */
export function installHint(a: AgentBin): string {
  return `run scripts/install-${a.name}.sh, or set ${a.envVar}=/path/to/${a.name}`;
}

/**
 * The binary to test with: the agent's environment variable first (a path, or a name looked up
 * on PATH), then the copy in .cache, then `<name>` on PATH.
 */
export function findAgentBin(a: AgentBin): string | undefined {
  const fromEnv = process.env[a.envVar];
  if (fromEnv) {
    if (fromEnv.includes(path.sep)) {
      if (isExecutableFile(fromEnv)) return path.resolve(fromEnv);
    } else {
      const found = onPath(fromEnv);
      if (found) return found;
    }
  }
  if (isExecutableFile(a.cached)) return a.cached;
  return onPath(a.name);
}

/**
 * `<bin> --version`'s number, or undefined if it does not run. It runs with nothing of the
 * caller's environment but PATH (and the agent's versionEnv), and a throwaway HOME: never the
 * user's ~/.claude, ~/.codex or ~/.gemini, which some CLIs create even for --version.
 */
export function agentVersion(a: AgentBin, bin: string | undefined): string | undefined {
  if (!bin) return undefined;
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `takeback-${a.name}-version-`));
  try {
    const r = spawnSync(bin, ['--version'], {
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: home, ...a.versionEnv?.(home) },
    });
    if (r.status !== 0) return undefined;
    return a.parseVersion(r.stdout);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** Variables taken from the test's own environment by default; everything else is left out. */
export const INHERITED_ENV = /^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|TZ|SHELL|USER|LOGNAME|TERM|SYSTEMROOT|COMSPEC|PATHEXT|WINDIR)$/;

/**
 * The environment for a hermetic run: only the test's variables that `inherit` matches, HOME and
 * the XDG folders under `home`, then `vars`, then `overrides` (undefined deletes a variable).
 */
export function hermeticEnv(
  home: string,
  vars: Record<string, string>,
  overrides: Record<string, string | undefined> = {},
  inherit: RegExp = INHERITED_ENV,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && inherit.test(k)) env[k] = v;
  Object.assign(
    env,
    {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      XDG_CACHE_HOME: path.join(home, '.cache'),
      XDG_DATA_HOME: path.join(home, '.local', 'share'),
      XDG_STATE_HOME: path.join(home, '.local', 'state'),
    },
    vars,
  );
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** What one run of an agent CLI gave. */
/** One turn of an agent that resumes sessions by id, driven by a model stub on loopback (Qwen Code, Copilot CLI). */
export interface AgentTurnOptions {
  bin: string;
  /** The project folder (the tools' cwd). */
  cwd: string;
  home: string;
  prompt: string;
  /** The stub's base URL (ending in /v1). */
  baseUrl: string;
  /** The session's id: `--session-id` sets it for a new session, `--resume` goes on with it. */
  session: { id: string; resume: boolean };
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}

export interface AgentRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** The full command line that ran (binary first). */
  argv: string[];
}

/** Kills `child` and its process group (everything it started), if it is still there. */
export function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    /* already gone */
  }
}

/**
 * Runs `bin args` once and collects its output. stdin is /dev/null (`codex exec` and `gemini -p`
 * append piped stdin to the prompt). It gets its own process group, so that a timeout also ends
 * the shells, hooks and child processes it started; after `timeoutMs` the run is killed and its
 * result has timedOut = true. Resolves when it exits; rejects only if it cannot be started.
 */
export function runAgentProcess(bin: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<AgentRun> {
  const started = Date.now();
  return new Promise<AgentRun>((resolve, reject) => {
    const child = spawn(bin, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, opts.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut, durationMs: Date.now() - started, argv: [bin, ...args] });
    });
  });
}

/** Fills in `json` (stdout parsed) and `sessionId` (its session_id) of a run with JSON output; leaves them out if stdout is not JSON. */
export function readJsonOutput<R extends AgentRun & { json?: any; sessionId?: string }>(result: R): R {
  try {
    result.json = JSON.parse(result.stdout);
    if (typeof result.json?.session_id === 'string') result.sessionId = result.json.session_id;
  } catch {
    /* left undefined: the caller's assertions will show stdout */
  }
  return result;
}

/** A short description of a run for assertion messages, with up to `limit` characters of stdout and of stderr. */
export function describeAgentRun(name: string, r: AgentRun, limit = 2000): string {
  return [
    `${name} exited ${r.code}${r.signal ? ` (${r.signal})` : ''}${r.timedOut ? ' after timing out' : ''} in ${r.durationMs} ms`,
    `argv: ${JSON.stringify(r.argv)}`,
    `stdout: ${r.stdout.slice(0, limit)}`,
    `stderr: ${r.stderr.slice(0, limit)}`,
  ].join('\n');
}
