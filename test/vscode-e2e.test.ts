// End to end in real VS Code: code-server 4.139.1 (VS Code 1.139.1) from .cache/vscode, shown in
// Debian's headless Chromium driven by playwright-core, with takeback's extension packaged by
// `npm run build:vscode` and installed by `takeback init vscode` (through a `code` on PATH that is
// code-server's own command line). An agent's turn arrives through the Claude Code hook entry
// point (the Edit really made between PreToolUse and PostToolUse); then, in VS Code as a person
// would: the Takeback view lists the turn, Preview opens the diff editor, Undo puts the file back
// in the editor and on disk (saved, so the journal records it), Ctrl+Z and a save bring the
// agent's change back (the journal says applied again), the sidecar's "Undo the agent's change
// here" in the Source Action menu takes the hunk at the cursor back, the row's Redo puts it back,
// unsaved text in the buffer next to the agent's lines is a conflict that writes nothing until
// "Undo, replacing later changes" is picked, and unsaved text on other lines gets the undo merged
// into the buffer, left unsaved for the person's own save, which records it.
// One code-server and one Chromium serve the whole file (its user data, extensions and the install
// by `takeback init vscode` are the file's); each test has its own workspace, HOME, XDG folders
// and TAKEBACK_HOME, opened in a window of its own (a fresh browser context and extension host).
// The tests are skipped only when code-server or Chromium cannot be found, and fail instead with
// TAKEBACK_REQUIRE_EDITORS=1.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { privateEditorEnv } from './support/editors.js';
import { claudeAgent } from './support/helix.js';
import { until } from './support/procs.js';
import { BIN, hook, tb } from './support/takeback.js';
import { buildVsix, clickRowAction, closeTab, tab, editorText, openFile, row, startVscode, takebackPane, vscodeMissing, writeCodeCommand, type VscodeServer } from './support/vscode-server.js';

const missing = vscodeMissing();
const requireEditors = process.env.TAKEBACK_REQUIRE_EDITORS === '1';

function needVscode(ctx: { skip: (condition: boolean, note?: string) => void }): void {
  if (!missing) return;
  if (requireEditors) throw new Error(`${missing} (TAKEBACK_REQUIRE_EDITORS=1)`);
  ctx.skip(true, missing);
}

const BEFORE = '# Notes\n\nThe quick brown fox.\n';
const AFTER = '# Notes\n\nThe slow brown fox.\n';

let vsix = '';
/**
 * One code-server and one Chromium for the file, with the extension installed once by `takeback
 * init vscode`: each test opens its own workspace in a window of its own (a fresh browser context,
 * so a new extension host and sidecar), with a TAKEBACK_HOME and HOME of its own.
 */
let editor: { base: string; bin: string; userData: string; server: VscodeServer | undefined } | undefined;

beforeAll(async () => {
  vsix = buildVsix();
  if (missing) return;
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-vscode-e2e-editor-')));
  const bin = path.join(base, 'bin');
  const userData = path.join(base, 'vscode-user');
  const extensions = path.join(base, 'vscode-extensions');
  for (const d of [bin, userData, extensions]) fs.mkdirSync(d);
  editor = { base, bin, userData, server: undefined };
  // `takeback` on PATH is this install, as after `npm i -g`; `code` is code-server's command line.
  fs.symlinkSync(BIN, path.join(bin, 'takeback'));
  writeCodeCommand(bin, extensions, userData);
  const env = privateEditorEnv(base, { TAKEBACK_HOME: path.join(base, 'tb'), LANG: 'C.UTF-8' });
  env.PATH = [bin, env.PATH].join(path.delimiter);
  const init = tb(['init', 'vscode'], { cwd: base, env });
  expect(init.code, init.stderr).toBe(0);
  expect(init.stdout).toContain(`installed the VS Code extension ${vsix}`);
  editor.server = await startVscode({ userDataDir: userData, extensionsDir: extensions, env });
}, 360_000);

afterAll(async () => {
  await editor?.server?.stop();
  if (editor && !process.env.TAKEBACK_KEEP_TMP) fs.rmSync(editor.base, { recursive: true, force: true });
});

/**
 * A private world: a git workspace where the agent's turn changed notes.md (and, with `secret`,
 * made server.pem with a command: a capture gap, its bytes never kept), `takeback` and `code` on
 * PATH, a TAKEBACK_HOME of its own.
 */
