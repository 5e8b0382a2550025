// An agent's turn as Claude Code's hooks report it, for sidecar tests: the real hook entry point
// (`takeback hook claude-code`, or the same handler in this process) sees a Write that creates a
// file in a new folder, an Edit, and a Bash `sed -i` that also rewrites a binary file and makes a
// script executable; the files change in between, as the tools would change them.
import { execSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { handleAgentEvent } from '../../server/agents/registry.js';
import { BIN } from './lsp-client.js';

/** The workspace before the agent. */
export const BEFORE: Record<string, string | Buffer> = {
  'notes.md': '# Notes\n\nThe quick brown fox.\nJumps over the lazy dog.\n',
  'data.txt': 'alpha\nbeta\ngamma\ndelta\n',
  'logo.bin': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]),
  'run.sh': '#!/bin/sh\necho run\n',
};

/** What the agent leaves. */
export const AFTER: Record<string, string | Buffer | null> = {
  'notes.md': '# Notes\n\nThe slow red fox.\nJumps over the lazy dog.\n',
  'data.txt': 'alpha\nBETA\ngamma\ndelta\n',
  'logo.bin': Buffer.from([0x42, 0x00, 0x01]),
  'run.sh': '#!/bin/sh\necho run\n',
  'src/new.ts': 'export const answer = 42;\n',
};

export interface Workspace {
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
  read(rel: string): Buffer | null;
  mode(rel: string): number;
  cleanup(): void;
}

/** A fresh workspace (a git-less folder) with the BEFORE files and a private TAKEBACK_HOME. */
export function makeWorkspace(): Workspace {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-sidecar-')));
  const root = path.join(base, 'ws');
  const home = path.join(base, 'home');
  fs.mkdirSync(root);
  fs.mkdirSync(path.join(root, '.git')); // the workspace root, as in a git repository
  for (const [rel, content] of Object.entries(BEFORE)) fs.writeFileSync(path.join(root, rel), content);
  fs.chmodSync(path.join(root, 'run.sh'), 0o644);
  const env: NodeJS.ProcessEnv = { ...process.env, TAKEBACK_HOME: home };
  delete env.TAKEBACK_LOG_LEVEL;
  return {
    root,
    home,
    env,
    read: (rel) => {
      const f = path.join(root, rel);
      return fs.existsSync(f) ? fs.readFileSync(f) : null;
    },
    mode: (rel) => fs.statSync(path.join(root, rel)).mode & 0o777,
    // A gc the sidecar started may still be finishing in the home: retry while it does.
    cleanup: () => fs.rmSync(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }),
  };
}

type Hook = (ev: object) => void;

/** Runs hook events through the built binary (a separate process, as Claude Code runs them). */
export function cliHook(ws: Workspace): Hook {
  return (ev) => {
    const r = spawnSync(process.execPath, [BIN, 'hook', 'claude-code'], { input: JSON.stringify(ev), cwd: ws.root, env: ws.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`hook failed: ${r.stderr}`);
  };
}

/** Runs hook events through the same handler in this process (its own journal connection). */
export function inProcessHook(ws: Workspace): Hook {
  return (ev) => {
    handleAgentEvent('claude-code', ev as { hook_event_name: string }, ws.env);
  };
}

/** One turn of the agent: Write (a new file in a new folder), Edit, Bash (`sed -i`, a binary, chmod). Returns the turn id. */
export function agentTurn(ws: Workspace, hook: Hook, session = 'sess-1'): void {
  const common = { session_id: session, cwd: ws.root };
  hook({ ...common, hook_event_name: 'SessionStart', source: 'startup' });
  hook({ ...common, hook_event_name: 'UserPromptSubmit', prompt: 'tidy the notes' });

  const newFile = path.join(ws.root, 'src', 'new.ts');
  const write = { tool_name: 'Write', tool_input: { file_path: newFile, content: AFTER['src/new.ts'] }, tool_use_id: 'toolu_w1' };
  hook({ ...common, hook_event_name: 'PreToolUse', ...write });
  fs.mkdirSync(path.dirname(newFile), { recursive: true });
  fs.writeFileSync(newFile, AFTER['src/new.ts'] as string);
  hook({ ...common, hook_event_name: 'PostToolUse', ...write });

  const notes = path.join(ws.root, 'notes.md');
  const edit = { tool_name: 'Edit', tool_input: { file_path: notes, old_string: 'quick brown', new_string: 'slow red' }, tool_use_id: 'toolu_e1' };
  hook({ ...common, hook_event_name: 'PreToolUse', ...edit });
  fs.writeFileSync(notes, fs.readFileSync(notes, 'utf8').replace('quick brown', 'slow red'));
  hook({ ...common, hook_event_name: 'PostToolUse', ...edit });

  const command = "sed -i 's/beta/BETA/' data.txt && printf 'B\\000\\001' > logo.bin && chmod 755 run.sh";
  const bash = { tool_name: 'Bash', tool_input: { command }, tool_use_id: 'toolu_b1' };
  hook({ ...common, hook_event_name: 'PreToolUse', ...bash });
  execSync(command, { cwd: ws.root, shell: '/bin/sh' });
  hook({ ...common, hook_event_name: 'PostToolUse', ...bash });

  hook({ ...common, hook_event_name: 'Stop' });
}

/**
 * One turn of the agent in which a Write turns `rel` (written as `before` first) into `after`,
 * through `hook` (SessionStart, a prompt, Pre/PostToolUse around the write, Stop) in session
 * `session`; `toolUseId` names the Write.
 */
export function writeTurn(ws: Workspace, hook: Hook, rel: string, before: string, after: string, session: string, toolUseId: string): void {
  const common = { session_id: session, cwd: ws.root };
  const file = path.join(ws.root, rel);
  fs.writeFileSync(file, before);
  hook({ ...common, hook_event_name: 'SessionStart', source: 'startup' });
  hook({ ...common, hook_event_name: 'UserPromptSubmit', prompt: 'rename two lines' });
  const write = { tool_name: 'Write', tool_input: { file_path: file, content: after }, tool_use_id: toolUseId };
  hook({ ...common, hook_event_name: 'PreToolUse', ...write });
  fs.writeFileSync(file, after);
  hook({ ...common, hook_event_name: 'PostToolUse', ...write });
  hook({ ...common, hook_event_name: 'Stop' });
}
