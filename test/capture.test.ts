// Capture: what a file tool or a command changed, and what is never kept (secrets, the content
// behind a link, paths outside the workspace); what takeback itself wrote is not blamed on the
// next command; a failed command is still captured.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, filesOf, sandbox, setsOf, sleep, walkAll } from './support/takeback.js';

/** True when some file under `dir` contains `needle`. */
function anyFileContains(dir: string, needle: string): string | null {
  for (const f of walkAll(dir)) {
    const st = fs.lstatSync(f);
    if (st.isFile() && fs.readFileSync(f).includes(needle)) return f;
  }
  return null;
}

describe('secrets', () => {
  const SECRET_PATHS = ['.ssh/config', 'keys/id_rsa', 'certs/server.pem', '.aws/credentials', 'deploy.key'];

  for (const via of ['run', 'tool'] as const) {
    it(`a secret file changed by a ${via === 'run' ? 'command' : 'file tool'}: listed with gap secret, bytes never stored`, () => {
      const sb = sandbox();
      const OLD = 'OLD-SECRET-7f3a9c';
      const NEW = 'NEW-SECRET-b81e22';
      sb.write('.ssh/config', `Host x ${OLD}\n`, 0o600);
      sb.write('keys/id_rsa', `-----BEGIN ${OLD}-----\n`, 0o600);
      sb.write('normal.txt', 'normal\n');
      // A baseline scan sees the old secrets first (their bytes must not be kept either).
      sb.tb(['run', '--', 'true']);
      // The new bytes come from outside the workspace, so that the command line does not hold them.
      const stage = path.join(sb.base, 'new-secret');
      fs.writeFileSync(stage, `${NEW}\n`);
      const script =
        `cat ${stage} > .ssh/config && cat ${stage} > keys/id_rsa && mkdir -p certs .aws && ` +
        `cat ${stage} > certs/server.pem && cat ${stage} > .aws/credentials && cat ${stage} > deploy.key && printf 'n2\\n' > normal.txt`;
      if (via === 'run') expect(sb.tb(['run', '--', 'sh', '-c', script]).code).toBe(0);
      else {
        sb.tb(['capture', 'begin', '--id', 's1', '--tool', 'Write', ...SECRET_PATHS, 'normal.txt']);
        sb.sh(script);
        sb.tb(['capture', 'end', '--id', 's1']);
      }
      const set = sb.json(['list']).sets[0];
      const byPath = Object.fromEntries(set.files.map((f: any) => [f.path, f]));
      for (const p of SECRET_PATHS) {
        expect(byPath[p], p).toMatchObject({ gap: 'secret', undoable: false });
      }
      expect(byPath['.ssh/config'].status).toBe('modified');
      expect(byPath['certs/server.pem'].status).toBe('created');
      expect(byPath['normal.txt']).toMatchObject({ gap: null, undoable: true });
      // Neither the old nor the new bytes are anywhere under TAKEBACK_HOME (blobs, database, WAL).
      expect(anyFileContains(sb.home, OLD)).toBeNull();
      expect(anyFileContains(sb.home, NEW)).toBeNull();
      const show = sb.json(['show', set.id]);
      const cfg = show.files.find((f: any) => f.path === '.ssh/config');
      expect(cfg.before.sha256).toBeNull();
      expect(cfg.after.sha256).toBeNull();

      // Undo puts back what it kept and names the secrets, leaving them as they are.
      const secretsNow = sb.tree((rel) => rel === 'normal.txt');
      // It left files it could not take back: never reported as success.
      const undo = sb.json(['undo', set.id], { code: 6 });
      expect(undo.complete).toBe(false);
      // The folders the agent made stay: the secrets in them were not taken back.
      expect(undo.applied.map((a: any) => a.path).sort()).toEqual(['.aws', 'certs', 'normal.txt']);
      expect(undo.notes.join('\n')).toMatch(/\.aws: folder not empty, left in place/);
      expect(undo.gaps.map((g: any) => g.path).sort()).toEqual([...SECRET_PATHS].sort());
      expect(undo.gaps.every((g: any) => g.reason === 'secret')).toBe(true);
      expect(sb.read('normal.txt').toString()).toBe('normal\n');
      expect(sb.tree((rel) => rel === 'normal.txt')).toEqual(secretsNow);
      expect(sb.tb(['list']).stdout).toMatch(/\.ssh\/config .*\[gap: secret\]/);
    });
  }
});

