// Undo and redo by three-way merge, through the real CLI on real files: a change of the agent is
// taken back (and made again) over later edits to the same file on other lines, which stay;
// edits on the same lines are a conflict that names the lines of both sides and writes nothing;
// the bytes come back exact (CRLF, mixed line ends, a BOM, no final newline, bytes that are not
// UTF-8); binary files, links, modes changed since and files deleted then made again are never
// merged; several changes to one file are merged newest first in one step.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mergeBytes } from '../server/core/plan/merge.js';
import { lines, sandbox, type Sandbox } from './support/takeback.js';

let sb: Sandbox | null = null;

afterEach(() => {
  if (sb && !process.env.TAKEBACK_KEEP_TMP) fs.rmSync(sb.base, { recursive: true, force: true });
  sb = null;
});

let staged = 0;

/** A change of the agent: `rel` gets `bytes`, through `takeback run` (one change set). */
function agentWrites(s: Sandbox, rel: string, bytes: string | Buffer): void {
  const stage = path.join(s.base, `stage-${staged++}`);
  fs.writeFileSync(stage, bytes);
  const r = s.tb(['run', '--', 'cp', stage, rel]);
  if (r.code !== 0) throw new Error(`run cp: ${r.stderr}`);
}

/** A workspace with `rel` holding `bytes`, seen by takeback before the agent's changes. */
function start(rel: string, bytes: string | Buffer): Sandbox {
  const s = sandbox();
  s.write(rel, bytes);
  s.write('other.txt', 'other\n');
  expect(s.tb(['run', '--', 'true']).code).toBe(0);
  return s;
}

/** The id of the newest change set. */
function lastId(s: Sandbox): string {
  return s.json(['list']).sets[0].id as string;
}

/** `text` with line `n` (1-based) replaced by `line`. */
function withLine(text: string, n: number, line: string): string {
  const l = text.split('\n');
  l[n - 1] = line;
  return l.join('\n');
}

const TEN = lines('line', 10);

