import { ErrorCodes } from '../../protocol/src/errors.js';
import { AbstractMessageReader, Disposable, type DataCallback, type Message, type MessageReader } from 'vscode-languageserver/node';

/*
 * LSP's base protocol read from a byte stream, with bounds: `Content-Length: N\r\n\r\n` then N
 * bytes of JSON. vscode-jsonrpc's own reader buffers whatever length a header announces (a
 * 300 MB message runs V8 out of memory) and, after a header it cannot read, answers nothing more. This
 * reader refuses a length over its bound before reading the body, and ends the stream on a header
 * it cannot read: once framing is lost, no later byte can be trusted to start a message, so the
 * server stops (with the reason) rather than answer garbage. A body that is not a JSON-RPC
 * message, or a request whose id is neither a string nor a number, is answered as JSON-RPC says
 * (with `id: null`) and never handed on; a request {@link FramingOptions.screen} refuses is
 * answered with its own id.
 */

/** The default bound on one message's body, in bytes (64 MiB). */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** A header block longer than this (bytes, up to its blank line) is not LSP's. */
const MAX_HEADER_BYTES = 8 * 1024;

const HEADER_END = Buffer.from('\r\n\r\n');

/** A JSON-RPC error object. */
export interface RejectedError {
  code: number;
  message: string;
  data?: unknown;
}

/** What the reader does with what it refuses. */
export interface FramingOptions {
  /** The bound on one message's body (bytes). */
  maxMessageBytes: number;
  /** Answers a refused message with a JSON-RPC error response (`id: null` when the message has no usable id). */
  reject: (id: string | number | null, error: RejectedError) => void;
  /**
   * Looks at each request before it is handed on: an error refuses it (answered with it, never
   * handed on), null lets it through. For params that vscode-languageserver reads itself before
   * any handler runs (`initialize`'s capabilities, a work-done token), where a bad shape would
   * throw inside the library.
   */
  screen?: (request: { id: string | number; method: string; params: unknown }) => RejectedError | null;
  /** The framing is lost (the reason, for people): the reader has stopped and the stream is given up. */
  lost: (reason: string) => void;
}

/**
 * A bounded {@link MessageReader} over a readable byte stream (stdin). Fires `onClose` when the
 * stream ends and after {@link FramingOptions.lost}.
 */
export class BoundedMessageReader extends AbstractMessageReader implements MessageReader {
  private chunks: Buffer[] = [];
  private held = 0;
  /** The body's length once its header is read; -1 while reading a header. */
  private bodyLength = -1;
  private callback: DataCallback | null = null;
  private stopped = false;

