// Per-hunk undo and redo through the real CLI on real files: `--file PATH --lines A[-B]` takes
// back (redo: makes again) only the hunks of the selected changes that touch those lines of the
// file as it is now, keeping the other hunks and every later edit; the change is then `partial`
// and its other hunks can be taken later; `redo --last` puts back exactly the hunks the undo
// took; the bytes come back exact; a range touching no hunk, a binary file and a bad range are
// clear errors that write nothing; preview shows just those hunks and places each one.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lines, sandbox, type Sandbox } from './support/takeback.js';

let sb: Sandbox | null = null;

afterEach(() => {
  if (sb && !process.env.TAKEBACK_KEEP_TMP) fs.rmSync(sb.base, { recursive: true, force: true });
  sb = null;
});

let staged = 0;

/** A change of the agent: `rel` gets `bytes`, through `takeback run` (one change set); returns its id. */
function agentWrites(s: Sandbox, rel: string, bytes: string | Buffer): string {
  const stage = path.join(s.base, `stage-${staged++}`);
  fs.writeFileSync(stage, bytes);
  const r = s.tb(['run', '--', 'cp', stage, rel]);
  if (r.code !== 0) throw new Error(`run cp: ${r.stderr}`);
  return s.json(['list']).sets[0].id as string;
}

/** A workspace with `rel` holding `bytes`, seen by takeback before the agent's changes. */
function start(rel: string, bytes: string | Buffer): Sandbox {
  const s = sandbox();
  s.write(rel, bytes);
  expect(s.tb(['run', '--', 'true']).code).toBe(0);
  return s;
}

/** `text` with line `n` (1-based) replaced by `line`. */
function withLine(text: string, n: number, line: string): string {
  const l = text.split('\n');
  l[n - 1] = line;
  return l.join('\n');
}

/** The state of set `id` in `list --json`. */
function stateOf(s: Sandbox, id: string): string {
  return s.json(['list', '--all']).sets.find((x: { id: string }) => x.id === id).state as string;
}

const TWENTY = lines('line', 20);
const AGENT = withLine(withLine(TWENTY, 3, 'agent 3'), 15, 'agent 15');

