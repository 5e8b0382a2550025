// The planner in this process: change sets recorded by the capture functions against a real
// temporary workspace, planned by makePlan against what is on disk (or what a reader says is
// there). What each path's action, conflict and gap is, which sets the walk takes and in what
// order, and which it skips and why. Nothing is written: every case reads the plan only.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makePlan, type CurrentReader } from '../server/core/plan/plan.js';
import type { FileState } from '../server/core/types.js';
import { unitWorkspace } from './support/unit-workspace.js';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

/** The set a tool call recorded; fails the test when it recorded none. */
function must<T>(v: T | null): T {
  expect(v).not.toBeNull();
  return v!;
}

describe('makePlan: the action for each path', () => {
  it('put-back: new bytes over the file give the kept bytes back', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', 'one\n');
    const set = must(ws.tool(['a.txt'], () => ws.write('a.txt', 'two\n')));
    const plan = makePlan(ws, [set], 'undo');
    expect(plan.direction).toBe('undo');
    expect(plan.sets.map((s) => s.id)).toEqual([set.id]);
    expect(plan.skipped).toEqual([]);
    expect(plan.files).toHaveLength(1);
    const f = plan.files[0]!;
    expect(f).toMatchObject({ path: 'a.txt', action: 'put-back', conflict: null, gap: null, sets: [set.id] });
    expect(f.expected).toMatchObject({ exists: true, type: 'file', sha256: sha('two\n'), size: 4 });
    expect(f.target).toMatchObject({ exists: true, type: 'file', sha256: sha('one\n'), size: 4 });
    expect(f.current).toEqual(f.expected);
  });

  it('remove: a file the agent created', () => {
    const ws = unitWorkspace();
    const set = must(ws.tool(['new.txt'], () => ws.write('new.txt', 'fresh\n')));
    const f = makePlan(ws, [set], 'undo').files.find((x) => x.path === 'new.txt')!;
    expect(f).toMatchObject({ action: 'remove', conflict: null, gap: null, target: { exists: false } });
  });

  it('bring-back: a file the agent deleted', () => {
    const ws = unitWorkspace();
    ws.write('gone.txt', 'kept\n');
    const set = must(ws.tool(['gone.txt'], () => fs.rmSync(ws.abs('gone.txt'))));
    const f = makePlan(ws, [set], 'undo').files[0]!;
    expect(f).toMatchObject({ path: 'gone.txt', action: 'bring-back', conflict: null, current: { exists: false }, target: { sha256: sha('kept\n') } });
  });

  it('restore-mode: only the permission bits changed', () => {
    const ws = unitWorkspace();
    ws.write('run.sh', '#!/bin/sh\n', 0o644);
    const set = must(ws.tool(['run.sh'], () => fs.chmodSync(ws.abs('run.sh'), 0o755)));
    const f = makePlan(ws, [set], 'undo').files[0]!;
    expect(f).toMatchObject({ action: 'restore-mode', conflict: null, expected: { mode: 0o755 }, target: { mode: 0o644 } });
  });

  it('restore-link: a symbolic link pointed elsewhere comes back as it was', () => {
    const ws = unitWorkspace();
    fs.symlinkSync('a', ws.abs('l'));
    const set = must(
      ws.tool(['l'], () => {
        fs.rmSync(ws.abs('l'));
        fs.symlinkSync('b', ws.abs('l'));
      }),
    );
    const f = makePlan(ws, [set], 'undo').files[0]!;
    expect(f).toMatchObject({ path: 'l', action: 'restore-link', conflict: null, expected: { type: 'symlink', target: 'b' }, target: { type: 'symlink', target: 'a' } });
  });

  it('none: the path is already as the undo leaves it (put back by hand), and that is no conflict', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', 'one\n');
    const set = must(ws.tool(['a.txt'], () => ws.write('a.txt', 'two\n')));
    ws.write('a.txt', 'one\n');
    const f = makePlan(ws, [set], 'undo').files[0]!;
    expect(f).toMatchObject({ action: 'none', conflict: null, gap: null });
  });
});

