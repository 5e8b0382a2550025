// An undo that kept later edits, given back by the editor's own undo and a save: the file then
// holds the agent's lines around the person's, which is neither side of the change, and list,
// show and the sidecar say the change is applied again — after a merged undo of the whole change,
// after a per-hunk one, and when a later change's capture saw the agent's lines in place (the
// person's save recorded before the undo). Through the real binary, the disk written as an
// editor's save writes it. And through the sidecar, a save of the buffer the editor's own undo
// gave back after a per-hunk undo is no save of the person's: the agent's lines stay the agent's.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApplyResult, ListResult } from '../protocol/src/types.js';
import { inProcessHook, makeWorkspace, writeTurn } from './support/agent-sim.js';
import { inProcess, overStdio } from './support/lsp-client.js';
import { lines, sandbox, type Sandbox } from './support/takeback.js';

function step(sb: Sandbox, args: string[]): void {
  const r = sb.tb(args);
  if (r.code !== 0) throw new Error(`takeback ${args.join(' ')}: exit ${r.code}\n${r.stdout}${r.stderr}`);
}

/** The set's state and the state of its file `path`, as `list --json` gives them. */
function stateOf(sb: Sandbox, id: string, path = 'f.txt'): [string, string] {
  const s = sb.json(['list']).sets.find((x: any) => x.id === id);
  return [s.state, s.files.find((f: any) => f.path === path).state];
}

const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`);
/** Twenty lines, those of `at` replaced. */
const text = (at: Record<number, string>) => LINES.map((l, i) => at[i + 1] ?? l).join('');

/** f.txt of twenty lines; change 1 (a command of the agent's) rewrites lines 2 and 18: two hunks, far enough apart for their diff's context not to join them. */
function agentChange(): Sandbox {
  const sb = sandbox({ git: true });
  sb.write('f.txt', text({}));
  step(sb, ['run', '--', 'sh', '-c', "sed -i 's/^line 2$/AGENT 2/; s/^line 18$/AGENT 18/' f.txt"]);
  return sb;
}

describe("an undo given back around the person's edits is applied again", () => {
  it('a merged undo of the whole change, then the bytes it found written back: applied in list, show and the sidecar', async () => {
    const sb = agentChange();
    sb.write('f.txt', text({ 2: 'AGENT 2\n', 10: 'mine\n', 18: 'AGENT 18\n' }));
    const found = sb.read('f.txt');
    expect(sb.json(['undo', '1']).applied[0].merged).toBe(true);
    expect(sb.read('f.txt').toString()).toBe(text({ 10: 'mine\n' }));
    expect(stateOf(sb, '1')).toEqual(['undone', 'undone']);

    sb.write('f.txt', found);
    expect(stateOf(sb, '1')).toEqual(['applied', 'applied']);
    expect(sb.json(['show', '1']).files[0].state).toBe('applied');
    expect(sb.tb(['list']).stdout).not.toMatch(/\[undone\]/);
    const { editor } = overStdio(sb.ws, 'headless', sb.env);
    try {
      await editor.initialize();
      const list = await editor.request<ListResult>('changes/list', {});
      expect([list.sets[0]!.state, list.sets[0]!.files[0]!.state]).toEqual(['applied', 'applied']);
    } finally {
      await editor.close();
    }
  });

  it('a per-hunk undo, then the bytes it found written back: applied, not partly undone', () => {
    const sb = agentChange();
    sb.write('f.txt', text({ 2: 'AGENT 2\n', 10: 'mine\n', 18: 'AGENT 18\n' }));
    const found = sb.read('f.txt');
    step(sb, ['undo', '1', '--file', 'f.txt', '--lines', '2']);
    expect(sb.read('f.txt').toString()).toBe(text({ 10: 'mine\n', 18: 'AGENT 18\n' }));
    expect(stateOf(sb, '1')).toEqual(['partial', 'partial']);
    expect(sb.tb(['list']).stdout).toMatch(/f\.txt .*\[partly undone\]/);

    sb.write('f.txt', found);
    expect(stateOf(sb, '1')).toEqual(['applied', 'applied']);
    expect(sb.tb(['list']).stdout).not.toMatch(/partly undone|\[partial\]/);
  });

  it('under a later change that saw the agent\'s lines in place: the per-hunk undo given back is applied again', () => {
    const sb = agentChange();
    // The person's later change, recorded (a run of theirs) while the agent's lines were there.
    step(sb, ['run', '--', 'sh', '-c', "sed -i 's/^line 10$/mine/' f.txt"]);
    const found = sb.read('f.txt');
    step(sb, ['undo', '1', '--file', 'f.txt', '--lines', '18']);
    expect(sb.read('f.txt').toString()).toBe(text({ 2: 'AGENT 2\n', 10: 'mine\n' }));
    expect(stateOf(sb, '1')).toEqual(['partial', 'partial']);

    sb.write('f.txt', found);
    expect(stateOf(sb, '1')).toEqual(['applied', 'applied']);
    expect(stateOf(sb, '2')).toEqual(['applied', 'applied']);
  });

  it('given back only in part, or not at all: the flags stand', () => {
    const sb = agentChange();
    sb.write('f.txt', text({ 2: 'AGENT 2\n', 10: 'mine\n', 18: 'AGENT 18\n' }));
    step(sb, ['undo', '1']);
    sb.write('f.txt', text({ 2: 'AGENT 2\n', 10: 'mine\n' }));
    expect(stateOf(sb, '1')).toEqual(['undone', 'undone']);
    sb.write('f.txt', text({ 10: 'mine, more\n' }));
    expect(stateOf(sb, '1')).toEqual(['undone', 'undone']);
  });

  it("through Neovim's sidecar: a per-hunk undo, the editor's own undo and a save record no save of the person's, and the change is applied again", async () => {
    const w = makeWorkspace();
    const twenty = lines('line', 20);
    const agent = twenty.replace('line 3\n', 'agent 3\n').replace('line 15\n', 'agent 15\n');
    writeTurn(w, inProcessHook(w), 'code.txt', twenty, agent, 'sess-g', 'toolu_g1');
    // A later edit of the person's, on a line of neither hunk.
    const edited = agent.replace('line 9\n', 'mine 9\n');
    fs.writeFileSync(path.join(w.root, 'code.txt'), edited);
    const e = inProcess(w.root, 'neovim', w.env);
    e.clientName = 'Neovim';
    try {
      await e.initialize();
      await e.open('code.txt');
      const r = await e.request<ApplyResult>('undo/apply', { selector: { turn: 't1', paths: ['code.txt'], lines: { start: 15, end: 15 } }, direction: 'undo' });
      expect(r.written).toBe(true);
      expect(e.text('code.txt')).toBe(edited.replace('agent 15\n', 'line 15\n'));
      await e.saveEdited();
      await e.until(() => e.changes.some((c) => c.reason === 'undone'), 10_000, 'undone');

      // The editor's own undo gives the buffer back as the per-hunk undo found it; the person saves.
      await e.type('code.txt', edited);
      await e.save(e.uri('code.txt'));
      expect(w.read('code.txt')!.toString()).toBe(edited);
      const list = await e.request<ListResult>('changes/list', {});
      expect(list.sets.map((s) => [s.id, s.source.kind, s.state])).toEqual([['1', 'tool', 'applied']]);
      expect(list.sets[0]!.files[0]!.state).toBe('applied');
    } finally {
      await e.close();
      w.cleanup();
    }
  });
});
