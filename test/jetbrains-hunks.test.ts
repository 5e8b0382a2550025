// The per-hunk code action in a JetBrains IDE, against a client that behaves as LSP4IJ 0.20 does
// (support/lsp-client.ts: documentChanges, applied: true always, never saves until the IDE saves
// everything, commands sent only when the server lists them), over real stdio (`takeback serve`).
// The agent's Write changes two lines of code.txt far apart; the person then adds two lines above
// and saves. "Undo the agent's change here" is offered on the agent's hunk at its place now and
// not elsewhere; run, it takes back only that hunk in the IDE's document; the journal records it
// once the IDE saves (partial); the Redo action puts it back, recorded at the next save.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApplyResult, ListResult } from '../protocol/src/types.js';
import { inProcessHook, makeWorkspace, writeTurn, type Workspace } from './support/agent-sim.js';
import { overStdio, type TestEditor } from './support/lsp-client.js';
import { lines } from './support/takeback.js';

type Action = { title: string; kind?: string; command: { title: string; command: string; arguments: unknown[] } };

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
const EDITED = `// mine 1\n// mine 2\n${AGENT}`;
const HERE = "Undo the agent's change here";

/** A turn in which Claude Code's Write turns code.txt into AGENT (its hooks, in this process). */
function agentEdits(w: Workspace): void {
  writeTurn(w, inProcessHook(w), 'code.txt', TWENTY, AGENT, 'sess-jb', 'toolu_jb1');
}

/** The code actions LSP4IJ asks for at 0-based line `line` (the cursor there). */
function actionsAt(e: TestEditor, line: number): Promise<Action[]> {
  return e.request<Action[]>('textDocument/codeAction', {
    textDocument: { uri: e.uri('code.txt') },
    range: { start: { line, character: 0 }, end: { line, character: 0 } },
    context: { diagnostics: [], triggerKind: 1 },
  });
}

async function state(e: TestEditor): Promise<string> {
  return (await e.request<ListResult>('changes/list', {})).sets.find((s) => s.id === '1')!.state;
}

describe('LSP4IJ-like client: the per-hunk code action', () => {
  it("'Undo the agent's change here' takes back only that hunk in the IDE's document, recorded when the IDE saves; Redo puts it back", async () => {
    ws = makeWorkspace();
    agentEdits(ws);
    fs.writeFileSync(path.join(ws.root, 'code.txt'), EDITED);
    const { editor: e } = overStdio(ws.root, 'lsp4ij', ws.env);
    editor = e;
    await e.initialize();
    await e.open('code.txt');

    // The agent's line 15 is line 17 now (0-based 16): offered there, as a CodeAction literal of
    // takeback's kind; not on line 10, where the agent changed nothing.
    const here = (await actionsAt(e, 16)).find((a) => a.title === HERE)!;
    expect(here).toMatchObject({ kind: 'source.takeback', command: { command: 'takeback.undo', arguments: [{ turn: 't1', paths: ['code.txt'], lines: { start: 17, end: 17 } }] } });
    expect((await actionsAt(e, 9)).map((a) => a.title)).not.toContain(HERE);

    // LSP4IJ runs it only because the server lists takeback.undo; the edit lands in the document.
    const r = await e.runCommand<ApplyResult>(here.command);
    expect(r.written).toBe(true);
    expect(r.applied).toEqual([{ path: 'code.txt', action: 'put-back', via: 'editor', merged: true }]);
    expect(r.pending).toEqual(['code.txt']);
    const oneBack = EDITED.replace('agent 15\n', 'line 15\n');
    expect(e.text('code.txt')).toBe(oneBack);
    expect(ws.read('code.txt')!.toString()).toBe(EDITED); // the IDE has not saved
    expect(await state(e)).toBe('applied');
    await e.saveAll();
    await e.until(() => e.changes.some((c) => c.reason === 'undone'), 10_000, 'undone');
    expect(ws.read('code.txt')!.toString()).toBe(oneBack);
    expect(await state(e)).toBe('partial');
    // The hunk taken back is no longer offered; the other one still is, at its line now.
    expect((await actionsAt(e, 16)).map((a) => a.title)).not.toContain(HERE);
    expect((await actionsAt(e, 4)).map((a) => a.title)).toContain(HERE);

    const redo = (await actionsAt(e, 16)).find((a) => a.title === 'Redo')!;
    const rr = await e.runCommand<ApplyResult>(redo.command);
    expect(rr.written).toBe(true);
    expect(e.text('code.txt')).toBe(EDITED);
    await e.saveAll();
    await e.until(() => e.changes.some((c) => c.reason === 'redone'), 10_000, 'redone');
    expect(ws.read('code.txt')!.toString()).toBe(EDITED);
    expect(await state(e)).toBe('applied');
  });
});
