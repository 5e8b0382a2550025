// What a refused undo or redo says to do next, through the real binary: the forced undo's hint
// names the one `redo --last` that takes it back (and it does, the later edit with it), the
// forced redo's names its record of what it replaced and the two steps that bring it back (an
// undo of the same selector, then a redo of the record), which they do.
import { describe, expect, it } from 'vitest';
import { sandbox, type Sandbox } from './support/takeback.js';

function step(sb: Sandbox, args: string[]): string {
  const r = sb.tb(args);
  if (r.code !== 0) throw new Error(`takeback ${args.join(' ')}: exit ${r.code}\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** f.txt whose line 2 change 1 (an agent's turn) rewrote. */
function agentChange(): Sandbox {
  const sb = sandbox({ git: true });
  sb.write('f.txt', 'a\nb\nc\n');
  step(sb, ['turn', 'begin', '--id', 'T1', '--agent', 'claude-code', '--session', 's1']);
  step(sb, ['run', '--turn', 'T1', '--', 'sh', '-c', 'sed -i s/^b$/AGENT/ f.txt']);
  step(sb, ['turn', 'end', '--id', 'T1', '--session', 's1']);
  return sb;
}

describe('the hint of a refused step', () => {
  it('undo: one redo --last takes the forced undo back, the later edit with it', () => {
    const sb = agentChange();
    sb.write('f.txt', 'a\nAGENT, mine\nc\n');
    const r = sb.tb(['undo', '1']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('"takeback redo --last" then puts back everything it replaced, in one step');
    expect(r.stdout).not.toMatch(/twice/);
    step(sb, ['undo', '1', '--force']);
    expect(sb.read('f.txt').toString()).toBe('a\nb\nc\n');
    step(sb, ['redo', '--last']);
    expect(sb.read('f.txt').toString()).toBe('a\nAGENT, mine\nc\n');
  });

  it('redo: an undo of the same selector, then a redo of its record of what it replaced, bring the later edit back', () => {
    const sb = agentChange();
    step(sb, ['undo', '1']);
    sb.write('f.txt', 'a\nmine\nc\n');
    const r = sb.tb(['redo', '1']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('that "takeback list" shows: an undo of the same selector, then a redo of that change, brings them back');
    step(sb, ['redo', '1', '--force']);
    expect(sb.read('f.txt').toString()).toBe('a\nAGENT\nc\n');
    const record = sb.json(['list']).sets.find((s: any) => s.source.kind !== 'command');
    expect(record).toMatchObject({ state: 'undone' });
    step(sb, ['undo', '1']);
    step(sb, ['redo', record.id]);
    expect(sb.read('f.txt').toString()).toBe('a\nmine\nc\n');
  });
});
