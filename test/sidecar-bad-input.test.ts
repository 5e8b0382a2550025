// The built `takeback serve` over real stdio, fed what a broken or hostile client sends: bad
// params, a second initialize, ids JSON-RPC does not allow, bad framing and messages too large to
// hold. Each answer is JSON-RPC's; after what cannot be framed the process ends, saying why.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type Workspace } from './support/agent-sim.js';
import { rawServe, type RawServer } from './support/raw-rpc.js';

const open: { ws: Workspace; child: ChildProcess }[] = [];

afterEach(() => {
  for (const { ws, child } of open.splice(0)) {
    child.kill('SIGKILL');
    ws.cleanup();
  }
});

function serve(env: NodeJS.ProcessEnv = {}): { raw: RawServer; ws: Workspace } {
  const ws = makeWorkspace();
  const raw = rawServe(ws.root, { ...ws.env, ...env });
  open.push({ ws, child: raw.child });
  return { raw, ws };
}

const initParams = (root: string) => ({ processId: null, rootUri: pathToFileURL(root).href, capabilities: {} });

async function initialized(env: NodeJS.ProcessEnv = {}): Promise<{ raw: RawServer; ws: Workspace }> {
  const s = serve(env);
  s.raw.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initParams(s.ws.root) });
  expect((await s.raw.answer(1)).result).toBeDefined();
  s.raw.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
  return s;
}

describe('takeback serve, fed bad input', () => {
  it('answers bad params to codeLens, codeAction and executeCommand with -32602, not -32603', async () => {
    const { raw } = await initialized();
    raw.send({ jsonrpc: '2.0', id: 2, method: 'textDocument/codeLens', params: {} });
    raw.send({ jsonrpc: '2.0', id: 3, method: 'textDocument/codeAction', params: { textDocument: 5 } });
    raw.send({ jsonrpc: '2.0', id: 4, method: 'textDocument/codeAction', params: { textDocument: { uri: 'file:///x' }, range: null } });
    raw.send({ jsonrpc: '2.0', id: 5, method: 'workspace/executeCommand', params: null });
    raw.send({ jsonrpc: '2.0', id: 6, method: 'changes/list', params: { all: 'yes' } });
    raw.send({ jsonrpc: '2.0', id: 7, method: 'undo/preview', params: { selector: { last: true, bogus: 1 } } });
    for (const id of [2, 3, 4, 5, 6]) expect((await raw.answer(id)).error, `request ${id}`).toMatchObject({ code: -32602 });
    expect((await raw.answer(7)).error).toMatchObject({ code: -32602, message: 'undo/preview: selector.bogus: no such field', data: { field: 'bogus' } });
  });

  it('answers bad initialize params with -32602 and stays ready for a good initialize', async () => {
    const { raw, ws } = serve();
    raw.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, rootUri: 5, capabilities: null } });
    expect((await raw.answer(1)).error).toMatchObject({ code: -32602 });
    raw.send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { processId: null, rootUri: 'file://host/%zz', capabilities: {} } });
    expect((await raw.answer(2)).error).toMatchObject({ code: -32602 });
    raw.send({ jsonrpc: '2.0', id: 3, method: 'initialize', params: initParams(ws.root) });
    expect((await raw.answer(3)).result).toMatchObject({ serverInfo: { name: 'takeback' } });
  });

  it('refuses a second initialize and stays rooted in the first workspace', async () => {
    const { raw, ws } = await initialized();
    const other = fs.mkdtempSync(path.join(path.dirname(ws.root), 'other-'));
    raw.send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: initParams(other) });
    expect((await raw.answer(2)).error).toMatchObject({ code: -32600, message: expect.stringContaining('already') });
    raw.send({ jsonrpc: '2.0', id: 3, method: 'changes/list', params: {} });
    expect((await raw.answer(3)).result).toMatchObject({ workspace: ws.root });
  });

  it('answers requests whose id is an object, an array or a boolean with -32600 and id null, and runs none of them', async () => {
    const { raw } = await initialized();
    for (const id of [{ a: 1 }, [1], true]) raw.send({ jsonrpc: '2.0', id, method: 'turn/begin', params: { label: 'not to be begun' } });
    for (let i = 0; i < 3; i++) expect((await raw.answer(null)).error).toMatchObject({ code: -32600 });
    raw.send({ jsonrpc: '2.0', id: 2, method: 'changes/list', params: {} });
    expect((await raw.answer(2)).result).toMatchObject({ turns: [] });
  });

  it('answers a body that is not JSON with -32700 and goes on', async () => {
    const { raw } = await initialized();
    raw.write('Content-Length: 5\r\n\r\n{nope');
    expect((await raw.answer(null)).error).toMatchObject({ code: -32700 });
    raw.send({ jsonrpc: '2.0', id: 2, method: 'changes/list', params: {} });
    expect((await raw.answer(2)).result).toMatchObject({ turns: [] });
  });

  it('after a malformed header, ends with exit code 1 and the reason on stderr instead of going silent', async () => {
    const { raw } = await initialized();
    raw.write('Content-Type: application/json\r\n\r\n{}');
    expect(await Promise.race([raw.exited, new Promise((r) => setTimeout(() => r('still running'), 10_000))])).toBe(1);
    expect(raw.stderr()).toContain('a header without Content-Length');
  });

  it('refuses the header of a 300 MB message before its body: ends at once, without growing, saying why', async () => {
    const { raw } = await initialized();
    raw.write('Content-Length: 300000000\r\n\r\n{"jsonrpc":"2.0","id":2,"method":"changes/show","params":{"id":"');
    // The body never comes: a reader that waits for it would hang; one that reads it would grow.
    expect(await Promise.race([raw.exited, new Promise((r) => setTimeout(() => r('still running'), 10_000))])).toBe(1);
    expect(raw.stderr()).toMatch(/a message of 300000000 bytes, over the limit of 67108864/);
  });

  it('holds to TAKEBACK_MAX_MESSAGE_BYTES: a message under it is answered, one over it ends the process', async () => {
    const { raw } = await initialized({ TAKEBACK_MAX_MESSAGE_BYTES: '4096' });
    raw.send({ jsonrpc: '2.0', id: 2, method: 'changes/list', params: { agent: 'x'.repeat(3000) } });
    expect((await raw.answer(2)).result).toMatchObject({ sets: [] });
    raw.send({ jsonrpc: '2.0', id: 3, method: 'undo/preview', params: { selector: { last: true, paths: ['p'.repeat(5000)] } } });
    expect(await Promise.race([raw.exited, new Promise((r) => setTimeout(() => r('still running'), 10_000))])).toBe(1);
    expect(raw.stderr()).toMatch(/over the limit of 4096/);
    expect(raw.responses().some((r) => r.id === 3)).toBe(false);
  });
});