describe('undo and redo merge later edits that do not overlap', () => {
  it("a sed of the agent and a later comment on another line: undo keeps the comment; preview says so with the diff now → written; redo brings the agent's change back over it", () => {
    sb = start('app.js', TEN);
    expect(sb.tb(['run', '--', 'sed', '-i', 's/^line 2$/agent 2/', 'app.js']).code).toBe(0);
    const id = sb.json(['list']).sets[0].id as string;
    const edited = withLine(withLine(TEN, 2, 'agent 2'), 8, 'line 8 // my comment');
    fs.writeFileSync(sb.abs('app.js'), edited);

    const p = sb.json(['preview', id]);
    expect(p.conflicts).toBe(0);
    expect(p.files).toEqual([expect.objectContaining({ path: 'app.js', action: 'put-back', conflict: null, merged: true })]);
    expect(p.files[0].diff).toBe('--- a/app.js\n+++ b/app.js\n@@ -1,5 +1,5 @@\n line 1\n-agent 2\n+line 2\n line 3\n line 4\n line 5\n');
    const text = sb.tb(['preview', id]).stdout;
    expect(text).toContain('app.js: put back, keeping later changes');

    const u = sb.tb(['undo', id]);
    expect(u.code, u.stderr).toBe(0);
    expect(u.stdout).toContain('app.js: put back, keeping later changes');
    expect(sb.read('app.js').toString()).toBe(withLine(TEN, 8, 'line 8 // my comment'));

    // A later edit after the undo too: the redo merges the agent's change back over both.
    fs.writeFileSync(sb.abs('app.js'), withLine(withLine(TEN, 8, 'line 8 // my comment'), 10, 'line 10 // later'));
    const r = sb.json(['redo', id]);
    expect(r.written).toBe(true);
    expect(r.applied).toEqual([expect.objectContaining({ path: 'app.js', merged: true })]);
    expect(sb.read('app.js').toString()).toBe(withLine(edited, 10, 'line 10 // later'));
    // And again: the journal follows the merged states.
    expect(sb.json(['undo', id]).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(withLine(withLine(TEN, 8, 'line 8 // my comment'), 10, 'line 10 // later'));
  });

  it('redo right after a merged undo gives back exactly the bytes the undo found (its inverse, no merge), kept by a sweep meanwhile', () => {
    sb = start('app.js', TEN);
    expect(sb.tb(['run', '--', 'sed', '-i', 's/^line 2$/agent 2/', 'app.js']).code).toBe(0);
    const id = lastId(sb);
    const edited = withLine(withLine(TEN, 2, 'agent 2'), 8, 'line 8 // my comment');
    fs.writeFileSync(sb.abs('app.js'), edited);
    expect(sb.json(['undo', id]).applied).toEqual([expect.objectContaining({ path: 'app.js', merged: true })]);
    // What the undo found is referred to by the undo alone (no set holds those bytes): a sweep
    // with no grace keeps it.
    sb.json(['gc', '--grace', '0']);
    expect(sb.hasBlob(edited)).toBe(true);
    const r = sb.json(['redo', '--last']);
    expect(r).toMatchObject({ written: true, sets: [id], conflicts: [] });
    expect(r.applied).toEqual([expect.not.objectContaining({ merged: true })]);
    expect(sb.read('app.js').toString()).toBe(edited);
  });

  it('redo right after a merged undo gives back the bytes the undo found, which a sweep meanwhile keeps', () => {
    sb = start('app.js', TEN);
    expect(sb.tb(['run', '--', 'sed', '-i', 's/^line 2$/agent 2/', 'app.js']).code).toBe(0);
    const id = lastId(sb);
    const edited = withLine(withLine(TEN, 2, 'agent 2'), 8, 'line 8 // my comment');
    fs.writeFileSync(sb.abs('app.js'), edited);
    expect(sb.json(['undo', id]).applied).toEqual([expect.objectContaining({ path: 'app.js', merged: true })]);
    // What the undo found is referred to by the undo alone (no set holds those bytes): a sweep
    // with no grace keeps it.
    sb.json(['gc', '--grace', '0']);
    expect(sb.hasBlob(edited)).toBe(true);
    const r = sb.json(['redo', '--last']);
    expect(r).toMatchObject({ written: true, sets: [id], conflicts: [] });
    expect(sb.read('app.js').toString()).toBe(edited);
  });

  it('edits on the same lines are a conflict naming the lines of both sides: nothing written, exit 1; --force replaces', () => {
    sb = start('app.js', TEN);
    agentWrites(sb, 'app.js', withLine(TEN, 8, 'agent 8'));
    const id = lastId(sb);
    const mine = withLine(TEN, 8, 'mine 8');
    fs.writeFileSync(sb.abs('app.js'), mine);

    const r = sb.tb(['undo', id, '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.written).toBe(false);
    expect(out.conflicts).toEqual([{ path: 'app.js', reason: 'changed-since', detail: 'changed since outside takeback: line 8 changed by the agent and line 8 since' }]);
    expect(sb.read('app.js').toString()).toBe(mine);
    expect(sb.tb(['undo', id]).stdout).toContain('app.js: changed since outside takeback: line 8 changed by the agent and line 8 since');

    expect(sb.json(['undo', id, '--force']).written).toBe(true);
    expect(sb.read('app.js').toString()).toBe(TEN);
  });

  it("changes on adjacent lines by two agents are a conflict naming each side's own line, not the region of both", () => {
    sb = start('lib/a.txt', TEN);
    agentWrites(sb, 'lib/a.txt', withLine(TEN, 2, 'second agent 2'));
    const first = lastId(sb);
    agentWrites(sb, 'lib/a.txt', withLine(withLine(TEN, 2, 'second agent 2'), 3, 'first agent 3'));
    const out = sb.json(['undo', first], { code: 1 });
    expect(out.written).toBe(false);
    expect(out.conflicts).toEqual([expect.objectContaining({ path: 'lib/a.txt', reason: 'changed-since', detail: expect.stringMatching(/: line 2 changed by the agent and line 3 since( —|$)/) })]);
  });

  const bytesCases: [string, Buffer, (b: Buffer) => Buffer, (b: Buffer) => Buffer][] = [];
  const lat = (s: string) => Buffer.from(s, 'latin1');
  const swap = (from: string, to: string) => (b: Buffer) => {
    const s = b.toString('latin1');
    if (!s.includes(from)) throw new Error(`no ${from}`);
    return lat(s.replace(from, to));
  };
  bytesCases.push(['CRLF', lat('a\r\nb\r\nc\r\nd\r\ne\r\nf\r\n'), swap('b\r\n', 'B\r\n'), swap('e\r\n', 'e // mine\r\n')]);
  bytesCases.push(['mixed line ends', lat('a\r\nb\nc\r\nd\ne\r\nf\n'), swap('b\n', 'B\r\n'), swap('e\r\n', 'E\n')]);
  bytesCases.push(['a BOM', lat('\xef\xbb\xbfa\nb\nc\nd\ne\n'), swap('\xef\xbb\xbfa\n', '\xef\xbb\xbfA\n'), swap('d\n', 'd mine\n')]);
  bytesCases.push(['no final newline', lat('a\nb\nc\nd\ne'), swap('b\n', 'B\n'), swap('\ne', '\ne and more')]);
  bytesCases.push(['invalid UTF-8 in untouched lines', lat('a\n\xff\xfe bad\nc\nd\n\xc3\x28 bad too\nf\n'), swap('a\n', 'A\n'), swap('\nd\n', '\nD\n')]);

  it.each(bytesCases)('bytes exact through undo and redo: %s', (_name, start0, agent, mine) => {
    sb = start('f.txt', start0);
    const after = agent(start0);
    agentWrites(sb, 'f.txt', after);
    const id = lastId(sb);
    const now = mine(after);
    fs.writeFileSync(sb.abs('f.txt'), now);
    expect(sb.json(['undo', id]).applied).toEqual([expect.objectContaining({ path: 'f.txt', merged: true })]);
    expect(sb.read('f.txt').equals(mine(start0))).toBe(true);
    expect(sb.json(['redo', id]).written).toBe(true);
    expect(sb.read('f.txt').equals(now)).toBe(true);
  });

  it('a binary file, a link, a mode changed since, a file deleted and made again stay conflicts', () => {
    sb = start('bin.dat', Buffer.from('a\nb\0\nc\nd\ne\n'));
    sb.write('mode.txt', TEN);
    sb.write('gone.txt', TEN);
    fs.symlinkSync('mode.txt', sb.abs('link'));
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    agentWrites(sb, 'bin.dat', Buffer.from('A\nb\0\nc\nd\ne\n'));
    agentWrites(sb, 'mode.txt', withLine(TEN, 2, 'agent'));
    expect(sb.tb(['run', '--', 'sh', '-c', 'rm gone.txt && ln -sfn other.txt link']).code).toBe(0);
    fs.writeFileSync(sb.abs('bin.dat'), Buffer.from('A\nb\0\nc\nd\nmine\n'));
    fs.chmodSync(sb.abs('mode.txt'), 0o755);
    fs.writeFileSync(sb.abs('mode.txt'), withLine(withLine(TEN, 2, 'agent'), 9, 'mine'));
    fs.writeFileSync(sb.abs('gone.txt'), withLine(TEN, 9, 'mine'));
    fs.rmSync(sb.abs('link'));
    fs.symlinkSync('gone.txt', sb.abs('link'));
    const before = sb.tree();
    const ids = (sb.json(['list']).sets as any[]).slice(0, 3).map((x) => x.id as string);
    const out = sb.json(['undo', ...ids], { code: 1 });
    expect(out.written).toBe(false);
    expect(out.conflicts.map((c: any) => [c.path, c.reason, c.detail]).sort()).toEqual([
      ['bin.dat', 'changed-since', 'changed since outside takeback'],
      ['gone.txt', 'changed-since', 'created since outside takeback'],
      ['link', 'changed-since', 'changed since outside takeback'],
      ['mode.txt', 'changed-since', 'changed since outside takeback'],
    ]);
    expect(sb.tree()).toEqual(before);
  });

  it('a change of the mode and the bytes, with a later edit on another line: the bytes are merged and the mode comes back', () => {
    sb = start('run.sh', TEN);
    fs.chmodSync(sb.abs('run.sh'), 0o644);
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    expect(sb.tb(['run', '--', 'sh', '-c', "sed -i 's/^line 1$/#!agent/' run.sh && chmod 755 run.sh"]).code).toBe(0);
    const id = lastId(sb);
    fs.writeFileSync(sb.abs('run.sh'), withLine(withLine(TEN, 1, '#!agent'), 10, 'mine'));
    expect(sb.json(['undo', id]).applied).toEqual([expect.objectContaining({ path: 'run.sh', merged: true })]);
    expect(sb.read('run.sh').toString()).toBe(withLine(TEN, 10, 'mine'));
    expect(fs.statSync(sb.abs('run.sh')).mode & 0o777).toBe(0o644);
  });

  it('a turn of several changes to one file, with a later edit: merged newest first, in one step', () => {
    sb = start('f.txt', TEN);
    expect(sb.tb(['turn', 'begin', '--id', 'T']).code).toBe(0);
    agentWrites(sb, 'f.txt', withLine(TEN, 2, 'first'));
    agentWrites(sb, 'f.txt', withLine(withLine(TEN, 2, 'first'), 5, 'second'));
    agentWrites(sb, 'f.txt', withLine(withLine(TEN, 2, 'second on 2'), 5, 'second'));
    expect(sb.tb(['turn', 'end']).code).toBe(0);
    const agentDone = withLine(withLine(TEN, 2, 'second on 2'), 5, 'second');
    fs.writeFileSync(sb.abs('f.txt'), withLine(agentDone, 9, 'mine'));
    const u = sb.json(['undo', '--turn', 'T']);
    expect(u.sets.length).toBe(3);
    expect(u.applied).toEqual([expect.objectContaining({ path: 'f.txt', merged: true })]);
    expect(sb.read('f.txt').toString()).toBe(withLine(TEN, 9, 'mine'));
    const history = sb.json(['show', u.sets[1]]).history;
    expect(history.length).toBe(2); // captured, undone: one step
    expect(sb.json(['redo', '--turn', 'T']).written).toBe(true);
    expect(sb.read('f.txt').toString()).toBe(withLine(agentDone, 9, 'mine'));
  });

  it('a change in between that is not selected and stays: merged when its lines do not overlap, a conflict naming lines when they do', () => {
    sb = start('f.txt', TEN);
    agentWrites(sb, 'f.txt', withLine(TEN, 2, 'two'));
    const a = lastId(sb);
    agentWrites(sb, 'f.txt', withLine(withLine(TEN, 2, 'two'), 5, 'five'));
    agentWrites(sb, 'f.txt', withLine(withLine(withLine(TEN, 2, 'two'), 5, 'five'), 8, 'eight'));
    const c = lastId(sb);
    expect(sb.json(['undo', a, c]).written).toBe(true);
    expect(sb.read('f.txt').toString()).toBe(withLine(TEN, 5, 'five'));
    sb.json(['redo', a, c]);
    expect(sb.read('f.txt').toString()).toBe(withLine(withLine(withLine(TEN, 2, 'two'), 5, 'five'), 8, 'eight'));

    agentWrites(sb, 'f.txt', withLine(withLine(withLine(TEN, 2, 'two'), 5, 'five'), 8, 'eight again'));
    const d = lastId(sb);
    agentWrites(sb, 'f.txt', withLine(withLine(withLine(TEN, 2, 'two'), 5, 'five'), 8, 'eight thrice'));
    const e = lastId(sb);
    const out = sb.json(['undo', c, e], { code: 1 });
    expect(out.conflicts).toEqual([
      expect.objectContaining({ path: 'f.txt', reason: 'interleaved', detail: `also changed by change ${d}, not selected: line 8 changed by the agent and line 8 since` }),
    ]);
  });
});

describe('mergeBytes', () => {
  const B = (s: string) => Buffer.from(s, 'latin1');
  it('takes the same change made by both sides once; insertions at the same place by both sides differently overlap', () => {
    expect(mergeBytes(B('a\nb\nc\n'), B('a\nX\nc\n'), B('a\nX\nc\n'))).toEqual({ ok: true, bytes: B('a\nX\nc\n') });
    const r = mergeBytes(B('a\nb\nc\nd\n'), B('a\nb\nmine\nc\nd\n'), B('a\nb\ntheirs\nc\nd\n'));
    expect(r).toEqual({ ok: false, overlaps: [{ change: { start: 3, end: 2 }, since: { start: 3, end: 3 } }] });
  });

  it("names each side's own lines in a region of adjacent changes: replaced, removed and added lines", () => {
    const base = B('a\nb\nc\nd\ne\n');
    // The step changes b (line 2), the later edit c (line 3).
    expect(mergeBytes(base, B('a\nb\nC\nd\ne\n'), B('a\nB\nc\nd\ne\n'))).toEqual({ ok: false, overlaps: [{ change: { start: 2, end: 2 }, since: { start: 3, end: 3 } }] });
    // The step removes c and d (lines 3-4 of base); the later edit adds two lines after b (lines 3-4 of the file now).
    expect(mergeBytes(base, B('a\nb\nX\nY\nc\nd\ne\n'), B('a\nb\ne\n'))).toEqual({ ok: false, overlaps: [{ change: { start: 3, end: 4 }, since: { start: 3, end: 4 } }] });
    // The step adds a line after b; the later edit removes c: both are empty ranges after line 2.
    expect(mergeBytes(base, B('a\nb\nd\ne\n'), B('a\nb\nnew\nc\nd\ne\n'))).toEqual({ ok: false, overlaps: [{ change: { start: 3, end: 2 }, since: { start: 3, end: 2 } }] });
  });

  it('a 20,000-line file with one change on each side far apart merges (the regions between kept lines only go to the three-way merge)', () => {
    const base = lines('line', 20_000);
    const ours = base.replace('line 15000\n', 'mine\n');
    const theirs = base.replace('line 1200\n', 'theirs\n');
    const r = mergeBytes(B(base), B(ours), B(theirs));
    expect(r).toEqual({ ok: true, bytes: B(base.replace('line 15000\n', 'mine\n').replace('line 1200\n', 'theirs\n')) });
  });

  it('a 21,000-line file rewritten whole since (a formatter, every line new) is an overlap naming both sides, not a give-up', () => {
    const base = lines('line', 21_000);
    const ours = lines('person', 21_000);
    const theirs = base.replace('line 3\n', 'the agent\n');
    expect(mergeBytes(B(base), B(ours), B(theirs))).toEqual({ ok: false, overlaps: [{ change: { start: 3, end: 3 }, since: { start: 1, end: 21_000 } }] });
    // Rewritten whole but for the agent's line: still no line both sides keep, one overlap, as in a short file.
    const kept = ours.replace('person 3\n', 'line 3\n');
    expect(mergeBytes(B(base), B(kept), B(theirs))).toEqual({ ok: false, overlaps: [{ change: { start: 3, end: 3 }, since: { start: 1, end: 21_000 } }] });
  });

  it('a region longer than the three-way merge is given, where one side left it as it was or both made it the same, takes the other side', () => {
    const base = `top\n${lines('old', 3_000)}middle\nbottom\n`;
    const rewritten = `top\n${lines('new', 3_000)}middle\nbottom\n`;
    // The later edit rewrote the region, the step leaves it as it was (it changes the last line): the later edit stays.
    expect(mergeBytes(B(base), B(rewritten), B(base.replace('bottom', 'BOTTOM')))).toEqual({ ok: true, bytes: B(rewritten.replace('bottom', 'BOTTOM')) });
    // The step rewrote it the same way.
    expect(mergeBytes(B(base), B(rewritten), B(rewritten.replace('bottom', 'BOTTOM')))).toEqual({ ok: true, bytes: B(rewritten.replace('bottom', 'BOTTOM')) });
    // The step rewrote it, the later edit left it as it was.
    expect(mergeBytes(B(base), B(base.replace('bottom', 'BOTTOM')), B(rewritten))).toEqual({ ok: true, bytes: B(rewritten.replace('bottom', 'BOTTOM')) });
  });
});
