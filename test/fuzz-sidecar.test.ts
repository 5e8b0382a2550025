// Malformed JSON-RPC, framed correctly, sent to the built `takeback serve` over real stdio: every
// method of the protocol and of LSP that the server handles with damaged params, requests whose
// id JSON-RPC does not allow, unknown methods, notifications of every kind, bodies that are not
// JSON and JSON that is no message. Every request with a usable id is answered (a result or an
// error with that id); every message that is no valid request and has no usable id is refused
// with an error whose id is null, or dropped when it is a notification; the next valid request is
// served; and nothing is written: the workspace (which holds one recorded change an undo could
// take back) and everything beside it stay as they were.
//
// TAKEBACK_FUZZ_RPC_MESSAGES messages (default 1,200), with a fixed seed (20261201) so that CI is
// repeatable; TAKEBACK_FUZZ_SEED runs others.
// What breaks the framing itself (a bad header, a message over the size bound) ends the process
// on purpose: test/sidecar-bad-input.test.ts covers it.
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rawServe, type RawResponse } from './support/raw-rpc.js';
import { sandbox } from './support/takeback.js';
import { readTree, treeDiff } from './support/trees.js';

const MESSAGES = Number(process.env.TAKEBACK_FUZZ_RPC_MESSAGES ?? 1200);
const SEED = Number(process.env.TAKEBACK_FUZZ_SEED ?? 20261201);

/** Values no field of the protocol takes where an object, a selector or an id is wanted. */
const wrong = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, '', '\0', 'x'.repeat(10_000), '../../etc', [], [[]], { '': null }),
  fc.jsonValue({ maxDepth: 2 }).filter((v) => !(v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0)),
);

/** Selectors that are never valid: no kind, two kinds, an unknown field, or wrong types. */
const badSelector = fc.oneof(
  wrong.filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
  fc.constant({}),
  fc.constant({ last: true, turn: 't1' }),
  fc.record({ last: fc.constant(true), extra: wrong }),
  fc.record({ ids: wrong.filter((v) => !Array.isArray(v) || v.some((x) => typeof x !== 'string') || v.length === 0) }),
  fc.record({ turn: wrong.filter((v) => typeof v !== 'string') }),
  fc.record({ last: fc.constant(true), paths: fc.constantFrom([1], 'a.txt', [null], [{}]) }),
);

/** A request of a known method with params that are never valid for it. */
const badRequest: fc.Arbitrary<{ method: string; params: unknown }> = fc.oneof(
  fc.record({ method: fc.constantFrom('undo/preview', 'undo/apply'), params: fc.oneof(wrong, fc.record({ selector: badSelector }), fc.record({ selector: badSelector, force: wrong, direction: wrong })) }),
  fc.record({ method: fc.constant('changes/show'), params: fc.oneof(wrong, fc.record({ id: wrong.filter((v) => typeof v !== 'string') }), fc.constant({ id: '../1' }), fc.constant({ id: '999999' })) }),
  fc.record({ method: fc.constant('changes/list'), params: fc.oneof(fc.record({ all: wrong.filter((v) => typeof v !== 'boolean' && v !== null) }), fc.record({ turn: wrong.filter((v) => typeof v !== 'string' && v !== null) })) }),
  fc.record({ method: fc.constantFrom('capture/begin', 'capture/end'), params: fc.oneof(wrong, fc.record({ id: wrong.filter((v) => typeof v !== 'string') }), fc.constant({ id: 'a b/../c' })) }),
  fc.record({ method: fc.constantFrom('turn/begin', 'turn/end'), params: fc.oneof(wrong.filter((v) => v !== null), fc.record({ id: wrong.filter((v) => typeof v !== 'string' && v !== null) })) }),
  fc.record({ method: fc.constantFrom('textDocument/codeLens', 'textDocument/codeAction'), params: fc.oneof(wrong, fc.record({ textDocument: wrong }), fc.record({ textDocument: fc.constant({ uri: 'file:///etc/passwd' }), range: wrong })) }),
  fc.record({
    method: fc.constant('workspace/executeCommand'),
    params: fc.oneof(wrong, fc.record({ command: fc.constantFrom('takeback.undo', 'takeback.undoForce', 'takeback.redo', 'takeback.preview', 'rm -rf'), arguments: fc.oneof(wrong, fc.tuple(badSelector)) })),
  }),
  fc.record({ method: fc.constant('initialize'), params: fc.oneof(wrong, fc.record({ rootUri: wrong, capabilities: wrong })) }),
  fc.record({ method: fc.stringMatching(/^[a-z/$]{1,20}$/).filter((m) => !m.startsWith('$/')), params: wrong }),
);

/** One message of the fuzz, as the bytes of its body and what must come back. */
type Message =
  | { kind: 'request'; body: Buffer; id: number }
  | { kind: 'bad-id'; body: Buffer }
  | { kind: 'notification'; body: Buffer }
  | { kind: 'not-a-request'; body: Buffer };

