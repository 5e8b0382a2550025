// The sidecar behind a stuck lock: another process (a real writer of the journal, stopped with
// SIGSTOP while it holds the lock) keeps every write waiting. The sidecar waits a bounded while,
// then answers an editor's undo with Busy naming the holder (nothing written), and queues the
// captures it is asked for in the spill as the hooks do; once the holder is gone they are
// folded in, the file tool's bytes kept. Over real stdio, the built `takeback serve`.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { overStdio } from './support/lsp-client.js';
import { REPO_ROOT, sandbox, setsOf } from './support/takeback.js';

/** Waits until `child` has written `text` on stdout (a generous bound: a loaded machine is slow). */
function waitFor(child: ChildProcess, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no "${text}" from the writer: ${out}`)), 30_000);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`the writer left (${code}) before "${text}": ${out}`)));
  });
}

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

    const openJs = path.join(REPO_ROOT, 'dist', 'server', 'core', 'open-workspace.js');
    const script = `import { openWorkspace } from ${JSON.stringify(openJs)};
const e = openWorkspace({ cwd: ${JSON.stringify(sb.ws)} });
e.journal.write(() => { console.log('holding'); process.kill(process.pid, 'SIGSTOP'); });
e.journal.close();`;
    const writer = spawn(process.execPath, ['--input-type=module', '-e', script], { env: sb.env, stdio: ['ignore', 'pipe', 'inherit'] });
    onTestFinished(() => {
      writer.kill('SIGKILL');
    });
    await waitFor(writer, 'holding');

    // The editor's undo: Busy (3007), the holder named, nothing written.
    const undo = await editor.request('undo/apply', { selector: { last: true } }).then(
      () => null,
      (e: { code: number; message: string }) => e,
    );
    expect(undo).not.toBeNull();
    expect(undo!.code).toBe(3007);
    expect(undo!.message).toMatch(new RegExp(`the journal is locked by pid ${writer.pid} \\(.*input-type=module.*\\) for \\d+ s, stopped`));
    expect(sb.read('b.txt').toString()).toBe('b2\n');

    // The same through the editor's command: the message shown names the holder too.
    const cmd = await editor.runCommand({ title: 'undo', command: 'takeback.undo', arguments: [{ last: true }] }).then(
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
});
