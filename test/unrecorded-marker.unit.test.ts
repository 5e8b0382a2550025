// The capture daemon's marker of an event answered before its record (daemon/unrecorded.ts,
// `$TAKEBACK_HOME/run/unrecorded-<pid>.json`): kept open between events and emptied once a record is
// done, so that each answer costs one write, not a file made and removed. An empty marker stands
// for nothing (hasUnrecorded, adoptUnrecorded); a marker written again holds exactly the new event,
// nothing of a longer one before it; one removed under the daemon (a home wiped) is made again; and
// as the daemon leaves, an empty marker goes, one that still names an event stays. A marker of
// this process's pid left by another process (a pid used again) is queued, not emptied unread.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adoptUnrecorded, closeUnrecorded, markUnrecorded, unmarkUnrecorded } from '../server/daemon/unrecorded.js';
import { hasUnrecorded } from '../server/daemon/unrecorded-marker.js';
import type { QueuedOp } from '../server/core/capture/queued.js';
import { journalDirOf } from '../server/core/journal/journal.js';
import { hasQueued } from '../server/core/journal/spill.js';
import { openWorkspace, workspaceRootOf } from '../server/core/open-workspace.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) {
    closeUnrecorded(h);
    fs.rmSync(h, { recursive: true, force: true });
  }
});

/** A home with its run folder (0700), as the daemon makes it. */
function home(): string {
  const h = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-marker-'));
  homes.push(h);
  fs.mkdirSync(path.join(h, 'run'), { mode: 0o700 });
  return h;
}

const markerOf = (h: string) => path.join(h, 'run', `unrecorded-${process.pid}.json`);
const end = (id: string): QueuedOp => ({ op: 'end', id, tool: 'Bash', found: null });

describe("the daemon's marker of an event answered before its record", () => {
  it('written before the answer, emptied after the record, written again with the next event alone', () => {
    const h = home();
    const file = markerOf(h);
    expect(hasUnrecorded(h)).toBe(false);
    // A long first event, then a short one: the second must not keep the first's tail.
    expect(markUnrecorded(h, '/a/workspace/with/a/long/name', [end('t1'), end('t2'), end('t3')])).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).ops).toHaveLength(3);
    expect(hasUnrecorded(h)).toBe(true);
    const ino = fs.statSync(file).ino;
    unmarkUnrecorded(h);
    expect(fs.statSync(file).size).toBe(0);
    expect(hasUnrecorded(h)).toBe(false);
    expect(markUnrecorded(h, '/w', [end('t4')])).toBe(true);
    const m = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(m).toMatchObject({ pid: process.pid, cwd: '/w', ops: [end('t4')] });
    // The same file throughout: kept open, never made again.
    expect(fs.statSync(file).ino).toBe(ino);
  });

  it('removed under the daemon (a home wiped): made again at the next answer', () => {
    const h = home();
    const file = markerOf(h);
    expect(markUnrecorded(h, '/w', [end('t1')])).toBe(true);
    unmarkUnrecorded(h);
    fs.rmSync(file);
    expect(markUnrecorded(h, '/w', [end('t2')])).toBe(true);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).ops).toEqual([end('t2')]);
    expect(hasUnrecorded(h)).toBe(true);
    // Its run folder gone as well: not kept, the event is answered once recorded instead.
    unmarkUnrecorded(h);
    fs.rmSync(path.join(h, 'run'), { recursive: true });
    expect(markUnrecorded(h, '/w', [end('t3')])).toBe(false);
  });

  it('as the daemon leaves: an empty marker goes, one that still names an event stays', () => {
    const h = home();
    const file = markerOf(h);
    markUnrecorded(h, '/w', [end('t1')]);
    unmarkUnrecorded(h);
    closeUnrecorded(h);
    expect(fs.existsSync(file)).toBe(false);
    markUnrecorded(h, '/w', [end('t2')]);
    closeUnrecorded(h);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).ops).toEqual([end('t2')]);
  });

  it("an empty marker of a daemon that is gone is taken away by the next process, and nothing is queued for it", () => {
    const h = home();
    // A pid no process has (above the kernel's limit).
    const gone = path.join(h, 'run', 'unrecorded-4194305.json');
    fs.writeFileSync(gone, '', { mode: 0o600 });
    expect(hasUnrecorded(h)).toBe(false);
    const said: string[] = [];
    expect(adoptUnrecorded(h, (m) => said.push(m))).toBe(0);
    expect(fs.existsSync(gone)).toBe(false);
    expect(said).toEqual([]);
  });

  it("one of this process's pid left by a process that is gone (a pid used again): queued before this process first writes its own, not emptied unread", () => {
    const h = home();
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-marker-ws-'));
    homes.push(ws);
    // The workspace has a journal, as one whose event a daemon answered has.
    openWorkspace({ workspace: ws, env: { ...process.env, TAKEBACK_HOME: h } }).journal.close();
    const file = markerOf(h);
    // The same pid, another start: written by a daemon before this process had its pid.
    fs.writeFileSync(file, JSON.stringify({ pid: process.pid, start: 'another start', at: Date.now() - 60_000, cwd: ws, ops: [end('lost')] }), { mode: 0o600 });
    expect(hasUnrecorded(h)).toBe(true);
    const said: string[] = [];
    expect(markUnrecorded(h, ws, [end('mine')], (m) => said.push(m))).toBe(true);
    expect(said).toEqual([expect.stringContaining('answered an event and was gone before recording it: queued end')]);
    expect(hasQueued(journalDirOf(h, workspaceRootOf(h, { cwd: ws })))).toBe(true);
    // The marker now holds this process's event alone.
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).ops).toEqual([end('mine')]);
    // And this process's own marker, written or empty, is never taken for one left behind.
    expect(adoptUnrecorded(h)).toBe(0);
    unmarkUnrecorded(h);
    expect(adoptUnrecorded(h)).toBe(0);
    expect(fs.existsSync(file)).toBe(true);
  });
});
