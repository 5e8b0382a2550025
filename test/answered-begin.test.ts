// A command's begin when the process's file watcher heard nothing since the snapshot (the capture
// daemon's, through WorkspaceFeed.quietBy): taken under the journal's lock, without a scan, the
// snapshot as what the command found, and said at once (`read`: the daemon answers the agent
// there); only while nothing else a scan looks at moved (scan.ts snapshotStands).
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { useQuietSnapshots } from '../server/core/capture/command.js';
import { racyLineOf, scanAndCommit } from '../server/core/capture/scan-commit.js';
import { loadConfig } from '../server/core/config.js';
import { openWorkspace, type Workspace } from '../server/core/open-workspace.js';
import { snapshotStands } from '../server/core/scan/scan.js';
import { captureBegin, captureEnd } from '../server/service/capture.js';
import { sandbox, type Sandbox } from './support/takeback.js';

afterEach(() => useQuietSnapshots(null));

/** A workspace with its first snapshot taken. */
function opened(sb: Sandbox): Workspace {
  const ws = openWorkspace({ workspace: sb.ws, env: sb.env });
  expect(ws.journal.write(() => scanAndCommit(ws)).status).toBe('baseline');
  return ws;
}

/** What a change set says of each file: its status, and its gap. */
function filesOf(r: ReturnType<typeof captureEnd>): Record<string, string> {
  return Object.fromEntries((r.set?.files ?? []).map((f) => [f.path, `${f.status}${f.gap ? ` (${f.gap})` : ''}`]));
}

describe("a command's begin when nothing moved since the snapshot", () => {
  it("takes that snapshot as what the command found, without a scan, and says so before its record: a change the watcher did not hear is the command's", () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    const ws = opened(sb);
    try {
      const asked: unknown[] = [];
      let quiet = true;
      useQuietSnapshots((root, gen, racyMs) => {
        asked.push([root, gen, racyMs]);
        return quiet;
      });
      const gen = ws.journal.snapshot.generation();
      const racy = racyLineOf(ws.journal.snapshot.meta());
      // Made before the begin and not heard (this test has no watcher; one that said nothing moved
      // would have heard it): a scan would take it for what the command found; this begin does not look.
      sb.write('a.txt', 'before the begin\n');
      let said = 0;
      let recordedWhenSaid: number | null = null;
      captureBegin(ws, { id: 'quiet', tool: 'Bash', command: 'echo', fixed: () => {
        said++;
        recordedWhenSaid ??= ws.journal.captures.inFlight('command', 0);
      } });
      expect(asked).toEqual([[ws.root, gen, racy]]);
      expect(said).toBeGreaterThan(0);
      expect(recordedWhenSaid).toBe(0);
      expect(ws.journal.snapshot.generation()).toBe(gen);
      sb.write('b.txt', 'by the command\n');
      expect(filesOf(captureEnd(ws, { id: 'quiet' }))).toEqual({ 'a.txt': 'modified', 'b.txt': 'created' });
      // The watcher heard something: scanned as always, what moved before the begin is not the command's.
      quiet = false;
      sb.write('a.txt', 'the person again\n');
      captureBegin(ws, { id: 'scanned', tool: 'Bash', command: 'echo' });
      sb.write('c.txt', 'by the second command\n');
      expect(filesOf(captureEnd(ws, { id: 'scanned' }))).toEqual({ 'c.txt': 'created' });
      expect(asked).toHaveLength(2);
    } finally {
      ws.journal.close();
    }
  });

  it('a rule file moved: the watcher is not asked, the begin scans', () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'a\n');
    sb.write('.gitignore', 'ignored/\n');
    sb.write('ignored/i.txt', 'i\n');
    const ws = opened(sb);
    try {
      let asked = 0;
      useQuietSnapshots(() => {
        asked++;
        return true;
      });
      // The person stops ignoring a folder: what it holds comes into the snapshot before the command, not as its own.
      sb.write('.gitignore', '\n');
      captureBegin(ws, { id: 'rules', tool: 'Bash', command: 'echo' });
      expect(asked).toBe(0);
      sb.write('b.txt', 'by the command\n');
      expect(filesOf(captureEnd(ws, { id: 'rules' }))).toEqual({ 'b.txt': 'created' });
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
