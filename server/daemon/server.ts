import { createServer, type Server, type Socket } from 'node:net';
import { monotonicMs, TAKE_MARGIN_MS, type ForwardRequest } from './address.js';

/*
 * The capture daemon's socket server: one connection per hook event (protocol in address.ts).
 * Events are handled one at a time, in the order they arrived, each to the end (recorded in the
 * journal) before the next is claimed: the same journal writes, in the same order, as hook
 * processes taking turns at SQLite's lock. Nothing here knows what an event means: `handle` does.
 *
 * An event may be answered before its record is done (its hook returns, the agent goes on): at
 * once when it is claimed, or when its handler says what it must see is fixed (see
 * {@link AnswerPoint}). Its record still runs to the end before the next event is claimed, so the
 * order of the journal's writes is the same; only the agent's wait moves. A connection that asks
 * `{"settle":true}` (a process about to read or write the journal) is answered `{"settled":true}`
 * once no event answered early is left unrecorded.
 */

/** Past this many bytes a request is refused (the hook handles it itself). */
const MAX_REQUEST_BYTES = 256 * 1024 * 1024;
/** A connection that sends no complete request within this time is closed (ms). */
const READ_TIMEOUT_MS = 10_000;
/** A claimed event whose client sends no "go" within this time is dropped (ms): the client gave up. */
const GO_TIMEOUT_MS = 5_000;

/**
 * When a claimed event's hook is answered: `claimed` at once (before the watcher's sync and the
 * record), `fixed` when the handler calls the `answer` it is given (what the event must see is
 * read, only the record's writes and syncs are left), `recorded` once it is recorded (or failed).
 */
export type AnswerPoint = 'claimed' | 'fixed' | 'recorded';

/** What the server asks of its owner (lifecycle.ts). */
export interface CaptureHandlers {
  /**
   * Called when `req` is next, before it is claimed: null to go ahead, or why not (the client then
   * handles the event itself). May set up what `handle` needs (the current folder).
   */
  prepare(req: ForwardRequest): string | null;
  /**
   * Called as an event is claimed, so that it runs while the client's "go" comes back (an event
   * taken at the claim: as it goes ahead, after its answer when it is answered as claimed); the
   * event is handled once it resolved and "go" came (and no other event starts meanwhile). Must not
   * reject, and must leave nothing that matters to an event dropped before its "go": the file
   * watcher's sync (lifecycle.ts). `next` is aborted once another event is waiting behind this one
   * (a sync nobody waits for may then stop waiting: see lifecycle.ts).
   */
  before?(req: ForwardRequest, next: AbortSignal): Promise<void>;
  /**
   * When the claimed event `req` may be answered (default `recorded`). Asked once, when the
   * client says "go" (or as the event is taken). Must not throw.
   */
  answerAt?(req: ForwardRequest): AnswerPoint;
  /**
   * Called just before an event is answered ahead of its record, to keep what the answer promised
   * should the record never come (the daemon killed meanwhile): false when that could not be
   * kept, and the event is then answered once recorded. Must not throw.
   */
  answering?(req: ForwardRequest): boolean;
  /** Called once the record of an event answered ahead of it is done (what {@link answering} kept is no longer needed). Must not throw. */
  recorded?(req: ForwardRequest): void;
  /**
   * Handles a claimed event to the end. True when it was recorded (or rightly ignored), false when
   * it failed (and was logged). `answer`: for an event answered at `fixed`, to be called once what
   * it must see is fixed (a no-op otherwise, and when called twice). Must not throw.
   */
  handle(req: ForwardRequest, answer: () => void): boolean;
  /** Called on every new connection and every finished event (the idle clock). */
  touch(): void;
  /**
   * Called just before a claimed event's client is sent its answer (ahead of the record or after
   * it), and as a claimed event is dropped before its "go": what was kept back while the event was
   * handled goes out now, before the client hears (lifecycle.ts: the log, one append instead of a
   * write for each line). Must not throw.
   */
  beforeAnswer?(): void;
}

