// Who changed a file, as the sidecar says it: in this process over in-memory streams, with a
// real journal and the real hook handler for the agent's turns. Unsaved text in a buffer is a
// conflict that names the editor by its clientInfo name; a save the person makes is recorded as
// theirs ("saved in Neovim", source person, outside any turn) — during an agent's command too,
// which then claims only what it wrote — so that a turn's undo leaves it and a conflict names it;
// a save of a buffer that did not change, or one that completes an undo through the editor,
// records nothing of the person's.
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../protocol/src/errors.js';
import type { ApplyResult, ConflictFile, ListResult, PreviewResult } from '../protocol/src/types.js';
import { AFTER, BEFORE, agentTurn, inProcessHook, makeWorkspace, type Workspace } from './support/agent-sim.js';
import { inProcess, type TestEditor } from './support/lsp-client.js';

let ws: Workspace;
let editor: TestEditor | null = null;

afterEach(async () => {
  await editor?.close();
  editor = null;
  ws?.cleanup();
});

/** The sets of the journal, newest first, as the sidecar lists them. */
async function sets(e: TestEditor): Promise<ListResult['sets']> {
  return (await e.request<ListResult>('changes/list', {})).sets;
}

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
  it('unsaved text on the agent\'s line in a buffer: "unsaved in Neovim" with the lines of both sides, in the preview and the refused undo', async () => {
    const e = await start('Neovim');
    await e.open('notes.md');
    await e.type('notes.md', `${(AFTER['notes.md'] as string).replace('slow red', 'slow grey')}my own line\n`);
    const detail = 'unsaved in Neovim: line 3 changed by the agent and line 3 since';
    const p = await e.request<PreviewResult>('undo/preview', { selector: { turn: 't1' } });
    expect(p.files.find((f) => f.path === 'notes.md')!.conflict).toEqual({ reason: 'unsaved-in-editor', detail });
    const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect(r.conflicts).toEqual([{ path: 'notes.md', reason: 'unsaved-in-editor', detail }]);
  });

  it('an editor that names itself in lower case (Helix: "helix") is named with a capital', async () => {
    const e = await start('helix');
    await e.open('data.txt');
    await e.type('data.txt', 'mine\n');
    const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect(r.conflicts).toEqual([{ path: 'data.txt', reason: 'unsaved-in-editor', detail: 'unsaved in Helix: line 2 changed by the agent and line 1 since' }]);
  });
});

