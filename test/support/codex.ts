// Drives the real OpenAI Codex CLI (`codex exec`) against a scripted stand-in for the model on
// 127.0.0.1 (a Responses-API stub, below), with a private CODEX_HOME (= HOME) and no other
// network, so that end-to-end tests can run real sessions whose real tools (the shell and
// apply_patch) change real files and whose real hooks fire.
//
// Install the pinned CLI with scripts/install-codex.sh (into .cache/codex).
//
// A second turn of the same session: `codex exec resume <SESSION_ID> PROMPT` (or
// `codex exec resume --last PROMPT`, the newest session recorded under CODEX_HOME whose cwd is
// this one): runCodex({ resume: id | 'last' }). It keeps the session id (thread id) and its
// history; the hooks get a new turn_id. The session id is printed on stderr by `codex exec`
// ("session id: ...") and, with --json, in the first stdout event ({"type":"thread.started",
// "thread_id": ...}); CodexResult.sessionId has it either way.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { agentBin, agentVersion, describeAgentRun, findAgentBin, hermeticEnv, killGroup, runAgentProcess } from './agent-bin.js';
import type { AgentRun } from './agent-bin.js';
import { writeHookLogger } from './hook-log.js';
import { estimateTokens, eventStream, sendJson, startScriptedStub } from './stub-server.js';
import type { ScriptedStub, StubRecord } from './stub-server.js';

export { REPO_ROOT } from './agent-bin.js';
/**
 * How the codex binary is found (the CODEX variable, .cache/codex, PATH) and its version read
 * ("codex-cli 0.171.0"; even `--version` creates $CODEX_HOME/tmp: it gets a throwaway one, never
 * the user's ~/.codex); TAKEBACK_REQUIRE_AGENTS=1 or TAKEBACK_REQUIRE_CODEX=1 requires it.
 */
export const CODEX_BIN = agentBin({
  name: 'codex',
  envVar: 'CODEX',
  requireVars: ['TAKEBACK_REQUIRE_AGENTS', 'TAKEBACK_REQUIRE_CODEX'],
  parseVersion: (out) => out.trim().split(/\s+/).pop(),
  versionEnv: (home) => ({ CODEX_HOME: home }),
});
/** Where scripts/install-codex.sh puts the CLI. */
export const CACHED_CODEX = CODEX_BIN.cached;
/** The version scripts/install-codex.sh installs and the fixtures were recorded with. */
export const PINNED_CODEX_VERSION = '0.171.0';
/**
 * The model the harness asks for. It must be a name from Codex's built-in model catalogue:
 * with an unknown name Codex offers the model no apply_patch tool.
 */
export const DEFAULT_CODEX_MODEL = 'gpt-5.5';

/**
 * The codex binary to test with: the CODEX environment variable first (a path, or a name
 * looked up on PATH), then .cache/codex/node_modules/.bin/codex, then `codex` on PATH.
 */
export function findCodex(): string | undefined {
  return findAgentBin(CODEX_BIN);
}

/** `codex --version`'s number ("codex-cli 0.171.0" → "0.171.0"), or undefined if it does not run. */
export function codexVersion(bin: string | undefined = findCodex()): string | undefined {
  return agentVersion(CODEX_BIN, bin);
}

// ---- the model stub: a scripted Responses API -------------------------------------------

/** One output item of a Responses-API answer (the stub fills in ids and status). */
export type CodexItem =
  | { type: 'message'; role: 'assistant'; content: { type: 'output_text'; text: string }[] }
  | { type: 'function_call'; name: string; call_id?: string; arguments: string }
  | { type: 'custom_tool_call'; name: string; call_id?: string; input: string };
/** One model answer (one request of the agent loop). */
export type CodexStep = CodexItem[];

/** An assistant text message. */
export function textItem(text: string): CodexItem {
  return { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] };
}

/**
 * A shell command: Codex's `exec_command` function tool (unified exec). `workdir` is optional
 * (default: the session's cwd). The hooks see it as tool_name "Bash", tool_input.command = cmd.
 */
export function shellCall(cmd: string, opts: { callId?: string; workdir?: string; yieldTimeMs?: number } = {}): CodexItem {
  const args: Record<string, unknown> = { cmd };
  if (opts.workdir !== undefined) args.workdir = opts.workdir;
  if (opts.yieldTimeMs !== undefined) args.yield_time_ms = opts.yieldTimeMs;
  return { type: 'function_call', name: 'exec_command', ...(opts.callId ? { call_id: opts.callId } : {}), arguments: JSON.stringify(args) };
}

