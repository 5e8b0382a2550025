// Smoke tests of the real editors that the editor clients are tested against: each one starts,
// reports the expected version, edits and writes a file, and (Neovim, Helix) starts a child
// process that runs with the system's own loader. Editors come from test/support/editors.ts;
// a test is skipped only when its editor cannot be found (set TAKEBACK_REQUIRE_EDITORS=1 to make
// that a failure, as CI should after scripts/fetch-editors.sh).

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  findHelix,
  findNvim,
  missingEditorMessage,
  onPath,
  parseVersion,
  privateEditorEnv,
  versionLine,
  type NvimVersion,
} from './support/editors.js';

const requireEditors = process.env.TAKEBACK_REQUIRE_EDITORS === '1';

const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(label: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `takeback-${label}-`));
  tempDirs.push(dir);
  return dir;
}

/** An environment with HOME and every XDG_* folder private to `base`, and no editor leftovers. */
const privateEnv = (base: string): NodeJS.ProcessEnv => privateEditorEnv(base);

function skipUnlessFound(
  ctx: { skip: (condition: boolean, note?: string) => void },
  bin: string | undefined,
  message: string,
): asserts bin is string {
  if (bin) return;
  if (requireEditors) throw new Error(`${message} (TAKEBACK_REQUIRE_EDITORS=1)`);
  ctx.skip(true, message);
}

// ------------------------------------------------------------------------------------------------
// Neovim

const NVIM_SCRIPT = String.raw`
local file = assert(arg[1], 'usage: nvim -l smoke.lua FILE')
vim.cmd.edit(vim.fn.fnameescape(file))
local before = vim.api.nvim_buf_get_lines(0, 0, -1, false)
vim.api.nvim_buf_set_lines(0, 0, 1, false, { 'edited by neovim' })
vim.api.nvim_buf_set_lines(0, -1, -1, false, { 'appended by neovim' })
vim.cmd('silent write')
local child = vim.fn.system({ 'node', '-e', 'process.stdout.write("ok")' })
local child_status = vim.v.shell_error
local child_ld = vim.fn.system({ 'node', '-e', 'process.stdout.write(process.env.LD_LIBRARY_PATH ?? "<unset>")' })
local v = vim.version()
io.stdout:write(vim.json.encode({
  version = string.format('%d.%d.%d', v.major, v.minor, v.patch),
  before = before,
  modified = vim.bo.modified,
  child = child,
  child_status = child_status,
  child_ld_library_path = child_ld,
}))
`;

