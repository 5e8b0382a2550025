// Drives the real Google Gemini CLI (`gemini -p`) against a scripted stand-in for the Gemini API
// on 127.0.0.1, with a private HOME and no other network, so that end-to-end tests can run real
// sessions whose real tools (run_shell_command, write_file, replace) change real files and whose
// real hooks fire.
//
// Install the pinned CLI with scripts/install-gemini.sh (into .cache/gemini).
//
// A second turn of the same session is a second run with `--resume latest` (the newest session
// of this project, i.e. of this cwd) or `--resume <session id>`: runGemini({ resume: 'latest' }).
// A first run can fix the session id with `--session-id <uuid>` (runGemini({ sessionId })).
// Both keep the session_id in every hook payload; SessionStart then has source "resume".
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where scripts/install-gemini.sh puts the CLI. */
export const CACHED_GEMINI = path.join(REPO_ROOT, '.cache', 'gemini', 'node_modules', '.bin', 'gemini');
/** The version scripts/install-gemini.sh installs and the fixtures were recorded with. */
export const PINNED_GEMINI_VERSION = '0.61.0';
/** The model the harness asks for (with -m the CLI makes no side requests); the stub answers any. */
export const DEFAULT_GEMINI_MODEL = 'gemini-2.5-flash';

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function whichOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The gemini binary to test with: the GEMINI environment variable first (a path, or a name
 * looked up on PATH), then .cache/gemini/node_modules/.bin/gemini, then `gemini` on PATH.
 */
export function findGemini(): string | undefined {
  const fromEnv = process.env.GEMINI;
  if (fromEnv) {
    if (fromEnv.includes(path.sep)) {
      if (isExecutable(fromEnv)) return path.resolve(fromEnv);
    } else {
      const onPath = whichOnPath(fromEnv);
      if (onPath) return onPath;
    }
  }
  if (isExecutable(CACHED_GEMINI)) return CACHED_GEMINI;
  return whichOnPath('gemini');
}

