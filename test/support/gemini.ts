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
import fs from 'node:fs';
import path from 'node:path';
import { agentBin, agentVersion, describeAgentRun, findAgentBin, hermeticEnv, readJsonOutput, runAgentProcess } from './agent-bin.js';
import type { AgentRun } from './agent-bin.js';
import { writeHookLogger } from './hook-log.js';
import { estimateTokens, eventStream, sendJson, startScriptedStub } from './stub-server.js';
import type { ScriptedStub, StubRecord } from './stub-server.js';

export { REPO_ROOT } from './agent-bin.js';
/**
 * How the gemini binary is found (the GEMINI variable, .cache/gemini, PATH) and its version read
 * (just the number, on the last line; asked with a throwaway HOME: the CLI may create ~/.gemini
 * even for --version); TAKEBACK_REQUIRE_AGENTS=1 requires it.
 */
export const GEMINI_BIN = agentBin({
  name: 'gemini',
  envVar: 'GEMINI',
  requireVars: ['TAKEBACK_REQUIRE_AGENTS'],
  parseVersion: (out) => {
    const lines = out.trim().split('\n');
    return lines[lines.length - 1]?.trim().split(/\s+/)[0];
  },
  versionEnv: () => ({ NO_COLOR: '1' }),
});
/** Where scripts/install-gemini.sh puts the CLI. */
export const CACHED_GEMINI = GEMINI_BIN.cached;
/** The version scripts/install-gemini.sh installs and the fixtures were recorded with. */
export const PINNED_GEMINI_VERSION = '0.61.0';
/** The model the harness asks for (with -m the CLI makes no side requests); the stub answers any. */
export const DEFAULT_GEMINI_MODEL = 'gemini-2.5-flash';

/**
 * The gemini binary to test with: the GEMINI environment variable first (a path, or a name
 * looked up on PATH), then .cache/gemini/node_modules/.bin/gemini, then `gemini` on PATH.
 */
export function findGemini(): string | undefined {
  return findAgentBin(GEMINI_BIN);
}

/** `gemini --version`'s number, e.g. "0.61.0", or undefined if it does not run (takes about a second). */
export function geminiVersion(bin: string | undefined = findGemini()): string | undefined {
  return agentVersion(GEMINI_BIN, bin);
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

export interface GeminiStubRequest extends StubRecord {
  /** Path with the query string, e.g. "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse". */
  url: string;
  /** What the stub did with it: a step of the agent loop (carries tools), a side request, ... */
  kind: 'step' | 'side' | 'count_tokens' | 'other';
  /** The model asked for (from the path). */
  model?: string;
  /** For kind "step": the index of the scripted step answered (past the end: the script's length). */
  step?: number;
}

/** The stub: its `url` is the base URL for GOOGLE_GEMINI_BASE_URL, e.g. "http://127.0.0.1:43121". */
export type GeminiStub = ScriptedStub<GeminiStep, GeminiStubRequest>;

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
  const finalText = options.finalText ?? 'Done.';
  const sideText = options.sideText ?? 'Scripted session';
  let responseCounter = 0;

  return startScriptedStub<GeminiStep, GeminiStubRequest, object>({
    steps: options.steps,
    tag: 'gemini-stub',
    debug: options.debug ?? !!process.env.MODEL_STUB_DEBUG,
    extra: {},
    fail: (res, err) => sendJson(res, 500, { error: { code: 500, message: String(err), status: 'INTERNAL' } }),
    handle({ req, res, record, raw, path: pathname, query, answer }) {
      const m = /\/models\/([^/:]+):([A-Za-z]+)$/.exec(pathname);
      if (req.method === 'POST' && m && (m[2] === 'streamGenerateContent' || m[2] === 'generateContent')) {
        record.model = decodeURIComponent(m[1]!);
        const parts = answer<GeminiPart[]>({ step: (step) => step, final: () => [text(finalText)], side: () => [text(sideText)] });
        const promptTokens = estimateTokens(raw);
        const response = {
          candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
          usageMetadata: { promptTokenCount: promptTokens, candidatesTokenCount: 10, totalTokenCount: promptTokens + 10 },
          modelVersion: record.model,
          responseId: `stub-${++responseCounter}`,
        };
        if (m[2] === 'streamGenerateContent' || /(^|&)alt=sse(&|$)/.test(query)) {
          eventStream(res)(undefined, response);
          res.end();
        } else {
          sendJson(res, 200, response);
        }
      } else if (req.method === 'POST' && m && m[2] === 'countTokens') {
        record.kind = 'count_tokens';
        sendJson(res, 200, { totalTokens: estimateTokens(raw) });
      } else {
        // Anything else: a well-formed "not found" in the API's error shape.
        sendJson(res, 404, { error: { code: 404, message: `stub: no ${pathname}`, status: 'NOT_FOUND' } });
      }
    },
  });
}

/** functionResponse parts the CLI sent back to the model, in order, over all step requests (deduplicated by id). */
export function geminiFunctionResponses(stub: GeminiStub): any[] {
  const seen = new Map<string, any>();
  for (const r of stub.stepRequests)
    for (const c of r.body?.contents ?? [])
      for (const p of c.parts ?? []) if (p.functionResponse && !seen.has(p.functionResponse.id)) seen.set(p.functionResponse.id, p.functionResponse);
  return [...seen.values()];
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

export interface GeminiResult extends AgentRun {
  /** Parsed stdout, with outputFormat "json" ({session_id, response, stats}). */
  json?: any;
  /** The session id, with outputFormat "json" (also in every hook payload). */
  sessionId?: string;
}

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
  return hermeticEnv(
    opts.home,
    {
      USERPROFILE: opts.home,
      TMPDIR: path.join(opts.home, 'tmp'),
      GOOGLE_GEMINI_BASE_URL: opts.baseUrl,
      GEMINI_API_KEY: 'x',
      GEMINI_CLI_TRUST_WORKSPACE: opts.trustWorkspace === false ? 'false' : 'true',
      NO_PROXY: '127.0.0.1,localhost',
      NO_COLOR: '1',
    },
    opts.env,
  );
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

  const result: GeminiResult = await runAgentProcess(bin, geminiArgs(opts), { cwd: opts.cwd, env: geminiEnv(opts), timeoutMs: opts.timeoutMs ?? 60_000 });
  return opts.outputFormat === 'json' ? readJsonOutput(result) : result;
}

/** A short description of a run for assertion messages. */
export function describeGeminiRun(r: GeminiResult): string {
  return describeAgentRun('gemini', r);
}

// ---- a recording hook ----------------------------------------------------------------------

/** The tool events' matcher: a JavaScript RegExp tested (unanchored) against the tool name. */
export const GEMINI_FILE_TOOLS_MATCHER = '^(write_file|replace|run_shell_command)$';
/** The events takeback cares about. */
export const GEMINI_HOOK_EVENTS = ['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionEnd'] as const;

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
  const logger = writeHookLogger(dir, name);
  const command = logger.command();
  const hooks: Record<string, unknown[]> = {};
  for (const event of GEMINI_HOOK_EVENTS) {
    const toolEvent = event === 'BeforeTool' || event === 'AfterTool';
    // timeout is in milliseconds (default 60000).
    hooks[event] = [{ ...(toolEvent ? { matcher } : {}), hooks: [{ name: `log-${name}`, type: 'command', command, timeout: 10_000 }] }];
  }
  return { settings: { hooks }, logFile: logger.logFile, read: logger.read };
}
