// The capture daemon's socket server (daemon/server.ts) starts an event's `before` (the watcher's
// sync) as it claims the event, so that the sync runs while the client's "go" comes back; the
// event is handled only once both are in. An event whose client leaves after the claim is never
// handled, and the next one is claimed and handled as usual. A client that names when it stops
// waiting for a claim, with more than the margin left, has its event taken at the claim, with no
// "go"; and a client whose wait ran out still reads a claim that took it. The signal `before` is given is
// aborted once another event waits behind it. `beforeAnswer` comes just before each answer sent
// (after the record, or ahead of it) and as each event is dropped. A real Unix socket, a client speaking the
// protocol line by line.
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCaptureServer } from '../server/daemon/server.js';
import { monotonicMs, TAKE_MARGIN_MS } from '../server/daemon/address.js';
import { forwardEvent } from '../server/cli/forward.js';
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

describe('an event taken at the claim', () => {
  /** A server whose events are answered once handled, on a socket under a new folder; closed after `fn`. */
  async function withServer(fn: (sockPath: string, log: string[]) => Promise<void>) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-take-'));
    dirs.push(dir);
    const log: string[] = [];
    const { server } = createCaptureServer({
      prepare: () => null,
      before: async (req) => {
        log.push(`before ${req.text}`);
      },
      handle: (req) => {
        log.push(`handle ${req.text}`);
        return true;
      },
      touch: () => {},
    });
    const sockPath = path.join(dir, 'd.sock');
    await new Promise<void>((resolve) => server.listen(sockPath, resolve));
    try {
      await fn(sockPath, log);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  it('with more than the margin left before its deadline: taken, handled and answered with no "go"', async () => {
    await withServer(async (sockPath, log) => {
      const c = client(sockPath);
      c.send({ ...request(1), deadline: monotonicMs() + 3000 });
      await until('the answer', () => c.lines.includes('{"ok":true}'));
      expect(c.lines).toEqual(['{"claim":true,"taken":true}', '{"ok":true}']);
      expect(log).toEqual(['before {"n":1}', 'handle {"n":1}']);
      c.sock.destroy();
    });
  });

  it('with less than the margin left, or none named: claimed, and handled only at "go"', async () => {
    await withServer(async (sockPath, log) => {
      for (const [n, deadline] of [[1, monotonicMs() + TAKE_MARGIN_MS - 200], [2, undefined]] as const) {
        const c = client(sockPath);
        c.send({ ...request(n), ...(deadline === undefined ? {} : { deadline }) });
        await until('the claim', () => c.lines.includes('{"claim":true}'));
        await new Promise((r) => setTimeout(r, 100));
        expect(log.filter((l) => l.startsWith('handle'))).toHaveLength(n - 1);
        c.send({ go: true });
        await until('the answer', () => c.lines.includes('{"ok":true}'));
        expect(c.lines).toEqual(['{"claim":true}', '{"ok":true}']);
        c.sock.destroy();
      }
      expect(log.filter((l) => l.startsWith('handle'))).toEqual(['handle {"n":1}', 'handle {"n":2}']);
    });
  });

  it('a deadline that is not a number: refused as a bad request', async () => {
    await withServer(async (sockPath, log) => {
      const c = client(sockPath);
      c.send({ ...request(1), deadline: 'soon' });
      await until('the refusal', () => c.lines.length > 0);
      expect(c.lines).toEqual(['{"refuse":true,"why":"bad request"}']);
      expect(log).toEqual([]);
    });
  });

  /**
   * Node's forwarder (a wait of 100 ms for its claim) against a stand-in daemon that writes `claim`
   * and then holds this process (the forwarder's too) for 300 ms, so that the forwarder's timer is
   * due before it reads the claim; the stand-in answers ok after 50 ms, or at a "go". Resolves to
   * the forwarder's result and whether it sent "go".
   */
  async function forwarderReadingLate(claim: string): Promise<{ r: string; go: boolean }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-take-late-'));
    dirs.push(dir);
    const sockPath = path.join(dir, 'd.sock');
    let go = false;
    const server = net.createServer((sock) => {
      sock.setEncoding('utf8');
      sock.on('error', () => {});
      sock.on('data', (d: string) => {
        if (d.includes('"go"')) {
          go = true;
          sock.end('{"ok":true}\n');
        }
        if (!d.includes('"agent"')) return;
        sock.write(`${claim}\n`);
        const until = Date.now() + 300;
        while (Date.now() < until) {
          // busy
        }
        setTimeout(() => sock.end('{"ok":true}\n'), 50);
      });
    });
    await new Promise<void>((resolve) => server.listen(sockPath, resolve));
    try {
      const r = await forwardEvent(sockPath, request(1), { claimMs: 100 });
      await new Promise((res) => setTimeout(res, 100));
      return { r, go };
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  it("Node's forwarder whose wait ran out while the taking claim sat unread: bound by it, done at the answer, not left to handle the event", async () => {
    expect(await forwarderReadingLate('{"claim":true,"taken":true}')).toEqual({ r: 'done', go: false });
  });

  it("Node's forwarder whose wait ran out while a claim that waits for \"go\" sat unread: not bound by it, sends no \"go\", handles the event itself", async () => {
    // A "go" then could come after the daemon dropped the event: answered, it would be left to nobody.
    expect(await forwarderReadingLate('{"claim":true}')).toEqual({ r: 'fallback', go: false });
  });
});
