// The built `takeback serve` over real stdio with no JSON-RPC library between the test and it:
// the test frames (or misframes) each message itself and reads the server's answers as they come,
// for the tests of bad input and the fuzz.
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from './lsp-client.js';

/** A response from the server (its requests and notifications are not collected). */
export interface RawResponse {
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface RawServer {
  child: ChildProcess;
  /** Writes one framed message. */
  send(m: unknown): void;
  /** Writes `body` (any bytes) framed with its Content-Length. */
  sendBody(body: Buffer): void;
  /** Writes bytes as they are. */
  write(b: string | Buffer): void;
  /** The first response for which `pred` holds, taken from {@link responses}; rejects after `ms`, or when the server exits first. */
  take(pred: (r: RawResponse) => boolean, what: string, ms?: number): Promise<RawResponse>;
  /** The response that answers `id`. */
  answer(id: unknown, ms?: number): Promise<RawResponse>;
  /** Every response received and not yet taken (the array itself: a test may take from it). */
  responses(): RawResponse[];
  exited: Promise<number | null>;
  stderr(): string;
}

/** Starts `takeback serve --stdio` in `cwd` with `env`. */
export function rawServe(cwd: string, env: NodeJS.ProcessEnv): RawServer {
  const child = spawn(process.execPath, [BIN, 'serve', '--stdio'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = Buffer.alloc(0);
  let err = '';
  let code: number | null | undefined;
  const got: RawResponse[] = [];
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  child.stdout!.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) break;
      const len = Number(/Content-Length: (\d+)/i.exec(buf.subarray(0, end).toString())![1]);
      if (buf.length < end + 4 + len) break;
      const m = JSON.parse(buf.subarray(end + 4, end + 4 + len).toString());
      buf = buf.subarray(end + 4 + len);
      if (!('method' in m)) got.push(m);
    }
    wake();
  });
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  child.stdin!.on('error', () => undefined); // the server may be gone before the test stops writing
  const exited = new Promise<number | null>((res) =>
    child.on('exit', (c) => {
      code = c;
      wake();
      res(c);
    }),
  );
  const sendBody = (body: Buffer) => child.stdin!.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
  const take = (pred: (r: RawResponse) => boolean, what: string, ms = 10_000) =>
    new Promise<RawResponse>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`no answer for ${what} in ${ms} ms; stderr: ${err.slice(-2000)}`)), ms);
      const look = () => {
        const i = got.findIndex(pred);
        if (i >= 0) {
          clearTimeout(timer);
          res(got.splice(i, 1)[0]!);
        } else if (code !== undefined) {
          clearTimeout(timer);
          rej(new Error(`the server exited (${code}) waiting for ${what}; stderr: ${err.slice(-2000)}`));
        } else waiters.push(look);
      };
      look();
    });
  return {
    child,
    send: (m) => sendBody(Buffer.from(JSON.stringify(m))),
    sendBody,
    write: (b) => {
      child.stdin!.write(b);
    },
    take,
    answer: (id, ms) => take((r) => JSON.stringify(r.id) === JSON.stringify(id), JSON.stringify(id), ms),
    responses: () => got,
    exited,
    stderr: () => err,
  };
}
