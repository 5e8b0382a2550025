// The journal in step with the disk, through the real binary: list says what the disk holds of
// each change — applied again once the agent's bytes are written back from outside (an editor's
// own undo and a save), "no longer in place" once the file is written over — and undo plans a
// change given back that way again.
import { describe, expect, it } from 'vitest';
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
});
