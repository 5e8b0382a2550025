// Unsaved text in a buffer, through the real `takeback serve --stdio`: an undo whose hunks do not
// overlap the person's unsaved lines is merged into the buffer like any later edit (the merged
// text as edits on that buffer, nothing written on disk under it), the preview says "put back,
// keeping later changes" with the diff from the buffer's text, and the step is recorded when the
// editor saves; what it replaced is the buffer's text, so `takeback redo --last` gives back the
// agent's lines with the person's. An unsaved edit on the agent's own line is a conflict naming
// the lines of both sides, and nothing goes to the editor. A redo over unsaved text merges likewise.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApplyResult, ListResult, PreviewResult } from '../protocol/src/types.js';
import { inProcessHook, makeWorkspace, writeTurn, type Workspace } from './support/agent-sim.js';
import { overStdio, type TestEditor } from './support/lsp-client.js';
import { lines, tb } from './support/takeback.js';

let ws: Workspace | null = null;
let editor: TestEditor | null = null;

afterEach(async () => {
  await editor?.close();
  editor = null;
  ws?.cleanup();
  ws = null;
});

const TWENTY = lines('line', 20);
/** What the agent's Write leaves: line 3 changed. */
const AGENT = TWENTY.replace('line 3\n', 'agent 3\n');

/** A workspace after the agent's turn, and an editor over real stdio with code.txt open. */
async function start(): Promise<TestEditor> {
  ws = makeWorkspace();
  writeTurn(ws, inProcessHook(ws), 'code.txt', TWENTY, AGENT, 'sess-m', 'toolu_m1');
  const { editor: e } = overStdio(ws.root, 'neovim', ws.env);
  editor = e;
  e.clientName = 'Neovim';
  await e.initialize();
  await e.open('code.txt');
  return e;
}

