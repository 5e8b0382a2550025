// takeback end to end with the REAL GitHub Copilot CLI: `takeback init copilot` writes its hooks
// to `.github/hooks/takeback.json` (Claude Code's event names, for which Copilot sends Claude
// Code's payload shape), the real `copilot -p` runs two turns of one session (the second with
// `--resume`) in its offline bring-your-own-provider mode against the OpenAI-compatible stub on
// 127.0.0.1, and the scenario of ./support/agent-e2e.ts checks every set and every undo and redo
// byte for byte. Copilot gives no tool call id: takeback pairs each PostToolUse with its
// PreToolUse by order (`pairedBy: "order"`).
//
// Needs the CLI: scripts/install-copilot.sh (or COPILOT=/path/to/copilot). Skips with a message if
// none is found, and FAILS instead when TAKEBACK_REQUIRE_AGENTS=1 (CI).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { agentE2E } from './support/agent-e2e.js';
import { COPILOT_BIN, COPILOT_TOOLS, runCopilot } from './support/copilot.js';

const { bin: COPILOT, version: VERSION, skipReason: SKIP_REASON } = gateAgent(COPILOT_BIN, 'takeback end to end with the real GitHub Copilot CLI', '[copilot-e2e]');
const SESSION = '7d3f1b2c-4a5e-4f60-8b9c-abcdef012345';
const TOOLS = 'Write|Edit|Bash';

describe.skipIf(!COPILOT)(COPILOT ? `takeback end to end with the real GitHub Copilot CLI ${VERSION}` : `takeback end to end with the real GitHub Copilot CLI — ${SKIP_REASON}`, () => {
  agentE2E({
    agent: 'copilot',
    label: '[copilot-e2e]',
    tools: COPILOT_TOOLS,
    toolNames: { create: 'Write', overwrite: 'Edit', edit: 'Edit', shell: 'Bash' },
    pairedBy: 'order',
    oneSession: true,
    labelled: true,
    runTurn: (n, o) => runCopilot({ bin: COPILOT!, cwd: o.work, home: o.home, prompt: o.prompt, baseUrl: o.baseUrl, session: { id: SESSION, resume: n === 2 }, env: o.hookEnv }),
    checkInit: (work) => {
      expect(fs.readdirSync(path.join(work, '.github', 'hooks'))).toEqual(['takeback.json']);
      const settings = JSON.parse(fs.readFileSync(path.join(work, '.github', 'hooks', 'takeback.json'), 'utf8'));
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
      expect(hook.command).toMatch(/takeback(\.js)? hook copilot\b.* 2>\/dev\/null \|\| true$/);
    },
  });
});
