import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { HOOK_URL_PATH } from './http-address.js';

/*
 * The capture daemon's HTTP front: Claude Code's `"type": "http"` hooks POST their event here
 * (the same JSON a command hook reads on stdin) and wait for the answer, sent once the event is
 * recorded. Loopback only. A request is taken only when it
 *   - is `POST /takeback/hook/<agent>`,
 *   - names this server in `Host` (`127.0.0.1:<port>` or `localhost:<port>`: a web page's request
 *     through a DNS name that points at 127.0.0.1 names that name),
 *   - says `Content-Type: application/json` (a page cannot send that without asking first, and
 *     nothing here answers the asking),
 *   - carries `Authorization: Bearer <token>` with the token of `$TAKEBACK_HOME/run/http-token`;
 * everything else gets 4xx and changes nothing. The answer to a taken event is `200` with an
 * empty body, whether it was recorded or failed (failures are logged to hook.log, as the
 * in-process hook logs them): the hook must never stand in the agent's way, and an empty body
 * asks nothing of the agent.
 */

/**
 * Past this many bytes a body is refused (413): 256 MB, as the unix socket's requests. A Write's
 * whole content is in its event; one larger than this is left to the turn's end, which records it
 * as changed during the turn.
 */
export const MAX_BODY_BYTES = 256 * 1024 * 1024;

/** What the HTTP front asks of the daemon (lifecycle.ts). */
export interface HttpHookHandlers {
  /** Handles one event of `agent` (`text`: the body) to the end. Must not throw. */
  handle(agent: string, text: string): void;
  /** Called for every request taken, before and after it is handled (the idle clock). */
  touch(): void;
  /** Called for a request refused (HTTP `status`, a short `why`). Must not throw. */
  refused?(status: number, why: string): void;
}

function reply(res: ServerResponse, status: number, why = ''): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
  res.end(why ? `${why}\n` : '');
}

function sameSecret(given: string, want: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Why `req` is refused (an HTTP status and a line), or null when it may be taken. `port`: the
 * port the server listens on; `token`: the bearer token required.
 */
export function refusal(req: IncomingMessage, port: number, token: string): { status: number; why: string } | null {
  if (req.method !== 'POST') return { status: 405, why: 'POST only' };
  const url = req.url ?? '';
  if (!url.startsWith(HOOK_URL_PATH) || !/^[a-z-]{1,32}$/.test(url.slice(HOOK_URL_PATH.length))) return { status: 404, why: 'no such hook' };
  const host = (req.headers.host ?? '').toLowerCase();
  if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return { status: 403, why: 'wrong host' };
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) return { status: 415, why: 'JSON only' };
  const auth = req.headers.authorization ?? '';
  if (!auth.startsWith('Bearer ') || !sameSecret(auth.slice(7).trim(), token)) return { status: 401, why: 'wrong token' };
  return null;
}

/**
 * Makes the HTTP front (not listening yet: `server.listen(port, '127.0.0.1')`). Bodies are read
 * whole, then handed to `h.handle` one at a time (the handler is synchronous, so events from
 * here and from the unix socket never interleave). Never throws from a request.
 */
export function createHttpHookServer(opts: { port: number; token: string; handlers: HttpHookHandlers }): Server {
  const { port, token, handlers: h } = opts;
  /** Answers a request not taken (it does not keep the daemon from leaving when idle). */
  const refuse = (res: ServerResponse, status: number, why: string) => {
    reply(res, status, why);
    try {
      h.refused?.(status, why);
    } catch {
      // logging only
    }
  };
  const server = createServer((req, res) => {
    const no = refusal(req, port, token);
    if (no) {
      req.resume();
      refuse(res, no.status, no.why);
      return;
    }
    h.touch();
    const agent = (req.url ?? '').slice(HOOK_URL_PATH.length);
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      if (tooLarge) return;
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        tooLarge = true;
        chunks.length = 0;
        refuse(res, 413, 'too large');
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      if (tooLarge) return;
      try {
        h.handle(agent, Buffer.concat(chunks).toString('utf8'));
      } catch {
        // `handle` logs and never throws; the agent is answered all the same.
      }
      h.touch();
      reply(res, 200);
    });
  });
  // Requests are short; a client that stops sending is dropped.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  return server;
}