describe('file tools', () => {
  it('a write through a symbolic link: the link is kept, the content behind it is a gap', () => {
    const sb = sandbox();
    sb.write('real.txt', 'real\n');
    fs.symlinkSync('real.txt', sb.abs('alias.txt'));
    sb.tb(['capture', 'begin', '--id', 'l1', '--tool', 'Edit', 'alias.txt']);
    fs.appendFileSync(sb.abs('alias.txt'), 'more\n'); // follows the link
    sb.tb(['capture', 'end', '--id', 'l1']);
    const set = sb.json(['list']).sets[0];
    expect(set.files).toEqual([expect.objectContaining({ path: 'alias.txt', gap: 'symlink-target', undoable: false, type: 'symlink' })]);
    const r = sb.json(['undo', set.id], { code: 6 });
    expect(r.complete).toBe(false);
    expect(r.gaps).toEqual([expect.objectContaining({ path: 'alias.txt', reason: 'symlink-target' })]);
    expect(sb.read('real.txt').toString()).toBe('real\nmore\n');
    expect(fs.readlinkSync(sb.abs('alias.txt'))).toBe('real.txt');
  });

  it('a path outside the workspace is recorded (absolute), named as a gap, its bytes never kept, never written', () => {
    const sb = sandbox();
    const outside = path.join(sb.base, 'outside.txt');
    fs.writeFileSync(outside, 'before\n');
    sb.write('in.txt', 'in\n');
    sb.tb(['capture', 'begin', '--id', 'o1', '--tool', 'Write', outside, 'in.txt']);
    fs.writeFileSync(outside, 'after\n');
    sb.write('in.txt', 'in 2\n');
    sb.tb(['capture', 'end', '--id', 'o1']);
    const set = sb.json(['list']).sets[0];
    expect(filesOf(set)).toEqual({ [outside]: 'modified', 'in.txt': 'modified' });
    expect(set.files.find((f: any) => f.path === outside)).toMatchObject({ gap: 'outside-workspace', undoable: false });
    // Its bytes are not kept, before or after (the workspace file's are).
    expect([sb.hasBlob('before\n'), sb.hasBlob('after\n'), sb.hasBlob('in\n'), sb.hasBlob('in 2\n')]).toEqual([false, false, true, true]);
    const r = sb.json(['undo', set.id], { code: 6 });
    expect(r.complete).toBe(false);
    expect(r.applied.map((a: any) => a.path)).toEqual(['in.txt']);
    expect(r.gaps.map((g: any) => g.reason)).toEqual(['outside-workspace']);
    expect(fs.readFileSync(outside, 'utf8')).toBe('after\n');
    expect(sb.read('in.txt').toString()).toBe('in\n');
  });

  it('a tool that changed nothing records no set; a second begin with the same id replaces the first', () => {
    const sb = sandbox();
    sb.write('same.txt', 'same\n');
    sb.tb(['capture', 'begin', '--id', 'n1', '--tool', 'Write', 'same.txt']);
    sb.write('same.txt', 'same\n'); // rewritten with the same bytes
    const end = sb.json(['capture', 'end', '--id', 'n1']);
    expect(end.set).toBeNull();
    sb.tb(['capture', 'begin', '--id', 'n2', '--tool', 'Write', 'other.txt']);
    sb.tb(['capture', 'begin', '--id', 'n2', '--tool', 'Write', 'same.txt']);
    sb.write('same.txt', 'changed\n');
    sb.write('other.txt', 'other\n');
    const set = sb.json(['capture', 'end', '--id', 'n2']).set;
    expect(filesOf(set)).toEqual({ 'same.txt': 'modified' });
    expect(sb.tb(['capture', 'end', '--id', 'n2']).code).toBe(3); // already ended
  });
});

describe('commands', () => {
  it('run passes the exit code through; a failed command is still captured', () => {
    const sb = sandbox();
    const r = sb.tb(['run', '--', 'sh', '-c', 'printf partial > partial.txt; exit 7']);
    expect(r.code).toBe(7);
    expect(filesOf(sb.json(['list']).sets[0])).toEqual({ 'partial.txt': 'created' });
    expect(sb.tb(['run', '--', 'no-such-command-xyz']).code).toBe(127);
    expect(sb.json(['list']).sets).toHaveLength(1);
  });

  it('Ctrl-C during run stops the command, yet what it did is recorded; a signal gives 128+signo', async () => {
    const sb = sandbox();
    sb.tb(['run', '--', 'true']);
    // Its own process group, as a terminal would have it: SIGINT goes to takeback and the command.
    const child = spawn(process.execPath, [BIN, 'run', '--', 'sh', '-c', 'printf x > a.txt; sleep 5; printf y > b.txt'], {
      cwd: sb.ws,
      env: sb.env,
      detached: true,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    for (let i = 0; i < 500 && !sb.exists('a.txt'); i++) await sleep(10);
    await sleep(100);
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(130);
    expect(sb.exists('b.txt')).toBe(false);
    expect(filesOf(sb.json(['list']).sets[0])).toEqual({ 'a.txt': 'created' });
    expect(sb.tb(['run', '--', 'sh', '-c', 'kill -KILL $$']).code).toBe(137);
  });

  it("takeback's own writes (file tools, undo) are not blamed on the next command", () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    sb.write('b.txt', 'b\n');
    sb.tb(['run', '--', 'true']); // baseline
    sb.tb(['capture', 'begin', '--id', 't1', '--tool', 'Write', 'a.txt']);
    sb.write('a.txt', 'a by a tool\n');
    sb.tb(['capture', 'end', '--id', 't1']);
    sb.tb(['run', '--', 'sh', '-c', 'printf "b2\\n" > b.txt']);
    expect(filesOf(sb.json(['list']).sets[0])).toEqual({ 'b.txt': 'modified' });
    sb.json(['undo', '2']);
    sb.json(['undo', '1']);
    sb.tb(['run', '--', 'sh', '-c', 'printf "c\\n" > c.txt']);
    const sets = setsOf(sb.json(['list']));
    expect(sets.map(filesOf)).toEqual([{ 'a.txt': 'modified' }, { 'b.txt': 'modified' }, { 'c.txt': 'created' }]);
  });

  it('a command whose files came back to where they started records no set', () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    const r = sb.tb(['run', '--', 'sh', '-c', 'cp a.txt a.bak && printf x > a.txt && mkdir tmpdir && touch tmpdir/t && mv a.bak a.txt && rm -r tmpdir']);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/recorded change/);
    expect(sb.json(['list']).sets).toEqual([]);
    // Only the files that did not come back are kept.
    sb.tb(['run', '--', 'sh', '-c', 'printf x > a.txt && printf y > b.txt && printf "a\\n" > a.txt']);
    expect(filesOf(sb.json(['list']).sets[0])).toEqual({ 'b.txt': 'created' });
  });
});
