// Helpers for the end-to-end tests of the Neovim plugin (clients/nvim) in a real headless Neovim.
//
// Each case runs one child Neovim: `nvim --headless -u init.lua -i NONE -n -l case.lua params.json`,
// with HOME, every XDG_* folder and TAKEBACK_HOME private to the case, the plugin on the
// runtimepath, and `node bin/takeback.js serve` as the sidecar. The case script (Lua) loads the
// harness below, does its work with timeouts (vim.wait), and writes what it saw to a JSON report
// that the test reads. The agent's side runs from inside that Neovim too, in order: Claude Code
// hook events (test/fixtures/claude-events, paths put back) fed to `takeback hook claude-code`,
// around the real file changes the tools made — so buffers can be open before the agent changes
// their files, as they are for a person watching an agent work.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { privateEditorEnv, repoRoot } from './editors.js';

export const PLUGIN_DIR = path.join(repoRoot, 'clients', 'nvim');
export const BIN = path.join(repoRoot, 'bin', 'takeback.js');
const EVENTS = path.join(repoRoot, 'test', 'fixtures', 'claude-events');

/** HOME, every XDG_* folder and TAKEBACK_HOME private to `base`; no editor leftovers. */
export function privateEnv(base: string): NodeJS.ProcessEnv {
  const home = path.join(base, 'takeback-home');
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  return privateEditorEnv(base, { TAKEBACK_HOME: home, LANG: 'C.UTF-8' });
}

/** The workspace before the agent, as in the recorded Claude Code session (fixtures README). */
export const WORKSPACE_BEFORE: Record<string, string> = {
  'notes.md': '# Notes\n\nThe quick brown fox.\n',
  'f.txt': 'a cat sat\n',
  x: 'x contents\n',
  z: 'z contents\n',
};

/** A git repository holding `files`. */
export function makeWorkspace(dir: string, files: Record<string, string> = WORKSPACE_BEFORE): string {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('git', ['init', '-q', dir], { stdio: 'ignore' });
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

/** A recorded hook event with the recording's placeholders replaced by this workspace. */
export function hookEvent(file: string, workspace: string, home: string, patch: Record<string, unknown> = {}): Record<string, unknown> {
  const slug = workspace.replace(/[^A-Za-z0-9]/g, '-');
  const text = fs
    .readFileSync(path.join(EVENTS, file), 'utf8')
    .replaceAll('${WORKSPACE_SLUG}', slug)
    .replaceAll('${WORKSPACE}', workspace)
    .replaceAll('${HOME}', home);
  return { ...(JSON.parse(text) as Record<string, unknown>), ...patch };
}

/** One thing the agent does: a hook event, or the change its tool made. */
export type AgentStep =
  | { event: Record<string, unknown> }
  | { write: { path: string; content: string } }
  | { edit: { path: string; old: string; new: string } }
  | { sh: string };

/**
 * Turn 1 of the recorded session: a Write of a new file (new folders), an Edit of notes.md and
 * a Bash `sed -i 's/a/b/' f.txt && mv x y && rm z`, each between its Pre/PostToolUse events,
 * inside UserPromptSubmit … Stop. The changes are the ones the tools made, read from the events.
 */
export function turnOne(workspace: string, home: string): AgentStep[] {
  const ev = (f: string) => hookEvent(f, workspace, home);
  const write = ev('pre-tool-use-write.json');
  const edit = ev('pre-tool-use-edit.json');
  const bash = ev('pre-tool-use-bash.json');
  const wi = write.tool_input as { file_path: string; content: string };
  const ei = edit.tool_input as { file_path: string; old_string: string; new_string: string };
  const bi = bash.tool_input as { command: string };
  return [
    { event: ev('session-start.json') },
    { event: ev('user-prompt-submit.json') },
    { event: write },
    { write: { path: wi.file_path, content: wi.content } },
    { event: ev('post-tool-use-write-create.json') },
    { event: edit },
    { edit: { path: ei.file_path, old: ei.old_string, new: ei.new_string } },
    { event: ev('post-tool-use-edit.json') },
    { event: bash },
    { sh: bi.command },
    { event: ev('post-tool-use-bash.json') },
    { event: ev('stop.json') },
  ];
}

/** Turn 2 (the session resumed): the Write over notes.md, alone. */
export function turnTwo(workspace: string, home: string): AgentStep[] {
  const ev = (f: string, patch: Record<string, unknown> = {}) => hookEvent(f, workspace, home, patch);
  const pre = ev('post-tool-use-write-update.json', { hook_event_name: 'PreToolUse' });
  delete pre.tool_response;
  const wi = pre.tool_input as { file_path: string; content: string };
  return [
    { event: ev('session-start-resume.json') },
    { event: ev('user-prompt-submit.json', { prompt: 'Turn two: rewrite the notes.', prompt_id: 'ba01a282-4601-46c9-aea1-d5bcdb8f1d9a' }) },
    { event: pre },
    { write: { path: wi.file_path, content: wi.content } },
    { event: ev('post-tool-use-write-update.json') },
    { event: ev('stop.json', { prompt_id: 'ba01a282-4601-46c9-aea1-d5bcdb8f1d9a' }) },
  ];
}

/** The workspace after turn 1 (what the tools left). */
export const WORKSPACE_AFTER_TURN_ONE: Record<string, string | null> = {
  'notes.md': '# Notes\n\nThe slow red fox.\n',
  'f.txt': 'b cat sat\n',
  'src/lib/new.ts': 'export const answer = 42;\n',
  x: null,
  y: 'x contents\n',
  z: null,
};

/** Files under `dir` (relative paths → text), .git left out. */
export function readTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const abs = path.join(d, e.name);
      if (e.isDirectory()) walk(abs);
      else out[path.relative(dir, abs).split(path.sep).join('/')] = fs.readFileSync(abs, 'latin1');
    }
  };
  walk(dir);
  return out;
}