describe('an undo through the editor over unsaved text', () => {
  it('an unsaved edit on another line is merged into the buffer: disk untouched until the save, then recorded; redo --last gives back the buffer as it was', async () => {
    const e = await start();
    const mine = AGENT.replace('line 10\n', 'line 10, mine\n');
    await e.type('code.txt', mine);
    const file = path.join(ws!.root, 'code.txt');
    const stat = fs.statSync(file, { bigint: true });

    const p = await e.request<PreviewResult>('undo/preview', { selector: { turn: 't1' } });
    const pf = p.files.find((f) => f.path === 'code.txt')!;
    expect(pf.conflict).toBeNull();
    expect(pf.merged).toBe(true);
    expect(pf.diff).toContain('-agent 3\n+line 3\n');
    expect(pf.diff).not.toContain('line 10, mine');

    const edits = e.edits.length;
    const u = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect(u.conflicts).toEqual([]);
    expect(u.written).toBe(true);
    expect(u.applied).toEqual([expect.objectContaining({ path: 'code.txt', via: 'editor' })]);
    expect(u.pending).toEqual(['code.txt']);
    expect(e.edits.length).toBe(edits + 1);
    const merged = TWENTY.replace('line 10\n', 'line 10, mine\n');
    expect(e.text('code.txt')).toBe(merged);
    // Nothing on disk under the buffer: its bytes and mtime as the agent left them.
    expect(fs.readFileSync(file, 'utf8')).toBe(AGENT);
    expect(fs.statSync(file, { bigint: true }).mtimeNs).toBe(stat.mtimeNs);
    let list = await e.request<ListResult>('changes/list', {});
    expect(list.sets.find((s) => s.turn === 't1')!.state).toBe('applied');

    await e.save(e.uri('code.txt'));
    await e.until(() => e.changes.some((c) => c.reason === 'undone'), 10_000, 'the undo to be recorded');
    expect(fs.readFileSync(file, 'utf8')).toBe(merged);
    list = await e.request<ListResult>('changes/list', {});
    expect(list.sets.find((s) => s.turn === 't1')!.state).toBe('undone');
    expect(list.sets.some((s) => s.source.kind === 'person')).toBe(false);

    await e.close();
    editor = null;
    const r = tb(['redo', '--last'], { cwd: ws!.root, env: ws!.env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(mine);
  });

  it('a redo likewise: an unsaved edit on another line is kept, the agent\'s line made again in the buffer, recorded on the save', async () => {
    const e = await start();
    const u = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect(u.written).toBe(true);
    await e.saveEdited();
    await e.until(() => e.changes.some((c) => c.reason === 'undone'), 10_000, 'the undo to be recorded');
    const file = path.join(ws!.root, 'code.txt');
    expect(fs.readFileSync(file, 'utf8')).toBe(TWENTY);

    await e.type('code.txt', TWENTY.replace('line 10\n', 'line 10, mine\n'));
    const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' }, direction: 'redo' });
    expect(r.conflicts).toEqual([]);
    expect(r.pending).toEqual(['code.txt']);
    const merged = AGENT.replace('line 10\n', 'line 10, mine\n');
    expect(e.text('code.txt')).toBe(merged);
    expect(fs.readFileSync(file, 'utf8')).toBe(TWENTY);
    await e.save(e.uri('code.txt'));
    await e.until(() => e.changes.some((c) => c.reason === 'redone'), 10_000, 'the redo to be recorded');
    expect(fs.readFileSync(file, 'utf8')).toBe(merged);
    const list = await e.request<ListResult>('changes/list', {});
    expect(list.sets.find((x) => x.turn === 't1')!.state).toBe('applied');
  });

  it('a buffer opened before the agent, edited unsaved on another line, already holds the undo: the step waits for its save and is recorded then, with no warning', async () => {
    ws = makeWorkspace();
    const file = path.join(ws.root, 'code.txt');
    fs.writeFileSync(file, TWENTY);
    const { editor: e } = overStdio(ws.root, 'neovim', ws.env);
    editor = e;
    e.clientName = 'Neovim';
    await e.initialize();
    await e.open('code.txt');
    // The agent changes the file on disk; the buffer is not reloaded, and the person types in it.
    writeTurn(ws, inProcessHook(ws), 'code.txt', TWENTY, AGENT, 'sess-m', 'toolu_m1');
    const mine = TWENTY.replace('line 10\n', 'line 10, mine\n');
    await e.type('code.txt', mine);

    const u = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect(u.conflicts).toEqual([]);
    expect(u.written).toBe(true);
    expect(u.pending).toEqual(['code.txt']);
    expect(e.text('code.txt')).toBe(mine);
    expect(fs.readFileSync(file, 'utf8')).toBe(AGENT);

    await e.save(e.uri('code.txt'));
    await e.until(() => e.changes.some((c) => c.reason === 'undone') || e.messages.some((m) => m.message.includes('not recorded')), 10_000, 'the undo to be recorded');
    expect(e.messages.filter((m) => m.message.includes('not recorded'))).toEqual([]);
    const list = await e.request<ListResult>('changes/list', {});
    expect(list.sets.find((s) => s.turn === 't1')!.state).toBe('undone');
    expect(fs.readFileSync(file, 'utf8')).toBe(mine);

    // The undo is history like any other: its redo makes the agent's line again, around the person's.
    await e.close();
    editor = null;
    const r = tb(['redo', '--last'], { cwd: ws.root, env: ws.env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(AGENT.replace('line 10\n', 'line 10, mine\n'));
  });

  it("an unsaved edit on the agent's own line is a conflict naming the lines of both sides; nothing goes to the editor", async () => {
    const e = await start();
    const mine = AGENT.replace('agent 3\n', 'agent 3, mine\n');
    await e.type('code.txt', mine);
    const conflict = { reason: 'unsaved-in-editor', detail: 'unsaved in Neovim: line 3 changed by the agent and line 3 since' };

    const p = await e.request<PreviewResult>('undo/preview', { selector: { turn: 't1' } });
    expect(p.files.find((f) => f.path === 'code.txt')!.conflict).toEqual(conflict);
    const edits = e.edits.length;
    const u = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect(u.conflicts).toEqual([{ path: 'code.txt', ...conflict }]);
    expect(u.written).toBe(false);
    expect(e.edits.length).toBe(edits);
    expect(e.text('code.txt')).toBe(mine);
    expect(fs.readFileSync(path.join(ws!.root, 'code.txt'), 'utf8')).toBe(AGENT);
  });
});