const messageArb: fc.Arbitrary<(id: number) => Message> = fc.oneof(
  { weight: 6, arbitrary: badRequest.map((r) => (id: number): Message => ({ kind: 'request', id, body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, ...r })) })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom({ a: 1 }, [1], true, false, { id: 2 }, []), fc.constantFrom('turn/begin', 'capture/begin', 'undo/apply', 'changes/list'))
      .map(([badId, method]) => (): Message => ({ kind: 'bad-id', body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: badId, method, params: { label: 'never begun', id: 'never', selector: { last: true } } })) })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ method: fc.constantFrom('textDocument/didOpen', 'textDocument/didChange', 'textDocument/didSave', 'textDocument/didClose', 'initialized', '$/cancelRequest', 'exit-not', 'workspace/didChangeConfiguration', 'unknown/notification'), params: wrong })
      .map((n) => (): Message => ({ kind: 'notification', body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...n })) })),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom('{', 'null', '[]', '42', '"text"', '{"jsonrpc":"2.0"}', '\uFEFF{}', '{"id":null,"method":5}', '{"method":[]}'),
        fc.uint8Array({ minLength: 1, maxLength: 64 }).map((a) => Buffer.from(a).toString('latin1')),
      )
      .map((text) => (): Message => ({ kind: 'not-a-request', body: Buffer.from(text, 'latin1') })),
  },
);

describe('takeback serve under malformed JSON-RPC (fuzz)', () => {
  it(`${MESSAGES} malformed messages: each answered or refused, the next request served, nothing written`, async () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'alpha\n');
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "beta\\n" > a.txt && printf "new\\n" > b.txt']).code).toBe(0);
    const before = readTree(sb.base);

    const server = rawServe(sb.ws, sb.env);
    const got = server.responses();
    const send = server.sendBody;
    const answer = (pred: (r: RawResponse) => boolean, what: string) => server.take(pred, what, 15_000);

    send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, rootUri: pathToFileURL(sb.ws).href, capabilities: {} } })));
    expect((await answer((r) => r.id === 1, 'initialize')).result).toBeDefined();
    send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'initialized', params: {} })));

    const makers = fc.sample(messageArb, { numRuns: MESSAGES, seed: SEED });
    const counts: Record<string, number> = {};
    let nextId = 1000;
    for (const [i, make] of makers.entries()) {
      const m = make(nextId++);
      counts[m.kind] = (counts[m.kind] ?? 0) + 1;
      const text = m.body.toString('utf8').slice(0, 300);
      const nulls = got.filter((r) => r.id === null).length;
      send(m.body);
      if (m.kind === 'request') {
        const r = await answer((x) => x.id === m.id, `request ${text}`);
        expect(r.result !== undefined || (r.error && typeof r.error.code === 'number'), text).toBe(true);
        // A request takeback cannot use never fails inside the server.
        if (r.error) expect(r.error.code, `${text}: ${r.error.message}`).not.toBe(-32603);
      }
      // After each message a valid request is served (and, for a message with no usable id, its
      // refusal has come by the time the valid request's answer does: answers keep order).
      const probe = nextId++;
      send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: probe, method: 'changes/list', params: {} })));
      const served = await answer((x) => x.id === probe, `changes/list after message ${i}: ${text}`);
      expect(served.result, text).toMatchObject({ workspace: sb.ws });
      if (m.kind === 'bad-id') {
        const refusal = got.findIndex((r) => r.id === null && r.error?.code === -32600);
        expect(refusal, `no -32600 with id null for ${text}`).toBeGreaterThanOrEqual(0);
        got.splice(refusal, 1);
      }
      if (m.kind === 'not-a-request' || m.kind === 'notification') {
        // Refused with id null, or dropped: never answered with another id.
        for (const r of got.filter((x) => x.id !== null)) throw new Error(`unexpected answer ${JSON.stringify(r)} to ${text}`);
        got.splice(0, got.length, ...got.filter((r) => r.id !== null));
      }
      expect(got.filter((r) => r.id === null).length <= nulls + 1, text).toBe(true);
      got.splice(0, got.length);
    }
    send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'shutdown' })));
    await answer((r) => r.id === 2, 'shutdown');
    send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'exit' })));
    expect(await server.exited).toBe(0);

    // Nothing written: the workspace, its journal's home and everything beside them.
    const after = readTree(sb.base);
    const diff = treeDiff(after, before).filter((l) => !l.startsWith('tbhome/'));
    expect(diff, 'the fuzz changed files').toEqual([]);
    expect(sb.read('a.txt').toString()).toBe('beta\n');
    expect(sb.json(['list']).sets.map((s: any) => s.state)).toEqual(['applied']);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(MESSAGES);
  }, 600_000);
});
