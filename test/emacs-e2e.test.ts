// The Emacs package (clients/emacs/takeback.el) end to end, in a real Emacs with the real sidecar
// (`node bin/takeback.js serve`) over jsonrpc.el: its ERT tests (clients/emacs/test/
// takeback-tests.el) in `emacs -Q --batch`, one Emacs and one workspace per test, then the disk
// and the journal checked from here. The agent's change is a shell command recorded through the
// command line (`takeback run -- sh -c …`), run while its files are open in buffers.
// Skipped only when Emacs cannot be found (TAKEBACK_REQUIRE_EDITORS=1 makes that a failure).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { emacsUsable, findEmacs, missingEditorMessage } from './support/editors.js';
import { EmacsTmux, newEmacsCase, runErt, writeEmacsParams, type EmacsCase } from './support/emacs.js';
import { waitFor } from './support/helix.js';
import { AGENT_AFTER, AGENT_BEFORE, AGENT_COMMAND } from './support/editor-case.js';
import { BIN, readTree } from './support/nvim.js';
import { lines } from './support/takeback.js';

const requireEditors = process.env.TAKEBACK_REQUIRE_EDITORS === '1';
const emacs = findEmacs();

const cases: EmacsCase[] = [];
afterAll(() => {
  if (process.env.TAKEBACK_KEEP_TMP) return;
  for (const c of cases) fs.rmSync(c.base, { recursive: true, force: true, maxRetries: 5 });
});

function start(label: string, files: Record<string, string> = BEFORE): EmacsCase {
  if (!emacs) throw new Error(`${missingEditorMessage('emacs')} (TAKEBACK_REQUIRE_EDITORS=1)`);
  const c = newEmacsCase(emacs, label, files);
  cases.push(c);
  return c;
}

function journal(c: EmacsCase): [string, string][] {
  const out = execFileSync(process.execPath, [BIN, 'list', '--json'], { cwd: c.workspace, env: c.env, encoding: 'utf8' });
  return (JSON.parse(out) as { sets: { id: string; state: string }[] }).sets.map((s) => [s.id, s.state]);
}

const BEFORE = AGENT_BEFORE;
const AFTER = AGENT_AFTER;
const AGENT = AGENT_COMMAND;

describe('finding Emacs', () => {
  it('takes Emacs 27 or newer only (jsonrpc.el is built in from 27)', () => {
    expect(emacsUsable('GNU Emacs 28.2')).toBe(true);
    expect(emacsUsable('GNU Emacs 27.1')).toBe(true);
    expect(emacsUsable('GNU Emacs 30.1')).toBe(true);
    expect(emacsUsable('GNU Emacs 26.3')).toBe(false);
    expect(emacsUsable('emacs: not found')).toBe(false);
    expect(emacsUsable(undefined)).toBe(false);
  });
});

