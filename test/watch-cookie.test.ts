// A workspace outside git is watched too (core/scan/watcher.ts): its sync cookie goes at the
// workspace root, under a name every scan skips (scan/filter.ts, WATCH_COOKIE_PREFIX), and is
// removed once heard. A real inotify watcher on a real folder: a scan that walks while a sync is
// in flight (the cookie on the disk) records nothing of it, the watcher never counts it as heard,
// and a person's save of it is not taken for a change.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openWorkspace } from '../server/core/open-workspace.js';
import { ScanFilter, WATCH_COOKIE_PREFIX } from '../server/core/scan/filter.js';
import { WorkspaceWatcher } from '../server/core/scan/watcher.js';
import { until } from './support/procs.js';
import { sandbox } from './support/takeback.js';

const cookies = (dir: string) => fs.readdirSync(dir).filter((n) => n.startsWith(WATCH_COOKIE_PREFIX));

describe('the watcher of a workspace outside git', () => {
  it('is started, syncs with a cookie at the root that a walk mid-sync never records, and removes it', async () => {
    const sb = sandbox();
    sb.write('a/x.txt', 'x\n');
    sb.write('top.txt', 'top\n');
    expect(fs.existsSync(`${sb.ws}/.git`)).toBe(false);
    const w = WorkspaceWatcher.start(sb.ws, { env: {} });
    expect(w).not.toBeNull();
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      await until('the watcher to be subscribed', () => w!.trusted, 30_000);
      // A racy line after the subscription and before every change below: all they heard is kept.
      const line = Date.now();
      expect(opened.journal.write(() => scanAndCommit(opened)).status).toBe('baseline');
      sb.write('a/x.txt', 'x changed\n');
      // The cookie is written as the sync starts: a walk now lists the root while it is there.
      const synced = w!.sync();
      expect(cookies(sb.ws)).toHaveLength(1);
      const mid = opened.journal.write(() => scanAndCommit(opened));
      expect(mid.changes.map((c) => c.path)).toEqual(['a/x.txt']);
      expect(await synced).toBe(true);
      expect(cookies(sb.ws)).toEqual([]);
      // Heard: the change, never the cookie (nor its removal).
      const h = w!.hints(line)!;
      expect([...h.paths].sort()).toEqual(['a/x.txt']);
      // The snapshot holds no cookie: the next walk, with the cookie gone, finds nothing gone.
      expect(opened.journal.write(() => scanAndCommit(opened)).changes).toEqual([]);
      // Several syncs in a row, each heard and each cookie removed.
      for (let i = 0; i < 3; i++) expect(await w!.sync()).toBe(true);
      expect(cookies(sb.ws)).toEqual([]);
      expect([...w!.hints(line)!.paths]).toEqual(['a/x.txt']);
    } finally {
      w!.close();
      opened.journal.close();
    }
  });

  it('never removes a file already at its cookie’s name, and writes no cookie once the root is a link to elsewhere', async () => {
    const sb = sandbox();
    sb.write('f.txt', 'f\n');
    // The first cookie's name, taken already by a person's file and by a link (a fresh watcher counts from 1).
    const mine = `${WATCH_COOKIE_PREFIX}${process.pid}-1`;
    sb.write(mine, 'mine\n');
    const w = WorkspaceWatcher.start(sb.ws, { env: {} });
    try {
      await until('the watcher to be subscribed', () => w!.trusted, 30_000);
      expect(await w!.sync()).toBe(false);
      expect(sb.read(mine).toString()).toBe('mine\n');
      fs.symlinkSync('f.txt', sb.abs(`${WATCH_COOKIE_PREFIX}${process.pid}-2`));
      expect(await w!.sync()).toBe(false);
      expect(fs.readlinkSync(sb.abs(`${WATCH_COOKIE_PREFIX}${process.pid}-2`))).toBe('f.txt');
      expect(sb.read('f.txt').toString()).toBe('f\n');
      expect(await w!.sync()).toBe(true);
      // The root's path now a link to a folder outside: no cookie is made there, none heard.
      const outside = `${sb.base}/outside`;
      fs.mkdirSync(outside);
      const made: string[] = [];
      const probe = fs.watch(outside, (_t, name) => made.push(String(name)));
      try {
        fs.renameSync(sb.ws, `${sb.base}/ws-moved`);
        fs.symlinkSync(outside, sb.ws);
        expect(await w!.sync()).toBe(false);
        // A file made after: fs.watch has reported everything before it once it reports this one.
        fs.writeFileSync(`${outside}/probe`, '');
        await until('the probe to be heard', () => made.includes('probe'), 30_000);
        expect(made.filter((n) => n.startsWith(WATCH_COOKIE_PREFIX))).toEqual([]);
      } finally {
        probe.close();
      }
    } finally {
      w!.close();
    }
  });

  it('a cookie left by a watcher killed mid-sync is removed when the next starts; a live process’s, and a file of that name with bytes, are left', () => {
    const sb = sandbox();
    // A process that has exited: its pid is gone.
    const dead = spawnSync('true').pid!;
    const left = `${WATCH_COOKIE_PREFIX}${dead}-3`;
    const live = `${WATCH_COOKIE_PREFIX}${process.pid}-99`;
    const mine = `${WATCH_COOKIE_PREFIX}${dead}-4`;
    sb.write(left, '');
    sb.write(live, '');
    sb.write(mine, 'mine\n');
    sb.write(`sub/${left}`, '');
    // Watchman's own cookie, of a server gone: Watchman's to remove, not this watcher's (its host
    // name as long as takeback's prefix, so that read as one of takeback's it names the dead pid).
    const watchmans = `.watchman-cookie-hosta-${dead}-0`;
    expect(watchmans.slice(WATCH_COOKIE_PREFIX.length).startsWith(`${dead}-`)).toBe(true);
    sb.write(watchmans, '');
    const w = WorkspaceWatcher.start(sb.ws, { env: {} });
    try {
      expect(cookies(sb.ws).sort()).toEqual([live, mine].sort());
      expect(sb.exists(watchmans)).toBe(true);
      expect(sb.read(mine).toString()).toBe('mine\n');
      expect(sb.exists(`sub/${left}`)).toBe(true);
    } finally {
      w!.close();
    }
  });

  it('a cookie name is skipped at the root only, by every caller of the filter', () => {
    const f = new ScanFilter('/ws', ['.git']);
    expect(f.skips(`${WATCH_COOKIE_PREFIX}123-1`, false)).toBe(true);
    expect(f.isExcluded(`${WATCH_COOKIE_PREFIX}123-1`, `${WATCH_COOKIE_PREFIX}123-1`)).toBe(true);
    // Deeper down it is a file like any other (no watcher makes one there).
    expect(f.skips(`sub/${WATCH_COOKIE_PREFIX}123-1`, false)).toBe(false);
    expect(f.skips('.takeback-watch-cooki', false)).toBe(false);
    // Watchman's, at the root of a workspace it watches without a `.git` folder (scan/watchman.ts).
    expect(f.skips('.watchman-cookie-vm-1234-0', false)).toBe(true);
    expect(f.skips('.watchman-cookie-host.example-org-1234-17', false)).toBe(true);
    expect(f.skips('sub/.watchman-cookie-vm-1234-0', false)).toBe(false);
    expect(f.skips('.watchman-cookie-1234-0', false)).toBe(false);
    expect(f.skips('.watchman-cookie-vm-1234-x', false)).toBe(false);
  });

  it('an empty file named as Watchman’s cookie is never recorded; one with bytes is', () => {
    const sb = sandbox();
    const cookie = '.watchman-cookie-vm-1234-0';
    sb.write('f.txt', 'f\n');
    sb.write(cookie, '');
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      expect(opened.journal.write(() => scanAndCommit(opened)).status).toBe('baseline');
      sb.write('f.txt', 'g\n');
      expect(opened.journal.write(() => scanAndCommit(opened)).changes.map((c) => c.path)).toEqual(['f.txt']);
      sb.write(cookie, 'mine\n');
      expect(opened.journal.write(() => scanAndCommit(opened)).changes.map((c) => [c.path, c.before === undefined, c.after?.size])).toEqual([[cookie, true, 5]]);
    } finally {
      opened.journal.close();
    }
  });

  it('a cookie left behind by a killed process is never recorded, nor taken for a removal when it goes', () => {
    const sb = sandbox();
    sb.write('f.txt', 'f\n');
    sb.write(`${WATCH_COOKIE_PREFIX}99999-1`, '');
    const opened = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      expect(opened.journal.write(() => scanAndCommit(opened)).status).toBe('baseline');
      fs.rmSync(`${sb.ws}/${WATCH_COOKIE_PREFIX}99999-1`);
      sb.write('f.txt', 'g\n');
      expect(opened.journal.write(() => scanAndCommit(opened)).changes.map((c) => c.path)).toEqual(['f.txt']);
    } finally {
      opened.journal.close();
    }
  });
});
