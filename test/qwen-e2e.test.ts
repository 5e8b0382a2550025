// takeback end to end with the REAL Qwen Code: `takeback init qwen-code` writes its hooks to
// `.qwen/settings.json`, the real `qwen -p` runs two turns of one session (the second with
// `--resume`) scripted by the OpenAI-compatible stub on 127.0.0.1, and the scenario of
// ./support/agent-e2e.ts checks every set and every undo and redo byte for byte. Qwen Code gives
// each tool call an id (`tool_use_id`): begin and end pair by it.
//
// Needs the CLI: scripts/install-qwen.sh (or QWEN=/path/to/qwen). Skips with a message if none is
// found, and FAILS instead when TAKEBACK_REQUIRE_AGENTS=1 (CI).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { agentE2E } from './support/agent-e2e.js';
import { QWEN_BIN, QWEN_TOOLS, runQwen } from './support/qwen.js';

const { bin: QWEN, version: VERSION, skipReason: SKIP_REASON } = gateAgent(QWEN_BIN, 'takeback end to end with the real Qwen Code', '[qwen-e2e]');
const SESSION = '5f0c2a9e-7b1d-4c3e-9a8f-0123456789ab';
const TOOLS = 'write_file|edit|notebook_edit|run_shell_command';
/** The `$version` Qwen Code 0.24 writes into a settings file it loads. */
const QWEN_SETTINGS_VERSION = 4;

describe.skipIf(!QWEN)(QWEN ? `takeback end to end with the real Qwen Code ${VERSION}` : `takeback end to end with the real Qwen Code — ${SKIP_REASON}`, () => {
  agentE2E({
    agent: 'qwen-code',
    label: '[qwen-e2e]',
    tools: QWEN_TOOLS,
    toolNames: { create: 'write_file', overwrite: 'write_file', edit: 'edit', shell: 'run_shell_command' },
    pairedBy: 'id',
    oneSession: true,
    labelled: true,
    runTurn: (n, o) => runQwen({ bin: QWEN!, cwd: o.work, home: o.home, prompt: o.prompt, baseUrl: o.baseUrl, session: { id: SESSION, resume: n === 2 }, env: o.hookEnv }),
    // Qwen Code adds its settings' format version to the project's settings file when it first
    // starts there: done here ahead, as part of the committed tree.
    prepare: (work) => {
      const file = path.join(work, '.qwen', 'settings.json');
      fs.writeFileSync(file, `${JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), $version: QWEN_SETTINGS_VERSION }, null, 2)}\n`);
    },
    checkInit: (work) => {
      const settings = JSON.parse(fs.readFileSync(path.join(work, '.qwen', 'settings.json'), 'utf8'));
      const events = Object.fromEntries(Object.entries<any[]>(settings.hooks).map(([e, groups]) => [e, groups.map((g) => g.matcher ?? null)]));
      expect(events).toEqual({
        SessionStart: [null],
        UserPromptSubmit: [null],
        PreToolUse: [TOOLS],
        PostToolUse: [TOOLS],
        PostToolUseFailure: [TOOLS],
        Stop: [null],
      });
      const hook = settings.hooks.PreToolUse[0].hooks[0];
      expect(hook).toMatchObject({ type: 'command', timeout: 30 });
      expect(hook.command).toMatch(/takeback(\.js)? hook qwen-code\b.* 2>\/dev\/null \|\| true$/);
    },
  });
});
