// Per-hunk undo through the sidecar, in this process over in-memory streams with a real journal
// and real files: the code action "Undo the agent's change here" is offered where the cursor or
// selection touches one of the agent's hunks (placed through a later edit above it) and nowhere
// else; run, it takes back only that hunk through the editor's buffer, the change is partial once
// saved, and a redo puts back exactly that hunk. undo/preview with `lines` shows just that hunk
// and places every hunk. Over real stdio (`takeback serve`): changes/list with `hunks` and
// undo/preview place each hunk in the document's unsaved text, with its lines in the change's own
// before and after; a redo by lines of a hunk whose text the buffer already holds unsaved writes
// nothing under the buffer and is recorded when the editor saves.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../protocol/src/errors.js';
import type { ApplyResult, ListResult, PreviewResult } from '../protocol/src/types.js';
import { inProcessHook, makeWorkspace, writeTurn, type Workspace } from './support/agent-sim.js';
import { inProcess, overStdio, type TestEditor } from './support/lsp-client.js';
import { lines } from './support/takeback.js';

type CodeActionLike = { title: string; command: { command: string; arguments: unknown[] } };

let ws: Workspace | null = null;
let editor: TestEditor | null = null;

afterEach(async () => {
  await editor?.close();
  editor = null;
  ws?.cleanup();
  ws = null;
});

const TWENTY = lines('line', 20);
const AGENT = TWENTY.replace('line 3\n', 'agent 3\n').replace('line 15\n', 'agent 15\n');
/** A later edit of the user's, saved: two lines above everything the agent changed. */
const EDITED = `// mine 1\n// mine 2\n${AGENT}`;

/** A turn in which the agent's Write turns code.txt into AGENT (Claude Code's hooks, in this process). */
function agentEdits(w: Workspace): void {
  writeTurn(w, inProcessHook(w), 'code.txt', TWENTY, AGENT, 'sess-h', 'toolu_h1');
}

async function actionsAt(e: TestEditor, start: number, end = start, endCharacter = 0): Promise<CodeActionLike[]> {
  return e.request<CodeActionLike[]>('textDocument/codeAction', {
    textDocument: { uri: e.uri('code.txt') },
    range: { start: { line: start, character: 0 }, end: { line: end, character: endCharacter } },
    context: { diagnostics: [] },
  });
}

async function setState(e: TestEditor): Promise<string> {
  const list = await e.request<ListResult>('changes/list', {});
  return list.sets.find((s) => s.files.some((f) => f.path === 'code.txt'))!.state;
}