for (const version of ['0.10', '0.12'] as NvimVersion[]) {
  const nvim = findNvim(version);
  const missing = missingEditorMessage(`nvim-${version}`);

  describe(`Neovim ${version} (${nvim ?? missing})`, () => {
    it('--version reports the expected version', (ctx) => {
      skipUnlessFound(ctx, nvim, missing);
      const line = versionLine(nvim);
      expect(line, `${nvim} --version`).toMatch(/^NVIM v\d+\.\d+\.\d+/);
      const v = parseVersion(line, 'nvim')!;
      expect(`${v[0]}.${v[1]}`).toBe(version);
    });

    it('headless: opens, edits and writes a file, and starts a child process', (ctx) => {
      skipUnlessFound(ctx, nvim, missing);
      const base = tempDir(`nvim-${version}`);
      const env = privateEnv(base);
      const script = path.join(base, 'smoke.lua');
      writeFileSync(script, NVIM_SCRIPT);
      const work = path.join(base, 'work dir');
      mkdirSync(work);
      const file = path.join(work, 'hello.txt');
      writeFileSync(file, 'hello\nsecond line\n');

      const run = spawnSync(nvim, ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-l', script, file], {
        cwd: work,
        env,
        encoding: 'utf8',
        timeout: 30_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      expect(run.error, 'spawn').toBeUndefined();
      expect(run.status, `exit status; stderr:\n${run.stderr}`).toBe(0);
      const report = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(report.version).toMatch(new RegExp(`^${version.replace('.', '\\.')}\\.\\d+$`));
      expect(report.before).toEqual(['hello', 'second line']);
      expect(report.modified).toBe(false);
      expect(report.child).toBe('ok');
      expect(report.child_status).toBe(0);
      // The wrapper gives the editor its libraries through the loader, not through the
      // environment: what the editor starts must not inherit them.
      expect(report.child_ld_library_path).toBe('<unset>');
      expect(readFileSync(file, 'utf8')).toBe('edited by neovim\nsecond line\nappended by neovim\n');
    });
  });
}

// ------------------------------------------------------------------------------------------------
// Helix, driven under tmux like a person at a terminal

async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined | false;
  while (Date.now() < deadline) {
    last = probe();
    if (last) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const HELIX_CONFIG = `# private config for the smoke test
theme = "default"

[editor]
auto-info = false
auto-pairs = false
auto-completion = false
mouse = false

[editor.lsp]
enable = false
`;

const hx = findHelix();
const hxMissing = missingEditorMessage('hx');

describe(`Helix (${hx ?? hxMissing})`, () => {
  it('--version reports helix 25.07', (ctx) => {
    skipUnlessFound(ctx, hx, hxMissing);
    const line = versionLine(hx);
    expect(line, `${hx} --version`).toMatch(/^helix \d+\.\d+/);
    const v = parseVersion(line, 'helix')!;
    expect(`${v[0]}.${String(v[1]).padStart(2, '0')}`).toBe('25.07');
  });

  it('under tmux: opens a file, types, :w writes it, a child process runs, :q quits cleanly', async (ctx) => {
    skipUnlessFound(ctx, hx, hxMissing);
    const tmux = onPath('tmux');
    if (!tmux) throw new Error('Helix was found but tmux was not: apt-get install tmux (scripts/fetch-editors.sh does)');

    const base = tempDir('hx');
    const env = privateEnv(base);
    delete env.TERM; // tmux gives the pane its own TERM (tmux-256color); CI has none at all
    const config = path.join(base, 'config.toml');
    writeFileSync(config, HELIX_CONFIG);
    const work = path.join(base, 'work');
    mkdirSync(work);
    const file = path.join(work, 'hello.txt');
    writeFileSync(file, 'hello\n');
    const statusFile = path.join(base, 'hx.status');
    const socket = path.join(base, 'tmux.sock');

    const tmuxRun = (...args: string[]): string =>
      execFileSync(tmux, ['-S', socket, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const screen = (): string => tmuxRun('capture-pane', '-p', '-t', 'smoke');
    const keys = (...k: string[]): void => void tmuxRun('send-keys', '-t', 'smoke', ...k);
    const type = (text: string): void => void tmuxRun('send-keys', '-t', 'smoke', '-l', text);
    const statusLine = (): string => screen().split('\n').filter((l) => /\b(NOR|INS|SEL)\b/.test(l)).pop() ?? '';

    try {
      // A fixed, roomy size: a detached session is 80x24 otherwise. -f /dev/null: no user tmux.conf.
      // sh records hx's exit status (tmux 3.3a does not report a dead pane's status here).
      tmuxRun(
        '-f', '/dev/null', 'new-session', '-d', '-s', 'smoke', '-x', '120', '-y', '40', '-c', work, '--',
        'sh', '-c', 'status=$1; shift; "$@"; echo $? > "$status"', 'sh', statusFile, hx, '-c', config, 'hello.txt',
      );

      await waitFor('Helix to show hello.txt in normal mode', () => /\bNOR\b.*hello\.txt/.test(statusLine()));
      expect(screen()).toContain('hello');

      keys('i');
      await waitFor('insert mode', () => /\bINS\b/.test(statusLine()));
      type('typed by tmux ');
      await waitFor('the typed text', () => screen().includes('typed by tmux hello'));
      keys('Escape');
      await waitFor('normal mode', () => /\bNOR\b/.test(statusLine()));

      // A child process started by Helix: node through PATH and the system's loader.
      type(':insert-output node -p 40+2');
      keys('Enter');
      await waitFor('the output of node', () => /typed by tmux .*42/.test(screen()));

      type(':w');
      keys('Enter');
      // Helix saves through a backup and a rename, so the file can be missing for a moment:
      // read it once the status line says the write is done.
      await waitFor('the write message', () => /'hello\.txt' written/.test(screen()));
      expect(readFileSync(file, 'utf8')).toMatch(/^typed by tmux .*42.*hello\n$/);

      type(':q');
      keys('Enter');
      const status = await waitFor('Helix to exit', () => existsSync(statusFile) && readFileSync(statusFile, 'utf8').trim());
      expect(status, 'Helix exit status').toBe('0');
    } finally {
      try {
        tmuxRun('kill-server');
      } catch {
        // already gone: the session ended with Helix
      }
    }
  });
});
