// A scripted stand-in for the Anthropic Messages API, listening on 127.0.0.1.
//
// Point Claude Code at it with ANTHROPIC_BASE_URL=<url>. Every request that carries `tools`
// is one step of the agent loop: the stub answers it with the next scripted assistant
// message (streamed as server-sent events, like the real API). The real tools then run for
// real and the real hooks fire. Requests without tools (titles, summaries and other side
// requests) get a short plain text answer and consume no step. When the script has run out,
// the stub answers with a final text and stop_reason "end_turn".
import type http from 'node:http';
import { estimateTokens, eventStream, sendJson, startScriptedStub } from './stub-server.js';
import type { ScriptedStub, StubRecord } from './stub-server.js';

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

export interface StubRequest extends StubRecord {
  /** Path with the query string, e.g. "/v1/messages?beta=true". */
  url: string;
  /** What the stub did with it. */
  kind: 'step' | 'side' | 'count_tokens' | 'other';
  /** For kind "step": the index of the scripted step answered (past the end: script.length). */
  step?: number;
}

/** The stub: its `url` is the base URL for ANTHROPIC_BASE_URL, e.g. "http://127.0.0.1:43121". */
export interface ModelStub extends ScriptedStub<Step, StubRequest> {
  /** The tool_use ids handed out, in order. */
  readonly toolUseIds: string[];
}

export interface ModelStubOptions {
  /** Final text once the script has run out. */
  finalText?: string;
  /** Text for side requests (no tools). */
  sideText?: string;
  /** Log each request to stderr (or set MODEL_STUB_DEBUG=1). */
  debug?: boolean;
  /**
   * Called with a step's index in the script just before the stub answers with it: the agent
   * waits for the answer, so what this does happens between two of its tool calls (the person
   * editing a file while the turn is open).
   */
  onStep?: (index: number) => void;
}

type OutBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

const DEFAULT_MODEL = 'claude-sonnet-4-5';

export async function startModelStub(script: Step[], options: ModelStubOptions = {}): Promise<ModelStub> {
  const toolUseIds: string[] = [];
  let idCounter = 0;
  let msgCounter = 0;
  const finalText = options.finalText ?? 'Done.';
  const sideText = options.sideText ?? 'Scripted session';

  const newToolId = () => `toolu_stub_${String(++idCounter).padStart(3, '0')}`;

  const materialize = (step: Step): OutBlock[] =>
    step.map((b) => {
      if (b.type === 'text') return { type: 'text', text: b.text };
      const id = b.id ?? newToolId();
      toolUseIds.push(id);
      return { type: 'tool_use', id, name: b.name, input: b.input };
    });

  return startScriptedStub<Step, StubRequest, { toolUseIds: string[] }>({
    steps: script,
    tag: 'model-stub',
    debug: options.debug ?? !!process.env.MODEL_STUB_DEBUG,
    extra: { toolUseIds },
    fail: (res, err) => sendApiJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(err) } }),
    handle({ req, res, record, raw, body, path, answer }) {
      if (req.method === 'POST' && /\/v1\/messages\/count_tokens$/.test(path)) {
        record.kind = 'count_tokens';
        sendApiJson(res, 200, { input_tokens: estimateTokens(raw) });
      } else if (req.method === 'POST' && /\/v1\/messages$/.test(path)) {
        const model = typeof body?.model === 'string' ? body.model : DEFAULT_MODEL;
        const blocks = answer<OutBlock[]>({
          step: (s) => {
            options.onStep?.(script.indexOf(s));
            return materialize(s);
          },
          final: () => [{ type: 'text', text: finalText }],
          side: () => [{ type: 'text', text: sideText }],
        });
        const stopReason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
        const id = `msg_stub_${String(++msgCounter).padStart(3, '0')}`;
        const inputTokens = estimateTokens(raw);
        if (body?.stream) {
          sendStream(res, { id, model, blocks, stopReason, inputTokens });
        } else {
          sendApiJson(res, 200, {
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
        sendApiJson(res, 200, m ? model : { data: [model], has_more: false, first_id: model.id, last_id: model.id });
      } else if (req.method === 'HEAD' || (req.method === 'GET' && path === '/')) {
        sendApiJson(res, 200, {});
      } else {
        // Anything else (telemetry, account or feature-flag endpoints): a well-formed
        // "not found" in the API's error shape, which clients treat as "not available".
        sendApiJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `stub: no ${path}` } });
      }
    },
  });
}

function usage(input: number, output: number) {
  return {
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

/** Every answer of the API carries a request-id header. */
const requestId = () => ({ 'request-id': `req_stub_${Date.now()}` });

function sendApiJson(res: http.ServerResponse, status: number, value: unknown): void {
  sendJson(res, status, value, requestId());
}

function sendStream(
  res: http.ServerResponse,
  m: { id: string; model: string; blocks: OutBlock[]; stopReason: string; inputTokens: number },
): void {
  const send = eventStream(res, { connection: 'keep-alive', ...requestId() });
  const event = (type: string, data: Record<string, unknown>) => send(type, { type, ...data });

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
