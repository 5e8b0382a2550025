// The scripted model stub on its own (no Claude needed): steps, side requests, streaming and
// non-streaming answers, count_tokens, unknown paths.
import { afterEach, describe, expect, it } from 'vitest';
import { startModelStub } from './support/model-stub.js';
import type { ModelStub } from './support/model-stub.js';

let stub: ModelStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const TOOLS = [{ name: 'Bash', description: 'x', input_schema: { type: 'object' } }];

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(stub!.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const json = async (res: Response): Promise<any> => res.json();

function parseSse(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const event = /^event: (.*)$/m.exec(chunk)![1]!;
      const data = JSON.parse(/^data: (.*)$/m.exec(chunk)![1]!);
      return { event, data };
    });
}

describe('model stub', () => {
  it('streams the scripted steps for requests with tools, then a final text', async () => {
    stub = await startModelStub([
      [
        { type: 'text', text: 'Running it.' },
        { type: 'tool_use', name: 'Bash', input: { command: 'ls' } },
      ],
    ]);
    const res = await post('/v1/messages?beta=true', { model: 'claude-sonnet-4-5', stream: true, tools: TOOLS, messages: [] });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const e of events) expect(e.data.type).toBe(e.event);
    expect(events[0]!.data.message).toMatchObject({ role: 'assistant', model: 'claude-sonnet-4-5', content: [] });
    expect(events[3]!.data.delta).toEqual({ type: 'text_delta', text: 'Running it.' });
    expect(events[5]!.data.content_block).toEqual({ type: 'tool_use', id: 'toolu_stub_001', name: 'Bash', input: {} });
    expect(events[6]!.data).toMatchObject({ index: 1, delta: { type: 'input_json_delta', partial_json: '{"command":"ls"}' } });
    expect(events[8]!.data.delta.stop_reason).toBe('tool_use');

    // The script has run out: a final text, end_turn.
    const end = parseSse(await (await post('/v1/messages', { stream: true, tools: TOOLS, messages: [] })).text());
    expect(end.find((e) => e.event === 'content_block_delta')!.data.delta.text).toBe('Done.');
    expect(end.find((e) => e.event === 'message_delta')!.data.delta.stop_reason).toBe('end_turn');
    expect(stub.stepsUsed).toBe(1);
    expect(stub.toolUseIds).toEqual(['toolu_stub_001']);
    expect(stub.requests.map((r) => [r.kind, r.step])).toEqual([
      ['step', 0],
      ['step', 1],
    ]);
  });

  it('answers side requests (no tools) with text, without using a step; non-stream too', async () => {
    stub = await startModelStub([[{ type: 'tool_use', name: 'Write', input: { file_path: '/x', content: '' } }]]);
    const side = await json(await post('/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 50, messages: [] }));
    expect(side).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-haiku-4-5', stop_reason: 'end_turn' });
    expect(side.content).toEqual([{ type: 'text', text: 'Scripted session' }]);
    const step = await json(await post('/v1/messages', { model: 'm', tools: TOOLS, messages: [] }));
    expect(step.stop_reason).toBe('tool_use');
    expect(step.content).toEqual([{ type: 'tool_use', id: 'toolu_stub_001', name: 'Write', input: { file_path: '/x', content: '' } }]);
    expect(stub.requests.map((r) => r.kind)).toEqual(['side', 'step']);
  });

  it('answers count_tokens, model lookups and unknown paths', async () => {
    stub = await startModelStub([]);
    const count = await json(await post('/v1/messages/count_tokens?beta=true', { messages: [{ role: 'user', content: 'hello' }] }));
    expect(count.input_tokens).toBeGreaterThan(0);
    const model = await json(await fetch(stub.url + '/v1/models/claude-sonnet-4-5'));
    expect(model).toMatchObject({ type: 'model', id: 'claude-sonnet-4-5' });
    const other = await fetch(stub.url + '/api/whatever');
    expect(other.status).toBe(404);
    expect((await json(other)).type).toBe('error');
    expect(stub.stepsUsed).toBe(0);
  });

  it('takes more steps with push()', async () => {
    stub = await startModelStub([]);
    stub.push([{ type: 'text', text: 'pushed' }]);
    const msg = await json(await post('/v1/messages', { tools: TOOLS, messages: [] }));
    expect(msg.content).toEqual([{ type: 'text', text: 'pushed' }]);
    expect(msg.stop_reason).toBe('end_turn');
  });
});
