// The sidecar's behaviour with each kind of client, as one suite run twice: in this process over
// a pair of in-memory streams (test/sidecar-inprocess.test.ts) and as the built binary over real
// stdio (test/sidecar-stdio.test.ts). Real temp folders, a real journal, the real hook entry
// point for the agent's turn; the clients behave as Neovim 0.10, LSP4IJ and a script do
// (./lsp-client.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../protocol/src/errors.js';
import type { ApplyResult, ChangeSetDetail, ListResult, PreviewResult } from '../../protocol/src/types.js';
import { AFTER, BEFORE, agentTurn, makeWorkspace, type Workspace } from './agent-sim.js';
import { BIN, type EditorKind, type TestEditor } from './lsp-client.js';

type CodeActionLike = { title: string; kind?: string; command: { command: string; arguments: unknown[] } };

/** Starts a server for workspace `ws` and a client of `kind` connected to it (not yet initialized). */
export type Connect = (ws: Workspace, kind: EditorKind) => TestEditor;
/** Runs one hook event for workspace `ws`. */
export type HookOf = (ws: Workspace) => (ev: object) => void;

export function sidecarSuite(connect: Connect, hookOf: HookOf): void {
  let ws: Workspace;
  let editor: TestEditor | null = null;

  afterEach(async () => {
    await editor?.close();
    editor = null;
    ws?.cleanup();
  });

  async function start(kind: EditorKind, init: object = {}): Promise<TestEditor> {
    ws = makeWorkspace();
    agentTurn(ws, hookOf(ws));
    editor = connect(ws, kind);
    await editor.initialize(init);
    return editor;
  }

  function expectBefore(w: Workspace): void {
    for (const [rel, content] of Object.entries(BEFORE)) expect(w.read(rel), rel).toEqual(Buffer.from(content));
    expect(w.read('src/new.ts')).toBeNull();
    expect(fs.existsSync(path.join(w.root, 'src'))).toBe(false);
    expect(w.mode('run.sh')).toBe(0o644);
  }

  function expectAfter(w: Workspace): void {
    for (const [rel, content] of Object.entries(AFTER)) expect(w.read(rel), rel).toEqual(content === null ? null : Buffer.from(content));
    expect(w.mode('run.sh')).toBe(0o755);
  }

  /**
   * The journal's snapshot learns what an undo wrote, so that nothing blames it on an agent: a
   * turn open while the undo happens (begun by `openTurn`) and a command in it that changes
   * nothing record nothing.
   */
  async function openTurn(e: TestEditor): Promise<void> {
    await e.request('turn/begin', { label: 'the agent works on while the user undoes' });
  }
  async function expectNoDrift(e: TestEditor, n: number): Promise<void> {
    await e.request('capture/begin', { id: `probe-${n}`, command: 'true' });
    const end = await e.request<{ set: unknown }>('capture/end', { id: `probe-${n}` });
    const turn = await e.request<{ set: unknown }>('turn/end', {});
    expect(end.set).toBeNull();
    expect(turn.set).toBeNull();
  }

  async function states(e: TestEditor): Promise<string[]> {
    const list = await e.request<ListResult>('changes/list', {});
    return list.sets.map((s) => s.state);
  }

  describe('Neovim-like client (applyEdit, resourceOperations, no documentChanges flag)', () => {
    it('undoes a Write, an Edit and a sed -i through its buffers, then redoes; the server writes the rest', async () => {
      const e = await start('neovim');
      expect((await states(e)).sort()).toEqual(['applied', 'applied', 'applied']);
      await e.open('notes.md');

      await openTurn(e);
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      expect(r.written).toBe(true);
      expect(r.failed).toEqual([]);
      const via = Object.fromEntries(r.applied.map((f) => [f.path, f.via]));
      expect(via).toEqual({ 'notes.md': 'editor', 'data.txt': 'editor', 'src/new.ts': 'editor', src: 'disk', 'logo.bin': 'disk', 'run.sh': 'disk' });
      // One applyEdit: versioned edits for the open buffer, null for the one it had not opened, a delete.
      expect(e.edits).toHaveLength(1);
      const dc = e.edits[0]!.edit.documentChanges!;
      expect(dc).toContainEqual(expect.objectContaining({ textDocument: { uri: e.uri('notes.md'), version: 1 } }));
      expect(dc).toContainEqual(expect.objectContaining({ textDocument: { uri: e.uri('data.txt'), version: null } }));
      expect(dc).toContainEqual(expect.objectContaining({ kind: 'delete', uri: e.uri('src/new.ts') }));
      // Minimal edits: one changed line each.
      const notesEdit = dc.find((c) => 'textDocument' in c && c.textDocument.uri === e.uri('notes.md')) as { edits: { range: { start: { line: number } }; newText: string }[] };
      expect(notesEdit.edits).toEqual([{ range: { start: { line: 2, character: 0 }, end: { line: 3, character: 0 } }, newText: 'The quick brown fox.\n' }]);
      // The text is in the buffers, not yet on disk: nothing recorded yet.
      expect(r.pending!.sort()).toEqual(['data.txt', 'notes.md']);
      expect(e.text('notes.md')).toBe(BEFORE['notes.md']);
      expect(ws.read('notes.md')).toEqual(Buffer.from(AFTER['notes.md'] as string));
      expect(ws.read('logo.bin')).toEqual(BEFORE['logo.bin']);
      expect((await states(e)).sort()).toEqual(['applied', 'applied', 'applied']);

      // The plugin saves the buffers it changed: the server sees the disk match and records.
      await e.saveEdited();
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'changes/didChange undone');
      expect(await states(e)).toEqual(['undone', 'undone', 'undone']);
      expectBefore(ws);
      await expectNoDrift(e, 1);

      // Redo through the buffers.
      await openTurn(e);
      const rr = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' }, direction: 'redo' });
      expect(rr.written).toBe(true);
      expect(rr.failed).toEqual([]);
      await e.saveEdited();
      await e.until(() => e.changes.filter((c) => c.reason === 'redone').length === 1, 5000, 'redone');
      expect((await states(e)).slice(-3)).toEqual(['applied', 'applied', 'applied']);
      expectAfter(ws);
      await expectNoDrift(e, 2);
    });

    it('reports an edit the client skipped while answering applied: true; nothing is recorded or written', async () => {
      const e = await start('neovim', { verifyTimeoutMs: 300 });
      await e.open('notes.md');
      // The user types just as the edit arrives: Neovim skips the edit for the older version.
      e.beforeApply = async () => {
        e.beforeApply = null;
        await e.type('notes.md', `${AFTER['notes.md']}typed meanwhile\n`);
      };
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      expect(r.failed).toEqual([{ path: 'notes.md', reason: expect.stringContaining('did not apply') }]);
      expect(r.sets).toEqual([]);
      expect(r.pending).toEqual([]);
      expect(r.notes.join(' ')).toMatch(/nothing was recorded/);
      // The server wrote nothing of its own part; the sets stay applied.
      expect(ws.read('logo.bin')).toEqual(AFTER['logo.bin']);
      expect(ws.mode('run.sh')).toBe(0o755);
      expect((await states(e)).sort()).toEqual(['applied', 'applied', 'applied']);
    });

    it('writes the disk under a buffer never reloaded since the agent changed the file (no conflict)', async () => {
      ws = makeWorkspace();
      editor = connect(ws, 'neovim');
      const e = editor;
      await e.initialize();
      await e.open('notes.md'); // opened before the agent's turn, and not reloaded after it
      agentTurn(ws, hookOf(ws));
      expect(e.text('notes.md')).toBe(BEFORE['notes.md']);
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      expect(r.conflicts).toEqual([]);
      expect(r.applied.find((f) => f.path === 'notes.md')).toEqual({ path: 'notes.md', action: 'put-back', via: 'disk' });
      expect(ws.read('notes.md')).toEqual(Buffer.from(BEFORE['notes.md'] as string));
      expect(JSON.stringify(e.edits)).not.toContain('notes.md');
      expect(r.pending).toEqual(['data.txt']);
      await e.saveEdited();
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'undone');
      expectBefore(ws);
    });

    it('sends a BOM file through a buffer that keeps the mark aside; a CRLF file it has not opened goes to disk', async () => {
      ws = makeWorkspace();
      const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('one\ntwo\n')]);
      const crlf = Buffer.from('a\r\nb\r\n');
      fs.writeFileSync(path.join(ws.root, 'bom.txt'), bom);
      fs.writeFileSync(path.join(ws.root, 'crlf.txt'), crlf);
      editor = connect(ws, 'neovim');
      const e = editor;
      await e.initialize();
      // An agent (a script, through the protocol) runs a command that changes both.
      await e.request('capture/begin', { id: 'cmd-1', command: 'sed -i s/two/TWO/;s/b/B/ bom.txt crlf.txt' });
      fs.writeFileSync(path.join(ws.root, 'bom.txt'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('one\nTWO\n')]));
      fs.writeFileSync(path.join(ws.root, 'crlf.txt'), Buffer.from('a\r\nB\r\n'));
      await e.request('capture/end', { id: 'cmd-1' });
      await e.open('bom.txt');
      expect(e.text('bom.txt')).toBe('one\nTWO\n'); // the mark is not in the buffer's text
      const r = await e.request<ApplyResult>('undo/apply', { selector: { last: true } });
      expect(Object.fromEntries(r.applied.map((f) => [f.path, f.via]))).toEqual({ 'bom.txt': 'editor', 'crlf.txt': 'disk' });
      expect(e.text('bom.txt')).toBe('one\ntwo\n');
      expect(ws.read('crlf.txt')).toEqual(crlf);
      await e.saveEdited();
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'undone');
      expect(ws.read('bom.txt')).toEqual(bom);
    });

    it("merges a later saved edit on another line through the buffer: the agent's line goes back, the edit stays", async () => {
      const e = await start('neovim');
      const mine = `${AFTER['notes.md']}a line of mine\n`;
      fs.writeFileSync(path.join(ws.root, 'notes.md'), mine);
      await e.open('notes.md');
      const p = await e.request<PreviewResult>('undo/preview', { selector: { turn: 't1' } });
      expect(p.conflicts).toBe(0);
      expect(p.files.find((f) => f.path === 'notes.md')).toMatchObject({ action: 'put-back', conflict: null, merged: true });
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      expect(r.written).toBe(true);
      expect(r.applied.find((f) => f.path === 'notes.md')).toEqual({ path: 'notes.md', action: 'put-back', via: 'editor', merged: true });
      expect(e.text('notes.md')).toBe(`${BEFORE['notes.md']}a line of mine\n`);
      await e.saveEdited();
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'undone');
      expect(ws.read('notes.md')).toEqual(Buffer.from(`${BEFORE['notes.md']}a line of mine\n`));
    });

    it("counts unsaved text on the agent's lines in a buffer as a conflict, and replaces it with force", async () => {
      const e = await start('neovim');
      await e.open('notes.md');
      await e.type('notes.md', `${(AFTER['notes.md'] as string).replace('slow red', 'slow grey')}my own line\n`);
      const preview = await e.request<PreviewResult>('undo/preview', { selector: { turn: 't1' } });
      expect(preview.conflicts).toBe(1);
      expect(preview.files.find((f) => f.path === 'notes.md')!.conflict).toMatchObject({ reason: 'unsaved-in-editor' });
      expect(preview.files.find((f) => f.path === 'notes.md')!.diff).toContain('-my own line');

      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      expect(r.written).toBe(false);
      expect(r.conflicts).toEqual([{ path: 'notes.md', reason: 'unsaved-in-editor', detail: expect.any(String) }]);
      expect(e.edits).toHaveLength(0);
      expect(e.text('notes.md')).toContain('my own line');
      expect(ws.read('logo.bin')).toEqual(AFTER['logo.bin']);

      const f = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' }, force: true });
      expect(f.written).toBe(true);
      expect(f.forced).toBe(true);
      expect(e.text('notes.md')).toBe(BEFORE['notes.md']);
      await e.saveEdited();
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'undone');
      expectBefore(ws);
    });

    it('offers code lenses and code actions on a changed file, and runs their commands with messages', async () => {
      const e = await start('neovim');
      await e.open('notes.md');
      const lenses = await e.request<{ command: { title: string; command: string; arguments: unknown[] } }[]>('textDocument/codeLens', { textDocument: { uri: e.uri('notes.md') } });
      expect(lenses.map((l) => l.command.title)).toEqual(['Agent changed this file +1 −1', 'Undo', 'Diff']);
      expect(lenses[1]!.command).toEqual({ title: 'Undo', command: 'takeback.undo', arguments: [{ turn: 't1', paths: ['notes.md'] }] });

      const actions = await e.request<CodeActionLike[]>('textDocument/codeAction', {
        textDocument: { uri: e.uri('notes.md') },
        range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        context: { diagnostics: [] },
      });
      expect(actions.map((a) => a.title)).toEqual(["Undo the agent's change to this file", 'Undo all 3 changes from this turn']);

      // Preview: a message with the diff.
      await e.request('workspace/executeCommand', { command: 'takeback.preview', arguments: [{ turn: 't1', paths: ['notes.md'] }] });
      expect(e.messages.at(-1)!.message).toContain('+The quick brown fox.');

      // Undo only this file, through the buffer; the set becomes partial once saved.
      const r = await e.request<ApplyResult>('workspace/executeCommand', { command: 'takeback.undo', arguments: [{ turn: 't1', paths: ['notes.md'] }] });
      expect(r.applied).toEqual([{ path: 'notes.md', action: 'put-back', via: 'editor' }]);
      expect(e.messages.at(-1)!.message).toMatch(/undid .* in the editor .*save notes.md to finish/);
      await e.saveEdited();
      await e.until(() => e.messages.some((m) => /saved and recorded/.test(m.message)), 5000, 'recorded message');
      const list = await e.request<ListResult>('changes/list', {});
      const edit = list.sets.find((s) => s.label === 'Edit notes.md')!;
      expect(edit.state).toBe('undone');
      expect(ws.read('notes.md')).toEqual(Buffer.from(BEFORE['notes.md'] as string));
      expect(ws.read('data.txt')).toEqual(Buffer.from(AFTER['data.txt'] as string));

      // Now a redo lens and a Redo action; unsaved text makes "replacing later changes" appear.
      const lenses2 = await e.request<{ command: { title: string } }[]>('textDocument/codeLens', { textDocument: { uri: e.uri('notes.md') } });
      expect(lenses2.map((l) => l.command.title)).toEqual(["Agent's change undone", 'Redo']);
      await e.open('data.txt');
      await e.type('data.txt', 'mine\n');
      const actions2 = await e.request<CodeActionLike[]>('textDocument/codeAction', {
        textDocument: { uri: e.uri('data.txt') },
        range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        context: { diagnostics: [] },
      });
      expect(actions2.map((a) => a.title)).toEqual(["Undo the agent's change to this file", 'Undo all 2 changes from this turn', 'Undo, replacing later changes']);
      // Conflicts through a command: a warning message and the Conflicts error.
      const err = await e.request('workspace/executeCommand', actions2[0]!.command).catch((x: { code: number; data: unknown }) => x);
      expect(err).toMatchObject({ code: ErrorCodes.Conflicts, data: { conflicts: [{ path: 'data.txt', reason: 'unsaved-in-editor' }] } });
      expect(e.messages.at(-1)).toMatchObject({ type: 2 });
    });

    it("counts a turn's changes still in place by what the disk holds: one undone, then its bytes given back from outside, counts again", async () => {
      const e = await start('neovim');
      await e.open('data.txt');
      const turnAction = async () =>
        (
          await e.request<CodeActionLike[]>('textDocument/codeAction', {
            textDocument: { uri: e.uri('data.txt') },
            range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
            context: { diagnostics: [] },
          })
        )
          .map((a) => a.title)
          .find((t) => / from this turn$/.test(t));
      expect(await turnAction()).toBe('Undo all 3 changes from this turn');
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1', paths: ['notes.md'] } });
      expect(r.applied).toEqual([{ path: 'notes.md', action: 'put-back', via: 'editor' }]);
      await e.saveEdited();
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'undone');
      expect(ws.read('notes.md')).toEqual(Buffer.from(BEFORE['notes.md'] as string));
      expect(await turnAction()).toBe('Undo all 2 changes from this turn');
      // The agent's bytes written back from outside (another editor's undo and a save): in place again.
      fs.writeFileSync(path.join(ws.root, 'notes.md'), AFTER['notes.md'] as string);
      expect(await turnAction()).toBe('Undo all 3 changes from this turn');
    });
  });

  describe('LSP4IJ-like client (documentChanges, ignores versions, always applied: true, never saves)', () => {
    it('reports an undo as applied in the editor, and completes it when the IDE saves; redo likewise', async () => {
      const e = await start('lsp4ij');
      await e.open('notes.md');
      await openTurn(e);
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      expect(r.written).toBe(true);
      expect(r.failed).toEqual([]);
      expect(r.pending!.sort()).toEqual(['data.txt', 'notes.md']);
      expect(r.applied.filter((f) => f.via === 'editor').map((f) => f.path).sort()).toEqual(['data.txt', 'notes.md', 'src/new.ts']);
      expect(e.edits[0]!.edit.documentChanges).toBeDefined();
      // Not saved: still applied in the journal, for as long as the IDE does not save.
      await new Promise((res) => setTimeout(res, 300));
      expect((await states(e)).sort()).toEqual(['applied', 'applied', 'applied']);
      expect(ws.read('data.txt')).toEqual(Buffer.from(AFTER['data.txt'] as string));
      // The IDE saves (data.txt was never open: no didSave; the watch sees the disk).
      await e.saveAll();
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'undone');
      expect(await states(e)).toEqual(['undone', 'undone', 'undone']);
      expectBefore(ws);
      expect(e.lensRefreshes).toBeGreaterThan(0);
      await expectNoDrift(e, 1);

      await openTurn(e);
      const rr = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' }, direction: 'redo' });
      expect(rr.failed).toEqual([]);
      expect(rr.pending!.length).toBeGreaterThan(0);
      await e.saveAll();
      await e.until(() => e.changes.some((c) => c.reason === 'redone'), 5000, 'redone');
      expectAfter(ws);
      await expectNoDrift(e, 2);
    });

    it('applies edits over a newer text (it ignores versions); verification catches the mismatch', async () => {
      const e = await start('lsp4ij', { verifyTimeoutMs: 300 });
      await e.open('notes.md');
      e.beforeApply = async () => {
        e.beforeApply = null;
        await e.type('notes.md', `${AFTER['notes.md']}typed meanwhile\n`);
      };
      const r = await e.request<ApplyResult>('undo/apply', { selector: { ids: ['2'] } });
      expect(e.text('notes.md')).toBe(`${BEFORE['notes.md']}typed meanwhile\n`);
      expect(r.failed).toEqual([{ path: 'notes.md', reason: expect.stringContaining('did not apply') }]);
      expect(r.sets).toEqual([]);
      expect((await states(e)).sort()).toEqual(['applied', 'applied', 'applied']);
    });

    it('forgets a pending undo whose text the user changes before saving, and says so', async () => {
      const e = await start('lsp4ij');
      await e.open('notes.md');
      const r = await e.request<ApplyResult>('undo/apply', { selector: { ids: ['2'] } });
      expect(r.pending).toEqual(['notes.md']);
      await e.type('notes.md', `${BEFORE['notes.md']}and more\n`);
      await e.until(() => e.messages.some((m) => /not recorded: notes.md changed in the editor/.test(m.message)), 5000, 'warning');
      await e.saveAll();
      // What the person typed and saved is theirs, recorded as such; the agent's sets stay applied.
      await e.until(() => e.changes.some((c) => c.reason === 'recorded'), 10_000, "the person's save to be recorded");
      const list = await e.request<ListResult>('changes/list', {});
      expect(list.sets.filter((x) => x.source.kind !== 'person').map((x) => x.state)).toEqual(['applied', 'applied', 'applied']);
      expect(list.sets.filter((x) => x.source.kind === 'person').map((x) => x.files.map((f) => f.path))).toEqual([['notes.md']]);
    });

    it('reports an edit it skipped while answering applied: true', async () => {
      const e = await start('lsp4ij', { verifyTimeoutMs: 300 });
      await e.open('notes.md');
      await e.open('data.txt');
      e.skip.add(e.uri('data.txt'));
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      expect(r.failed).toEqual([{ path: 'data.txt', reason: expect.stringContaining('did not apply') }]);
      expect(r.applied.map((f) => f.path).sort()).toEqual(['notes.md', 'src/new.ts']);
      await e.saveAll();
      await new Promise((res) => setTimeout(res, 200));
      expect((await states(e)).sort()).toEqual(['applied', 'applied', 'applied']);
    });
  });

  describe('LSP4IJ-like client: its quirks', () => {
    it('skips a text edit for a file its virtual file system does not know; unconfirmed within the bound, the server writes that file itself and the undo is recorded', async () => {
      const e = await start('lsp4ij', { verifyTimeoutMs: 300 });
      await e.open('notes.md');
      // data.txt as a file the IDE has not refreshed since a process outside it touched it.
      e.unknownToVfs.add(e.uri('data.txt'));
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      expect(e.edits).toHaveLength(1);
      expect(e.text('data.txt')).toBeUndefined();
      // Not claimed done: the path waits for something that confirms it.
      expect(r.failed).toEqual([]);
      expect(r.pending).toContain('data.txt');
      await e.saveAll();
      // The IDE saves notes.md but never data.txt (it skipped the edit and says nothing): past
      // verifyTimeoutMs the server writes data.txt on disk, which still held what the undo found.
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 10_000, 'undone');
      expect(ws.read('notes.md')).toEqual(Buffer.from(BEFORE['notes.md'] as string));
      expect(ws.read('data.txt')).toEqual(Buffer.from(BEFORE['data.txt'] as string));
      expect(await states(e)).toEqual(['undone', 'undone', 'undone']);
      expect(e.messages.filter((m) => m.type <= 2)).toEqual([]);
    });

    it('an unconfirmed file that changed on disk before the bound is not written over: the step is dropped with a warning naming it', async () => {
      const e = await start('lsp4ij', { verifyTimeoutMs: 300 });
      await e.open('notes.md');
      e.unknownToVfs.add(e.uri('data.txt'));
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      expect(r.pending).toContain('data.txt');
      // Someone else writes data.txt before the bound passes: theirs stays, nothing is recorded.
      fs.writeFileSync(path.join(ws.root, 'data.txt'), 'written meanwhile\n');
      await e.until(() => e.messages.some((m) => /did not confirm its edit of data\.txt, and data\.txt changed on disk meanwhile/.test(m.message)), 10_000, 'the warning');
      await e.saveAll();
      await new Promise((res) => setTimeout(res, 400));
      expect(ws.read('data.txt')).toEqual(Buffer.from('written meanwhile\n'));
      expect((await states(e)).sort()).toEqual(['applied', 'applied', 'applied']);
      expect(e.changes.some((c) => c.reason === 'undone')).toBe(false);
    });

    it('truncates a file that appeared before its CreateFile; the redo is recorded only once the IDE saves its text', async () => {
      const e = await start('lsp4ij');
      await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      await e.saveAll();
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'undone');
      expect(ws.read('src/new.ts')).toBeNull();
      e.beforeApply = async () => {
        e.beforeApply = null;
        fs.mkdirSync(path.join(ws.root, 'src'), { recursive: true });
        fs.writeFileSync(path.join(ws.root, 'src/new.ts'), 'typed elsewhere\n');
      };
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' }, direction: 'redo' });
      const ops = e.edits.at(-1)!.edit.documentChanges!;
      expect(ops.find((o) => 'kind' in o && o.kind === 'create')).toMatchObject({ uri: e.uri('src/new.ts'), options: { ignoreIfExists: true } });
      // LSP4IJ read neither option: the file is empty on disk, its text in memory.
      expect(ws.read('src/new.ts')).toEqual(Buffer.alloc(0));
      expect(r.failed).toEqual([]);
      expect(r.pending).toContain('src/new.ts');
      await new Promise((res) => setTimeout(res, 200));
      // Nothing is recorded yet; list says what the disk holds: the files the server wrote are the
      // agent's again, the one whose text is in the IDE's memory is not.
      expect(e.changes.some((c) => c.reason === 'redone')).toBe(false);
      const files = (await e.request<ListResult>('changes/list', {})).sets.flatMap((x) => x.files);
      expect(files.find((f) => f.path === 'src/new.ts')).toMatchObject({ undone: true, state: 'undone' });
      expect(files.find((f) => f.path === 'logo.bin')).toMatchObject({ undone: false, state: 'applied' });
      await e.saveAll();
      await e.until(() => e.changes.some((c) => c.reason === 'redone'), 5000, 'redone');
      expectAfter(ws);
      expect(await states(e)).toEqual(['applied', 'applied', 'applied']);
    });

    it("after the IDE's Undo of a takeback undo and a save, the change is applied again: list says so, the lens offers Undo, and it undoes", async () => {
      const e = await start('lsp4ij');
      await e.open('notes.md');
      await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1', paths: ['notes.md'] } });
      await e.saveAll();
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'undone');
      // Edit → Undo in the IDE: the one command the workspace edit was, taken back; then a save.
      await e.type('notes.md', AFTER['notes.md'] as string);
      await e.saveAll();
      await new Promise((res) => setTimeout(res, 300));
      const list = await e.request<ListResult>('changes/list', {});
      const set = list.sets.find((x) => x.label === 'Edit notes.md')!;
      expect(set).toMatchObject({ state: 'applied', files: [expect.objectContaining({ path: 'notes.md', undone: false, state: 'applied' })] });
      const lenses = await e.request<{ command: { title: string } }[]>('textDocument/codeLens', { textDocument: { uri: e.uri('notes.md') } });
      expect(lenses.map((l) => l.command.title)).toEqual([expect.stringMatching(/^Agent changed this file/), 'Undo', 'Diff']);
      // Redo has nothing to do; the undo goes through the IDE again and is recorded once saved.
      const rr = await e.request<ApplyResult>('undo/preview', { selector: { turn: 't1', paths: ['notes.md'] }, direction: 'redo' });
      expect(rr.sets).toEqual([]);
      const u = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1', paths: ['notes.md'] } });
      expect(u.applied).toEqual([{ path: 'notes.md', action: 'put-back', via: 'editor' }]);
      await e.saveAll();
      await e.until(() => e.changes.filter((c) => c.reason === 'undone').length === 2, 5000, 'undone again');
      expect(ws.read('notes.md')).toEqual(Buffer.from(BEFORE['notes.md'] as string));
      expect((await e.request<ListResult>('changes/list', {})).sets.find((x) => x.label === 'Edit notes.md')!.state).toBe('undone');
    });

    it('lists every command its lenses and actions carry, runs them through the IDE, and never asks a question', async () => {
      const e = await start('lsp4ij');
      await e.open('notes.md');
      const lenses = await e.request<{ command: { title: string; command: string; arguments: unknown[] } }[]>('textDocument/codeLens', { textDocument: { uri: e.uri('notes.md') } });
      const actions = await e.request<CodeActionLike[]>('textDocument/codeAction', {
        textDocument: { uri: e.uri('notes.md') },
        range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        context: { diagnostics: [] },
      });
      const carried = [...lenses.map((l) => l.command.command), ...actions.map((a) => a.command.command)];
      expect(carried.length).toBeGreaterThan(0);
      for (const c of carried) expect(e.serverCommands, c).toContain(c);
      // LSP4IJ shows a code lens only with a title.
      for (const l of lenses) expect(l.command.title).not.toBe('');
      expect(() => e.runCommand({ title: 'x', command: 'takeback.unknown' })).toThrow(/no action/);

      const undo = lenses.find((l) => l.command.command === 'takeback.undo')!.command;
      const r = await e.runCommand<ApplyResult>(undo);
      expect(r.applied).toEqual([{ path: 'notes.md', action: 'put-back', via: 'editor' }]);
      expect(e.messages.at(-1)!.message).toMatch(/undid .* in the editor .*save notes.md to finish/);
      await e.saveAll();
      await e.until(() => e.messages.some((m) => /saved and recorded/.test(m.message)), 5000, 'recorded message');
      expect(ws.read('notes.md')).toEqual(Buffer.from(BEFORE['notes.md'] as string));
      // Results go out as showMessage: a question LSP4IJ would dismiss (-32800) never holds up a step.
      expect(e.requests).not.toContain('window/showMessageRequest');
      // Nothing the sidecar sends is a rename (LSP4IJ renames in place only).
      for (const p of e.edits) expect((p.edit.documentChanges ?? []).filter((o) => 'kind' in o && o.kind === 'rename')).toEqual([]);
    });
  });

  describe('headless client (no applyEdit)', () => {
    it('gets the disk transaction', async () => {
      const e = await start('headless');
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
      expect(r.written).toBe(true);
      expect(r.applied.every((f) => f.via === 'disk')).toBe(true);
      expect(r.pending).toBeUndefined();
      expectBefore(ws);
      expect(await states(e)).toEqual(['undone', 'undone', 'undone']);
      expect(e.changes).toContainEqual({ reason: 'undone' });
      expect(e.edits).toHaveLength(0);
    });
  });

  describe('journal watch', () => {
    it('sends changes/didChange when another process (the takeback CLI) records a set', async () => {
      const e = await start('headless');
      const before = e.changes.length;
      const r = spawnSync(process.execPath, [BIN, 'run', '--', 'sh', '-c', 'echo hi > ext.txt'], { cwd: ws.root, env: ws.env, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      await e.until(() => e.changes.slice(before).some((c) => c.reason === 'external'), 5000, 'external didChange');
      const list = await e.request<ListResult>('changes/list', {});
      expect(list.sets[0]!.label).toContain('echo hi > ext.txt');
    });
  });

  describe('capture over the protocol, and errors', () => {
    it('captures a command and a file tool through capture/*, and answers malformed requests with clear errors', async () => {
      ws = makeWorkspace();
      editor = connect(ws, 'headless');
      const e = editor;
      // Before initialize.
      await expect(e.request('changes/list', {})).rejects.toMatchObject({ code: ErrorCodes.ServerNotInitialized });
      await e.initialize();
      const t = await e.request<{ turn: { id: string } }>('turn/begin', { label: 'by hand' });
      expect(t.turn.id).toBe('t1');
      const b = await e.request<{ kind: string }>('capture/begin', { id: 'c1', command: 'sed' });
      expect(b.kind).toBe('command');
      fs.writeFileSync(path.join(ws.root, 'data.txt'), 'changed\n');
      const end = await e.request<{ set: { id: string; label: string } }>('capture/end', { id: 'c1' });
      expect(end.set.label).toBe('sed');
      await e.request('capture/begin', { id: 'c2', paths: ['notes.md'], tool: 'Edit' });
      fs.writeFileSync(path.join(ws.root, 'notes.md'), 'edited\n');
      const end2 = await e.request<{ set: { id: string } }>('capture/end', { id: 'c2' });
      await e.request('turn/end', {});
      expect(e.changes.filter((c) => c.reason === 'recorded').length).toBeGreaterThanOrEqual(3);

      const bad = async (method: string, params: unknown) => e.request(method, params).then(
        () => {
          throw new Error(`${method} should fail`);
        },
        (x: { code: number; message: string; data: unknown }) => x,
      );
      expect(await bad('undo/apply', { selector: 5 })).toMatchObject({ code: ErrorCodes.InvalidParams, message: expect.stringContaining('selector must be an object') });
      expect(await bad('undo/apply', { selector: { ids: ['1'], turn: 't1' } })).toMatchObject({ code: ErrorCodes.InvalidParams, message: expect.stringContaining('exactly one') });
      expect(await bad('undo/apply', { selector: { ids: [1] } })).toMatchObject({ code: ErrorCodes.InvalidParams, data: { field: 'ids' } });
      expect(await bad('undo/preview', { selector: { last: true }, direction: 'sideways' })).toMatchObject({ code: ErrorCodes.InvalidParams });
      expect(await bad('undo/apply', { selector: { ids: ['1'], paths: ['../outside'] } })).toMatchObject({ code: ErrorCodes.OutsideWorkspace });
      expect(await bad('changes/show', { id: '../x' })).toMatchObject({ code: ErrorCodes.InvalidId, data: { id: '../x' } });
      expect(await bad('changes/show', { id: '999' })).toMatchObject({ code: ErrorCodes.NotFound, data: { id: '999' } });
      expect(await bad('changes/show', {})).toMatchObject({ code: ErrorCodes.InvalidParams, message: expect.stringContaining('id is required') });
      expect(await bad('changes/show', null)).toMatchObject({ code: ErrorCodes.InvalidParams });
      expect(await bad('capture/end', { id: 'never' })).toMatchObject({ code: ErrorCodes.NotFound });
      expect(await bad('capture/begin', { id: 'bad id!' })).toMatchObject({ code: ErrorCodes.InvalidId });
      expect(await bad('turn/end', { id: 't9' })).toMatchObject({ code: ErrorCodes.NotFound });
      expect(await bad('workspace/executeCommand', { command: 'takeback.nope', arguments: [] })).toMatchObject({ code: ErrorCodes.InvalidParams });
      expect(await bad('no/such', {})).toMatchObject({ code: -32601 });

      // Nothing was lost: the sets are there and an undo still works.
      const show = await e.request<ChangeSetDetail>('changes/show', { id: end2.set.id });
      expect(show.files.map((f) => f.path)).toEqual(['notes.md']);
      const u = await e.request<ApplyResult>('undo/apply', { selector: { last: true } });
      expect(u.sets).toEqual([end2.set.id]);
      expect(ws.read('notes.md')).toEqual(Buffer.from(BEFORE['notes.md'] as string));
    });
  });
}
