// The hook log (daemon/log.ts, `$TAKEBACK_HOME/logs/hook.log`): made with its folder when missing
// (0700, the log 0600), one line a call appended, rotated to `hook.log.1` once past 1 MiB, a
// failure to log never thrown at the agent's hook, and lines held back while the capture daemon
// has an event in hand written in order, with their own times, once it is done with.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flushHookLog, holdHookLog, logHook } from '../server/daemon/log.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

function home(): string {
  const h = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-log-'));
  homes.push(h);
  return h;
}

describe('the hook log', () => {
  it('is made with its folder, private, and takes one line a call', () => {
    const h = home();
    logHook(h, 'first');
    logHook(h, 'second');
    const log = path.join(h, 'logs', 'hook.log');
    expect(fs.statSync(path.join(h, 'logs')).mode & 0o777).toBe(0o700);
    expect(fs.statSync(log).mode & 0o777).toBe(0o600);
    const lines = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[^ ]+Z \\[${process.pid}\\] first$`));
    expect(lines[1]).toMatch(/ second$/);
  });

  it('is rotated to hook.log.1 once past 1 MiB: the new line starts a new log', () => {
    const h = home();
    logHook(h, 'start');
    const log = path.join(h, 'logs', 'hook.log');
    fs.appendFileSync(log, 'x'.repeat(1024 * 1024));
    logHook(h, 'after');
    expect(fs.readFileSync(log, 'utf8')).toMatch(/^\S+ \[\d+\] after\n$/);
    const old = fs.readFileSync(`${log}.1`, 'utf8');
    expect(old.startsWith(`${old.split('\n')[0]}\n`)).toBe(true);
    expect(old).toMatch(/ start\n/);
    expect(old.length).toBeGreaterThan(1024 * 1024);
  });

  it('never throws where nothing can be logged, and with existingOnly makes nothing', () => {
    const h = home();
    // The home is a file: no folder can be made in it.
    const notDir = path.join(h, 'file');
    fs.writeFileSync(notDir, 'x');
    expect(() => logHook(notDir, 'lost')).not.toThrow();
    logHook(path.join(h, 'gone'), 'leaving', { existingOnly: true });
    expect(fs.existsSync(path.join(h, 'gone'))).toBe(false);
  });

  it('holds lines back until flushed, then writes them in order with the times they were said at', async () => {
    const [a, b] = [home(), home()];
    const log = (h: string) => path.join(h, 'logs', 'hook.log');
    logHook(a, 'before');
    holdHookLog();
    try {
      logHook(a, 'held one');
      logHook(b, 'held in another home');
      const said = Date.now();
      await new Promise((r) => setTimeout(r, 30));
      logHook(a, 'held two');
      // Nothing written while held: the first home's log has its first line alone, the second's none.
      expect(fs.readFileSync(log(a), 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
      expect(fs.existsSync(log(b))).toBe(false);
      // A line said as a process leaves its home goes out at once, never held.
      logHook(a, 'leaving', { existingOnly: true });
      expect(fs.readFileSync(log(a), 'utf8')).toMatch(/ leaving\n$/);
      flushHookLog();
      const lines = fs.readFileSync(log(a), 'utf8').split('\n').filter(Boolean);
      expect(lines.map((l) => l.replace(/^\S+ \[\d+\] /, ''))).toEqual(['before', 'leaving', 'held one', 'held two']);
      // The first held line keeps its own time, from before the wait.
      expect(Date.parse(lines[2]!.split(' ')[0]!)).toBeLessThanOrEqual(said);
      expect(fs.readFileSync(log(b), 'utf8')).toMatch(/^\S+ \[\d+\] held in another home\n$/);
      // Flushed, it writes at once again.
      logHook(a, 'after');
      expect(fs.readFileSync(log(a), 'utf8')).toMatch(/ after\n$/);
    } finally {
      flushHookLog();
    }
  });
});