describe('makePlan: conflicts', () => {
  it('changed-since "changed since": the same line edited again after the agent', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', 'head\nline\ntail\n');
    const set = must(ws.tool(['a.txt'], () => ws.write('a.txt', 'head\nagent line\ntail\n')));
    ws.write('a.txt', 'head\nuser line\ntail\n');
    const f = makePlan(ws, [set], 'undo').files[0]!;
    expect(f.action).toBe('put-back');
    expect(f.conflict).toEqual({ reason: 'changed-since', detail: 'changed since outside takeback: line 2 changed by the agent and line 2 since' });
    expect(f.merged).toBeNull();
    expect(f.current).toMatchObject({ sha256: sha('head\nuser line\ntail\n') });
  });

  it('changed-since "changed since": binary bytes changed after the agent', () => {
    const ws = unitWorkspace();
    ws.write('b.bin', Buffer.from([0, 1, 2, 0xff]));
    const set = must(ws.tool(['b.bin'], () => ws.write('b.bin', Buffer.from([0, 9, 9, 0xff]))));
    ws.write('b.bin', Buffer.from([0, 7, 7, 0xff]));
    expect(makePlan(ws, [set], 'undo').files[0]!.conflict).toEqual({ reason: 'changed-since', detail: 'changed since outside takeback' });
  });

  it('changed-since "deleted since": the file the agent edited is gone', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', 'one\n');
    const set = must(ws.tool(['a.txt'], () => ws.write('a.txt', 'two\n')));
    fs.rmSync(ws.abs('a.txt'));
    const f = makePlan(ws, [set], 'undo').files[0]!;
    expect(f.action).toBe('bring-back');
    expect(f.conflict).toEqual({ reason: 'changed-since', detail: 'deleted since outside takeback' });
  });

  it('changed-since "created since": the file the agent deleted is there again', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', 'one\n');
    const set = must(ws.tool(['a.txt'], () => fs.rmSync(ws.abs('a.txt'))));
    ws.write('a.txt', 'someone else\n');
    const f = makePlan(ws, [set], 'undo').files[0]!;
    expect(f.action).toBe('put-back');
    expect(f.conflict).toEqual({ reason: 'changed-since', detail: 'created since outside takeback' });
  });

  it('a mode changed since is a conflict too', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', 'one\n', 0o644);
    const set = must(ws.tool(['a.txt'], () => ws.write('a.txt', 'two\n')));
    fs.chmodSync(ws.abs('a.txt'), 0o600);
    expect(makePlan(ws, [set], 'undo').files[0]!.conflict?.reason).toBe('changed-since');
  });

  it('interleaved: a change in place between the selected ones on the same path, named with its set', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', '1\n');
    const s1 = must(ws.tool(['a.txt'], () => ws.write('a.txt', '2\n')));
    const s2 = must(ws.tool(['a.txt'], () => ws.write('a.txt', '3\n')));
    const s3 = must(ws.tool(['a.txt'], () => ws.write('a.txt', '4\n')));
    const f = makePlan(ws, [s1, s3], 'undo').files[0]!;
    expect(f.sets).toEqual([s3.id, s1.id]);
    expect(f.conflict).toEqual({ reason: 'interleaved', detail: `also changed by change ${s2.id}, not selected: line 1 changed by the agent and line 1 since`, sets: [s2.id] });
    // With the one between selected too, the walk is whole: no conflict.
    expect(makePlan(ws, [s1, s2, s3], 'undo').files[0]!.conflict).toBeNull();
  });

  it('interleaved: a change between on the same path that is undone, or one on another path, is not in the way', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', '1\n');
    const s1 = must(ws.tool(['a.txt'], () => ws.write('a.txt', '2\n')));
    const s2 = must(ws.tool(['a.txt'], () => ws.write('a.txt', '3\n')));
    expect(ws.step({ ids: [s2.id] }, 'undo').sets).toEqual([s2.id]);
    expect(ws.read('a.txt').toString()).toBe('2\n');
    must(ws.tool(['b.txt'], () => ws.write('b.txt', 'b\n')));
    const s4 = must(ws.tool(['a.txt'], () => ws.write('a.txt', '4\n')));
    const f = makePlan(ws, [s1, s4], 'undo').files.find((x) => x.path === 'a.txt')!;
    expect(f).toMatchObject({ action: 'put-back', conflict: null, sets: [s4.id, s1.id] });
    expect(f.target).toMatchObject({ sha256: sha('1\n') });
  });
});