/**
 * A patch: Codex's freeform `apply_patch` custom tool, whose input is the whole patch text
 * ("*** Begin Patch" ... "*** End Patch"). Paths in it are relative to the session's cwd.
 */
export function applyPatchCall(patch: string, opts: { callId?: string } = {}): CodexItem {
  return { type: 'custom_tool_call', name: 'apply_patch', ...(opts.callId ? { call_id: opts.callId } : {}), input: patch };
}

export type PatchOp =
  | { add: string; lines: string[] }
  | { delete: string }
  | { update: string; moveTo?: string; hunks: { context?: string; lines: string[] }[] };

/**
 * Builds apply_patch text. Hunk lines are given with their prefix (" " context, "-" removed,
 * "+" added); `context` is the optional text after "@@".
 */
export function patchText(ops: PatchOp[]): string {
  const out = ['*** Begin Patch'];
  for (const op of ops) {
    if ('add' in op) {
      out.push(`*** Add File: ${op.add}`, ...op.lines.map((l) => `+${l}`));
    } else if ('delete' in op) {
      out.push(`*** Delete File: ${op.delete}`);
    } else {
      out.push(`*** Update File: ${op.update}`);
      if (op.moveTo) out.push(`*** Move to: ${op.moveTo}`);
      for (const h of op.hunks) out.push(h.context ? `@@ ${h.context}` : '@@', ...h.lines);
    }
  }
  out.push('*** End Patch');
  return out.join('\n') + '\n';
}

export interface CodexStubRequest extends StubRecord {
  /** What the stub did with it. */
  kind: 'step' | 'side' | 'models' | 'other';
}

/** The stub: its `url` is the provider base URL, with /v1: e.g. "http://127.0.0.1:43121/v1". */
export interface CodexStub extends ScriptedStub<CodexStep, CodexStubRequest> {
  /** The call ids handed out, in order. */
  readonly callIds: string[];
}

export interface CodexStubOptions {
  steps: CodexStep[];
  /** Final text once the script has run out. */
  finalText?: string;
  /** Text for side requests (no tools: titles, summaries). */
  sideText?: string;
  /** Log each request to stderr (or set CODEX_STUB_DEBUG=1). */
  debug?: boolean;
}

/**
 * A stand-in for the OpenAI Responses API on 127.0.0.1. Every `POST .../responses` that carries
 * `tools` is one step of the agent loop: it is answered with the next scripted step, streamed as
 * server-sent events (`response.created`, per item `response.output_item.added` and
 * `response.output_item.done`, then `response.completed` with usage). Past the end of the script
 * it answers a final assistant message. Requests without tools get a short text and use no step.
 */
export async function startCodexStub(options: CodexStubOptions): Promise<CodexStub> {
  const callIds: string[] = [];
  let idCounter = 0;
  let respCounter = 0;
  let itemCounter = 0;
  const finalText = options.finalText ?? 'Done.';
  const sideText = options.sideText ?? 'Scripted session';

  const materialize = (step: CodexStep): any[] =>
    step.map((item) => {
      if (item.type === 'message') return { id: `msg_stub_${++itemCounter}`, status: 'completed', ...item };
      const callId = item.call_id ?? `call_stub_${String(++idCounter).padStart(3, '0')}`;
      callIds.push(callId);
      return { id: `fc_stub_${++itemCounter}`, status: 'completed', ...item, call_id: callId };
    });

  return startScriptedStub<CodexStep, CodexStubRequest, { callIds: string[] }>({
    steps: options.steps,
    tag: 'codex-stub',
    debug: options.debug ?? !!process.env.CODEX_STUB_DEBUG,
    urlPath: '/v1',
    extra: { callIds },
    fail: (res, err) => sendJson(res, 500, { error: { type: 'server_error', message: String(err) } }),
    handle({ req, res, record, raw, body, path: p, answer }) {
      if (req.method === 'POST' && /\/responses$/.test(p)) {
        const items = answer<any[]>({
          step: materialize,
          final: () => materialize([textItem(finalText)]),
          side: () => materialize([textItem(sideText)]),
        });
        sendResponseStream(res, {
          id: `resp_stub_${String(++respCounter).padStart(3, '0')}`,
          model: typeof body?.model === 'string' ? body.model : DEFAULT_CODEX_MODEL,
          items,
          inputTokens: estimateTokens(raw),
        });
      } else if (req.method === 'GET' && /\/models$/.test(p)) {
        record.kind = 'models';
        // An empty listing: Codex keeps its built-in catalogue.
        sendJson(res, 200, { object: 'list', data: [], models: [] });
      } else {
        sendJson(res, 404, { error: { type: 'not_found', message: `stub: no ${req.method} ${p}` } });
      }
    },
  });
}