interface Conn {
  sock: Socket;
  req: ForwardRequest | null;
  state: 'reading' | 'queued' | 'claimed' | 'handling' | 'done';
  timer: NodeJS.Timeout | null;
  /** Answered ahead of its record (and its record not done yet while it is `handling`). */
  early: boolean;
  /** {@link CaptureHandlers.before} of this event, started as it was claimed (null: none). */
  before: Promise<void> | null;
  /** Aborted once another event waits behind this one (see {@link CaptureHandlers.before}). */
  next: AbortController | null;
}

/** The server, not listening yet, and how many events are waiting or being handled. */
export interface CaptureServer {
  server: Server;
  /** Events queued or in hand. */
  pending(): number;
  /** True while an event answered ahead of its record is being recorded. */
  unrecorded(): boolean;
  /** Calls `fn` once no event is queued or in hand (at once when none is): a daemon leaving finishes the records it answered. */
  whenIdle(fn: () => void): void;
}

function isRequest(v: unknown): v is ForwardRequest {
  const r = v as ForwardRequest;
  return (
    !!r &&
    typeof r === 'object' &&
    typeof r.agent === 'string' &&
    typeof r.text === 'string' &&
    typeof r.cwd === 'string' &&
    !!r.env &&
    typeof r.env === 'object' &&
    Object.values(r.env).every((x) => typeof x === 'string') &&
    (r.deadline === undefined || (typeof r.deadline === 'number' && Number.isFinite(r.deadline)))
  );
}

function send(sock: Socket, msg: object, end = false): void {
  if (sock.destroyed || !sock.writable) return;
  const line = `${JSON.stringify(msg)}\n`;
  if (end) sock.end(line);
  else sock.write(line);
}