/** `gemini --version`'s number, e.g. "0.61.0", or undefined if it does not run (takes about a second). */
export function geminiVersion(bin: string | undefined = findGemini()): string | undefined {
  if (!bin) return undefined;
  // A throwaway HOME: the CLI may create ~/.gemini even for --version.
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-gemini-version-'));
  try {
    const r = spawnSync(bin, ['--version'], {
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: home, NO_COLOR: '1' },
    });
    if (r.status !== 0) return undefined;
    const lines = r.stdout.trim().split('\n');
    return lines[lines.length - 1]?.trim().split(/\s+/)[0];
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

// ---- the model stub ----------------------------------------------------------------------

export type TextPart = { text: string };
export type FunctionCallPart = { functionCall: { name: string; args: Record<string, unknown> } };
export type GeminiPart = TextPart | FunctionCallPart;
/** One model response (one agent-loop step): its parts, e.g. a text and one or more function calls. */
export type GeminiStep = GeminiPart[];

/** A text part. */
export const text = (t: string): TextPart => ({ text: t });
/** A function call of any tool. */
export const call = (name: string, args: Record<string, unknown>): FunctionCallPart => ({ functionCall: { name, args } });
/** run_shell_command {command} (runs in the session's cwd). */
export const runShell = (command: string, extra: Record<string, unknown> = {}): FunctionCallPart =>
  call('run_shell_command', { command, ...extra });
/** write_file {file_path, content} (creates folders; file_path may be relative to cwd). */
export const writeFile = (file_path: string, content: string): FunctionCallPart => call('write_file', { file_path, content });
/** replace {file_path, old_string, new_string, instruction}. */
export const replace = (file_path: string, old_string: string, new_string: string, instruction = 'Edit the file.'): FunctionCallPart =>
  call('replace', { file_path, old_string, new_string, instruction });

export interface GeminiStubRequest {
  method: string;
  /** Path with the query string, e.g. "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse". */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body, the raw text if it was not JSON, or undefined if empty. */
  body: any;
  /** What the stub did with it: a step of the agent loop (carries tools), a side request, ... */
  kind: 'step' | 'side' | 'count_tokens' | 'other';
  /** The model asked for (from the path). */
  model?: string;
  /** For kind "step": the index of the scripted step answered (past the end: the script's length). */
  step?: number;
}

export interface GeminiStub {
  /** Base URL for GOOGLE_GEMINI_BASE_URL, e.g. "http://127.0.0.1:43121". */
  url: string;
  /** Every request received, in order. */
  requests: GeminiStubRequest[];
  /** The model requests that carried tools (the agent loop's steps), in order. */
  readonly stepRequests: GeminiStubRequest[];
  /** How many scripted steps have been answered so far. */
  readonly stepsUsed: number;
  /** Append steps (e.g. for a second turn). */
  push(...steps: GeminiStep[]): void;
  close(): Promise<void>;
}

export interface GeminiStubOptions {
  steps: GeminiStep[];
  /** Final text once the script has run out (default "Done."). */
  finalText?: string;
  /** Text for side requests (model requests without tools; none are expected with -m). */
  sideText?: string;
  /** Log each request to stderr (or set MODEL_STUB_DEBUG=1). */
  debug?: boolean;
}

/**
 * A scripted stand-in for the Gemini API (`POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`
 * and `:generateContent`). Each model request that carries tools is one step: it gets the next
 * scripted response as one server-sent event, finishReason "STOP" (the CLI runs the function
 * calls and sends their results in the next request). Past the script's end it answers with
 * the final text, which ends the turn.
 */
export async function startGeminiStub(options: GeminiStubOptions): Promise<GeminiStub> {
  const steps: GeminiStep[] = [...options.steps];
  const requests: GeminiStubRequest[] = [];
  let next = 0;
  const finalText = options.finalText ?? 'Done.';
  const sideText = options.sideText ?? 'Scripted session';
  const debug = options.debug ?? !!process.env.MODEL_STUB_DEBUG;
  let responseCounter = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any = undefined;
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      const url = req.url ?? '/';
      const [pathname = '/', query = ''] = url.split('?');
      const record: GeminiStubRequest = { method: req.method ?? 'GET', url, headers: req.headers, body, kind: 'other' };
      requests.push(record);
      const m = /\/models\/([^/:]+):([A-Za-z]+)$/.exec(pathname);
      try {
        if (req.method === 'POST' && m && (m[2] === 'streamGenerateContent' || m[2] === 'generateContent')) {
          record.model = decodeURIComponent(m[1]!);
          const hasTools = Array.isArray(body?.tools) && body.tools.length > 0;
          let parts: GeminiPart[];
          if (hasTools) {
            record.kind = 'step';
            record.step = next;
            const step = steps[next];
            if (step) {
              next++;
              parts = step;
            } else {
              parts = [text(finalText)];
            }
          } else {
            record.kind = 'side';
            parts = [text(sideText)];
          }
          const promptTokens = Math.max(1, Math.ceil(raw.length / 4));
          const response = {
            candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
            usageMetadata: { promptTokenCount: promptTokens, candidatesTokenCount: 10, totalTokenCount: promptTokens + 10 },
            modelVersion: record.model,
            responseId: `stub-${++responseCounter}`,
          };
          if (m[2] === 'streamGenerateContent' || /(^|&)alt=sse(&|$)/.test(query)) {
            res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
            res.end(`data: ${JSON.stringify(response)}\n\n`);
          } else {
            sendJson(res, 200, response);
          }
        } else if (req.method === 'POST' && m && m[2] === 'countTokens') {
          record.kind = 'count_tokens';
          sendJson(res, 200, { totalTokens: Math.max(1, Math.ceil(raw.length / 4)) });
        } else {
          // Anything else: a well-formed "not found" in the API's error shape.
          sendJson(res, 404, { error: { code: 404, message: `stub: no ${pathname}`, status: 'NOT_FOUND' } });
        }
      } catch (err) {
        sendJson(res, 500, { error: { code: 500, message: String(err), status: 'INTERNAL' } });
      }
      if (debug) {
        const extra = record.kind === 'step' ? ` step=${record.step}` : '';
        process.stderr.write(`[gemini-stub] ${record.method} ${url} -> ${record.kind}${extra}\n`);
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get stepRequests() {
      return requests.filter((r) => r.kind === 'step');
    },
    get stepsUsed() {
      return next;
    },
    push(...more: GeminiStep[]) {
      steps.push(...more);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

// ---- running the CLI -----------------------------------------------------------------------

/** The settings every run gets in HOME/.gemini/settings.json (before opts.userSettings). */
export const BASE_USER_SETTINGS = {
  // Without it, a base URL alone makes the CLI pick an auth type it then refuses.
  security: { auth: { selectedType: 'gemini-api-key' } },
  privacy: { usageStatisticsEnabled: false },
  general: { enableAutoUpdate: false },
  telemetry: { enabled: false },
};

export interface RunGeminiOptions {
  /** The project folder (the tools' cwd; `.gemini/settings.json` lives here). */
  cwd: string;
  prompt: string;
  /** The stub's URL (GOOGLE_GEMINI_BASE_URL). */
  baseUrl: string;
  /** A private HOME (~/.gemini: settings, sessions, transcripts). */
  home: string;
  /** Kill the run after this long (default 60 s); the result then has timedOut = true. */
  timeoutMs?: number;
  /** Resume a session: "latest" (this project's newest) or a session id (`--resume X`): a further turn. */
  resume?: string;
  /** Start a new session with this id (`--session-id <uuid>`). */
  sessionId?: string;
  /** Merged (per top-level key) over BASE_USER_SETTINGS into HOME/.gemini/settings.json. */
  userSettings?: Record<string, any>;
  /** If given, written to <cwd>/.gemini/settings.json. */
  projectSettings?: Record<string, any>;
  /** `-o`; with "json" the result's json and sessionId are filled in. */
  outputFormat?: 'text' | 'json' | 'stream-json';
  model?: string;
  /** GEMINI_CLI_TRUST_WORKSPACE (default true; an untrusted folder makes `-p` refuse to run, exit 55). */
  trustWorkspace?: boolean;
  /** More command line arguments, appended last. */
  extraArgs?: string[];
  /** Extra environment; applied last (undefined deletes). */
  env?: Record<string, string | undefined>;
  /** The binary to run (default: findGemini()). */
  gemini?: string;
}

export interface GeminiResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** The full command line that ran (binary first). */
  argv: string[];
  /** Parsed stdout, with outputFormat "json" ({session_id, response, stats}). */
  json?: any;
  /** The session id, with outputFormat "json" (also in every hook payload). */
  sessionId?: string;
}

/** Variables taken from the test's own environment; everything else is left out. */
const INHERITED_ENV = /^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|TZ|SHELL|USER|LOGNAME|TERM|SYSTEMROOT|COMSPEC|PATHEXT|WINDIR)$/;

/**
 * The environment for a hermetic, offline, non-interactive run: only basic variables of ours
 * (no GEMINI_*, GOOGLE_*, CI variables, proxies or credentials leak in), a private HOME and
 * temp dir, and the stub as the API.
 */
export function geminiEnv(opts: {
  baseUrl: string;
  home: string;
  trustWorkspace?: boolean;
  env?: Record<string, string | undefined>;
}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && INHERITED_ENV.test(k)) env[k] = v;
  Object.assign(env, {
    HOME: opts.home,
    USERPROFILE: opts.home,
    XDG_CONFIG_HOME: path.join(opts.home, '.config'),
    XDG_CACHE_HOME: path.join(opts.home, '.cache'),
    XDG_DATA_HOME: path.join(opts.home, '.local', 'share'),
    XDG_STATE_HOME: path.join(opts.home, '.local', 'state'),
    TMPDIR: path.join(opts.home, 'tmp'),
    GOOGLE_GEMINI_BASE_URL: opts.baseUrl,
    GEMINI_API_KEY: 'x',
    GEMINI_CLI_TRUST_WORKSPACE: opts.trustWorkspace === false ? 'false' : 'true',
    NO_PROXY: '127.0.0.1,localhost',
    NO_COLOR: '1',
  });
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** The argument list for one run (without the binary). */
export function geminiArgs(opts: RunGeminiOptions): string[] {
  const args = ['-p', opts.prompt, '--yolo', '-m', opts.model ?? DEFAULT_GEMINI_MODEL];
  if (opts.outputFormat) args.push('-o', opts.outputFormat);
  if (opts.resume) args.push('--resume', opts.resume);
  if (opts.sessionId) args.push('--session-id', opts.sessionId);
  args.push(...(opts.extraArgs ?? []));
  return args;
}

function mergeSettings(base: Record<string, any>, over: Record<string, any> = {}): Record<string, any> {
  const out: Record<string, any> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = b && v && typeof b === 'object' && typeof v === 'object' && !Array.isArray(b) && !Array.isArray(v) ? { ...b, ...v } : v;
  }
  return out;
}

/** Runs `gemini -p` once (one turn). Resolves when it exits; never rejects for a failed run. */
export async function runGemini(opts: RunGeminiOptions): Promise<GeminiResult> {
  const bin = opts.gemini ?? findGemini();
  if (!bin) throw new Error('gemini not found: run scripts/install-gemini.sh or set GEMINI=/path/to/gemini');
  if (opts.resume && opts.sessionId) throw new Error('runGemini: use resume or sessionId, not both');

  fs.mkdirSync(path.join(opts.home, '.gemini'), { recursive: true });
  fs.mkdirSync(path.join(opts.home, 'tmp'), { recursive: true });
  fs.writeFileSync(
    path.join(opts.home, '.gemini', 'settings.json'),
    JSON.stringify(mergeSettings(BASE_USER_SETTINGS, opts.userSettings), null, 2) + '\n',
  );
  if (opts.projectSettings !== undefined) {
    fs.mkdirSync(path.join(opts.cwd, '.gemini'), { recursive: true });
    fs.writeFileSync(path.join(opts.cwd, '.gemini', 'settings.json'), JSON.stringify(opts.projectSettings, null, 2) + '\n');
  }

  const args = geminiArgs(opts);
  const env = geminiEnv(opts);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const started = Date.now();

  return new Promise<GeminiResult>((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: opts.cwd,
      env,
      // stdin is /dev/null: `-p` appends whatever arrives on stdin to the prompt.
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that a timeout also ends the relaunched node child, shells and hooks.
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
      const result: GeminiResult = { code, signal, stdout, stderr, timedOut, durationMs: Date.now() - started, argv: [bin, ...args] };
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
export function describeGeminiRun(r: GeminiResult): string {
  return [
    `gemini exited ${r.code}${r.signal ? ` (${r.signal})` : ''}${r.timedOut ? ' after timing out' : ''} in ${r.durationMs} ms`,
    `argv: ${JSON.stringify(r.argv)}`,
    `stdout: ${r.stdout.slice(0, 2000)}`,
    `stderr: ${r.stderr.slice(0, 2000)}`,
  ].join('\n');
}

// ---- a recording hook ----------------------------------------------------------------------

/** The tool events' matcher: a JavaScript RegExp tested (unanchored) against the tool name. */
export const GEMINI_FILE_TOOLS_MATCHER = '^(write_file|replace|run_shell_command)$';
/** The events takeback cares about. */
export const GEMINI_HOOK_EVENTS = ['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionEnd'] as const;

const LOGGER = `'use strict';
// Appends the hook event on stdin to the file named by argv[2], as one JSON line.
// Exits 0 and prints nothing (stdout or stderr), whatever happens: any text would be shown to
// the user, and a non-zero exit with text would block the tool.
const fs = require('fs');
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  let line;
  try { line = JSON.stringify(JSON.parse(input)); } catch { line = JSON.stringify({ unparsed: input }); }
  try { fs.appendFileSync(process.argv[2], line + '\\n'); } catch {}
});
`;

export interface GeminiHookLog {
  /** `{ hooks: {...} }` for runGemini({ userSettings }) or ({ projectSettings }). */
  settings: { hooks: Record<string, unknown[]> };
  logFile: string;
  /** The events logged so far, in order. */
  read(): any[];
}

/**
 * Writes the logger script into `dir` (keep it outside the workspace) and returns settings whose
 * hooks (GEMINI_HOOK_EVENTS; the tool events only for write_file, replace, run_shell_command)
 * all run it, logging to `<dir>/<name>.jsonl`. Hooks with the same name and command are run once
 * even if both the user's and the project's settings have them: give each log its own name.
 */
export function makeGeminiHookLog(dir: string, name = 'hooks', matcher = GEMINI_FILE_TOOLS_MATCHER): GeminiHookLog {
  fs.mkdirSync(dir, { recursive: true });
  const script = path.join(dir, 'log-hook.cjs');
  const logFile = path.join(dir, `${name}.jsonl`);
  fs.writeFileSync(script, LOGGER);
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(script)} ${JSON.stringify(logFile)}`;
  const hooks: Record<string, unknown[]> = {};
  for (const event of GEMINI_HOOK_EVENTS) {
    const toolEvent = event === 'BeforeTool' || event === 'AfterTool';
    // timeout is in milliseconds (default 60000).
    hooks[event] = [{ ...(toolEvent ? { matcher } : {}), hooks: [{ name: `log-${name}`, type: 'command', command, timeout: 10_000 }] }];
  }
  return {
    settings: { hooks },
    logFile,
    read() {
      if (!fs.existsSync(logFile)) return [];
      return fs
        .readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l));
    },
  };
}
