// Who changed a file, as the sidecar says it: in this process over in-memory streams, with a
// real journal and the real hook handler for the agent's turn. Unsaved text in a buffer is a
// conflict that names the editor by its clientInfo name.
import { afterEach, describe, expect, it } from 'vitest';
import type { ApplyResult, PreviewResult } from '../protocol/src/types.js';
import { AFTER, agentTurn, inProcessHook, makeWorkspace, type Workspace } from './support/agent-sim.js';
import { inProcess, type TestEditor } from './support/lsp-client.js';

let ws: Workspace;
let editor: TestEditor | null = null;

afterEach(async () => {
  await editor?.close();
  editor = null;
  ws?.cleanup();
});

/** A workspace after the agent's turn t1, and an editor that calls itself `name`, initialized. */
async function start(name: string): Promise<TestEditor> {
  ws = makeWorkspace();
  agentTurn(ws, inProcessHook(ws));
  editor = inProcess(ws.root, 'neovim', ws.env);
  editor.clientName = name;
  await editor.initialize();
  return editor;
}

describe('the sidecar says who changed a file', () => {
  it('unsaved text in a buffer: "unsaved in Neovim", in the preview and the refused undo', async () => {
    const e = await start('Neovim');
    await e.open('notes.md');
    await e.type('notes.md', `${AFTER['notes.md']}my own line\n`);
    const p = await e.request<PreviewResult>('undo/preview', { selector: { turn: 't1' } });
    expect(p.files.find((f) => f.path === 'notes.md')!.conflict).toEqual({ reason: 'unsaved-in-editor', detail: 'unsaved in Neovim' });
    const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect(r.conflicts).toEqual([{ path: 'notes.md', reason: 'unsaved-in-editor', detail: 'unsaved in Neovim' }]);
  });

  it('an editor that names itself in lower case (Helix: "helix") is named with a capital', async () => {
    const e = await start('helix');
    await e.open('data.txt');
    await e.type('data.txt', 'mine\n');
    const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect(r.conflicts).toEqual([{ path: 'data.txt', reason: 'unsaved-in-editor', detail: 'unsaved in Helix' }]);
  });
});