// ------------------------------------------------------------------------------------------------
// The Lua side

const INIT_LUA = String.raw`
-- minimal init for the takeback e2e tests: the plugin on the runtimepath, nothing else.
local params = vim.json.decode(io.open(vim.env.TAKEBACK_TEST_PARAMS):read('*a'))
vim.opt.runtimepath:prepend(params.plugin)
vim.opt.swapfile = false
vim.opt.shortmess:append('IF')
vim.opt.more = false
vim.o.cmdheight = 10
if vim.env.NVIM_E2E_LSP_LOG then
  vim.lsp.set_log_level('debug') -- the log is in the case's private XDG_STATE_HOME
end
`;

/**
 * The harness every case script loads (dofile(params.harness)): H.wait, H.hook/H.agent (the
 * agent's side), H.text (a buffer as the bytes it would write), H.on(pattern) (wait for a User
 * autocommand), notify capture, and H.finish (writes the report and quits).
 */
const HARNESS_LUA = String.raw`
local H = {}
H.params = vim.json.decode(io.open(vim.env.TAKEBACK_TEST_PARAMS):read('*a'))
H.ws = H.params.workspace
H.out = { steps = {} }
H.messages = {}

-- Neovim's own vim.notify, for cases that see what it shows.
H.builtin_notify = vim.notify
vim.notify = function(msg, level)
  table.insert(H.messages, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end
vim.notify_once = vim.notify

function H.log(s)
  table.insert(H.out.steps, s)
end

function H.wait(what, cond, ms)
  ms = ms or 15000
  if not vim.wait(ms, cond, 10) then
    error('timed out after ' .. ms .. ' ms waiting for ' .. what, 2)
  end
end

function H.read(p)
  local f = io.open(p, 'rb')
  if not f then
    return vim.NIL
  end
  local s = f:read('*a')
  f:close()
  return s
end

function H.write(p, s)
  vim.fn.mkdir(vim.fs.dirname(p), 'p')
  local f = assert(io.open(p, 'wb'))
  f:write(s)
  f:close()
end

function H.path(rel)
  return H.ws .. '/' .. rel
end

function H.lines(b)
  return vim.api.nvim_buf_get_lines(b, 0, -1, false)
end

--- A buffer as the bytes :write would give (fileformat unix, no BOM).
function H.text(b)
  local s = table.concat(H.lines(b), '\n')
  if vim.bo[b].eol or vim.bo[b].fixeol then
    s = s .. '\n'
  end
  return s
end

--- One hook event through the real entry point (stdin JSON, like Claude Code).
function H.hook(ev)
  local r = vim.system({ 'node', H.params.bin, 'hook', 'claude-code' }, { stdin = vim.json.encode(ev), text = true, cwd = H.ws }):wait(30000)
  if r.code ~= 0 then
    error('hook ' .. tostring(ev.hook_event_name) .. ' failed: ' .. tostring(r.stderr))
  end
end

--- The agent's steps: hook events and the changes its tools made, in order.
function H.agent(steps)
  for _, s in ipairs(steps) do
    if s.event then
      H.hook(s.event)
    elseif s.write then
      H.write(s.write.path, s.write.content)
    elseif s.edit then
      local text = assert(io.open(s.edit.path, 'rb')):read('*a')
      local i, j = text:find(s.edit.old, 1, true)
      assert(i, 'edit: old text not found in ' .. s.edit.path)
      H.write(s.edit.path, text:sub(1, i - 1) .. s.edit.new .. text:sub(j + 1))
    elseif s.sh then
      local r = vim.system({ 'sh', '-c', s.sh }, { cwd = H.ws, text = true }):wait(30000)
      assert(r.code == 0, 'sh failed: ' .. tostring(r.stderr))
    end
  end
end

--- Counts User autocommands of a pattern and keeps their data.
H.events = {}
function H.track(pattern)
  H.events[pattern] = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = pattern,
    callback = function(a)
      table.insert(H.events[pattern], a.data or {})
    end,
  })
end

--- Runs an Ex command and waits for the next User {pattern}; returns its data.
function H.cmd_and_wait(cmd, pattern, ms)
  local n = #H.events[pattern]
  vim.cmd(cmd)
  H.wait(pattern .. ' after :' .. cmd, function()
    return #H.events[pattern] > n
  end, ms)
  return H.events[pattern][n + 1]
end

function H.takeback_clients()
  return vim.lsp.get_clients({ name = 'takeback' })
end

--- Opens a file in a buffer and waits until the takeback client is attached and initialized.
function H.open(rel)
  vim.cmd.edit(vim.fn.fnameescape(H.path(rel)))
  local b = vim.api.nvim_get_current_buf()
  H.wait('takeback attached to ' .. rel, function()
    local cs = vim.lsp.get_clients({ bufnr = b, name = 'takeback' })
    return cs[1] ~= nil and cs[1].initialized
  end)
  return b
end

function H.messages_since(n)
  return vim.list_slice(H.messages, n + 1)
end

function H.finish(err)
  H.out.error = err
  H.out.messages = H.messages
  local f = assert(io.open(H.params.report, 'w'))
  f:write(vim.json.encode(H.out))
  f:close()
end

--- Runs the case body, always writes the report, then quits.
function H.run(body)
  local ok, err = xpcall(body, debug.traceback)
  H.finish(not ok and tostring(err) or nil)
  vim.cmd('qall!')
end

return H
`;

