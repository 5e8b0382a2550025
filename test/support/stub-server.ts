// The plumbing of the scripted model stubs (./model-stub.ts for Claude Code, and the ones in
// ./codex.ts and ./gemini.ts): an HTTP server on 127.0.0.1 that records every request with its
// JSON body, answers each model request that carries tools with the next step of a script,
// and writes JSON answers or server-sent events. What an answer looks like is each stub's own.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What every stub records of a request (each stub narrows `kind` and may add fields). */
export interface StubRecord {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text if it was not JSON, or undefined if empty. */
  body: any;
  kind: string;
  /** For kind "step": the index of the scripted step answered (past the end: the step count then). */
  step?: number;
}

/** What every stub hands back. */
export interface ScriptedStub<S, R> {
  /** The base URL to point the agent at. */
  url: string;
  /** Every request received, in order. */
  requests: R[];
  /** The model requests that carried tools (the agent loop's steps), in order. */
  readonly stepRequests: R[];
  /** How many scripted steps have been answered so far. */
  readonly stepsUsed: number;
  /** Append steps (e.g. for a second turn). */
  push(...steps: S[]): void;
  close(): Promise<void>;
}

/** One request, as a stub's handler gets it. */
export interface StubExchange<S, R> {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  /** Its record, already in `requests` with kind "other": the handler sets the kind. */
  record: R;
  /** The body as received. */
  raw: string;
  /** The body parsed (as in the record). */
  body: any;
  /** The URL's path and query string, apart. */
  path: string;
  query: string;
  /**
   * Answers a model request from the script. One that carries tools is a step (record kind
   * "step", record.step the index): the next scripted step through `as.step`, or past the end of
   * the script `as.final()`; one without tools is a side request (kind "side"): `as.side()`.
   */
  answer<T>(as: { step(s: S): T; final(): T; side(): T }): T;
}

export interface ScriptedStubOptions<S, R, X> {
  steps: S[];
  /** The name on the debug lines, e.g. "model-stub". */
  tag: string;
  /** Log each request to stderr. */
  debug: boolean;
  /** Appended to "http://127.0.0.1:<port>" for the stub's url, e.g. "/v1". */
  urlPath?: string;
  /** Answers one request. */
  handle(x: StubExchange<S, R>): void;
  /** Answers a request whose handler threw. */
  fail(res: http.ServerResponse, err: unknown): void;
  /** More fields of the stub handed back (e.g. the ids handed out). */
  extra: X;
}

/** Starts a scripted stub on 127.0.0.1, on a free port. */
export async function startScriptedStub<S, R extends StubRecord, X extends object>(o: ScriptedStubOptions<S, R, X>): Promise<ScriptedStub<S, R> & X> {
  const steps: S[] = [...o.steps];
  const requests: R[] = [];
  let next = 0; // the next step to answer

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any = undefined;
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      const url = req.url ?? '/';
      const [path = '/', query = ''] = url.split('?');
      const record = { method: req.method ?? 'GET', url, headers: req.headers, body, kind: 'other' } as R;
      requests.push(record);
      const answer = <T>(as: { step(s: S): T; final(): T; side(): T }): T => {
        if (!(Array.isArray(body?.tools) && body.tools.length > 0)) {
          record.kind = 'side';
          return as.side();
        }
        record.kind = 'step';
        record.step = next;
        const step = steps[next];
        if (step === undefined) return as.final();
        next++;
        return as.step(step);
      };
      try {
        o.handle({ req, res, record, raw, body, path, query, answer });
      } catch (err) {
        o.fail(res, err);
      }
      if (o.debug) {
        const extra = record.kind === 'step' ? ` step=${record.step}` : '';
        process.stderr.write(`[${o.tag}] ${record.method} ${url} -> ${record.kind}${extra}\n`);
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const stub: ScriptedStub<S, R> = {
    url: `http://127.0.0.1:${port}${o.urlPath ?? ''}`,
    requests,
    get stepRequests() {
      return requests.filter((r) => r.kind === 'step');
    },
    get stepsUsed() {
      return next;
    },
    push(...more: S[]) {
      steps.push(...more);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  // Object.assign keeps the getters above: the extra fields are added beside them.
  return Object.assign(stub, o.extra);
}

/** Answers with `value` as JSON (and any more headers). */
export function sendJson(res: http.ServerResponse, status: number, value: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * Starts a stream of server-sent events (status 200; `headers` added to its content type and
 * cache-control) and returns a writer of one event: `event: <type>` (unless undefined), then
 * `data: <json>`. The caller ends the response.
 */
export function eventStream(res: http.ServerResponse, headers: http.OutgoingHttpHeaders = {}): (type: string | undefined, data: unknown) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  return (type, data) => res.write(`${type === undefined ? '' : `event: ${type}\n`}data: ${JSON.stringify(data)}\n\n`);
}

/** A rough token count for a request body (a quarter of its length, at least 1). */
export function estimateTokens(raw: string): number {
  return Math.max(1, Math.ceil(raw.length / 4));
}