describe("the sidecar's per-hunk undo", () => {
  it("offers 'Undo the agent's change here' on the agent's hunk only; it takes back that hunk through the buffer; redo puts it back", async () => {
    ws = makeWorkspace();
    agentEdits(ws);
    fs.writeFileSync(path.join(ws.root, 'code.txt'), EDITED);
    editor = inProcess(ws.root, 'neovim', ws.env);
    const e = editor;
    await e.initialize();
    await e.open('code.txt');

    // The agent's line 15 is line 17 of the file now (0-based 16); line 10 is no hunk of its.
    const here = await actionsAt(e, 16);
    expect(here.map((a) => a.title)[0]).toBe("Undo the agent's change here");
    expect(here[0]!.command.arguments).toEqual([{ turn: 't1', paths: ['code.txt'], lines: { start: 17, end: 17 } }]);
    expect((await actionsAt(e, 9)).map((a) => a.title)).not.toContain("Undo the agent's change here");
    // A selection of whole lines 16-17 ends at the start of line 18 (0-based 17): that line is not taken.
    expect((await actionsAt(e, 15, 17)).find((a) => a.title === "Undo the agent's change here")!.command.arguments).toEqual([
      { turn: 't1', paths: ['code.txt'], lines: { start: 16, end: 17 } },
    ]);

    const p = await e.request<PreviewResult>('undo/preview', { selector: { turn: 't1', paths: ['code.txt'], lines: { start: 17, end: 17 } } });
    expect(p.files[0]!.hunks).toEqual([
      { set: '1', start: 5, end: 5, lines: 1, before: { start: 3, lines: 1 }, after: { start: 3, lines: 1 }, taken: false },
      { set: '1', start: 17, end: 17, lines: 1, before: { start: 15, lines: 1 }, after: { start: 15, lines: 1 }, taken: true },
    ]);
    expect(p.files[0]!.diff).toContain('-agent 15\n+line 15\n');
    expect(p.files[0]!.diff).not.toContain('agent 3');

    const r = await e.request<ApplyResult>('workspace/executeCommand', here[0]!.command);
    expect(r.written).toBe(true);
    expect(r.applied).toEqual([{ path: 'code.txt', action: 'put-back', via: 'editor', merged: true }]);
    const oneBack = EDITED.replace('agent 15\n', 'line 15\n');
    expect(e.text('code.txt')).toBe(oneBack);
    await e.saveEdited();
    await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'undone');
    expect(ws.read('code.txt')!.toString()).toBe(oneBack);
    expect(await setState(e)).toBe('partial');

    const rr = await e.request<ApplyResult>('undo/apply', { selector: { last: true, paths: ['code.txt'] }, direction: 'redo' });
    expect(rr.written).toBe(true);
    expect(e.text('code.txt')).toBe(EDITED);
    await e.saveEdited();
    await e.until(() => e.changes.some((c) => c.reason === 'redone'), 5000, 'redone');
    expect(ws.read('code.txt')!.toString()).toBe(EDITED);
    expect(await setState(e)).toBe('applied');
  });

  it("over stdio: a redo of a hunk by its lines, whose text the buffer already holds unsaved (the person's `u` after the undo), is in place: nothing written under the buffer, recorded when the editor saves", async () => {
    ws = makeWorkspace();
    agentEdits(ws);
    const { editor: e } = overStdio(ws.root, 'neovim', ws.env);
    editor = e;
    await e.initialize();
    await e.open('code.txt');
    const u = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1', paths: ['code.txt'], lines: { start: 15, end: 15 } } });
    expect(u.written).toBe(true);
    await e.saveEdited();
    await e.until(() => e.changes.some((c) => c.reason === 'undone'), 10_000, 'undone');
    const oneBack = AGENT.replace('agent 15\n', 'line 15\n');
    expect(ws.read('code.txt')!.toString()).toBe(oneBack);
    expect(await setState(e)).toBe('partial');

    // The person's `u`: the agent's text is back in the buffer, not saved.
    await e.type('code.txt', AGENT);
    const file = path.join(ws.root, 'code.txt');
    const stat = fs.statSync(file, { bigint: true });
    const rr = await e.request<ApplyResult>('undo/apply', { selector: { last: true, paths: ['code.txt'], lines: { start: 15, end: 15 } }, direction: 'redo' });
    expect(rr.conflicts).toEqual([]);
    expect(rr.written).toBe(true);
    expect(rr.applied).toEqual([expect.objectContaining({ path: 'code.txt', via: 'editor' })]);
    expect(rr.pending).toEqual(['code.txt']);
    // Nothing written under the buffer: the disk, its mtime too, as the undo left it.
    expect(ws.read('code.txt')!.toString()).toBe(oneBack);
    expect(fs.statSync(file, { bigint: true }).mtimeNs).toBe(stat.mtimeNs);
    expect(e.text('code.txt')).toBe(AGENT);
    expect(await setState(e)).toBe('partial');

    // The editor's save is the step's, recorded as the redo (not a save of the person's).
    await e.save(e.uri('code.txt'));
    await e.until(() => e.changes.some((c) => c.reason === 'redone'), 10_000, 'redone');
    expect(ws.read('code.txt')!.toString()).toBe(AGENT);
    expect(await setState(e)).toBe('applied');
    const list = await e.request<ListResult>('changes/list', {});
    expect(list.sets.some((x) => x.source.kind === 'person')).toBe(false);
  });

  it('lines without exactly one path are InvalidParams; a range touching no hunk is NotFound and writes nothing', async () => {
    ws = makeWorkspace();
    agentEdits(ws);
    editor = inProcess(ws.root, 'neovim', ws.env);
    const e = editor;
    await e.initialize();
    const bad = await e.request('undo/apply', { selector: { turn: 't1', lines: { start: 3, end: 3 } } }).catch((x: { code: number }) => x);
    expect(bad).toMatchObject({ code: ErrorCodes.InvalidParams });
    const none = await e.request('undo/apply', { selector: { turn: 't1', paths: ['code.txt'], lines: { start: 9, end: 10 } } }).catch((x: { code: number }) => x);
    expect(none).toMatchObject({ code: ErrorCodes.NotFound });
    expect(ws.read('code.txt')!.toString()).toBe(AGENT);
  });

  it('over stdio: changes/list with hunks and undo/preview place each hunk in the unsaved document, moved by an edit above; none without hunks asked', async () => {
    ws = makeWorkspace();
    agentEdits(ws);
    const { editor: e } = overStdio(ws.root, 'neovim', ws.env);
    editor = e;
    await e.initialize();
    await e.open('code.txt');
    const hunksOf = async (): Promise<unknown> => {
      const list = await e.request<ListResult>('changes/list', { hunks: path.join(ws!.root, 'code.txt') });
      return list.sets.find((s) => s.id === '1')!.files.find((f) => f.path === 'code.txt')!.hunks;
    };
    const span = (start: number, n: number) => ({ start, lines: n });
    expect(await hunksOf()).toEqual([
      { before: span(3, 1), after: span(3, 1), now: span(3, 1) },
      { before: span(15, 1), after: span(15, 1), now: span(15, 1) },
    ]);
    expect((await e.request<ListResult>('changes/list', {})).sets[0]!.files[0]).not.toHaveProperty('hunks');

    // Two lines typed above, not saved: the hunks are where the document has them.
    await e.type('code.txt', EDITED);
    expect(ws.read('code.txt')!.toString()).toBe(AGENT);
    expect(await hunksOf()).toEqual([
      { before: span(3, 1), after: span(3, 1), now: span(5, 1) },
      { before: span(15, 1), after: span(15, 1), now: span(17, 1) },
    ]);
    const p = await e.request<PreviewResult>('undo/preview', { selector: { turn: 't1', paths: ['code.txt'] } });
    expect(p.files[0]!.hunks).toEqual([
      { set: '1', start: 5, end: 5, lines: 1, before: span(3, 1), after: span(3, 1), taken: true },
      { set: '1', start: 17, end: 17, lines: 1, before: span(15, 1), after: span(15, 1), taken: true },
    ]);
    const out = await e.request('changes/list', { hunks: '/elsewhere/code.txt' }).catch((x: { code: number }) => x);
    expect(out).toMatchObject({ code: ErrorCodes.OutsideWorkspace });
  });
});
