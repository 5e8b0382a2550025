// Drives the real Qwen Code (`qwen -p`) against the scripted OpenAI-compatible stand-in for its
// model (./openai-chat-stub.ts) on 127.0.0.1, with a private HOME and no other network: its real
// tools (write_file, edit, run_shell_command) change real files and its real hooks fire.
//
// Install the pinned CLI with scripts/install-qwen.sh (into .cache/qwen). A second turn of the
// same session is a second run with `--resume <session id>` (the first run fixes the id with
// `--session-id`).
import path from 'node:path';
import fs from 'node:fs';
import { agentBin, hermeticEnv, runAgentProcess } from './agent-bin.js';
import type { AgentRun, AgentTurnOptions } from './agent-bin.js';
import type { AgentTools } from './agent-e2e.js';
import { toolCall, toolCalls } from './openai-chat-stub.js';

/** How the qwen binary is found (the QWEN variable, .cache/qwen, PATH); TAKEBACK_REQUIRE_AGENTS=1 requires it. */
export const QWEN_BIN = agentBin({
  name: 'qwen',
  envVar: 'QWEN',
  requireVars: ['TAKEBACK_REQUIRE_AGENTS'],
  parseVersion: (out) => /\d+\.\d+\.\d+/.exec(out)?.[0],
});

/** The model name the runs ask for (the stub answers any). */
export const QWEN_MODEL = 'stub-model';

const read = (file: string) => toolCalls([toolCall('read_file', { file_path: file })]);

/**
 * Qwen Code's tools as model steps. Qwen refuses to change a file the session has not read:
 * `edit`, `write_file` over an existing file and a shell command that edits one in place
 * (`sed -i`) get a `read_file` first.
 */
export const QWEN_TOOLS: AgentTools = {
  write: (file, content, previous) => [...(previous !== null ? [read(file)] : []), toolCalls([toolCall('write_file', { file_path: file, content })])],
  edit: (file, old, replacement) => [
    read(file),
    toolCalls([toolCall('edit', { file_path: file, old_string: old, new_string: replacement })]),
  ],
  shell: (command, edits) => [...edits.map(read), toolCalls([toolCall('run_shell_command', { command })])],
};

export type RunQwenOptions = AgentTurnOptions;

/** Runs `qwen -p` once (one turn), in YOLO mode with the OpenAI auth type; resolves when it exits. */
export function runQwen(o: RunQwenOptions): Promise<AgentRun> {
  fs.mkdirSync(path.join(o.home, '.qwen'), { recursive: true });
  // No telemetry, no update check: nothing leaves the machine.
  fs.writeFileSync(path.join(o.home, '.qwen', 'settings.json'), `${JSON.stringify({ telemetry: { enabled: false }, general: { enableAutoUpdate: false }, privacy: { usageStatisticsEnabled: false } }, null, 2)}\n`);
  const env = hermeticEnv(
    o.home,
    { OPENAI_API_KEY: 'x', OPENAI_BASE_URL: o.baseUrl, OPENAI_MODEL: QWEN_MODEL, NO_PROXY: '127.0.0.1,localhost', NO_COLOR: '1', QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' },
    o.env,
  );
  const args = ['-p', o.prompt, '--yolo', '--auth-type', 'openai', '-m', QWEN_MODEL, o.session.resume ? '--resume' : '--session-id', o.session.id];
  return runAgentProcess(o.bin, args, { cwd: o.cwd, env, timeoutMs: o.timeoutMs ?? 120_000 });
}