describe("the person's saves, with an editor connected", () => {
  it("a save during the agent's command is the person's: the command claims only what it wrote, the turn's undo leaves the save, and a conflict names it", async () => {
    const e = await start('Neovim');
    await e.open('notes.md');
    const hook = inProcessHook(ws);
    const common = { session_id: 'sess-1', cwd: ws.root };
    hook({ ...common, hook_event_name: 'UserPromptSubmit', prompt: 'more' });
    const command = "sed -i 's/gamma/GAMMA/' data.txt";
    const bash = { tool_name: 'Bash', tool_input: { command }, tool_use_id: 'toolu_b2' };
    hook({ ...common, hook_event_name: 'PreToolUse', ...bash });
    // While the command runs, the person changes a line the agent changed in turn 1, adds one, and saves.
    const mine = `${(AFTER['notes.md'] as string).replace('slow red', 'slow grey')}a line of mine\n`;
    await e.type('notes.md', mine);
    await e.save(e.uri('notes.md'));
    await e.until(() => e.changes.some((c) => c.reason === 'recorded'), 10_000, 'the save to be recorded');
    execSync(command, { cwd: ws.root, shell: '/bin/sh' });
    hook({ ...common, hook_event_name: 'PostToolUse', ...bash });
    hook({ ...common, hook_event_name: 'Stop' });

    const list = await sets(e);
    const saved = list.find((x) => x.source.kind === 'person')!;
    expect(saved).toMatchObject({ turn: null, agent: null, source: { kind: 'person', editor: 'Neovim' }, label: 'saved in Neovim', state: 'applied' });
    expect(saved.files.map((f) => f.path)).toEqual(['notes.md']);
    const t2 = list.filter((x) => x.turn === 't2');
    expect(t2.flatMap((x) => x.files.map((f) => f.path))).toEqual(['data.txt']);

    // The turn's undo takes back the agent's command and leaves the person's line.
    const undo = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't2' } });
    expect(undo.written).toBe(true);
    await e.saveEdited();
    await e.until(() => e.changes.some((c) => c.reason === 'undone'), 10_000, 'the undo to be recorded');
    expect(ws.read('data.txt')!.toString()).toBe(AFTER['data.txt']);
    expect(ws.read('notes.md')!.toString()).toBe(mine);

    // The agent's Edit of notes.md (turn 1), on the line the person's save changed too: a conflict naming the save.
    const edit = list.find((x) => x.label === 'Edit notes.md')!;
    const p = await e.request<PreviewResult>('undo/preview', { selector: { ids: [edit.id] } });
    expect(p.files[0]!.conflict).toEqual({
      reason: 'changed-since',
      detail: `changed since by #${saved.id} (saved in Neovim): line 3 changed by the agent and line 3 since`,
      sets: [saved.id],
      combined: [edit.id, saved.id],
    });
  });

  it('a save of a buffer that did not change records nothing; nor does the save that completes an undo through the editor', async () => {
    const e = await start('Neovim');
    await e.open('notes.md');
    const before = (await sets(e)).length;
    await e.save(e.uri('notes.md'));
    const undo = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1' } });
    expect(undo.pending).toContain('notes.md');
    await e.saveEdited();
    await e.until(() => e.changes.some((c) => c.reason === 'undone'), 10_000, 'the undo to be recorded');
    expect(ws.read('notes.md')!.toString()).toBe(BEFORE['notes.md']);
    const after = await sets(e);
    expect(after).toHaveLength(before);
    expect(after.some((x) => x.source.kind === 'person')).toBe(false);
  });
});

describe('a turn\'s edits that no tool call claimed, through the sidecar', () => {
  it('undo/preview of a turn lists them in skipped; includeUnclaimed takes them; includeUnclaimed without a turn is InvalidParams', async () => {
    const e = await start('Neovim');
    const hook = inProcessHook(ws);
    const common = { session_id: 'sess-1', cwd: ws.root };
    hook({ ...common, hook_event_name: 'UserPromptSubmit', prompt: 'more' });
    // Changed while the turn is open, by no tool call (the person, outside the editor).
    writeFileSync(join(ws.root, 'notes.md'), 'by hand\n');
    const command = "sed -i 's/gamma/GAMMA/' data.txt";
    const bash = { tool_name: 'Bash', tool_input: { command }, tool_use_id: 'toolu_b3' };
    hook({ ...common, hook_event_name: 'PreToolUse', ...bash });
    execSync(command, { cwd: ws.root, shell: '/bin/sh' });
    hook({ ...common, hook_event_name: 'PostToolUse', ...bash });
    hook({ ...common, hook_event_name: 'Stop' });
    const unclaimed = (await sets(e)).find((x) => x.turn === 't2' && x.source.kind === 'turn')!;
    expect(unclaimed.files.map((f) => f.path)).toEqual(['notes.md']);

    const p = await e.request<PreviewResult>('undo/preview', { selector: { turn: 't2' } });
    expect(p.skipped).toEqual([{ id: unclaimed.id, reason: 'left as they are: changed during the turn by no tool call' }]);
    expect(p.files.map((f) => f.path)).toEqual(['data.txt']);
    const all = await e.request<PreviewResult>('undo/preview', { selector: { turn: 't2', includeUnclaimed: true } });
    expect(all.skipped).toEqual([]);
    expect(all.files.map((f) => f.path)).toEqual(['data.txt', 'notes.md']);
    const bad = await e.request('undo/preview', { selector: { ids: [unclaimed.id], includeUnclaimed: true } }).catch((x: { code: number }) => x);
    expect(bad).toMatchObject({ code: -32602 });
  });
});