function world(opts: { secret?: boolean } = {}) {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-vscode-e2e-')));
  const ws = path.join(base, 'ws');
  fs.mkdirSync(ws);
  const tbHome = path.join(base, 'tb');
  const env = privateEditorEnv(base, { TAKEBACK_HOME: tbHome, LANG: 'C.UTF-8' });
  env.PATH = [editor!.bin, env.PATH].join(path.delimiter);
  execFileSync('git', ['init', '-q', ws], { env });
  fs.writeFileSync(path.join(ws, 'notes.md'), BEFORE);
  const agent = claudeAgent(ws, env, (event, o) => hook(event, o));
  agent.prompt('tidy the notes');
  agent.edit('notes.md', 'quick', 'slow');
  if (opts.secret) agent.bash("echo 'not a real key' > server.pem");
  agent.stop();
  const sessions: { stop(): Promise<void> }[] = [];
  onTestFinished(async () => {
    for (const s of sessions) await s.stop();
    if (!process.env.TAKEBACK_KEEP_TMP) fs.rmSync(base, { recursive: true, force: true });
  });
  const read = (rel: string) => fs.readFileSync(path.join(ws, rel), 'utf8');
  const takeback = (...args: string[]) => tb(args, { cwd: ws, env });
  const states = () => JSON.parse(takeback('list', '--json').stdout).sets.map((s: { label: string; state: string }) => `${s.label}: ${s.state}`);
  /** The output channel logs of every window so far (userData/logs/**), relative paths. */
  const logs = path.join(editor!.userData, 'logs');
  const channelLogs = () => (fs.existsSync(logs) ? (fs.readdirSync(logs, { recursive: true }) as string[]).filter((f) => /output_logging_[^/]+\/\d+-takeback\.log$/.test(f)) : []);
  let earlierLogs = new Set<string>();
  /** Opens the workspace in a window of the file's VS Code, the extension installed by `takeback init vscode`. */
  const open = async () => {
    // VS Code's extension host takes PATH from a login shell, which the private HOME leaves
    // without the bin folder: the sidecar's command is named in full (the takeback.command
    // setting), with this world's journal home. The client's trace of the JSON-RPC traffic goes
    // to its output channel's log (clientLog).
    const settings = { 'takeback.command': ['/usr/bin/env', `TAKEBACK_HOME=${tbHome}`, process.execPath, BIN, 'serve'], 'takeback.trace.server': 'messages' };
    earlierLogs = new Set(channelLogs());
    const s = await editor!.server!.open(ws, settings);
    sessions.push(s);
    return s;
  };
  /** What the extension's output channel logged in this world's window (the client's trace of the sidecar's traffic). */
  const clientLog = () =>
    channelLogs()
      .filter((f) => !earlierLogs.has(f))
      .map((f) => fs.readFileSync(path.join(logs, f), 'utf8'))
      .join('\n');
  return { base, ws, env, read, takeback, states, open, clientLog };
}

/** Fails with what code-server printed and a screenshot's path when `body` throws. */
async function withSession<T>(s: { page: import('playwright-core').Page; log(): string }, base: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (e) {
    const shot = path.join(os.tmpdir(), `${path.basename(base)}.png`);
    await s.page.screenshot({ path: shot }).catch(() => {});
    if (process.env.TAKEBACK_KEEP_TMP) fs.writeFileSync(shot.replace(/png$/, 'html'), await s.page.content().catch(() => ''));
    throw new Error(`${(e as Error).message}\nscreenshot: ${shot}\ncode-server:\n${s.log().slice(-4000)}`, { cause: e });
  }
}