  constructor(
    private readonly readable: NodeJS.ReadableStream,
    private readonly opts: FramingOptions,
  ) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (d: Buffer | string) => this.onData(typeof d === 'string' ? Buffer.from(d) : d);
    const onEnd = () => this.finish();
    const onError = (e: Error) => this.fireError(e);
    this.readable.on('data', onData);
    this.readable.on('end', onEnd);
    this.readable.on('close', onEnd);
    this.readable.on('error', onError);
    return Disposable.create(() => {
      this.readable.off('data', onData);
      this.readable.off('end', onEnd);
      this.readable.off('close', onEnd);
      this.readable.off('error', onError);
    });
  }

  private finish(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.chunks = [];
    this.held = 0;
    this.fireClose();
  }

  private lose(reason: string): void {
    if (this.stopped) return;
    this.readable.pause();
    this.opts.lost(reason);
    this.finish();
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.held);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.held = rest.length;
    return out;
  }

  private onData(data: Buffer): void {
    if (this.stopped) return;
    this.chunks.push(data);
    this.held += data.length;
    while (!this.stopped) {
      if (this.bodyLength < 0) {
        const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.held);
        this.chunks = [all];
        const end = all.indexOf(HEADER_END);
        if (end < 0) {
          if (all.length > MAX_HEADER_BYTES) this.lose(`a header of more than ${MAX_HEADER_BYTES} bytes with no blank line after it`);
          return;
        }
        const length = this.headerLength(all.subarray(0, end).toString('latin1'));
        if (length === null) return;
        this.take(end + HEADER_END.length);
        this.bodyLength = length;
      }
      if (this.held < this.bodyLength) return;
      const body = this.take(this.bodyLength);
      this.bodyLength = -1;
      this.deliver(body);
    }
  }

  /** The header's Content-Length, or null (after {@link lose}) when the header is not LSP's or the length is over the bound. */
  private headerLength(header: string): number | null {
    let length: number | null = null;
    for (const line of header.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) {
        this.lose(`a header line that is not "Name: value": ${JSON.stringify(line.slice(0, 80))}`);
        return null;
      }
      if (line.slice(0, colon).trim().toLowerCase() !== 'content-length') continue;
      const value = line.slice(colon + 1).trim();
      if (!/^\d{1,16}$/.test(value)) {
        this.lose(`a Content-Length that is not a number of bytes: ${JSON.stringify(value.slice(0, 80))}`);
        return null;
      }
      length = Number(value);
    }
    if (length === null) {
      this.lose('a header without Content-Length');
      return null;
    }
    if (length > this.opts.maxMessageBytes) {
      this.lose(`a message of ${length} bytes, over the limit of ${this.opts.maxMessageBytes} (TAKEBACK_MAX_MESSAGE_BYTES)`);
      return null;
    }
    return length;
  }

  private deliver(body: Buffer): void {
    let message: unknown;
    try {
      message = JSON.parse(body.toString('utf8'));
    } catch (e) {
      this.opts.reject(null, { code: ErrorCodes.ParseError, message: `takeback: the message is not JSON: ${(e as Error).message}` });
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      this.opts.reject(null, { code: ErrorCodes.InvalidRequest, message: 'takeback: a message must be one JSON object (batches are not part of LSP)' });
      return;
    }
    const m = message as { id?: unknown; method?: unknown };
    if (m.id !== undefined && m.id !== null && typeof m.id !== 'string' && typeof m.id !== 'number') {
      this.opts.reject(null, { code: ErrorCodes.InvalidRequest, message: `takeback: an id must be a string or a number, not ${Array.isArray(m.id) ? 'an array' : typeof m.id}` });
      return;
    }
    // vscode-jsonrpc handles these notifications itself and reads their params unchecked (a
    // `$/cancelRequest` whose params are a number throws out of its reader and ends the
    // process): one with params of another shape is dropped, as JSON-RPC drops a bad notification.
    if ((m.id === undefined || m.id === null) && typeof m.method === 'string' && !wellFormedProtocolNotification(m.method, (m as { params?: unknown }).params)) return;
    if (this.opts.screen && (typeof m.id === 'string' || typeof m.id === 'number') && typeof m.method === 'string') {
      const refused = this.opts.screen({ id: m.id, method: m.method, params: (m as { params?: unknown }).params });
      if (refused) {
        this.opts.reject(m.id, refused);
        return;
      }
    }
    this.callback?.(message as Message);
  }
}

/**
 * False for a notification that vscode-jsonrpc handles itself (`$/cancelRequest`, `$/progress`,
 * `$/setTrace`, `$/logTrace`) whose params are not of the shape LSP gives it; true for every
 * other notification (their handlers check their own params).
 */
function wellFormedProtocolNotification(method: string, params: unknown): boolean {
  if (!method.startsWith('$/')) return true;
  const o = typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : null;
  const idLike = (v: unknown) => typeof v === 'string' || typeof v === 'number';
  switch (method) {
    case '$/cancelRequest':
      return o !== null && idLike(o.id);
    case '$/progress':
      return o !== null && idLike(o.token);
    case '$/setTrace':
      return o !== null && typeof o.value === 'string';
    case '$/logTrace':
      return o !== null && typeof o.message === 'string';
    default:
      return true;
  }
}
