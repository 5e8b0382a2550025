// The sidecar with a client that holds a file's final newline as Neovim does (the 'eol' option:
// an empty file is one empty line, no text edit adds or removes the final newline), in this
// process over in-memory streams, with a real journal. Files brought back (with and without a
// final newline) and an open buffer whose only change is its final newline.
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApplyResult } from '../protocol/src/types.js';
import { inProcessHook, makeWorkspace, type Workspace } from './support/agent-sim.js';
import { inProcess, type TestEditor } from './support/lsp-client.js';

let ws: Workspace;
let editor: TestEditor | null = null;

afterEach(async () => {
  await editor?.close();
  editor = null;
  ws?.cleanup();
});

/** b.txt gains only a final newline; z.txt (with one) and w.txt (without) are removed. */
function turn(w: Workspace): void {
  fs.writeFileSync(path.join(w.root, 'b.txt'), 'one');
  fs.writeFileSync(path.join(w.root, 'z.txt'), 'z contents\n');
  fs.writeFileSync(path.join(w.root, 'w.txt'), 'w no eol');
  const hook = inProcessHook(w);
  const common = { session_id: 'sess-1', cwd: w.root };
  hook({ ...common, hook_event_name: 'SessionStart', source: 'startup' });
  hook({ ...common, hook_event_name: 'UserPromptSubmit', prompt: 'tidy' });
  const command = "printf 'one\\n' > b.txt && rm z.txt w.txt";
  const bash = { tool_name: 'Bash', tool_input: { command }, tool_use_id: 'toolu_b1' };
  hook({ ...common, hook_event_name: 'PreToolUse', ...bash });
  execSync(command, { cwd: w.root, shell: '/bin/sh' });
  hook({ ...common, hook_event_name: 'PostToolUse', ...bash });
  hook({ ...common, hook_event_name: 'Stop' });
}

async function start(name: string): Promise<TestEditor> {
  ws = makeWorkspace();
  turn(ws);
  editor = inProcess(ws.root, 'neovim', ws.env);
  editor.clientName = name;
  editor.eolOption = true;
  await editor.initialize();
  await editor.open('b.txt');
  return editor;
}

const text = (rel: string) => ws.read(rel)?.toString('utf8') ?? null;

describe("a client that keeps the final newline in an option (Neovim's 'eol')", () => {
  it('named Neovim: brings files back with and without a final newline, and changes only the final newline of an open buffer', async () => {
    const e = await start('Neovim');
    expect(e.text('b.txt')).toBe('one\n');

    const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect(r.failed).toEqual([]);
    expect(r.written).toBe(true);
    const via = Object.fromEntries(r.applied.map((a) => [a.path, a.via]));
    expect(via).toEqual({ 'b.txt': 'disk', 'w.txt': 'disk', 'z.txt': 'editor' });
    // The created file's insertion ends past the new document, so its empty line is replaced.
    const create = e.edits[0]!.edit.documentChanges!.find((c) => 'textDocument' in c && c.textDocument.uri === e.uri('z.txt'));
    expect(create).toMatchObject({ edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } }, newText: 'z contents\n' }] });
    expect(e.text('z.txt')).toBe('z contents\n');
    // What the plugin does: save the buffers the edit changed, reload those the server wrote.
    await e.saveEdited();
    await e.reload('b.txt');
    expect(e.text('b.txt')).toBe('one');
    expect(text('b.txt')).toBe('one');
    expect(text('z.txt')).toBe('z contents\n');
    expect(text('w.txt')).toBe('w no eol');
    await e.until(() => e.changes.some((c) => c.reason === 'undone'), 5000, 'the undo to be recorded');

    const back = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' }, direction: 'redo' });
    expect(back.failed).toEqual([]);
    expect(back.applied.find((a) => a.path === 'b.txt')?.via).toBe('disk');
    await e.saveEdited();
    await e.reload('b.txt');
    expect(text('b.txt')).toBe('one\n');
    expect(e.text('b.txt')).toBe('one\n');
    expect(text('z.txt')).toBeNull();
    expect(text('w.txt')).toBeNull();
  });

  it('under another name the sidecar sends text edits, which such a client cannot apply (the failure is reported)', async () => {
    const e = await start('test-neovim');
    const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect((r.failed ?? []).map((f) => f.path).sort()).toEqual(['b.txt', 'w.txt']);
    expect(r.sets).toEqual([]);
  });
});