// A case waits on the editor, the sidecar and the disk in several steps of up to 15 s each: the
// bound is above their sum, so on a loaded machine a slow step fails with its own message.
describe.skipIf(!emacs && !requireEditors)('Emacs: takeback.el', { timeout: 180_000 }, () => {
  it.concurrent('ERT takeback-undo: list, preview, undo byte for byte in buffers and on disk, then `undo` brings the change back', async () => {
    const c = start('undo');
    const r = await runErt(c, 'takeback-undo', writeEmacsParams(c, { agent: AGENT, before: BEFORE, after: AFTER }));
    expect(r.output).toMatch(/Ran 1 tests?, 1 results? as expected/);
    expect(r.code, r.output).toBe(0);
    // `undo` changed the buffers only: the disk stays as the undo left it.
    expect(readTree(c.workspace)).toEqual(BEFORE);
    expect(journal(c)).toEqual([['1', 'undone']]);
  });

  it.concurrent("ERT takeback-merge-unsaved: unsaved text on other lines than the agent's gets the undo merged into the buffer, left for the person to save; C-x C-s records it", async () => {
    const c = start('merge-unsaved');
    const r = await runErt(c, 'takeback-merge-unsaved', writeEmacsParams(c, { agent: AGENT, before: BEFORE, after: AFTER }));
    expect(r.output).toMatch(/Ran 1 tests?, 1 results? as expected/);
    expect(r.code, r.output).toBe(0);
    expect(readTree(c.workspace)).toEqual({ ...BEFORE, 'notes.md': BEFORE['notes.md'].replace('# Notes', '# My notes') });
  });

  it.concurrent('ERT takeback-list-files: a mv is one file at its new path; a skipped folder the command changed is named beside the files', async () => {
    const c = start('list-files');
    const agent = 'echo b > b.txt && mv x y && mkdir -p node_modules/p && echo x > node_modules/p/i.js';
    const r = await runErt(c, 'takeback-list-files', writeEmacsParams(c, { agent, before: BEFORE, after: {} }));
    expect(r.output).toMatch(/Ran 1 tests?, 1 results? as expected/);
    expect(r.code, r.output).toBe(0);
  });

  it.concurrent('ERT takeback-conflict: a buffer with unsaved text next to the agent\'s line is a conflict and nothing is written; C-u replaces it', async () => {
    const c = start('conflict');
    const r = await runErt(c, 'takeback-conflict', writeEmacsParams(c, { agent: AGENT, before: BEFORE, after: AFTER }));
    expect(r.output).toMatch(/Ran 1 tests?, 1 results? as expected/);
    expect(r.code, r.output).toBe(0);
    expect(readTree(c.workspace)).toEqual(BEFORE);
  });

  it.concurrent("ERT takeback-combined: a save over the agent's line; the refused undo names it and gives the undo of both as Emacs runs it, which goes through", async () => {
    const c = start('combined');
    const r = await runErt(c, 'takeback-combined', writeEmacsParams(c, { agent: AGENT, before: BEFORE, after: AFTER }));
    expect(r.output).toMatch(/Ran 1 tests?, 1 results? as expected/);
    expect(r.code, r.output).toBe(0);
    expect(readTree(c.workspace)).toEqual(BEFORE);
    expect(journal(c)).toEqual([
      ['2', 'undone'],
      ['1', 'undone'],
    ]);
  });

  it.concurrent('ERT takeback-redo: undo and redo keep CRLF line ends and a missing final newline byte for byte', async () => {
    const files = { 'crlf.txt': 'one\r\ntwo\r\n', 'noeol.txt': 'alpha\nbeta' };
    const c = start('redo', files);
    const agent = 'sed -i s/two/TWO/ crlf.txt && sed -i s/beta/BETA/ noeol.txt';
    const r = await runErt(c, 'takeback-redo', writeEmacsParams(c, { agent, before: files, after: {} }));
    expect(r.output).toMatch(/Ran 1 tests?, 1 results? as expected/);
    expect(r.code, r.output).toBe(0);
    expect(readTree(c.workspace)).toEqual({ 'crlf.txt': 'one\r\nTWO\r\n', 'noeol.txt': 'alpha\nBETA' });
  });

  it.concurrent('ERT takeback-hunks: takeback-undo-hunk at point and C-c C-u in the preview each take back one hunk through the buffer, moved by an edit above; `undo` brings back the last alone', async () => {
    const twenty = lines('line', 20);
    const files = { 'code.txt': twenty };
    const after = twenty.replace('line 3\n', 'agent 3\n').replace('line 15\n', 'agent 15\n');
    const c = start('hunks', files);
    const agent = "sed -i -e 's/^line 3$/agent 3/' -e 's/^line 15$/agent 15/' code.txt";
    const r = await runErt(c, 'takeback-hunks', writeEmacsParams(c, { agent, before: files, after: { 'code.txt': after } }));
    expect(r.output).toMatch(/Ran 1 tests?, 1 results? as expected/);
    expect(r.code, r.output).toBe(0);
    // `undo` changed the buffer only: the disk stays as the second hunk's undo left it.
    expect(readTree(c.workspace)).toEqual({ 'code.txt': `// mine 1\n// mine 2\n${twenty}` });
    // The person's save of their own lines is a set of its own (2), applied.
    expect(journal(c)).toEqual([
      ['2', 'applied'],
      ['1', 'undone'],
    ]);
  });

  it.concurrent('ERT takeback-redo-in-place: a redo written on disk while the buffer already holds its text leaves the buffer unmodified, in line with the file', async () => {
    const files = { 'code.txt': lines('line', 20) };
    const after = { 'code.txt': files['code.txt'].replace('line 12\n', 'agent 12\n') };
    const c = start('redo-in-place', files);
    const agent = "sed -i 's/^line 12$/agent 12/' code.txt";
    const r = await runErt(c, 'takeback-redo-in-place', writeEmacsParams(c, { agent, before: files, after }));
    expect(r.output).toMatch(/Ran 1 tests?, 1 results? as expected/);
    expect(r.code, r.output).toBe(0);
    expect(readTree(c.workspace)).toEqual(after);
  });

  it.concurrent("ERT takeback-preview-hunk-at-point: a preview's hunk at point is read by its header's counts, not into the next file's header", async () => {
    const c = start('hunk-at-point', {});
    const r = await runErt(c, 'takeback-preview-hunk-at-point', writeEmacsParams(c, { agent: 'true', before: {}, after: {} }));
    expect(r.output).toMatch(/Ran 1 tests?, 1 results? as expected/);
    expect(r.code, r.output).toBe(0);
  });

  it.concurrent('under tmux, as a person: M-x takeback-list, u on the change, then C-/ in the file brings it back', async () => {
    const c = start('tmux');
    const session = new EmacsTmux(c);
    try {
      session.start(['notes.md']);
      await session.waitScreen('notes.md open', /The quick brown fox\./);
      // The agent works while the file is open.
      execFileSync(process.execPath, [BIN, 'run', '--', 'sh', '-c', AGENT], { cwd: c.workspace, env: c.env, stdio: 'ignore' });
      session.mx('takeback-list');
      await session.waitScreen('the change listed', /#1\s+applied\s+f\.txt \+1 -1, g\.txt \+1 -1, new\.txt/);
      session.keys('u');
      await session.waitScreen('the undo reported', /takeback: undid change 1: .*notes\.md/);
      await session.waitScreen('the listing shows it undone', /#1\s+undone\s+f\.txt/);
      await waitFor('the disk put back', () => fs.readFileSync(`${c.workspace}/notes.md`, 'utf8') === BEFORE['notes.md'] || undefined);
      expect(readTree(c.workspace)).toEqual(BEFORE);
      // Back in the file: it shows the text from before the agent; C-/ brings the agent's back.
      session.keys('C-x', 'o');
      await session.waitScreen('notes.md shows the undo', /The quick brown fox\./);
      session.keys('C-_');
      await session.waitScreen("the agent's change back in the buffer", /The slow brown fox\./);
      expect(session.screen()).toMatch(/:\*\*-+F1\s+notes\.md/); // modified, unsaved
      expect(fs.readFileSync(`${c.workspace}/notes.md`, 'utf8')).toBe(BEFORE['notes.md']);
    } finally {
      session.stop();
    }
  });
});
