// Drives the real Claude Code CLI (`claude -p`) against a scripted model (./model-stub.ts)
// on 127.0.0.1, with a private HOME and no other network, so that end-to-end tests can run
// real sessions whose real tools change real files and whose real hooks fire.
//
// Install the pinned CLI with scripts/install-claude.sh (into .cache/claude).
import fs from 'node:fs';
import path from 'node:path';
import { agentBin, agentVersion, describeAgentRun, findAgentBin, hermeticEnv, readJsonOutput, runAgentProcess } from './agent-bin.js';
import type { AgentRun } from './agent-bin.js';

export { REPO_ROOT } from './agent-bin.js';
/**
 * How the claude binary is found (the CLAUDE variable, .cache/claude, PATH) and its version read
 * ("2.1.332 (Claude Code)", asked with a throwaway HOME and TMPDIR, no updater);
 * TAKEBACK_REQUIRE_CLAUDE=1 requires it.
 */
export const CLAUDE_BIN = agentBin({
  name: 'claude',
  envVar: 'CLAUDE',
  requireVars: ['TAKEBACK_REQUIRE_CLAUDE'],
  parseVersion: (out) => out.trim().split(/\s+/)[0],
  versionEnv: (home) => ({ TMPDIR: home, DISABLE_AUTOUPDATER: '1' }),
});
/** Where scripts/install-claude.sh puts the CLI. */
export const CACHED_CLAUDE = CLAUDE_BIN.cached;
/** The version scripts/install-claude.sh installs and the fixtures were recorded with. */
export const PINNED_CLAUDE_VERSION = '2.1.332';
/** The model the harness asks for; the stub answers whatever is asked. */
export const DEFAULT_MODEL = 'claude-sonnet-4-5';

/**
 * The claude binary to test with: the CLAUDE environment variable first (a path, or a name
 * looked up on PATH), then .cache/claude/node_modules/.bin/claude, then `claude` on PATH.
 */
export function findClaude(): string | undefined {
  return findAgentBin(CLAUDE_BIN);
}

/** `claude --version`'s number, e.g. "2.1.332", or undefined if it does not run (never with the user's ~/.claude). */
export function claudeVersion(bin: string | undefined = findClaude()): string | undefined {
  return agentVersion(CLAUDE_BIN, bin);
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

export interface ClaudeResult extends AgentRun {
  /** Parsed stdout, with outputFormat "json". */
  json?: any;
  /** The session id, with outputFormat "json" (also in every hook payload). */
  sessionId?: string;
}

/**
 * The environment for a hermetic, offline, non-interactive run: only basic variables of ours
 * (no ANTHROPIC_*, CLAUDE*, proxies or credentials leak in), a private HOME and temp dir, the
 * stub as the API, and everything optional switched off.
 */
export function claudeEnv(opts: { baseUrl: string; home: string; env?: Record<string, string | undefined> }): NodeJS.ProcessEnv {
  const tmp = path.join(opts.home, 'tmp');
  return hermeticEnv(
    opts.home,
    {
      USERPROFILE: opts.home,
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
    },
    opts.env,
  );
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

  const result: ClaudeResult = await runAgentProcess(bin, claudeArgs(opts), { cwd: opts.cwd, env: claudeEnv(opts), timeoutMs: opts.timeoutMs ?? 60_000 });
  return opts.outputFormat === 'json' ? readJsonOutput(result) : result;
}

/** A short description of a run for assertion messages. */
export function describeRun(r: ClaudeResult): string {
  return describeAgentRun('claude', r);
}