export interface NvimCase {
  /** Neovim binary. */
  nvim: string;
  /** Private folder of the case (created). */
  base: string;
  /** The workspace (a git repository), inside `base`. */
  workspace: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh case folder with a workspace holding `files`. */
export function newCase(nvim: string, label: string, files: Record<string, string> = WORKSPACE_BEFORE): NvimCase {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), `takeback-nvim-${label}-`));
  const env = privateEnv(base);
  const workspace = makeWorkspace(path.join(base, 'work'), files);
  return { nvim, base, workspace, env };
}

export interface NvimReport {
  error?: string;
  messages: { msg: string; level: number }[];
  steps: string[];
  [key: string]: unknown;
}

/**
 * Runs `body` (Lua: a function body that gets H, the harness) in a child Neovim for the case,
 * with `data` available as H.params.data; `opts.screen` when the case reads the screen
 * (screenstring()). Resolves with the report; rejects with Neovim's stderr when there is none.
 */
export async function runNvim(c: NvimCase, body: string, data: unknown = {}, timeoutMs = 60_000, opts: { screen?: boolean } = {}): Promise<NvimReport> {
  const harness = path.join(c.base, 'harness.lua');
  const init = path.join(c.base, 'init.lua');
  const script = path.join(c.base, 'case.lua');
  const report = path.join(c.base, 'report.json');
  const paramsFile = path.join(c.base, 'params.json');
  fs.writeFileSync(harness, HARNESS_LUA);
  fs.writeFileSync(init, INIT_LUA);
  fs.writeFileSync(script, `local H = dofile(${JSON.stringify(harness)})\nH.run(function()\n${body}\nend)\n`);
  fs.writeFileSync(
    paramsFile,
    JSON.stringify({ plugin: PLUGIN_DIR, bin: BIN, workspace: c.workspace, report, harness, cmd: ['node', BIN, 'serve'], data }),
  );
  fs.rmSync(report, { force: true });
  const env = { ...c.env, TAKEBACK_TEST_PARAMS: paramsFile };
  const { code, stderr, timedOut } = await new Promise<{ code: number | null; stderr: string; timedOut: boolean }>((resolve) => {
    // `-l` draws no screen in 0.10 (screenstring() is empty): a case that reads the screen runs its
    // script from `-c luafile` instead, which draws the default 80x24 grid.
    const run = opts.screen ? ['-c', `luafile ${script}`] : ['-l', script];
    const child = spawn(c.nvim, ['--headless', '-u', init, '-i', 'NONE', '-n', ...run], {
      cwd: c.workspace,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let err = '';
    let timedOut = false;
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const timer = setTimeout(() => {
      timedOut = true;
      // The whole process group: Neovim and the sidecar it started.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      // Whatever Neovim started and left behind (a sidecar still shutting down) goes with it.
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // nothing left
      }
      resolve({ code, stderr: err, timedOut });
    });
  });
  if (!fs.existsSync(report)) {
    throw new Error(`Neovim wrote no report (exit ${code}${timedOut ? ', killed after ' + timeoutMs + ' ms' : ''}); stderr:\n${stderr}`);
  }
  const r = JSON.parse(fs.readFileSync(report, 'utf8')) as NvimReport;
  if (stderr.trim()) r.steps.push(`stderr: ${stderr.trim()}`);
  return r;
}

/**
 * One Claude Code turn (SessionStart, a prompt, a Write of `rel` with `content` between its
 * Pre/PostToolUse events, Stop) of session `session` in case `c`'s workspace.
 */
export function writeTurn(c: NvimCase, rel: string, content: string, session: string, toolUseId: string): AgentStep[] {
  const file = path.join(c.workspace, rel);
  const common = { session_id: session, cwd: c.workspace, transcript_path: path.join(c.base, 'transcript.jsonl') };
  const write = { tool_name: 'Write', tool_input: { file_path: file, content }, tool_use_id: toolUseId };
  return [
    { event: { ...common, hook_event_name: 'SessionStart', source: 'startup' } },
    { event: { ...common, hook_event_name: 'UserPromptSubmit', prompt: 'rename two lines' } },
    { event: { ...common, hook_event_name: 'PreToolUse', ...write } },
    { write: { path: file, content } },
    { event: { ...common, hook_event_name: 'PostToolUse', ...write, tool_response: { type: 'update' } } },
    { event: { ...common, hook_event_name: 'Stop' } },
  ];
}

/** `r`, after failing the test when its Lua side raised an error (naming the steps and messages it reached). */
export function ok(r: NvimReport): NvimReport {
  expect(r.error, `the Lua side failed; steps: ${JSON.stringify(r.steps)}; messages: ${JSON.stringify(r.messages)}`).toBeUndefined();
  return r;
}