describe('VS Code (code-server) with the takeback extension', () => {
  it("lists the turn, previews it, undoes it through the buffer and the disk, Ctrl+Z and a save bring the change back (applied again), the Source Action 'Undo the agent's change here' takes the hunk back, and Redo puts it back", async (ctx) => {
    needVscode(ctx);
    const w = world();
    const s = await w.open();
    const { page } = s;
    await withSession(s, w.base, async () => {
      const pane = await takebackPane(page);
      const turn = row(pane, 'tidy the notes');
      await turn.waitFor();
      expect(await turn.textContent()).toContain('claude-code');

      await openFile(page, 'notes.md');
      await until('the agent\'s text in the editor', async () => (await editorText(page)).includes('The slow brown fox.'), 30_000);
      // The sidecar's code lens on the file the agent changed.
      await page.locator('.codelens-decoration', { hasText: 'Agent changed this file' }).waitFor();

      // Preview of the file row: the diff editor, the read-only takeback: side holding the bytes before.
      await row(pane, 'Edit notes.md').click(); // expands the change set
      await clickRowAction(row(pane, /^notes\.md/), 'Preview');
      const diffTab = tab(page, 'notes.md (after undo ↔ now)');
      await diffTab.waitFor();
      const original = '.monaco-diff-editor .editor.original';
      await until('the takeback: side to hold the text before', async () => (await editorText(page, original)) === BEFORE, 30_000);
      expect(await editorText(page, '.monaco-diff-editor .editor.modified')).toBe(AFTER);
      expect(w.read('notes.md')).toBe(AFTER); // a preview writes nothing
      await closeTab(diffTab);
      // The lens's Diff runs the same preview (the sidecar's command, through the extension).
      await tab(page, 'notes.md').click();
      await page.locator('.codelens-decoration a', { hasText: /^Diff$/ }).click();
      await diffTab.waitFor();
      await until('the lens\'s diff to show the text before', async () => (await editorText(page, original)) === BEFORE, 30_000);
      await closeTab(diffTab);

      // Undo the turn from its row: through the editor's buffer, saved, recorded.
      await tab(page, 'notes.md').click();
      await clickRowAction(turn, 'Undo');
      await until('notes.md put back on disk', () => w.read('notes.md') === BEFORE, 60_000);
      await until('the editor to show the file before the agent', async () => (await editorText(page)).includes('The quick brown fox.'), 30_000);
      await until('the journal to record the undo', () => w.states().join() === 'Edit notes.md: undone', 30_000);
      await page.locator('.tab.dirty').waitFor({ state: 'detached' });
      // It came through VS Code's buffers: a workspace/applyEdit from the sidecar, the buffer's
      // change, then its save (which the extension does for the paths the step left pending).
      await until('the client to log the save', () => /Received request 'workspace\/applyEdit[^]*Sending notification 'textDocument\/didChange'[^]*Sending notification 'textDocument\/didSave'/.test(w.clientLog()), 30_000);
      expect(w.clientLog().match(/Received request 'workspace\/applyEdit/g)).toHaveLength(1);

      // VS Code's own Undo in the editor brings the agent's change back (one edit, one Ctrl+Z).
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
      await page.keyboard.press('Control+z');
      await until('Ctrl+Z to bring the agent\'s text back', async () => (await editorText(page)).includes('The slow brown fox.'), 30_000);
      expect(w.read('notes.md')).toBe(BEFORE); // not saved yet
      await page.keyboard.press('Control+s');
      await until('the agent\'s text saved', () => w.read('notes.md') === AFTER, 30_000);
      // The journal is in step with the disk: the agent's text saved back is the change applied again.
      await until('the journal to say applied again', () => w.states().join() === 'Edit notes.md: applied', 30_000);
      expect(w.read('notes.md')).toBe(AFTER);

      // The sidecar's per-hunk code action, in VS Code's Source Action menu with the cursor on the
      // agent's line: the hunk goes back through the buffer, saved, recorded.
      await page.locator('.editor-group-container.active .monaco-editor .view-line', { hasText: 'The slow brown fox.' }).click();
      await page.keyboard.press('F1');
      await page.keyboard.type('Source Action');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: /^Source Action/ }).first().click();
      const here = page.locator('.action-widget .monaco-list-row', { hasText: "Undo the agent's change here" });
      await here.waitFor();
      await here.click();
      await until('notes.md put back on disk', () => w.read('notes.md') === BEFORE, 60_000);
      await until('the editor to show the file before the agent', async () => (await editorText(page)).includes('The quick brown fox.'), 30_000);
      await until('the journal to record the undo', () => w.states().join() === 'Edit notes.md: undone', 30_000);

      // The row's Redo puts the agent's change back through the buffer, saved, recorded.
      await clickRowAction(turn, 'Redo');
      await until('the journal to record the redo', () => w.states().join() === 'Edit notes.md: applied', 60_000);
      await until('notes.md as the agent left it', () => w.read('notes.md') === AFTER, 30_000);
      await until('the editor to show the agent\'s text', async () => (await editorText(page)).includes('The slow brown fox.'), 30_000);
    });
  }, 300_000);

  it('a buffer with unsaved text is a conflict: the modal names the file and nothing is written until "Undo, replacing later changes"', async (ctx) => {
    needVscode(ctx);
    const w = world({ secret: true });
    const s = await w.open();
    const { page } = s;
    await withSession(s, w.base, async () => {
      const pane = await takebackPane(page);
      const turn = row(pane, 'tidy the notes');
      await turn.waitFor();
      // The command's file is a capture gap, named on its row.
      await row(pane, /^Bash: echo/).click();
      await row(pane, /^server\.pem/).waitFor();
      expect(await row(pane, /^server\.pem/).textContent()).toContain('capture gap: secret');
      await openFile(page, 'notes.md');
      await until('the agent\'s text in the editor', async () => (await editorText(page)).includes('The slow brown fox.'), 30_000);
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
      await page.keyboard.press('Control+End');
      await page.keyboard.type('my own line');
      await page.locator('.tab.dirty').waitFor();

      const dialog = page.locator('.monaco-dialog-box');
      await clickRowAction(turn, 'Undo');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('notes.md');
      expect(await dialog.textContent()).toContain('Nothing was written');
      await dialog.locator('.monaco-button', { hasText: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      // Nothing written: the disk keeps the agent's text, the buffer the unsaved line, the journal the set.
      expect(w.read('notes.md')).toBe(AFTER);
      expect(await editorText(page)).toContain('my own line');
      expect(await page.locator('.tab.dirty').count()).toBe(1);
      expect(w.states().sort()).toEqual([`Bash: echo 'not a real key' > server.pem: applied`, 'Edit notes.md: applied']);

      await clickRowAction(turn, 'Undo');
      await dialog.locator('.monaco-button', { hasText: 'Undo, replacing later changes' }).click();
      await until('notes.md put back on disk', () => w.read('notes.md') === BEFORE, 60_000);
      await until('the editor to show the file before the agent', async () => (await editorText(page)) === BEFORE, 30_000);
      await until('the journal to record the undo', () => w.states().includes('Edit notes.md: undone'), 30_000);
      // What the undo could not bring back is said, by name.
      await page.locator('.notifications-toasts', { hasText: 'capture gaps' }).waitFor();
      expect(await page.locator('.notifications-toasts').textContent()).toContain('server.pem');
    });
  }, 300_000);

  it("unsaved text on other lines than the agent's: the undo is merged into the buffer, which the extension leaves unsaved (no dialog); the person's save records it", async (ctx) => {
    needVscode(ctx);
    const w = world();
    const s = await w.open();
    const { page } = s;
    await withSession(s, w.base, async () => {
      const pane = await takebackPane(page);
      const turn = row(pane, 'tidy the notes');
      await turn.waitFor();
      await openFile(page, 'notes.md');
      await until("the agent's text in the editor", async () => (await editorText(page)).includes('The slow brown fox.'), 30_000);
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
      await page.keyboard.press('Control+Home');
      await page.keyboard.type('My ');
      await page.locator('.tab.dirty').waitFor();

      await clickRowAction(turn, 'Undo');
      const merged = BEFORE.replace('# Notes', 'My # Notes');
      await until('the merged text in the editor', async () => (await editorText(page)) === merged, 30_000);
      await page.locator('.notifications-toasts', { hasText: 'keeping your unsaved changes' }).waitFor();
      // Nothing under the buffer: the disk keeps the agent's text, the tab its unsaved mark, the journal the set.
      expect(await page.locator('.monaco-dialog-box').count()).toBe(0);
      expect(await page.locator('.tab.dirty').count()).toBe(1);
      expect(w.read('notes.md')).toBe(AFTER);
      expect(w.states()).toEqual(['Edit notes.md: applied']);

      await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
      await page.keyboard.press('Control+S');
      await until('notes.md saved as merged', () => w.read('notes.md') === merged, 30_000);
      await until('the journal to record the undo', () => w.states().includes('Edit notes.md: undone'), 30_000);
    });
  }, 300_000);

  it('a later recorded change over the agent\'s line: the modal offers the undo that takes both back, which goes through', async (ctx) => {
    needVscode(ctx);
    const w = world();
    // The person's own command, recorded, over the line the agent's Edit changed.
    const later = w.takeback('run', '--', 'sed', '-i', 's/slow/slower/', 'notes.md');
    expect(later.code, later.stderr).toBe(0);
    expect(w.states()).toEqual(['sed -i s/slow/slower/ notes.md: applied', 'Edit notes.md: applied']);
    const s = await w.open();
    const { page } = s;
    await withSession(s, w.base, async () => {
      const pane = await takebackPane(page);
      const turn = row(pane, 'tidy the notes');
      await turn.waitFor();
      const dialog = page.locator('.monaco-dialog-box');
      await clickRowAction(turn, 'Undo');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('notes.md: changed since by #2 (sed -i s/slow/slower/ notes.md)');
      expect(w.read('notes.md')).toBe(AFTER.replace('slow', 'slower'));
      await dialog.locator('.monaco-button', { hasText: 'Undo #1 and #2 together' }).click();
      await until('notes.md put back on disk', () => w.read('notes.md') === BEFORE, 60_000);
      await until('the journal to record both undone', () => w.states().every((x: string) => x.endsWith(': undone')), 30_000);
    });
  }, 300_000);

  it('takeback init vscode without code on PATH prints the install command', () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-vscode-init-')));
    onTestFinished(() => fs.rmSync(base, { recursive: true, force: true }));
    const env = privateEditorEnv(base, { PATH: path.dirname(process.execPath) + path.delimiter + '/usr/bin:/bin' });
    const r = tb(['init', 'vscode'], { cwd: base, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`to install the VS Code extension: code --install-extension ${vsix}`);
    // No takeback on that PATH: init names the command for the extension's setting.
    expect(r.stdout).toContain(`set "takeback.command" in VS Code's settings to ${JSON.stringify([process.execPath, BIN, 'serve'])}`);
  });
});
