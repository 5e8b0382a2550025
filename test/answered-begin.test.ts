// A command's begin answered at the watcher's sync (the capture daemon, when nothing moved since
// the snapshot): its record takes that snapshot as what the command found and scans nothing
// (command.ts beginCommand); when another process wrote the journal first, what it found is not
// known and its changes are named as gaps. And the look that lets it (scan.ts snapshotStands).
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { useAnsweredBegins } from '../server/core/capture/command.js';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { loadConfig } from '../server/core/config.js';
import { openWorkspace, type Workspace } from '../server/core/open-workspace.js';
import { snapshotStands } from '../server/core/scan/scan.js';
import { captureBegin, captureEnd } from '../server/service/capture.js';
import { sandbox, type Sandbox } from './support/takeback.js';

afterEach(() => useAnsweredBegins(null));

/** A workspace with its first snapshot taken, and what a change set says of each file. */
function opened(sb: Sandbox): Workspace {
  const ws = openWorkspace({ workspace: sb.ws, env: sb.env });
  expect(ws.journal.write(() => scanAndCommit(ws)).status).toBe('baseline');
  return ws;
}

function filesOf(r: ReturnType<typeof captureEnd>): Record<string, string> {
  return Object.fromEntries((r.set?.files ?? []).map((f) => [f.path, `${f.status}${f.gap ? ` (${f.gap})` : ''}`]));
}

describe("a command's begin answered on the snapshot as it stands", () => {
  it('takes that snapshot as what the command found, without a scan: a change made before it (unheard here) is the command\'s', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    const ws = opened(sb);
    try {
      const gen = ws.journal.snapshot.generation();
      const asked: string[] = [];
      useAnsweredBegins((root, id) => {
        asked.push(`${root === ws.root ? 'root' : root} ${id}`);
        return id === 'answered' ? gen : null;
      });
      // Made before the begin: a scan would take it for what the command found. Answered on the
      // snapshot, the begin does not look, so the command's end names it (the watcher that said
      // nothing moved would have heard it; this test has none).
      sb.write('a.txt', 'before the begin\n');
      captureBegin(ws, { id: 'answered', tool: 'Bash', command: 'echo' });
      expect(ws.journal.snapshot.generation()).toBe(gen);
      sb.write('b.txt', 'by the command\n');
      expect(filesOf(captureEnd(ws, { id: 'answered' }))).toEqual({ 'a.txt': 'modified', 'b.txt': 'created' });
      // Another begin, not answered so: scanned as always (what moved before it is not its own).
      sb.write('a.txt', 'the person again\n');
      captureBegin(ws, { id: 'scanned', tool: 'Bash', command: 'echo' });
      sb.write('c.txt', 'by the second command\n');
      expect(filesOf(captureEnd(ws, { id: 'scanned' }))).toEqual({ 'c.txt': 'created' });
      expect(asked).toEqual(['root answered', 'root scanned']);
      expect(ws.journal.unkept.summary()).toBeNull();
    } finally {
      ws.journal.close();
    }
  });

  it('another write of the journal before its record: what the command found is not known, its changes are named as not-kept gaps', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    const ws = opened(sb);
    try {
      const gen = ws.journal.snapshot.generation();
      useAnsweredBegins((_root, id) => (id === 'overtaken' ? gen : null));
      // Another process's scan between the answer and the record (here this one's): the snapshot moved.
      sb.write('a.txt', 'seen by another scan\n');
      ws.journal.write(() => scanAndCommit(ws));
      expect(ws.journal.snapshot.generation()).not.toBe(gen);
      captureBegin(ws, { id: 'overtaken', tool: 'Bash', command: 'touch d.txt' });
      sb.write('d.txt', 'by the command\n');
      expect(filesOf(captureEnd(ws, { id: 'overtaken' }))).toEqual({ 'd.txt': 'created (not-kept)' });
      expect(ws.journal.unkept.summary()).toMatchObject({ count: 1, causes: ['begin-overtaken'] });
      expect(ws.journal.unkept.all()[0]).toMatchObject({ capture: 'overtaken', what: 'Bash touch d.txt: what it found before' });
    } finally {
      ws.journal.close();
    }
  });

  it('snapshotStands: only while a scan would look at the rows alone (rules, git index, excludes, limits as the snapshot has them)', () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'a\n');
    sb.write('.gitignore', 'ignored/\n');
    sb.sh('git add -A');
    const ws = opened(sb);
    const stands = (env: NodeJS.ProcessEnv = sb.env) => snapshotStands(ws.root, loadConfig(ws.home, env), ws.journal.snapshot.meta()!, false);
    try {
      expect(stands()).toBe(true);
      // git's index moved: the folders kept for git's files may differ.
      sb.sh('git rm -q --cached a.txt');
      expect(stands()).toBe(false);
      ws.journal.write(() => scanAndCommit(ws));
      expect(stands()).toBe(true);
      // A rule file moved.
      sb.write('.gitignore', 'ignored/\nother/\n');
      expect(stands()).toBe(false);
      ws.journal.write(() => scanAndCommit(ws));
      expect(stands()).toBe(true);
      // .git/info/exclude made where there was none.
      fs.writeFileSync(`${sb.ws}/.git/info/exclude`, 'x/\n');
      expect(stands()).toBe(false);
      ws.journal.write(() => scanAndCommit(ws));
      expect(stands()).toBe(true);
      // Limits the snapshot is over, and other excluded names.
      expect(stands({ ...sb.env, TAKEBACK_MAX_WORKSPACE_BYTES: '1' })).toBe(false);
      fs.writeFileSync(`${sb.home}/config.json`, JSON.stringify({ excludeNames: ['node_modules', 'vendor'] }));
      expect(stands()).toBe(false);
      fs.rmSync(`${sb.home}/config.json`);
      expect(stands()).toBe(true);
    } finally {
      ws.journal.close();
    }
  });
});
