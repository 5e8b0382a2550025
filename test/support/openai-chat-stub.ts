// A scripted stand-in for an OpenAI-compatible Chat Completions API (`POST …/chat/completions`),
// on 127.0.0.1: the model of Qwen Code, GitHub Copilot CLI (its bring-your-own "openai"
// provider) and Cline CLI (its OpenAI-compatible provider) in the end-to-end tests. Each request
// that carries `tools` is one step of the agent loop and gets the next scripted assistant
// message (streamed as `chat.completion.chunk` events when the request asks for a stream, else
// one `chat.completion`); a request without tools is a side request (titles, summaries) and gets
// a short text. Past the script's end every step gets the final text, which ends the turn.
import { estimateTokens, eventStream, sendJson, startScriptedStub } from './stub-server.js';
import type { ScriptedStub, StubRecord } from './stub-server.js';

/** One tool call the model makes: the tool's name and its arguments (sent as a JSON string). */
export interface ChatToolCall {
  name: string;
  args: Record<string, unknown>;
  /** A fixed id; by default the stub numbers them call_stub_001, call_stub_002, … */
  id?: string;
}

/** One assistant message: optional text and any number of tool calls. */
export interface ChatStep {
  text?: string;
  calls?: ChatToolCall[];
}

/** A step of text only. */
export const say = (text: string): ChatStep => ({ text });
/** A step of tool calls, with optional text before them. */
export const toolCalls = (calls: ChatToolCall[], text?: string): ChatStep => ({ text, calls });
/** One tool call. */
export const toolCall = (name: string, args: Record<string, unknown>, id?: string): ChatToolCall => ({ name, args, ...(id ? { id } : {}) });

export interface ChatStubRequest extends StubRecord {
  kind: 'step' | 'side' | 'models' | 'other';
  /** The model asked for (the body's `model`). */
  model?: string;
}

/** The stub: `url` ends in `/v1`, the base URL an OpenAI client is given. */
export interface ChatStub extends ScriptedStub<ChatStep, ChatStubRequest> {
  /** The tool call ids handed out, in order. */
  readonly toolCallIds: string[];
}

export interface ChatStubOptions {
  steps: ChatStep[];
  /** The text once the script has run out (default "Done."). */
  finalText?: string;
  /** The text of side requests (default "Scripted session"). */
  sideText?: string;
  /** The model ids `GET /v1/models` lists (default: ["stub-model"]). */
  models?: string[];
  /** Log each request to stderr (or set MODEL_STUB_DEBUG=1). */
  debug?: boolean;
}

/** Starts the stub on a free port of 127.0.0.1. */
export async function startChatStub(o: ChatStubOptions): Promise<ChatStub> {
  const toolCallIds: string[] = [];
  let counter = 0;
  return startScriptedStub<ChatStep, ChatStubRequest, { toolCallIds: string[] }>({
    steps: o.steps,
    tag: 'chat-stub',
    debug: o.debug ?? !!process.env.MODEL_STUB_DEBUG,
    urlPath: '/v1',
    extra: { toolCallIds },
    fail: (res, err) => sendJson(res, 500, { error: { message: String(err), type: 'server_error' } }),
    handle({ req, res, record, raw, body, path, answer }) {
      if (req.method === 'GET' && path.endsWith('/models')) {
        record.kind = 'models';
        sendJson(res, 200, { object: 'list', data: (o.models ?? ['stub-model']).map((id) => ({ id, object: 'model', created: 0, owned_by: 'stub' })) });
        return;
      }
      if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
        sendJson(res, 404, { error: { message: `stub: no ${req.method} ${path}`, type: 'invalid_request_error' } });
        return;
      }
      record.model = typeof body?.model === 'string' ? body.model : undefined;
      const step = answer<ChatStep>({ step: (s) => s, final: () => say(o.finalText ?? 'Done.'), side: () => say(o.sideText ?? 'Scripted session') });
      const calls = (step.calls ?? []).map((c) => {
        const id = c.id ?? `call_stub_${String(toolCallIds.length + 1).padStart(3, '0')}`;
        toolCallIds.push(id);
        return { id, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.args) } };
      });
      const id = `chatcmpl-stub-${++counter}`;
      const model = record.model ?? 'stub-model';
      const finish = calls.length > 0 ? 'tool_calls' : 'stop';
      const promptTokens = estimateTokens(raw);
      const usage = { prompt_tokens: promptTokens, completion_tokens: 10, total_tokens: promptTokens + 10 };
      if (body?.stream) {
        const send = eventStream(res);
        const chunk = (delta: object, finish_reason: string | null, extra: object = {}) =>
          send(undefined, { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason }], ...extra });
        chunk({ role: 'assistant', content: '' }, null);
        if (step.text) chunk({ content: step.text }, null);
        calls.forEach((c, index) => chunk({ tool_calls: [{ index, ...c }] }, null));
        chunk({}, finish, { usage });
        res.write('data: [DONE]\n\n');
        res.end();
      } else {
        sendJson(res, 200, {
          id,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: step.text ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}) }, finish_reason: finish }],
          usage,
        });
      }
    },
  }) as Promise<ChatStub>;
}
