// The sidecar behind a stuck lock: another process (a real writer of the journal, stopped with
// SIGSTOP while it holds the lock) keeps every write waiting. The sidecar waits a bounded while,
// then answers an editor's undo with Busy naming the holder (nothing written), and queues the
// agent's events it is asked for (turns, captures) in the spill as the hooks do; once the holder
// is gone they are folded in, in order, the file tool's bytes kept. Over real stdio, the built
// `takeback serve`.
import { describe, expect, it, onTestFinished } from 'vitest';
import { overStdio } from './support/lsp-client.js';
import { sandbox, setsOf, stoppedWriter } from './support/takeback.js';


describe('the sidecar while another process holds the journal, stopped', () => {
  it('answers undo with Busy naming the holder, writes nothing, queues capture/begin and capture/end; after SIGCONT the capture is folded in with its bytes', async () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'before\n');
    sb.write('b.txt', 'b\n');
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "b2\\n" > b.txt']).code).toBe(0);

    const { editor } = overStdio(sb.ws, 'headless', sb.env);
    onTestFinished(() => editor.close().catch(() => undefined));
    await editor.initialize();

    // The change to undo: the person's own run, named by its id (--last names only agents' changes).
    const id: string = sb.json(['list']).sets[0].id;
    // A real writer of the journal, stopped while it holds the write lock.
    const writer = await stoppedWriter(sb);

    // The editor's undo: Busy (3007), the holder named, nothing written.
    const undo = await editor.request('undo/apply', { selector: { ids: [id] } }).then(
      () => null,
      (e: { code: number; message: string }) => e,
    );
    expect(undo).not.toBeNull();
    expect(undo!.code).toBe(3007);
    expect(undo!.message).toMatch(new RegExp(`the journal is locked by pid ${writer.pid} \\(.*input-type=module.*\\) for \\d+ s, stopped`));
    expect(sb.read('b.txt').toString()).toBe('b2\n');

    // The same through the editor's command: the message shown names the holder too.
    const cmd = await editor.runCommand({ title: 'undo', command: 'takeback.undo', arguments: [{ ids: [id] }] }).then(
      () => null,
      (e: { code: number }) => e,
    );
    expect(cmd!.code).toBe(3007);
    expect(editor.messages.some((m) => m.type === 1 && m.message.includes(`locked by pid ${writer.pid}`))).toBe(true);

    // A file tool captured through the sidecar: both ends queued, its "before" bytes kept.
    const begun = await editor.request<any>('capture/begin', { id: 'ed_write', paths: ['a.txt'], tool: 'Write' });
    expect(begun).toMatchObject({ id: 'ed_write', kind: 'files', queued: true });
    sb.write('a.txt', 'after\n');
    const ended = await editor.request<any>('capture/end', { id: 'ed_write' });
    expect(ended).toMatchObject({ id: 'ed_write', set: null, queued: true });
    expect(sb.json(['doctor'], { timeout: 25_000 }).queued).toBe(2);

    const gone = new Promise((resolve) => writer.on('exit', resolve));
    writer.kill('SIGCONT');
    await gone;

    const sets = setsOf(sb.json(['list']));
    const write = sets.find((s: any) => s.source.toolCallId === 'ed_write');
    expect(write.files.map((f: any) => [f.path, f.status, f.gap ?? null])).toEqual([['a.txt', 'modified', null]]);
    expect(sb.json(['doctor']).queued).toBe(0);
    // The sidecar's own undo goes through now, and the kept bytes undo the capture.
    const r = await editor.request<any>('undo/apply', { selector: { ids: [write.id] } });
    expect(r).toMatchObject({ written: true, complete: true });
    expect(sb.read('a.txt').toString()).toBe('before\n');
  }, 180_000);

  it('queues an agent’s turn/begin and turn/end around a captured tool call; after SIGCONT the turn holds its change, begun and ended', async () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'before\n');
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);

    const { editor } = overStdio(sb.ws, 'headless', sb.env);
    onTestFinished(() => editor.close().catch(() => undefined));
    await editor.initialize();
    const writer = await stoppedWriter(sb);

    const begun = await editor.request<any>('turn/begin', { label: 'rewrite a\nwith care', agent: 'my-agent', session: 'sess-9' });
    expect(begun).toEqual({ turn: null, closed: null, queued: true });
    expect(await editor.request<any>('capture/begin', { id: 'ag_write', paths: ['a.txt'], tool: 'Write', agent: 'my-agent', session: 'sess-9' })).toMatchObject({ queued: true });
    sb.write('a.txt', 'after\n');
    expect(await editor.request<any>('capture/end', { id: 'ag_write' })).toMatchObject({ queued: true });
    expect(await editor.request<any>('turn/end', { session: 'sess-9' })).toEqual({ turn: null, set: null, queued: true });
    expect(sb.json(['doctor'], { timeout: 25_000 }).queued).toBe(4);

    const gone = new Promise((resolve) => writer.on('exit', resolve));
    writer.kill('SIGCONT');
    await gone;

    const list = sb.json(['list']);
    const turn = list.turns.find((t: any) => t.session === 'sess-9');
    expect(turn).toMatchObject({ agent: 'my-agent', label: 'rewrite a', endLost: false });
    expect(turn.end).not.toBeNull();
    const write = setsOf(list).find((s: any) => s.source.toolCallId === 'ag_write');
    expect(write).toMatchObject({ turn: turn.id });
    expect(write.files.map((f: any) => [f.path, f.status, f.gap ?? null])).toEqual([['a.txt', 'modified', null]]);
    expect(sb.json(['doctor']).queued).toBe(0);
    // The turn's undo goes through the sidecar and puts back the bytes kept while the lock was held.
    expect(await editor.request<any>('undo/apply', { selector: { turn: turn.id } })).toMatchObject({ written: true, complete: true });
    expect(sb.read('a.txt').toString()).toBe('before\n');
  }, 180_000);
});