describe('makePlan: capture gaps are named and never written', () => {
  it('too-large: bytes over the size limit were not kept', () => {
    const ws = unitWorkspace({ TAKEBACK_MAX_FILE_BYTES: '64' });
    ws.write('big.txt', 'small\n');
    const set = must(ws.tool(['big.txt'], () => ws.write('big.txt', 'x'.repeat(200))));
    const f = makePlan(ws, [set], 'undo').files[0]!;
    expect(f.action).toBe('none');
    expect(f.conflict).toBeNull();
    expect(f.gap).toMatchObject({ path: 'big.txt', reason: 'too-large' });
    expect(f.gap!.detail).toMatch(/size limit/);
  });

  it('secret: a private key is never kept', () => {
    const ws = unitWorkspace();
    ws.write('keys/id_rsa', 'old key\n');
    const set = must(ws.tool(['keys/id_rsa'], () => ws.write('keys/id_rsa', 'new key\n')));
    const f = makePlan(ws, [set], 'undo').files[0]!;
    expect(f).toMatchObject({ path: 'keys/id_rsa', action: 'none', conflict: null, gap: { reason: 'secret' } });
  });

  it('outside-workspace: a path outside the root is named, not written', () => {
    const ws = unitWorkspace();
    const out = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-unit-out-')));
    try {
      fs.writeFileSync(path.join(out, 'o.txt'), 'before\n');
      const set = must(ws.tool([path.join(out, 'o.txt')], () => fs.writeFileSync(path.join(out, 'o.txt'), 'after\n')));
      const f = makePlan(ws, [set], 'undo').files[0]!;
      expect(f).toMatchObject({ path: path.join(out, 'o.txt'), action: 'none', conflict: null, gap: { reason: 'outside-workspace' }, current: { exists: false } });
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it('symlink-target: written through a link, the content behind it was not kept', () => {
    const ws = unitWorkspace();
    ws.write('t.txt', 'behind\n');
    fs.symlinkSync('t.txt', ws.abs('l'));
    const set = must(ws.tool(['l'], () => fs.writeFileSync(ws.abs('l'), 'through the link\n')));
    const f = makePlan(ws, [set], 'undo').files.find((x) => x.path === 'l')!;
    expect(f).toMatchObject({ action: 'none', conflict: null, gap: { reason: 'symlink-target' } });
  });
});

describe('makePlan: the walk', () => {
  it('undo goes newest first: expected from the newest set, target from the oldest', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', '1\n');
    const s1 = must(ws.tool(['a.txt'], () => ws.write('a.txt', '2\n')));
    const s2 = must(ws.tool(['a.txt'], () => ws.write('a.txt', '3\n')));
    // Given oldest first or newest first, the walk is the same.
    for (const given of [
      [s1, s2],
      [s2, s1],
    ]) {
      const plan = makePlan(ws, given, 'undo');
      expect(plan.sets.map((s) => s.id)).toEqual([s2.id, s1.id]);
      const f = plan.files[0]!;
      expect(f.sets).toEqual([s2.id, s1.id]);
      expect(f.expected).toMatchObject({ sha256: sha('3\n') });
      expect(f.target).toMatchObject({ sha256: sha('1\n') });
      expect(f.conflict).toBeNull();
    }
  });

  it('redo goes oldest first: expected from the oldest set (what the undo left), target from the newest', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', '1\n');
    const s1 = must(ws.tool(['a.txt'], () => ws.write('a.txt', '2\n')));
    const s2 = must(ws.tool(['a.txt'], () => ws.write('a.txt', '3\n')));
    expect(ws.step({ ids: [s1.id, s2.id] }, 'undo').sets.sort()).toEqual([s1.id, s2.id].sort());
    expect(ws.read('a.txt').toString()).toBe('1\n');
    const undone = [ws.journal.sets.get(s2.id), ws.journal.sets.get(s1.id)];
    const plan = makePlan(ws, undone, 'redo');
    expect(plan.direction).toBe('redo');
    expect(plan.sets.map((s) => s.id)).toEqual([s1.id, s2.id]);
    const f = plan.files[0]!;
    expect(f).toMatchObject({ action: 'put-back', conflict: null, sets: [s1.id, s2.id] });
    expect(f.expected).toMatchObject({ sha256: sha('1\n') });
    expect(f.target).toMatchObject({ sha256: sha('3\n') });
  });

  it('files come out sorted by path, each once', () => {
    const ws = unitWorkspace();
    const s1 = must(ws.tool(['z.txt', 'a.txt'], () => (ws.write('z.txt', 'z\n'), ws.write('a.txt', 'a\n'))));
    const s2 = must(ws.tool(['m.txt', 'a.txt'], () => (ws.write('m.txt', 'm\n'), ws.write('a.txt', 'aa\n'))));
    expect(makePlan(ws, [s1, s2], 'undo').files.map((f) => f.path)).toEqual(['a.txt', 'm.txt', 'z.txt']);
  });
});

describe('makePlan: paths and skipped sets', () => {
  it('paths narrow the plan to those files; a set that touches none of them is skipped', () => {
    const ws = unitWorkspace();
    const both = must(ws.tool(['a.txt', 'b.txt'], () => (ws.write('a.txt', 'a\n'), ws.write('b.txt', 'b\n'))));
    const other = must(ws.tool(['c.txt'], () => ws.write('c.txt', 'c\n')));
    const plan = makePlan(ws, [both, other], 'undo', undefined, ['b.txt']);
    expect(plan.files.map((f) => f.path)).toEqual(['b.txt']);
    expect(plan.sets.map((s) => s.id)).toEqual([both.id]);
    expect(plan.skipped).toEqual([{ id: other.id, reason: 'does not touch that file' }]);
    // An empty list narrows nothing.
    expect(makePlan(ws, [both, other], 'undo', undefined, []).files.map((f) => f.path)).toEqual(['a.txt', 'b.txt', 'c.txt']);
  });

  it('an expired set is skipped as expired', () => {
    const ws = unitWorkspace();
    const set = must(ws.tool(['a.txt'], () => ws.write('a.txt', 'a\n')));
    ws.expire(set.id);
    const expired = ws.journal.sets.list().find((s) => s.id === set.id)!;
    expect(expired.state).toBe('expired');
    const plan = makePlan(ws, [expired], 'undo');
    expect(plan.skipped).toEqual([{ id: set.id, reason: 'expired' }]);
    expect(plan.sets).toEqual([]);
    expect(plan.files).toEqual([]);
  });

  it('a set undone already is skipped for undo, and an applied one for redo', () => {
    const ws = unitWorkspace();
    const done = must(ws.tool(['a.txt'], () => ws.write('a.txt', 'a\n')));
    const live = must(ws.tool(['b.txt'], () => ws.write('b.txt', 'b\n')));
    expect(ws.step({ ids: [done.id] }, 'undo').sets).toEqual([done.id]);
    const sets = [ws.journal.sets.get(done.id), ws.journal.sets.get(live.id)];
    const undo = makePlan(ws, sets, 'undo');
    expect(undo.skipped).toEqual([{ id: done.id, reason: 'already undone' }]);
    expect(undo.sets.map((s) => s.id)).toEqual([live.id]);
    const redo = makePlan(ws, sets, 'redo');
    expect(redo.skipped).toEqual([{ id: live.id, reason: 'not undone' }]);
    expect(redo.files.map((f) => [f.path, f.action])).toEqual([['a.txt', 'bring-back']]);
  });
});

describe('makePlan: the reader seam', () => {
  it('reads the current state through the reader given (an editor\'s unsaved text), with the path and its absolute form', () => {
    const ws = unitWorkspace();
    ws.write('a.txt', 'one\n');
    const set = must(ws.tool(['a.txt'], () => ws.write('a.txt', 'two\n')));
    const asked: [string, string][] = [];
    const editorText = (text: string): CurrentReader => (p, abs) => {
      asked.push([p, abs]);
      const st: FileState = { exists: true, type: 'file', sha256: sha(text), size: Buffer.byteLength(text), mode: fs.statSync(abs).mode & 0o7777 };
      return st;
    };
    // The editor holds what the undo leaves: nothing to do, though the disk says otherwise.
    expect(makePlan(ws, [set], 'undo', editorText('one\n')).files[0]!).toMatchObject({ action: 'none', conflict: null });
    expect(asked).toEqual([['a.txt', ws.abs('a.txt')]]);
    // The editor holds other text on that line: a conflict, though the disk is as the agent left it.
    const f = makePlan(ws, [set], 'undo', editorText('three\n')).files[0]!;
    expect(f.conflict).toEqual({ reason: 'changed-since', detail: 'changed since outside takeback' });
    expect(f.current).toMatchObject({ sha256: sha('three\n') });
  });
});
