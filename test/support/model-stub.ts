// A scripted stand-in for the Anthropic Messages API, listening on 127.0.0.1.
//
// Point Claude Code at it with ANTHROPIC_BASE_URL=<url>. Every request that carries `tools`
// is one step of the agent loop: the stub answers it with the next scripted assistant
// message (streamed as server-sent events, like the real API). The real tools then run for
// real and the real hooks fire. Requests without tools (titles, summaries and other side
// requests) get a short plain text answer and consume no step. When the script has run out,
// the stub answers with a final text and stop_reason "end_turn".
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type TextBlock = { type: 'text'; text: string };
export type ToolUseBlock = {
  type: 'tool_use';
  name: string;
  input: Record<string, unknown>;
  /** Optional fixed id; by default the stub numbers them toolu_stub_001, toolu_stub_002, ... */
  id?: string;
};
export type Block = TextBlock | ToolUseBlock;
/** One assistant message. */
export type Step = Block[];

export interface StubRequest {
  method: string;
  /** Path with the query string, e.g. "/v1/messages?beta=true". */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text if it was not JSON, or undefined if empty. */
  body: any;
  /** What the stub did with it. */
  kind: 'step' | 'side' | 'count_tokens' | 'other';
  /** For kind "step": the index of the scripted step answered (past the end: script.length). */
  step?: number;
}

export interface ModelStub {
  /** Base URL for ANTHROPIC_BASE_URL, e.g. "http://127.0.0.1:43121". */
  url: string;
  /** Every request received, in order. */
  requests: StubRequest[];
  /** The model requests that carried tools (the agent loop's steps), in order. */
  readonly stepRequests: StubRequest[];
  /** How many scripted steps have been answered so far. */
  readonly stepsUsed: number;
  /** The tool_use ids handed out, in order. */
  readonly toolUseIds: string[];
  /** Append steps (e.g. for a second turn). */
  push(...steps: Step[]): void;
  close(): Promise<void>;
}

export interface ModelStubOptions {
  /** Final text once the script has run out. */
  finalText?: string;
  /** Text for side requests (no tools). */
  sideText?: string;
  /** Log each request to stderr (or set MODEL_STUB_DEBUG=1). */
  debug?: boolean;
}

type OutBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

const DEFAULT_MODEL = 'claude-sonnet-4-5';

export async function startModelStub(script: Step[], options: ModelStubOptions = {}): Promise<ModelStub> {
  const steps: Step[] = [...script];
  const requests: StubRequest[] = [];
  const toolUseIds: string[] = [];
  let next = 0; // next step to answer
  let idCounter = 0;
  let msgCounter = 0;
  const finalText = options.finalText ?? 'Done.';
  const sideText = options.sideText ?? 'Scripted session';
  const debug = options.debug ?? !!process.env.MODEL_STUB_DEBUG;

  const newToolId = () => `toolu_stub_${String(++idCounter).padStart(3, '0')}`;

  const materialize = (step: Step): OutBlock[] =>
    step.map((b) => {
      if (b.type === 'text') return { type: 'text', text: b.text };
      const id = b.id ?? newToolId();
      toolUseIds.push(id);
      return { type: 'tool_use', id, name: b.name, input: b.input };
    });

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
      const path = url.split('?')[0] ?? '/';
      const record: StubRequest = { method: req.method ?? 'GET', url, headers: req.headers, body, kind: 'other' };
      requests.push(record);

      try {
        if (req.method === 'POST' && /\/v1\/messages\/count_tokens$/.test(path)) {
          record.kind = 'count_tokens';
          sendJson(res, 200, { input_tokens: estimateTokens(raw) });
        } else if (req.method === 'POST' && /\/v1\/messages$/.test(path)) {
          const model = typeof body?.model === 'string' ? body.model : DEFAULT_MODEL;
          const hasTools = Array.isArray(body?.tools) && body.tools.length > 0;
          let blocks: OutBlock[];
          if (hasTools) {
            record.kind = 'step';
            record.step = next;
            const step = steps[next];
            if (step) {
              next++;
              blocks = materialize(step);
            } else {
              blocks = [{ type: 'text', text: finalText }];
            }
          } else {
            record.kind = 'side';
            blocks = [{ type: 'text', text: sideText }];
          }
          const stopReason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
          const id = `msg_stub_${String(++msgCounter).padStart(3, '0')}`;
          const inputTokens = estimateTokens(raw);
          if (body?.stream) {
            sendStream(res, { id, model, blocks, stopReason, inputTokens });
          } else {
            sendJson(res, 200, {
              id,
              type: 'message',
              role: 'assistant',
              model,
              content: blocks,
              stop_reason: stopReason,
              stop_sequence: null,
              usage: usage(inputTokens, 10),
            });
          }
        } else if (req.method === 'GET' && /\/v1\/models(\/|$)/.test(path)) {
          // A model listing or lookup: one model, the one asked for or the default.
          const m = path.split('/v1/models/')[1];
          const model = {
            type: 'model',
            id: m ? decodeURIComponent(m) : DEFAULT_MODEL,
            display_name: 'Claude (stub)',
            created_at: '2025-01-01T00:00:00Z',
          };
          sendJson(res, 200, m ? model : { data: [model], has_more: false, first_id: model.id, last_id: model.id });
        } else if (req.method === 'HEAD' || (req.method === 'GET' && path === '/')) {
          sendJson(res, 200, {});
        } else {
          // Anything else (telemetry, account or feature-flag endpoints): a well-formed
          // "not found" in the API's error shape, which clients treat as "not available".
          sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `stub: no ${path}` } });
        }
      } catch (err) {
        sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(err) } });
      }
      if (debug) {
        const extra = record.kind === 'step' ? ` step=${record.step}` : '';
        process.stderr.write(`[model-stub] ${record.method} ${url} -> ${record.kind}${extra}\n`);
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get stepRequests() {
      return requests.filter((r) => r.kind === 'step');
    },
    get stepsUsed() {
      return next;
    },
    toolUseIds,
    push(...more: Step[]) {
      steps.push(...more);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function usage(input: number, output: number) {
  return {
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

function estimateTokens(raw: string): number {
  return Math.max(1, Math.ceil(raw.length / 4));
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'request-id': `req_stub_${Date.now()}`,
  });
  res.end(text);
}

function sendStream(
  res: http.ServerResponse,
  m: { id: string; model: string; blocks: OutBlock[]; stopReason: string; inputTokens: number },
): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'request-id': `req_stub_${Date.now()}`,
  });
  const event = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);

  event('message_start', {
    message: {
      id: m.id,
      type: 'message',
      role: 'assistant',
      model: m.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usage(m.inputTokens, 1),
    },
  });
  event('ping', {});
  m.blocks.forEach((b, index) => {
    if (b.type === 'text') {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
    } else {
      event('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
      });
      event('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
      });
    }
    event('content_block_stop', { index });
  });
  event('message_delta', {
    delta: { stop_reason: m.stopReason, stop_sequence: null },
    usage: { output_tokens: 10 },
  });
  event('message_stop', {});
  res.end();
}
