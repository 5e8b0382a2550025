// The journal in step with the disk, through the real binary: list says what the disk holds of
// each change — applied again once the agent's bytes are written back from outside (an editor's
// own undo and a save), "no longer in place" once every hunk of it is written over (a later edit
// on other lines leaves it applied) — and undo plans a change given back that way again, as
// `undo --last` picks it.
import { describe, expect, it } from 'vitest';
import type { ListResult } from '../protocol/src/types.js';
import { overStdio } from './support/lsp-client.js';
import { sandbox, type Sandbox } from './support/takeback.js';

function step(sb: Sandbox, args: string[]): void {
  const r = sb.tb(args);
  if (r.code !== 0) throw new Error(`takeback ${args.join(' ')}: exit ${r.code}\n${r.stdout}${r.stderr}`);
}

/** The set's state and its one file's state, as `list --json` gives them. */
function stateOf(sb: Sandbox, id: string): [string, string] {
  const s = sb.json(['list']).sets.find((x: any) => x.id === id);
  return [s.state, s.files[0].state];
}

describe('list goes by the disk', () => {
  it('undone, then the agent\'s bytes written back from outside: applied, and undo takes it back again; written over: no longer in place', () => {
    const sb = sandbox({ git: true });
    sb.write('f.txt', 'a\r\n');
    step(sb, ['run', '--', 'sh', '-c', 'printf "a\\r\\nagent\\r\\n" > f.txt']);
    const agent = sb.read('f.txt');
    step(sb, ['undo', '1']);
    expect(stateOf(sb, '1')).toEqual(['undone', 'undone']);

    sb.write('f.txt', agent);
    expect(stateOf(sb, '1')).toEqual(['applied', 'applied']);
    expect(sb.tb(['list']).stdout).not.toMatch(/\[undone\]|no longer in place/);
    expect(sb.json(['preview', '1'])).toMatchObject({ sets: ['1'], skipped: [], conflicts: 0 });
    expect(sb.json(['undo', '1']).sets).toEqual(['1']);
    expect(sb.read('f.txt').toString()).toBe('a\r\n');

    step(sb, ['redo', '1']);
    sb.write('f.txt', 'written over\n');
    expect(stateOf(sb, '1')).toEqual(['applied', 'overwritten']);
    expect(sb.tb(['list']).stdout).toMatch(/f\.txt .*\[no longer in place\]/);
  });

  it('undo --last takes the newest change the disk holds, not an older one: a change undone, then given back from outside (an editor\'s own undo and a save), and given back around a later edit of the person\'s', () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'a\n');
    sb.write('b.txt', 'b1\nb2\nb3\nb4\nb5\n');
    step(sb, ['turn', 'begin', '--agent', 'bot']);
    step(sb, ['run', '--', 'sh', '-c', 'echo agent >> a.txt']);
    step(sb, ['run', '--', 'sh', '-c', "sed -i 's/^b1$/AGENT/' b.txt"]);
    step(sb, ['turn', 'end']);
    const agent = sb.read('b.txt');
    step(sb, ['undo', '--last']);
    expect(stateOf(sb, '2')).toEqual(['undone', 'undone']);

    sb.write('b.txt', agent);
    expect(stateOf(sb, '2')).toEqual(['applied', 'applied']);
    expect(sb.json(['preview', '--last'])).toMatchObject({ sets: ['2'] });
    expect(sb.json(['undo', '--last']).sets).toEqual(['2']);
    expect(sb.read('b.txt').toString()).toBe('b1\nb2\nb3\nb4\nb5\n');
    expect(sb.read('a.txt').toString()).toBe('a\nagent\n');

    // Given back around a later edit of the person's on another line: still the last one in place.
    sb.write('b.txt', 'AGENT\nb2\nb3\nb4\nmine\n');
    expect(stateOf(sb, '2')).toEqual(['applied', 'applied']);
    expect(sb.json(['undo', '--last']).sets).toEqual(['2']);
    expect(sb.read('b.txt').toString()).toBe('b1\nb2\nb3\nb4\nmine\n');
    // Nothing newer in place: the older change is the last one.
    expect(sb.json(['undo', '--last']).sets).toEqual(['1']);
    expect(sb.read('a.txt').toString()).toBe('a\n');
  });

  it('a later edit on other lines leaves the change applied in list, show and the sidecar; one over its every hunk leaves it no longer in place', async () => {
    const sb = sandbox({ git: true });
    const ten = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`);
    const text = (at: Record<number, string>) => ten.map((l, i) => at[i + 1] ?? l).join('');
    sb.write('f.txt', text({}));
    step(sb, ['run', '--', 'sh', '-c', "sed -i 's/^line 2$/AGENT/' f.txt"]);
    sb.write('f.txt', text({ 2: 'AGENT\n', 10: 'mine\n' }));
    expect(stateOf(sb, '1')).toEqual(['applied', 'applied']);
    expect(sb.json(['show', '1']).files[0].state).toBe('applied');
    expect(sb.tb(['list']).stdout).not.toMatch(/no longer in place/);
    const { editor } = overStdio(sb.ws, 'headless', sb.env);
    try {
      await editor.initialize();
      expect((await editor.request<ListResult>('changes/list', {})).sets[0]!.files[0]!.state).toBe('applied');
      sb.write('f.txt', text({ 2: 'mine too\n', 10: 'mine\n' }));
      expect((await editor.request<ListResult>('changes/list', {})).sets[0]!.files[0]!.state).toBe('overwritten');
    } finally {
      await editor.close();
    }
    expect(stateOf(sb, '1')).toEqual(['applied', 'overwritten']);
    expect(sb.json(['show', '1']).files[0].state).toBe('overwritten');
  });
});
