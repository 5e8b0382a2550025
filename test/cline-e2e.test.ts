// takeback end to end with the REAL Cline CLI: `takeback init cline` writes one hook program per
// event to `.cline/hooks/`, the real `cline --json PROMPT` runs two tasks (Cline goes on with a
// session only interactively: each task is a session, its run a turn) scripted by the
// OpenAI-compatible stub on 127.0.0.1, and the scenario of ./support/agent-e2e.ts checks every set
// and every undo and redo byte for byte. Cline's hooks run with a prompt on the command line
// (tools auto-approved), and give each tool call Cline's id: begin and end pair by it. The hooks
// see no prompt in that mode (no UserPromptSubmit for the task's first message): turns have no
// label.
//
// Needs the CLI: scripts/install-cline.sh (or CLINE=/path/to/cline). Skips with a message if none
// is found, and FAILS instead when TAKEBACK_REQUIRE_AGENTS=1 (CI).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { agentE2E } from './support/agent-e2e.js';
import { CLINE_BIN, CLINE_TOOLS, clineHubs, runCline, stopClineHubs } from './support/cline.js';
import { freePort } from './support/procs.js';

const { bin: CLINE, version: VERSION, skipReason: SKIP_REASON } = gateAgent(CLINE_BIN, 'takeback end to end with the real Cline CLI', '[cline-e2e]');
const EVENTS = ['PostToolUse', 'PreToolUse', 'TaskCancel', 'TaskComplete', 'TaskError', 'TaskResume', 'TaskStart'];

describe.skipIf(!CLINE)(CLINE ? `takeback end to end with the real Cline CLI ${VERSION}` : `takeback end to end with the real Cline CLI — ${SKIP_REASON}`, () => {
  // Cline's hub listens on a port of its own here (else on Cline's fixed one, where a hub of
  // another run may already be), and is ended with the test.
  let hubPort: number | undefined;
  agentE2E({
    agent: 'cline',
    label: '[cline-e2e]',
    tools: CLINE_TOOLS,
    toolNames: { create: 'editor', overwrite: 'editor', edit: 'editor', shell: 'run_commands' },
    pairedBy: 'id',
    oneSession: false,
    labelled: false,
    runTurn: async (_n, o) => {
      hubPort ??= await freePort();
      return runCline({ bin: CLINE!, cwd: o.work, home: o.home, prompt: o.prompt, baseUrl: o.baseUrl, env: { ...o.hookEnv, CLINE_HUB_PORT: String(hubPort) } });
    },
    cleanup: async (work) => {
      await stopClineHubs(work);
      expect(clineHubs(work)).toEqual([]);
    },
    checkInit: (work) => {
      const dir = path.join(work, '.cline', 'hooks');
      expect(fs.readdirSync(dir).sort()).toEqual(EVENTS);
      for (const name of EVENTS) {
        const file = path.join(dir, name);
        expect(fs.statSync(file).mode & 0o777, name).toBe(0o755);
        expect(fs.readFileSync(file, 'utf8'), name).toMatch(/^#!\/bin\/sh\n[^]*takeback(\.js)? hook cline\b.* >\/dev\/null 2>&1\nexit 0\n$/);
      }
    },
  });
});