/** The outputs of tool calls the agent sent back to the model, by call id (first seen). */
export function codexToolOutputs(stub: CodexStub): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of stub.stepRequests)
    for (const i of r.body?.input ?? [])
      if ((i.type === 'function_call_output' || i.type === 'custom_tool_call_output') && !out.has(i.call_id))
        out.set(i.call_id, typeof i.output === 'string' ? i.output : JSON.stringify(i.output));
  return out;
}

function sendResponseStream(res: http.ServerResponse, m: { id: string; model: string; items: any[]; inputTokens: number }): void {
  const send = eventStream(res, { connection: 'keep-alive' });
  let seq = 0;
  const event = (type: string, data: Record<string, unknown>) => send(type, { type, sequence_number: seq++, ...data });
  const created_at = Math.floor(Date.now() / 1000);
  const base = { id: m.id, object: 'response', created_at, model: m.model };
  event('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  m.items.forEach((item, output_index) => {
    event('response.output_item.added', { output_index, item });
    event('response.output_item.done', { output_index, item });
  });
  event('response.completed', {
    response: {
      ...base,
      status: 'completed',
      output: m.items,
      usage: {
        input_tokens: m.inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 10,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: m.inputTokens + 10,
      },
    },
  });
  res.end();
}

// ---- hooks ------------------------------------------------------------------------------

/** The hook events takeback needs (the recording hooks' default). */
export const CODEX_HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'] as const;
/**
 * Every hook event Codex 0.171 knows (from its hooks schema). Names it does not know (e.g.
 * PostToolUseFailure, Notification) are ignored without a warning.
 */
export const ALL_CODEX_HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreModelRequest',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PreCompact',
  'PostCompact',
  'SubagentStart',
  'SubagentStop',
  'Interrupt',
  'Stop',
  'SessionEnd',
] as const;

export interface CodexHooksFile {
  hooks: Record<string, { matcher?: string; hooks: { type: 'command'; command: string; timeout?: number }[] }[]>;
}

export interface CodexHookLog {
  logFile: string;
  /** A hooks.json object whose hooks all run the logger; `via` tags each logged event. */
  hooksJson(via?: string, opts?: { matcher?: string; events?: readonly string[] }): CodexHooksFile;
  /** The events logged so far, in order. */
  read(): any[];
}

/**
 * Writes a logger script into `dir` (keep it outside the workspace) that appends each hook
 * event's stdin JSON to `<dir>/hooks.jsonl`; hooksJson() gives a hooks.json that runs it for
 * every event (tool events with matcher "Bash|apply_patch" unless told otherwise).
 */
export function makeCodexHookLog(dir: string): CodexHookLog {
  const logger = writeHookLogger(dir);
  return {
    logFile: logger.logFile,
    hooksJson(via, opts = {}) {
      const command = logger.command(via);
      const hooks: CodexHooksFile['hooks'] = {};
      for (const ev of opts.events ?? CODEX_HOOK_EVENTS) {
        const tool = ev === 'PreToolUse' || ev === 'PostToolUse';
        const matcher = tool ? (opts.matcher ?? 'Bash|apply_patch') : undefined;
        hooks[ev] = [{ ...(matcher !== undefined ? { matcher } : {}), hooks: [{ type: 'command', command, timeout: 30 }] }];
      }
      return { hooks };
    },
    read: logger.read,
  };
}

// ---- running codex ----------------------------------------------------------------------

export interface RunCodexOptions {
  /** The project folder (the session's cwd; `.codex/hooks.json` lives here). */
  cwd: string;
  prompt: string;
  /** The stub's URL, with /v1 (CodexStub.url). */
  baseUrl: string;
  /** A private CODEX_HOME, also used as HOME (config.toml, sessions, hooks.json go there). */
  codexHome: string;
  /** Kill the run after this long (default 60 s); the result then has timedOut = true. */
  timeoutMs?: number;
  /** A further turn of an earlier session: its id, or 'last' (the newest one for this cwd). */
  resume?: string;
  /** If given, written to <cwd>/.codex/hooks.json before the run. */
  projectHooks?: object;
  /** If given, written to $CODEX_HOME/hooks.json before the run. */
  homeHooks?: object;
  /** Pass --dangerously-bypass-hook-trust (default true; without it untrusted hooks are skipped). */
  bypassHookTrust?: boolean;
  /** Print events as JSONL on stdout (--json); the result's `events` then has them. */
  json?: boolean;
  /** More TOML appended to config.toml. */
  extraConfig?: string;
  model?: string;
  /** More command line arguments, placed before the prompt. */
  extraArgs?: string[];
  /** Extra environment; applied last. */
  env?: Record<string, string | undefined>;
  /** The binary to run (default: findCodex()). */
  codex?: string;
}

