// Drives the real GitHub Copilot CLI (`copilot -p`) against the scripted OpenAI-compatible
// stand-in for its model (./openai-chat-stub.ts) on 127.0.0.1: its bring-your-own-provider mode
// (COPILOT_PROVIDER_BASE_URL) with COPILOT_OFFLINE=true, which needs no GitHub sign-in and makes
// no other network access, and a private HOME. Its real tools (create, edit, bash) change real
// files and its real hooks fire.
//
// Install the pinned CLI with scripts/install-copilot.sh (into .cache/copilot). A second turn of
// the same session is a second run with `--resume=<session id>` (the first fixes the id with
// `--session-id`). The repository's hooks run only in a trusted folder: each run has
// COPILOT_ALLOW_ALL=true, which allows every tool and trusts the folder for that run (nothing is
// saved; `--trust-folder` does the same but not with `--session-id` or `--resume`).
import { agentBin, hermeticEnv, runAgentProcess } from './agent-bin.js';
import type { AgentRun, AgentTurnOptions } from './agent-bin.js';
import type { AgentTools } from './agent-e2e.js';
import { toolCall, toolCalls } from './openai-chat-stub.js';

/** How the copilot binary is found (the COPILOT variable, .cache/copilot, PATH); TAKEBACK_REQUIRE_AGENTS=1 requires it. */
export const COPILOT_BIN = agentBin({
  name: 'copilot',
  envVar: 'COPILOT',
  requireVars: ['TAKEBACK_REQUIRE_AGENTS'],
  parseVersion: (out) => /\d+\.\d+\.\d+/.exec(out)?.[0],
  // `--version` would otherwise look for a newer release.
  versionEnv: () => ({ COPILOT_AUTO_UPDATE: 'false', COPILOT_OFFLINE: 'true' }),
});

/** A model name of Copilot's catalogue (its tools and limits follow it); the stub answers any. */
export const COPILOT_MODEL = 'gpt-4.1';

/**
 * Copilot CLI's tools as model steps: `create` makes a new file (in a folder that exists: it
 * refuses a path that exists, or whose folder does not), `edit` replaces a string (an overwrite
 * is an edit of the whole text), `bash` runs a command.
 */
export const COPILOT_TOOLS: AgentTools = {
  write: (file, content, previous) => [
    toolCalls([previous === null ? toolCall('create', { path: file, file_text: content }) : toolCall('edit', { path: file, old_str: previous, new_str: content })]),
  ],
  edit: (file, old, replacement) => [toolCalls([toolCall('edit', { path: file, old_str: old, new_str: replacement })])],
  shell: (command) => [toolCalls([toolCall('bash', { command, description: 'Run the command', mode: 'sync', initial_wait: 60 })])],
};

export type RunCopilotOptions = AgentTurnOptions;

/** Runs `copilot -p` once (one turn), every tool allowed, the folder trusted; resolves when it exits. */
export function runCopilot(o: RunCopilotOptions): Promise<AgentRun> {
  const env = hermeticEnv(
    o.home,
    {
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: o.baseUrl,
      COPILOT_PROVIDER_TYPE: 'openai',
      COPILOT_PROVIDER_API_KEY: 'x',
      COPILOT_MODEL,
      COPILOT_AUTO_UPDATE: 'false',
      COPILOT_ALLOW_ALL: 'true',
      NO_PROXY: '127.0.0.1,localhost',
      NO_COLOR: '1',
    },
    o.env,
  );
  const session = o.session.resume ? [`--resume=${o.session.id}`] : ['--session-id', o.session.id];
  const args = ['-p', o.prompt, '--disable-client-telemetry', ...session];
  return runAgentProcess(o.bin, args, { cwd: o.cwd, env, timeoutMs: o.timeoutMs ?? 120_000 });
}
