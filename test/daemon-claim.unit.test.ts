// The capture daemon's socket server (daemon/server.ts) starts an event's `before` (the watcher's
// sync) as it claims the event, so that the sync runs while the client's "go" comes back; the
// event is handled only once both are in. An event whose client leaves after the claim is never
// handled, and the next one is claimed and handled as usual. The signal `before` is given is
// aborted once another event waits behind it. `beforeAnswer` comes just before each answer sent
// (after the record, or ahead of it) and as each event is dropped. A real Unix socket, a client speaking the
// protocol line by line.
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCaptureServer } from '../server/daemon/server.js';
import { until } from './support/procs.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A client connection: its lines as they come, and a way to send one. */
function client(sockPath: string) {
  const sock = net.connect(sockPath);
  const lines: string[] = [];
  let buf = '';
  sock.setEncoding('utf8');
  sock.on('data', (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  return { sock, lines, send: (msg: object) => sock.write(`${JSON.stringify(msg)}\n`) };
}

const request = (n: number) => ({ agent: 'claude-code', text: `{"n":${n}}`, cwd: '/', env: {} });

describe('the watcher sync of a claimed event', () => {
  it('starts at the claim, before "go"; the event is handled once both are in; a client gone after the claim is never handled', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-claim-'));
    dirs.push(dir);
    const log: string[] = [];
    const syncs: (() => void)[] = [];
    const signals: AbortSignal[] = [];
    const { server } = createCaptureServer({
      prepare: () => null,
      before: (req, next) => {
        log.push(`before ${req.text}`);
        signals.push(next);
        return new Promise<void>((resolve) => syncs.push(resolve));
      },
      handle: (req) => {
        log.push(`handle ${req.text}`);
        return true;
      },
      // The third is answered as it is claimed, ahead of its record.
      answerAt: (req) => (req.text === '{"n":3}' ? 'claimed' : 'recorded'),
      answering: () => true,
      beforeAnswer: () => log.push('before answer'),
      touch: () => {},
    });
    const sockPath = path.join(dir, 'd.sock');
    await new Promise<void>((resolve) => server.listen(sockPath, resolve));
    try {
      // The first client leaves once claimed: its sync was started, nothing is handled.
      const gone = client(sockPath);
      gone.send(request(1));
      await until('the first claim', () => gone.lines.includes('{"claim":true}'));
      expect(log).toEqual(['before {"n":1}']);
      gone.sock.destroy();
      // The next is claimed with its own sync started before its "go".
      const next = client(sockPath);
      next.send(request(2));
      await until('the second claim', () => next.lines.includes('{"claim":true}'));
      expect(log).toEqual(['before {"n":1}', 'before answer', 'before {"n":2}']);
      next.send({ go: true });
      // "go" is in, the sync is not: nothing handled yet.
      await new Promise((r) => setTimeout(r, 100));
      expect(log).toEqual(['before {"n":1}', 'before answer', 'before {"n":2}']);
      expect(signals[1]!.aborted).toBe(false);
      // A third event comes to wait: the second's signal says so; the third is not claimed yet.
      const third = client(sockPath);
      third.send(request(3));
      await until('the signal', () => signals[1]!.aborted);
      expect(third.lines).toEqual([]);
      syncs[0]!();
      syncs[1]!();
      await until('the answer', () => next.lines.includes('{"ok":true}'));
      expect(log.slice(0, 5)).toEqual(['before {"n":1}', 'before answer', 'before {"n":2}', 'handle {"n":2}', 'before answer']);
      next.sock.destroy();
      // The third, claimed once the second is done, with nothing behind it.
      await until('the third claim', () => third.lines.includes('{"claim":true}'));
      expect(signals[2]!.aborted).toBe(false);
      third.send({ go: true });
      // Answered at its "go", before its sync is done and it is handled.
      await until('the third answer', () => third.lines.includes('{"ok":true}'));
      expect(log.slice(5)).toEqual(['before {"n":3}', 'before answer']);
      syncs[2]!();
      await until('the third handled', () => log.length === 8);
      expect(log.slice(5)).toEqual(['before {"n":3}', 'before answer', 'handle {"n":3}']);
      third.sock.destroy();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