describe('undo --file --lines: only the hunks there', () => {
  it('lines moved by a later edit above: the hunk at its current place goes back, the other hunk and the edit stay; partial; redo --last puts back exactly that hunk; the other hunk later', () => {
    sb = start('app.js', TWENTY);
    const id = agentWrites(sb, 'app.js', AGENT);
    const edited = `// mine 1\n// mine 2\n${AGENT}`;
    fs.writeFileSync(sb.abs('app.js'), edited);

    // The agent's line 15 is line 17 now.
    const p = sb.json(['preview', id, '--file', 'app.js', '--lines', '17']);
    expect(p.files).toEqual([expect.objectContaining({ path: 'app.js', action: 'put-back', conflict: null, merged: true, sets: [id] })]);
    expect(p.files[0].hunks).toEqual([
      { set: id, start: 5, end: 5, lines: 1, before: { start: 3, lines: 1 }, after: { start: 3, lines: 1 }, taken: false },
      { set: id, start: 17, end: 17, lines: 1, before: { start: 15, lines: 1 }, after: { start: 15, lines: 1 }, taken: true },
    ]);
    expect(p.files[0].diff).toBe('--- a/app.js\n+++ b/app.js\n@@ -14,7 +14,7 @@\n line 12\n line 13\n line 14\n-agent 15\n+line 15\n line 16\n line 17\n line 18\n');
    expect(sb.read('app.js').toString()).toBe(edited);

    const u = sb.tb(['undo', id, '--file', 'app.js', '--lines', '16-18']);
    expect(u.code, u.stderr).toBe(0);
    const oneBack = withLine(edited, 17, 'line 15');
    expect(sb.read('app.js').toString()).toBe(oneBack);
    expect(stateOf(sb, id)).toBe('partial');
    expect(sb.tb(['list']).stdout).toMatch(/app\.js {2}\+2 −2 \[partly undone\]/);
    // The other hunk, still in place, is all an undo of the file has left to take: the one taken
    // back has no line of the agent's there any more.
    expect(sb.json(['preview', id, '--file', 'app.js']).files[0].hunks).toEqual([{ set: id, start: 5, end: 5, lines: 1, before: { start: 3, lines: 1 }, after: { start: 3, lines: 1 }, taken: true }]);

    const r = sb.json(['redo', '--last']);
    expect(r.written).toBe(true);
    expect(r.sets).toEqual([id]);
    expect(sb.read('app.js').toString()).toBe(edited);
    expect(stateOf(sb, id)).toBe('applied');

    // Both hunks, one at a time: the second leaves the change undone.
    expect(sb.json(['undo', id, '--file', 'app.js', '--lines', '5']).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(withLine(edited, 5, 'line 3'));
    expect(stateOf(sb, id)).toBe('partial');
    expect(sb.json(['undo', id, '--file', 'app.js', '--lines', '17']).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(`// mine 1\n// mine 2\n${TWENTY}`);
    expect(stateOf(sb, id)).toBe('undone');
  });

  it('redo --last after the undo that took the last hunks puts back exactly those: partial again; the next redo --last the hunks taken before', () => {
    sb = start('app.js', TWENTY);
    const id = agentWrites(sb, 'app.js', AGENT);
    expect(sb.json(['undo', id, '--file', 'app.js', '--lines', '3']).written).toBe(true);
    expect(sb.json(['undo', id, '--file', 'app.js', '--lines', '15']).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(TWENTY);
    expect(stateOf(sb, id)).toBe('undone');
    expect(sb.json(['redo', '--last']).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(withLine(TWENTY, 15, 'agent 15'));
    expect(stateOf(sb, id)).toBe('partial');
    expect(sb.json(['redo', '--last']).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(AGENT);
    expect(stateOf(sb, id)).toBe('applied');
    // Taken back whole after a hunk: a plain redo --last puts back what that undo took, no more.
    expect(sb.json(['undo', id, '--file', 'app.js', '--lines', '3']).written).toBe(true);
    expect(sb.json(['undo', id]).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(TWENTY);
    expect(sb.json(['redo', '--last']).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(withLine(TWENTY, 15, 'agent 15'));
    expect(stateOf(sb, id)).toBe('partial');
  });

  it('a partly undone change taken back whole takes its other hunks only, keeping the later edit', () => {
    sb = start('app.js', TWENTY);
    const id = agentWrites(sb, 'app.js', AGENT);
    expect(sb.json(['undo', id, '--file', 'app.js', '--lines', '3']).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(withLine(TWENTY, 15, 'agent 15'));
    fs.writeFileSync(sb.abs('app.js'), withLine(withLine(TWENTY, 15, 'agent 15'), 9, 'mine 9'));
    const u = sb.json(['undo', id]);
    expect(u.written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(withLine(TWENTY, 9, 'mine 9'));
    expect(stateOf(sb, id)).toBe('undone');
  });

  it('a turn of two changes to the file: only the change whose hunk is on the lines moves, the other is skipped', () => {
    sb = start('app.js', TWENTY);
    const first = agentWrites(sb, 'app.js', withLine(TWENTY, 3, 'agent 3'));
    const second = agentWrites(sb, 'app.js', AGENT);
    const u = sb.json(['undo', first, second, '--file', 'app.js', '--lines', '3']);
    expect(u.written).toBe(true);
    expect(u.sets).toEqual([first]);
    expect(u.skipped).toEqual([{ id: second, reason: 'no hunk on those lines' }]);
    expect(sb.read('app.js').toString()).toBe(withLine(TWENTY, 15, 'agent 15'));
    expect(stateOf(sb, first)).toBe('undone');
    expect(stateOf(sb, second)).toBe('applied');
  });

  it('a range spanning several hunks takes them all: the change is undone whole', () => {
    sb = start('app.js', TWENTY);
    const id = agentWrites(sb, 'app.js', AGENT);
    expect(sb.json(['undo', id, '--file', 'app.js', '--lines', '1-20']).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(TWENTY);
    expect(stateOf(sb, id)).toBe('undone');
  });

  it('redo --lines of an undone change makes only that hunk again; preview --redo shows the rest', () => {
    sb = start('app.js', TWENTY);
    const id = agentWrites(sb, 'app.js', AGENT);
    expect(sb.json(['undo', id]).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(TWENTY);
    const r = sb.json(['redo', id, '--file', 'app.js', '--lines', '15']);
    expect(r.written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(withLine(TWENTY, 15, 'agent 15'));
    expect(stateOf(sb, id)).toBe('partial');
    const p = sb.json(['preview', '--redo', id, '--file', 'app.js']);
    expect(p.files[0].diff).toContain('-line 3\n+agent 3\n');
    expect(p.files[0].diff).not.toContain('agent 15');
    expect(sb.json(['redo', id]).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(AGENT);
    expect(stateOf(sb, id)).toBe('applied');
  });

  it('bytes exact: CRLF, a BOM, a line that is not UTF-8 and no final newline, both directions', () => {
    const rows = Array.from({ length: 14 }, (_, i) => (i === 7 ? 'caf\xe9 \xff\r\n' : `row ${i + 1}\r\n`)).join('');
    const before = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${rows}mixed\nlast, no newline`, 'latin1')]);
    const text = before.toString('latin1');
    const after = Buffer.from(text.replace('row 2\r\n', 'agent 2\r\n').replace('last, no newline', 'agent last\n'), 'latin1');
    sb = start('data.txt', before);
    const id = agentWrites(sb, 'data.txt', after);
    const last = text.split('\n').length;
    expect(sb.json(['undo', id, '--file', 'data.txt', '--lines', String(last)]).written).toBe(true);
    expect(sb.read('data.txt').equals(Buffer.from(text.replace('row 2\r\n', 'agent 2\r\n'), 'latin1'))).toBe(true);
    expect(sb.json(['redo', '--last']).written).toBe(true);
    expect(sb.read('data.txt').equals(after)).toBe(true);
    expect(sb.json(['undo', id, '--file', 'data.txt', '--lines', '2']).written).toBe(true);
    expect(sb.read('data.txt').equals(Buffer.from(text.replace('last, no newline', 'agent last\n'), 'latin1'))).toBe(true);
    expect(sb.json(['undo', id]).written).toBe(true);
    expect(sb.read('data.txt').equals(before)).toBe(true);
  });
});

describe('undo --lines: clear errors, nothing written', () => {
  it('a range touching no hunk, a hunk already taken back, a binary file, --lines without one --file, a bad range', () => {
    sb = start('app.js', TWENTY);
    sb.write('blob.bin', Buffer.from([1, 0, 2, 0, 3]));
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    const id = agentWrites(sb, 'app.js', AGENT);

    const none = sb.tb(['undo', id, '--file', 'app.js', '--lines', '8-10']);
    expect(none.code).toBe(3);
    expect(none.stderr).toContain(`no hunk of change ${id} touches lines 8-10 of app.js as it is now`);
    expect(sb.read('app.js').toString()).toBe(AGENT);
    expect(stateOf(sb, id)).toBe('applied');
    expect(sb.tb(['preview', id, '--file', 'app.js', '--lines', '9']).code).toBe(3);

    expect(sb.json(['undo', id, '--file', 'app.js', '--lines', '3']).written).toBe(true);
    const again = sb.tb(['undo', id, '--file', 'app.js', '--lines', '3']);
    expect(again.code).toBe(3);
    expect(sb.read('app.js').toString()).toBe(withLine(TWENTY, 15, 'agent 15'));

    const bin = agentWrites(sb, 'blob.bin', Buffer.from([1, 0, 9, 0, 3]));
    const b = sb.tb(['undo', bin, '--file', 'blob.bin', '--lines', '1']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('blob.bin has no hunks (binary)');
    expect([...sb.read('blob.bin')]).toEqual([1, 0, 9, 0, 3]);

    const noFile = sb.tb(['undo', id, '--lines', '3']);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('--lines needs exactly one --file');
    const bad = sb.tb(['undo', id, '--file', 'app.js', '--lines', '9-3']);
    expect(bad.code).toBe(2);
    expect(sb.read('app.js').toString()).toBe(withLine(TWENTY, 15, 'agent 15'));
  });
});

describe('list --hunks and preview --json: where each hunk is', () => {
  it('one hunk over several lines is "hunk at lines A-B", one over one line "hunk at line A"', () => {
    sb = start('a.txt', TWENTY);
    agentWrites(sb, 'a.txt', withLine(withLine(TWENTY, 3, 'agent 3'), 5, 'agent 5'));
    expect(sb.tb(['list', '--hunks', 'a.txt']).stdout).toMatch(/a\.txt {2}\+2 −2 · hunk at lines 3-5$/m);
    agentWrites(sb, 'a.txt', withLine(withLine(withLine(TWENTY, 3, 'agent 3'), 5, 'agent 5'), 15, 'agent 15'));
    expect(sb.tb(['list', '--hunks', 'a.txt']).stdout).toMatch(/a\.txt {2}\+1 −1 · hunk at line 15$/m);
  });

  // Thirty lines; the agent turns line 3 into three lines, takes line 11 out and changes line 19:
  // three hunks (seven lines apart or more), at lines 3-5, before 13 and at 20 of what it left.
  const THIRTY = lines('line', 30);
  const THREE = THIRTY.replace('line 3\n', 'agent 3a\nagent 3b\nagent 3c\n').replace('line 11\n', '').replace('line 19\n', 'agent 19\n');
  const span = (start: number, n: number) => ({ start, lines: n });

  it("each hunk's range in before, after and the file now, moved by a later edit above; none once taken back; list reads hunks only when asked", () => {
    sb = start('app.js', THIRTY);
    const id = agentWrites(sb, 'app.js', THREE);
    const hunksOf = (s: Sandbox) => s.json(['list', '--hunks', 'app.js']).sets.find((x: { id: string }) => x.id === id).files[0].hunks;

    expect(sb.json(['list']).sets[0].files[0]).not.toHaveProperty('hunks');
    expect(hunksOf(sb)).toEqual([
      { before: span(3, 1), after: span(3, 3), now: span(3, 3) },
      { before: span(11, 1), after: span(13, 0), now: span(13, 0) },
      { before: span(19, 1), after: span(20, 1), now: span(20, 1) },
    ]);

    // Two lines of the person's above: every hunk is two lines further down.
    fs.writeFileSync(sb.abs('app.js'), `// mine 1\n// mine 2\n${THREE}`);
    expect(hunksOf(sb)).toEqual([
      { before: span(3, 1), after: span(3, 3), now: span(5, 3) },
      { before: span(11, 1), after: span(13, 0), now: span(15, 0) },
      { before: span(19, 1), after: span(20, 1), now: span(22, 1) },
    ]);
    const p = sb.json(['preview', id, '--file', 'app.js']);
    expect(p.files[0].hunks).toEqual([
      { set: id, start: 5, end: 7, lines: 3, before: span(3, 1), after: span(3, 3), taken: true },
      { set: id, start: 15, end: 14, lines: 0, before: span(11, 1), after: span(13, 0), taken: true },
      { set: id, start: 22, end: 22, lines: 1, before: span(19, 1), after: span(20, 1), taken: true },
    ]);

    // The first hunk taken back: it is no longer in the file, the others move up by two.
    expect(sb.json(['undo', id, '--file', 'app.js', '--lines', '6']).written).toBe(true);
    expect(hunksOf(sb)).toEqual([
      { before: span(3, 1), after: span(3, 3), now: null },
      { before: span(11, 1), after: span(13, 0), now: span(13, 0) },
      { before: span(19, 1), after: span(20, 1), now: span(20, 1) },
    ]);
    expect(sb.tb(['list', '--hunks', 'app.js']).stdout).toMatch(/app\.js {2}\+4 −3 \[partly undone\] · hunks at lines 13, 20 · 1 hunk no longer in place/);

    // The rest taken back: none is in the file. A redo's preview places the hunks it puts back
    // (that last undo's: the second and third) by the lines that undo found, and gives their
    // ranges in the change's own sides.
    expect(sb.json(['undo', id]).written).toBe(true);
    expect(hunksOf(sb).map((h: { now: unknown }) => h.now)).toEqual([null, null, null]);
    expect(sb.json(['preview', '--redo', id, '--file', 'app.js']).files[0].hunks).toEqual([
      { set: id, start: 13, end: 13, lines: 1, before: span(11, 1), after: span(13, 0), taken: true },
      { set: id, start: 21, end: 21, lines: 1, before: span(19, 1), after: span(20, 1), taken: true },
    ]);
  });

  it("a change undone whole: the redo's preview places each hunk by the lines the change found", () => {
    sb = start('app.js', THIRTY);
    const id = agentWrites(sb, 'app.js', THREE);
    expect(sb.json(['undo', id]).written).toBe(true);
    fs.writeFileSync(sb.abs('app.js'), `// mine
${THIRTY}`);
    expect(sb.json(['preview', '--redo', id, '--file', 'app.js']).files[0].hunks).toEqual([
      { set: id, start: 4, end: 4, lines: 1, before: span(3, 1), after: span(3, 3), taken: true },
      { set: id, start: 12, end: 12, lines: 1, before: span(11, 1), after: span(13, 0), taken: true },
      { set: id, start: 20, end: 20, lines: 1, before: span(19, 1), after: span(20, 1), taken: true },
    ]);
  });

  it('a file created by the change has no hunks; a path outside the workspace is refused', () => {
    sb = start('app.js', THIRTY);
    const id = agentWrites(sb, 'new.js', 'made\n');
    const f = sb.json(['list', '--hunks', 'new.js']).sets.find((x: { id: string }) => x.id === id).files[0];
    expect(f.path).toBe('new.js');
    expect(f).not.toHaveProperty('hunks');
    const out = sb.tb(['list', '--hunks', '/elsewhere/x.js']);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('outside the workspace');
  });
});
