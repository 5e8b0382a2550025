// A person's edit made between two of the agent's commands of one turn, to a file both change:
// no recorded change holds it (the second command found it there), so an undo of the two at once
// must not go from the second one's after straight to the first one's before. Each is taken back
// over what is there, as an edit made since is: the edit between them stays, or the undo is a
// conflict and writes nothing. Through the real CLI, with real commands (`takeback run`).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sandbox, setsOf, type Sandbox } from './support/takeback.js';

const TEN = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join('');

function start(): Sandbox {
  const sb = sandbox({ git: true });
  sb.write('f.txt', TEN);
  sb.sh('git add f.txt && git -c user.email=u@x -c user.name=u commit -qm init');
  expect(sb.tb(['turn', 'begin', '--id', 'T1', '--label', 'two commands']).code).toBe(0);
  return sb;
}

const sed = (sb: Sandbox, script: string, file = 'f.txt') => expect(sb.tb(['run', '--', 'sed', '-i', script, file]).code).toBe(0);

describe('an edit between two commands of the agent', () => {
  it('stays through the undo of both at once, and their redo gives back what they left', () => {
    const sb = start();
    sed(sb, '2s/line/LINE/');
    sb.write('f.txt', sb.read('f.txt').toString().replace('line 9\n', 'line 9 MINE\n')); // the person's edit
    sed(sb, '5s/line/LINE/');
    expect(sb.tb(['turn', 'end', '--id', 'T1']).code).toBe(0);
    const after = sb.read('f.txt').toString();
    expect(after).toBe(TEN.replace('line 2', 'LINE 2').replace('line 5', 'LINE 5').replace('line 9\n', 'line 9 MINE\n'));
    const ids: string[] = setsOf(sb.json(['list'])).map((s: { id: string }) => s.id);
    expect(ids).toHaveLength(2);

    const preview = sb.json(['preview', '--turn', 'T1']);
    expect(preview.files).toEqual([expect.objectContaining({ path: 'f.txt', conflict: null, merged: true })]);
    expect(sb.tb(['undo', '--turn', 'T1']).code).toBe(0);
    expect(sb.read('f.txt').toString()).toBe(TEN.replace('line 9\n', 'line 9 MINE\n'));
    expect(sb.tb(['redo', '--turn', 'T1']).code).toBe(0);
    expect(sb.read('f.txt').toString()).toBe(after);
    // The same two named by id.
    expect(sb.tb(['undo', ids[1]!, ids[0]!]).code).toBe(0);
    expect(sb.read('f.txt').toString()).toBe(TEN.replace('line 9\n', 'line 9 MINE\n'));
  });

  it('on a line the first command changed: a conflict naming it, nothing written', () => {
    const sb = start();
    sed(sb, '2s/line/LINE/');
    sb.write('f.txt', sb.read('f.txt').toString().replace('LINE 2\n', 'LINE 2 MINE\n'));
    sed(sb, '5s/line/LINE/');
    const before = sb.read('f.txt');
    const r = sb.tb(['undo', '--turn', 'T1', '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.written).toBe(false);
    expect(out.conflicts).toEqual([expect.objectContaining({ path: 'f.txt', reason: 'interleaved' })]);
    expect(out.conflicts[0].detail).toMatch(/^changed between change \d+ and change \d+, by neither: /);
    expect(sb.read('f.txt').equals(before)).toBe(true);
  });

  it('of a file no merge takes (binary): a conflict, nothing written', () => {
    const sb = start();
    sb.write('b.bin', Buffer.from([0, 1, 2, 3, 4, 5]));
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "\\000\\001\\377" >> b.bin']).code).toBe(0);
    fs.appendFileSync(sb.abs('b.bin'), Buffer.from([0, 9, 9]));
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "\\000\\002" >> b.bin']).code).toBe(0);
    const before = sb.read('b.bin');
    const r = sb.tb(['undo', '--turn', 'T1', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).conflicts).toEqual([expect.objectContaining({ path: 'b.bin', reason: 'interleaved' })]);
    expect(sb.read('b.bin').equals(before)).toBe(true);
  });
});