/** Makes the daemon's server (call `server.listen(path)` on it). Never throws from a connection. */
export function createCaptureServer(h: CaptureHandlers): CaptureServer {
  const queue: Conn[] = [];
  let current: Conn | null = null;
  /** Connections that asked to settle, answered once no event answered early is unrecorded. */
  let settling: Socket[] = [];
  const unrecorded = () => current !== null && current.early && current.state === 'handling';

  const settle = () => {
    if (unrecorded()) return;
    for (const s of settling.splice(0)) send(s, { settled: true }, true);
  };

  /** Called once nothing is queued or in hand. */
  const idle: (() => void)[] = [];
  const release = (c: Conn) => {
    if (c.timer) clearTimeout(c.timer);
    c.timer = null;
    const dropped = c.state === 'claimed';
    if (c.early && !c.sock.destroyed) c.sock.end();
    c.state = 'done';
    if (current === c) current = null;
    h.touch();
    if (dropped) h.beforeAnswer?.();
    settle();
    pump();
    if (!current && queue.length === 0) for (const fn of idle.splice(0)) fn();
  };

  const pump = () => {
    while (!current && queue.length > 0) {
      const c = queue.shift()!;
      if (c.sock.destroyed || c.state !== 'queued') continue;
      let why: string | null;
      try {
        why = h.prepare(c.req!);
      } catch (e) {
        why = String(e);
      }
      if (why !== null) {
        c.state = 'done';
        send(c.sock, { refuse: true, why }, true);
        continue;
      }
      current = c;
      c.state = 'claimed';
      // Claimed well before the client stops waiting (see address.ts): taken at once, no "go".
      const deadline = c.req!.deadline;
      const taken = deadline !== undefined && deadline - monotonicMs() >= TAKE_MARGIN_MS;
      send(c.sock, taken ? { claim: true, taken: true } : { claim: true });
      if (taken) {
        go(c);
        continue;
      }
      // Its `before` runs while the client's "go" comes back.
      startBefore(c);
      c.timer = setTimeout(() => {
        c.sock.destroy();
        release(c);
      }, GO_TIMEOUT_MS);
    }
  };

  /** Starts the `before` of the claimed event `c`. */
  const startBefore = (c: Conn) => {
    if (!h.before) return;
    c.next = new AbortController();
    if (queue.length > 0) c.next.abort();
    try {
      c.before = h.before(c.req!, c.next.signal);
    } catch {
      c.before = Promise.resolve();
    }
  };

  /**
   * The claimed event `c` goes ahead (its client said "go", or it was taken): handled to the end,
   * after its `before`, started here for an event taken (after its answer, for one answered as
   * it is claimed: the answer waits for nothing).
   */
  const go = (c: Conn) => {
    if (c.timer) clearTimeout(c.timer);
    c.timer = null;
    // Handled to the end from here, whether or not the client stays to hear it.
    c.state = 'handling';
    let at: AnswerPoint = 'recorded';
    try {
      at = h.answerAt?.(c.req!) ?? 'recorded';
    } catch {
      at = 'recorded';
    }
    // The answer ahead of the record, tried once (a second call does nothing, as `handle`'s
    // contract says): what it promises is kept first (`answering`).
    let tried = false;
    const answer = () => {
      if (tried || !h.answering) return;
      tried = true;
      let kept = false;
      try {
        kept = h.answering(c.req!);
      } catch {
        kept = false;
      }
      if (!kept) return;
      c.early = true;
      h.beforeAnswer?.();
      // Written, not ended: the client is done at this line, and the connection's end waits for the record (release).
      send(c.sock, { ok: true });
    };
    if (at === 'claimed') answer();
    if (!c.before) startBefore(c);
    const run = () => {
      let ok = false;
      try {
        ok = h.handle(c.req!, at === 'fixed' ? answer : () => {});
      } catch {
        ok = false;
      }
      if (!c.early) {
        h.beforeAnswer?.();
        send(c.sock, { ok }, true);
      } else {
        try {
          h.recorded?.(c.req!);
        } catch {
          // what `answering` kept stays: the next process finds it and names the event as lost
        }
      }
      release(c);
    };
    if (!c.before) run();
    else c.before.then(run, run);
  };

  const onLine = (c: Conn, line: string) => {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      msg = null;
    }
    if (c.state === 'reading') {
      if (c.timer) clearTimeout(c.timer);
      c.timer = null;
      if ((msg as { settle?: unknown } | null)?.settle === true) {
        // Not an event: answered once what was answered early is recorded.
        c.state = 'done';
        settling.push(c.sock);
        settle();
        return;
      }
      if (!isRequest(msg)) {
        c.state = 'done';
        send(c.sock, { refuse: true, why: 'bad request' }, true);
        return;
      }
      c.req = msg;
      c.state = 'queued';
      queue.push(c);
      current?.next?.abort();
      pump();
    } else if (c.state === 'claimed' && (msg as { go?: unknown } | null)?.go === true) go(c);
  };

  const server = createServer((sock) => {
    h.touch();
    const c: Conn = { sock, req: null, state: 'reading', timer: null, early: false, before: null, next: null };
    c.timer = setTimeout(() => sock.destroy(), READ_TIMEOUT_MS);
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => {
      if (c.state === 'done') return;
      buf += chunk;
      if (buf.length > MAX_REQUEST_BYTES && c.state === 'reading') {
        c.state = 'done';
        send(sock, { refuse: true, why: 'request too large' }, true);
        return;
      }
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        onLine(c, line);
      }
    });
    sock.on('error', () => sock.destroy());
    sock.on('close', () => {
      settling = settling.filter((s) => s !== sock);
      // A client that gave up (or died) before "go": its event is dropped, the next one goes.
      if (c.state === 'claimed') release(c);
      else if (c.state === 'handling') return; // its record goes on
      else if (c.timer) clearTimeout(c.timer);
      c.state = 'done';
    });
  });
  const whenIdle = (fn: () => void) => {
    if (!current && queue.length === 0) fn();
    else idle.push(fn);
  };
  return { server, pending: () => queue.length + (current ? 1 : 0), unrecorded, whenIdle };
}