export interface CodexResult extends AgentRun {
  /** The session (thread) id, from --json's thread.started or stderr's "session id:" line. */
  sessionId?: string;
  /** With json: the JSONL events of stdout. */
  events?: any[];
}

/** The config.toml for a run against the stub. */
export function codexConfigToml(opts: { baseUrl: string; model?: string; extra?: string }): string {
  return [
    `model = ${JSON.stringify(opts.model ?? DEFAULT_CODEX_MODEL)}`,
    `model_provider = "mock"`,
    // Nothing optional that would reach out or ask.
    `check_for_update_on_startup = false`,
    ``,
    `[model_providers.mock]`,
    `name = "mock"`,
    `base_url = ${JSON.stringify(opts.baseUrl)}`,
    `wire_api = "responses"`,
    `env_key = "MOCK_API_KEY"`,
    // A stub that is down should fail the run quickly, not after a long retry loop.
    `request_max_retries = 0`,
    `stream_max_retries = 0`,
    ``,
    `[analytics]`,
    `enabled = false`,
    ``,
    `[feedback]`,
    `enabled = false`,
    ``,
    opts.extra ?? '',
  ].join('\n');
}

/** Variables taken from the test's own environment; everything else is left out. */
const INHERITED_ENV = /^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|TZ|SHELL|USER|LOGNAME|TERM)$/;

/** The environment for a hermetic, offline run: no OPENAI_*, CODEX_* or proxies leak in. */
export function codexEnv(opts: { codexHome: string; env?: Record<string, string | undefined> }): NodeJS.ProcessEnv {
  return hermeticEnv(
    opts.codexHome,
    {
      CODEX_HOME: opts.codexHome,
      TMPDIR: path.join(opts.codexHome, 'tmp'),
      MOCK_API_KEY: 'sk-test-stub',
      NO_PROXY: '127.0.0.1,localhost',
      NO_COLOR: '1',
      RUST_LOG: 'error',
    },
    opts.env,
    INHERITED_ENV,
  );
}

/** The argument list for one run (without the binary). */
export function codexArgs(opts: RunCodexOptions): string[] {
  const args = ['exec'];
  if (opts.resume !== undefined) args.push('resume');
  args.push('--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox');
  if (opts.bypassHookTrust ?? true) args.push('--dangerously-bypass-hook-trust');
  if (opts.json) args.push('--json');
  args.push(...(opts.extraArgs ?? []));
  if (opts.resume === 'last') args.push('--last');
  else if (opts.resume !== undefined) args.push(opts.resume);
  args.push(opts.prompt);
  return args;
}

/** Runs `codex exec` (or `codex exec resume`) once: one turn. Never rejects for a failed run. */
export async function runCodex(opts: RunCodexOptions): Promise<CodexResult> {
  const bin = opts.codex ?? findCodex();
  if (!bin) throw new Error('codex not found: run scripts/install-codex.sh or set CODEX=/path/to/codex');

  fs.mkdirSync(path.join(opts.codexHome, 'tmp'), { recursive: true });
  fs.writeFileSync(
    path.join(opts.codexHome, 'config.toml'),
    codexConfigToml({ baseUrl: opts.baseUrl, model: opts.model, extra: opts.extraConfig }),
  );
  if (opts.projectHooks !== undefined) {
    fs.mkdirSync(path.join(opts.cwd, '.codex'), { recursive: true });
    fs.writeFileSync(path.join(opts.cwd, '.codex', 'hooks.json'), JSON.stringify(opts.projectHooks, null, 2) + '\n');
  }
  if (opts.homeHooks !== undefined)
    fs.writeFileSync(path.join(opts.codexHome, 'hooks.json'), JSON.stringify(opts.homeHooks, null, 2) + '\n');

  const result: CodexResult = await runAgentProcess(bin, codexArgs(opts), { cwd: opts.cwd, env: codexEnv(opts), timeoutMs: opts.timeoutMs ?? 60_000 });
  if (opts.json) {
    result.events = [];
    for (const line of result.stdout.split('\n')) {
      if (!line.trim()) continue;
      try {
        result.events.push(JSON.parse(line));
      } catch {
        /* not an event */
      }
    }
    const started = result.events.find((e) => e?.type === 'thread.started');
    if (typeof started?.thread_id === 'string') result.sessionId = started.thread_id;
  }
  if (!result.sessionId) {
    const m = /session id:\s*([0-9a-f-]{36})/i.exec(result.stderr);
    if (m) result.sessionId = m[1];
  }
  return result;
}