describe("the agent's lines, never the person's", () => {
  it("after a save of the person's on a file the agent changed: the lens and --last are the agent's change, whose undo keeps the person's line", async () => {
    const e = await start('Neovim');
    await e.open('notes.md');
    const mine = `${AFTER['notes.md']}a line of mine\n`;
    await e.type('notes.md', mine);
    await e.save(e.uri('notes.md'));
    await e.until(() => e.changes.some((c) => c.reason === 'recorded'), 10_000, 'the save to be recorded');
    const list = await sets(e);
    const edit = list.find((x) => x.label === 'Edit notes.md')!;
    expect(list[0]!.source.kind).toBe('person');

    const lenses = await e.request<{ command: { title: string; arguments: unknown[] } }[]>('textDocument/codeLens', { textDocument: { uri: e.uri('notes.md') } });
    expect(lenses.map((l) => l.command.title)).toEqual(['Agent changed this file +1 −1', 'Undo', 'Diff']);
    expect(lenses[1]!.command.arguments).toEqual([{ turn: 't1', paths: ['notes.md'] }]);
    const last = await e.request<PreviewResult>('undo/preview', { selector: { last: true, paths: ['notes.md'] } });
    expect(last.sets).toEqual([edit.id]);
    // The diff is the agent's line only: the person's line stays.
    expect(last.files[0]!.diff).toContain('-The slow red fox.');
    expect(last.files[0]!.diff).not.toContain('-a line of mine');
  });
});

describe('the undo that takes the later changes back too, in the words of the editor', () => {
  /** After turn t1, the person changes the line the agent's Edit changed in notes.md and saves: the Edit's id and the save's. */
  async function savedOver(e: TestEditor): Promise<{ edit: string; saved: string }> {
    await e.open('notes.md');
    await e.type('notes.md', (AFTER['notes.md'] as string).replace('slow red', 'slow grey'));
    await e.save(e.uri('notes.md'));
    await e.until(() => e.changes.some((c) => c.reason === 'recorded'), 10_000, 'the save to be recorded');
    const list = await sets(e);
    return { edit: list.find((x) => x.label === 'Edit notes.md')!.id, saved: list.find((x) => x.source.kind === 'person')!.id };
  }

  it('Helix: its shell command, then a reload, in the message of a refused code action and of its preview', async () => {
    const e = await start('helix');
    const { edit, saved } = await savedOver(e);
    const refused = await e.request('workspace/executeCommand', { command: 'takeback.undo', arguments: [{ ids: [edit] }] }).catch((x: { code: number; data: { conflicts: ConflictFile[] } }) => x);
    expect(refused).toMatchObject({ code: ErrorCodes.Conflicts, data: { conflicts: [{ path: 'notes.md', combined: [edit, saved] }] } });
    const hint = `\`:sh takeback undo ${edit} ${saved}\` takes both back (then :reload-all)`;
    expect(e.messages.at(-1)!.message).toBe(
      `takeback: nothing undone: notes.md (changed since by #${saved} (saved in Helix): line 3 changed by the agent and line 3 since — ${hint}). "Undo, replacing later changes" replaces them.`,
    );
    await e.request('workspace/executeCommand', { command: 'takeback.preview', arguments: [{ ids: [edit] }] });
    expect(e.messages.at(-1)!.message).toContain(`notes.md: put-back — CONFLICT: changed since by #${saved} (saved in Helix): line 3 changed by the agent and line 3 since — ${hint}\n`);
    expect(ws.read('notes.md')!.toString()).toContain('slow grey');
  });

  it('another editor, whose own commands name no ids: the command line', async () => {
    const e = await start('Zed');
    const { edit, saved } = await savedOver(e);
    await e.request('workspace/executeCommand', { command: 'takeback.undo', arguments: [{ ids: [edit] }] }).catch(() => null);
    expect(e.messages.at(-1)!.message).toContain(`line 3 since — \`takeback undo ${edit} ${saved}\` takes both back). "Undo, replacing later changes" replaces them.`);
  });
});
