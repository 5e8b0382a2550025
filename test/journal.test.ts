// The journal on disk: private modes (folders 0700, files 0600, even under umask 000, WAL and
// SHM included), content-addressed blobs stored once, ids checked before anything touches the
// disk, exit code 3 for what does not exist.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sandbox, sha256, sleep, walkAll, type Sandbox } from './support/takeback.js';

/** `takeback ...args` under umask 000, so that only takeback's own modes protect its files. */
function tbUmask0(sb: Sandbox, args: string[], input = '') {
  return spawnSync('sh', ['-c', 'umask 000; exec "$@"', 'sh', process.execPath, BIN, ...args], { cwd: sb.ws, env: sb.env, input, encoding: 'utf8' });
}

/** Every path under `home` with its permission bits (octal), folders marked with a trailing `/`. */
function modes(home: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of walkAll(home)) {
    const st = fs.lstatSync(f);
    out[(path.relative(home, f) || '.') + (st.isDirectory() ? '/' : '')] = (st.mode & 0o777).toString(8);
  }
  return out;
}

describe('the journal on disk', () => {
  it('folders are 0700 and files 0600 under TAKEBACK_HOME (database, WAL, SHM, blobs, log), even under umask 000', async () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    expect(tbUmask0(sb, ['run', '--', 'sh', '-c', 'printf b > b.txt']).status).toBe(0);
    tbUmask0(sb, ['hook', 'claude-code'], 'not json'); // makes logs/hook.log
    // While a command runs, the database is open: its -wal and -shm files exist.
    const child = spawn('sh', ['-c', 'umask 000; exec "$@"', 'sh', process.execPath, BIN, 'run', '--', 'sh', '-c', 'printf c > c.txt; sleep 2'], {
      cwd: sb.ws,
      env: sb.env,
      stdio: 'ignore',
    });
    const exited = new Promise((r) => child.on('exit', r));
    const db = path.join(sb.journalDir(), 'journal.db');
    for (let i = 0; i < 200 && !(fs.existsSync(`${db}-wal`) && fs.existsSync(`${db}-shm`)); i++) await sleep(10);
    const during = modes(sb.home);
    await exited;
    const after = modes(sb.home);
    expect(Object.keys(during)).toEqual(expect.arrayContaining([path.relative(sb.home, `${db}-wal`), path.relative(sb.home, `${db}-shm`)]));
    expect(Object.keys(after)).toEqual(expect.arrayContaining(['logs/hook.log', path.relative(sb.home, db)]));
    expect(Object.keys(after).filter((p) => p.startsWith('blobs/')).length).toBeGreaterThan(2);
    for (const m of [during, after]) {
      for (const [p, mode] of Object.entries(m)) expect(mode, p).toBe(p.endsWith('/') ? '700' : '600');
    }
  });

  it('equal bytes are stored once across paths, turns and workspaces', () => {
    const sb = sandbox();
    sb.tb(['turn', 'begin']);
    sb.tb(['run', '--', 'sh', '-c', 'printf same > a.txt && printf same > b.txt']);
    sb.tb(['turn', 'end']);
    sb.tb(['turn', 'begin']);
    sb.tb(['capture', 'begin', '--id', 'w1', '--tool', 'Write', 'c.txt']);
    sb.write('c.txt', 'same');
    sb.tb(['capture', 'end', '--id', 'w1']);
    sb.tb(['run', '--', 'sh', '-c', 'printf other > d.txt && cp a.txt e.txt']);
    sb.tb(['turn', 'end']);
    // Another workspace, same TAKEBACK_HOME.
    const ws2 = path.join(sb.base, 'ws2');
    fs.mkdirSync(ws2);
    sb.tb(['run', '--', 'sh', '-c', 'printf same > x.txt && printf other > y.txt'], { cwd: ws2 });
    sb.json(['undo', '--turn', 't2']);
    sb.json(['redo', '--turn', 't2']);
    expect(sb.json(['list']).sets).toHaveLength(3);
    expect(fs.readdirSync(path.join(sb.home, 'workspaces'))).toHaveLength(2);
    expect(sb.blobs()).toEqual([sha256('same'), sha256('other')].sort());
  });

  it('ids are checked before anything touches the disk: exit 2, no journal made, nothing written', () => {
    const sb = sandbox();
    sb.write('f.txt', 'f\n');
    const before = sb.tree();
    const bad = ['../x', 'a/b', 'x y', '.', 'a'.repeat(65), 'é', 'id;rm', 'a\nb'];
    const commands: ((id: string) => string[])[] = [
      (id) => ['show', id],
      (id) => ['undo', '1', id],
      (id) => ['redo', id, '--json'],
      (id) => ['preview', id],
      (id) => ['preview', '--turn', id],
      (id) => ['undo', '--after-turn', id],
      (id) => ['list', '--turn', id],
      (id) => ['capture', 'begin', '--id', id, 'f.txt'],
      (id) => ['capture', 'begin', '--id', 'ok', '--turn', id],
      (id) => ['capture', 'end', '--id', id],
      (id) => ['turn', 'begin', '--id', id],
      (id) => ['turn', 'end', '--id', id],
      (id) => ['run', '--turn', id, '--', 'sh', '-c', 'printf x > made-by-run'],
    ];
    commands.forEach((args, i) => {
      const id = bad[i % bad.length]!;
      const r = sb.tb(args(id));
      expect(r.code, `${args(id).join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr + r.stdout).toMatch(/invalid (change set|turn|capture) id/);
    });
    expect(fs.existsSync(sb.home), 'TAKEBACK_HOME was created').toBe(false);
    expect(sb.tree()).toEqual(before);
    // The same commands with a good id that does not exist: not found, and the journal exists.
    expect(sb.tb(['show', '7']).code).toBe(3);
    expect(fs.existsSync(sb.home)).toBe(true);
  });

  it('what does not exist: exit 3', () => {
    const sb = sandbox();
    sb.tb(['run', '--', 'sh', '-c', 'printf x > x.txt']);
    for (const args of [
      ['show', '999'],
      ['show', 'abc'],
      ['undo', '999'],
      ['undo', '1', '999'],
      ['redo', '999'],
      ['preview', '999'],
      ['capture', 'end', '--id', 'never-begun'],
      ['list', '--turn', 'nope'],
      ['undo', '--turn', 'nope'],
      ['turn', 'end'],
    ]) {
      const r = sb.tb(args);
      expect(r.code, args.join(' ')).toBe(3);
    }
    const j = sb.tb(['show', '999', '--json']);
    expect(JSON.parse(j.stdout)).toEqual({ error: { code: 'not-found', message: expect.stringContaining('999'), data: { id: '999' } } });
    expect(sb.read('x.txt').toString()).toBe('x'); // undo 1 999 wrote nothing
  });
});