// ---- hook trust -------------------------------------------------------------------------

/** One hook as `codex app-server`'s `hooks/list` reports it. */
export interface CodexHookEntry {
  /** "<absolute path of hooks.json or config.toml>:<event_snake_case>:<group index>:<handler index>" */
  key: string;
  /** camelCase, e.g. "preToolUse". */
  eventName: string;
  command: string;
  matcher: string | null;
  timeoutSec: number;
  sourcePath: string;
  /** "user" ($CODEX_HOME), "project" (<cwd>/.codex), ... */
  source: string;
  enabled: boolean;
  /** "sha256:<hex>": what `[hooks.state."<key>"] trusted_hash` must be for the hook to run. */
  currentHash: string;
  /** "untrusted", "trusted", ... */
  trustStatus: string;
  [k: string]: unknown;
}

/**
 * The hooks Codex finds for `cwd`, with their trust keys and hashes, from `codex app-server`'s
 * JSON-RPC method `hooks/list` (run against the current $CODEX_HOME/config.toml; write it first).
 * Also returns the parse warnings (a hooks.json that does not parse is skipped whole).
 */
export async function listCodexHooks(opts: {
  cwd: string;
  codexHome: string;
  codex?: string;
  timeoutMs?: number;
}): Promise<{ hooks: CodexHookEntry[]; warnings: string[]; errors: unknown[] }> {
  const bin = opts.codex ?? findCodex();
  if (!bin) throw new Error('codex not found');
  fs.mkdirSync(path.join(opts.codexHome, 'tmp'), { recursive: true });
  const child = spawn(bin, ['app-server'], {
    cwd: opts.cwd,
    env: codexEnv({ codexHome: opts.codexHome }),
    stdio: ['pipe', 'pipe', 'ignore'],
    detached: process.platform !== 'win32',
  });
  const send = (m: object) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('codex app-server: hooks/list timed out')), opts.timeoutMs ?? 30_000);
      let buf = '';
      child.once('error', reject);
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        buf += d;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          let msg: any;
          try {
            msg = JSON.parse(line);
          } catch {
            continue;
          }
          if (msg.id === 1) {
            send({ method: 'initialized' });
            send({ id: 2, method: 'hooks/list', params: { cwds: [opts.cwd] } });
          } else if (msg.id === 2) {
            clearTimeout(timer);
            if (msg.error) return reject(new Error(`hooks/list: ${JSON.stringify(msg.error)}`));
            const entry = (msg.result?.data ?? [])[0] ?? {};
            resolve({ hooks: entry.hooks ?? [], warnings: entry.warnings ?? [], errors: entry.errors ?? [] });
          }
        }
      });
      send({ id: 1, method: 'initialize', params: { clientInfo: { name: 'takeback-test', version: '0' } } });
    });
  } finally {
    killGroup(child);
  }
}

/**
 * The config.toml lines that persist trust in these hooks, as Codex's own /hooks review does:
 * `[hooks.state."<key>"]` with `trusted_hash = "<currentHash>"`. With them (and, for a
 * project's .codex/hooks.json, the project trusted too) hooks run without
 * --dangerously-bypass-hook-trust. Changing a hook's command, matcher or timeout changes its hash.
 */
export function hookTrustToml(hooks: CodexHookEntry[]): string {
  return hooks.map((h) => `[hooks.state.${JSON.stringify(h.key)}]\ntrusted_hash = ${JSON.stringify(h.currentHash)}\n`).join('\n');
}

/** `[projects."<dir>"] trust_level = "trusted"`: what `codex exec --trust` saves. */
export function projectTrustToml(dir: string): string {
  return `[projects.${JSON.stringify(dir)}]\ntrust_level = "trusted"\n`;
}

/** A short description of a run for assertion messages. */
export function describeCodexRun(r: CodexResult): string {
  return describeAgentRun('codex', r, 3000);
}
