// `redo --last` takes back the most recent undo and nothing older, through the real binary: after
// two undos of one change's files (one file, then some hunks of the other, or the other file
// whole), a redo --last writes only what the second took back — exactly, and merged around a
// later edit — and the next redo --last what the first took back.
import { describe, expect, it } from 'vitest';
import { lines, sandbox, type Sandbox } from './support/takeback.js';

function step(sb: Sandbox, args: string[]): void {
  const r = sb.tb(args);
  if (r.code !== 0) throw new Error(`takeback ${args.join(' ')}: exit ${r.code}\n${r.stdout}${r.stderr}`);
}

const TWENTY = lines('line', 20);
/** What change 1 leaves in f.txt and g.txt: lines 2 and 18 rewritten (two hunks). */
const AGENT = TWENTY.replace('line 2\n', 'A2\n').replace('line 18\n', 'A18\n');

/** f.txt and g.txt of twenty lines; change 1 (a command) rewrites lines 2 and 18 of both. */
function agentChange(): Sandbox {
  const sb = sandbox({ git: true });
  sb.write('f.txt', TWENTY);
  sb.write('g.txt', TWENTY);
  step(sb, ['run', '--', 'sh', '-c', "sed -i 's/^line 2$/A2/; s/^line 18$/A18/' f.txt g.txt"]);
  return sb;
}

describe('redo --last takes back the most recent undo only', () => {
  it('g.txt undone, then f.txt: redo --last writes f.txt alone, the next one g.txt', () => {
    const sb = agentChange();
    step(sb, ['undo', '1', '--file', 'g.txt']);
    step(sb, ['undo', '1', '--file', 'f.txt']);
    expect(sb.json(['preview', '--last', '--redo']).files.map((f: any) => f.path)).toEqual(['f.txt']);
    step(sb, ['redo', '--last']);
    expect([sb.read('f.txt').toString(), sb.read('g.txt').toString()]).toEqual([AGENT, TWENTY]);
    step(sb, ['redo', '--last']);
    expect([sb.read('f.txt').toString(), sb.read('g.txt').toString()]).toEqual([AGENT, AGENT]);
  });

  it('g.txt undone, then a hunk of f.txt: redo --last puts back that hunk alone, exactly and around a later edit', () => {
    const sb = agentChange();
    step(sb, ['undo', '1', '--file', 'g.txt']);
    step(sb, ['undo', '1', '--file', 'f.txt', '--lines', '2']);
    const oneBack = AGENT.replace('A2\n', 'line 2\n');
    expect(sb.read('f.txt').toString()).toBe(oneBack);
    step(sb, ['redo', '--last']);
    expect([sb.read('f.txt').toString(), sb.read('g.txt').toString()]).toEqual([AGENT, TWENTY]);

    step(sb, ['undo', '1', '--file', 'f.txt', '--lines', '2']);
    sb.write('f.txt', oneBack.replace('line 10\n', 'mine\n'));
    const r = sb.json(['redo', '--last']);
    expect(r.applied.map((f: any) => f.path)).toEqual(['f.txt']);
    expect([sb.read('f.txt').toString(), sb.read('g.txt').toString()]).toEqual([AGENT.replace('line 10\n', 'mine\n'), TWENTY]);
  });
});
