// bin/takeback.js's V8 code cache of the bundles, on a package of its own: bin/ copied from the
// repository and dist/server/cli/ holding small hand-written bundles, so that a test can rewrite
// a bundle (same size, same mtime) and see that the new code runs, never the cached old one.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../server/core/sha256.js';
import { BIN, cleanEnv, REPO_ROOT, sha256 } from './support/takeback.js';

/** bin/takeback.js caches a bundle only once it has not moved for this long (SETTLED_MS there), plus a margin. */
const SETTLED_WAIT_MS = 3300;

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A package with this repository's bin/ and an empty dist/server/cli/, and a TAKEBACK_HOME beside it. */
function fakePackage() {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-cache-')));
  made.push(base);
  fs.mkdirSync(path.join(base, 'pkg', 'bin'), { recursive: true });
  fs.mkdirSync(path.join(base, 'pkg', 'dist', 'server', 'cli'), { recursive: true });
  for (const f of ['takeback.js', 'package.json']) fs.copyFileSync(path.join(REPO_ROOT, 'bin', f), path.join(base, 'pkg', 'bin', f));
  const home = path.join(base, 'home');
  const cli = path.join(base, 'pkg', 'dist', 'server', 'cli');
  const run = (args: string[], env: NodeJS.ProcessEnv = {}, input = '') => {
    const r = spawnSync(process.execPath, [path.join(base, 'pkg', 'bin', 'takeback.js'), ...args], {
      cwd: base,
      // The cache in the home (its default), not in the suite's shared folder (vitest.config.ts).
      env: cleanEnv({ HOME: base, TAKEBACK_HOME: home, TAKEBACK_CODE_CACHE: undefined, ...env }),
      input,
      encoding: 'utf8',
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const caches = () => (fs.existsSync(path.join(home, 'cache')) ? fs.readdirSync(path.join(home, 'cache')).sort() : []);
  const cacheStat = (name: string) => fs.statSync(path.join(home, 'cache', name));
  return { base, home, cli, run, caches, cacheStat };
}

/** A main bundle (CommonJS) whose `main` prints `word` and returns `code`. */
const mainBundle = (word: string, code = 0) =>
  `"use strict";\nexports.main = async (argv) => { require('node:fs').writeSync(1, ${JSON.stringify(word)} + ' ' + argv.join(',') + '\\n'); return ${code}; };\n`;

describe('the code cache of the bundles (bin/takeback.js)', () => {
  it('is written after a settled bundle ran, read by the next run, and never runs a bundle rewritten since (same size, same mtime)', () => {
    const p = fakePackage();
    const bundle = path.join(p.cli, 'main.bundle.cjs');
    fs.writeFileSync(bundle, mainBundle('AAAA'));

    // A bundle written a moment ago is run but not cached: it could still be rewritten within one clock tick.
    expect(p.run(['list'])).toMatchObject({ code: 0, stdout: 'AAAA list\n' });
    expect(p.caches()).toEqual([]);

    sleep(SETTLED_WAIT_MS);
    expect(p.run(['list'])).toMatchObject({ code: 0, stdout: 'AAAA list\n' });
    const [name] = p.caches();
    expect(name).toMatch(/^main-list-[0-9a-f]{8}\.v8$/);
    const file = path.join(p.home, 'cache', name!);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(p.home, 'cache')).mode & 0o777).toBe(0o700);
    expect(fs.readFileSync(file, 'latin1').split('\n')[0]).toContain(bundle);

    // Read, accepted by V8, not written again.
    const before = p.cacheStat(name!);
    expect(p.run(['list'])).toMatchObject({ code: 0, stdout: 'AAAA list\n' });
    expect(p.cacheStat(name!).mtimeMs).toBe(before.mtimeMs);
    expect(p.cacheStat(name!).ino).toBe(before.ino);

    // Rewritten in place, same length, its mtime put back: the new code runs (V8 alone, which
    // checks only the length of the source, would take the old cache).
    const old = fs.statSync(bundle);
    fs.writeFileSync(bundle, mainBundle('BBBB'));
    fs.utimesSync(bundle, old.atime, old.mtime);
    expect(fs.statSync(bundle).size).toBe(old.size);
    expect(p.run(['list'])).toMatchObject({ code: 0, stdout: 'BBBB list\n' });
    expect(p.run(['list'])).toMatchObject({ code: 0, stdout: 'BBBB list\n' });

    // Replaced by a rename, same length, same mtime: the same.
    const next = `${bundle}.new`;
    fs.writeFileSync(next, mainBundle('CCCC'));
    fs.utimesSync(next, old.atime, old.mtime);
    fs.renameSync(next, bundle);
    expect(p.run(['list'])).toMatchObject({ code: 0, stdout: 'CCCC list\n' });

    // Once settled, the new bundle's cache replaces the old one, and serves the next run.
    sleep(SETTLED_WAIT_MS);
    expect(p.run(['list'])).toMatchObject({ code: 0, stdout: 'CCCC list\n' });
    expect(p.caches()).toEqual([name]);
    expect(p.cacheStat(name!).mtimeMs).toBeGreaterThan(before.mtimeMs);
    expect(p.run(['list'])).toMatchObject({ code: 0, stdout: 'CCCC list\n' });
  });

  it('one cache a command; none after a failure, none for gc, serve or with TAKEBACK_CODE_CACHE=0; a damaged one is replaced', () => {
    const p = fakePackage();
    const bundle = path.join(p.cli, 'main.bundle.cjs');
    fs.writeFileSync(bundle, `"use strict";\nexports.main = async (argv) => (argv[0] === 'fail' ? 3 : 0);\n`);
    sleep(SETTLED_WAIT_MS);
    expect(p.run(['fail']).code).toBe(3);
    expect(p.run(['gc']).code).toBe(0);
    expect(p.run(['serve']).code).toBe(0);
    expect(p.run(['list'], { TAKEBACK_CODE_CACHE: '0' }).code).toBe(0);
    expect(p.caches()).toEqual([]);
    expect(p.run(['-w', 'show', 'show', '7']).code).toBe(0);
    expect(p.run(['--version']).code).toBe(0);
    expect(p.run(['list', '--help']).code).toBe(0);
    expect(p.caches().map((n) => n.replace(/-[0-9a-f]{8}\.v8$/, ''))).toEqual(['main-help', 'main-show', 'main-version']);

    // A cache whose header is right and whose code is not: V8 refuses it, the command runs, and it is rewritten.
    const show = p.caches().find((n) => n.startsWith('main-show'))!;
    const file = path.join(p.home, 'cache', show);
    const header = fs.readFileSync(file).subarray(0, fs.readFileSync(file).indexOf(10) + 1);
    const damaged = Buffer.concat([header, Buffer.alloc(4096, 7)]);
    fs.writeFileSync(file, damaged);
    expect(p.run(['show', '1']).code).toBe(0);
    const rewritten = fs.readFileSync(file);
    expect(rewritten.equals(damaged)).toBe(false);
    expect(rewritten.subarray(0, header.length).equals(header)).toBe(true);
  });

  it('TAKEBACK_CODE_CACHE=<absolute folder>: one cache there for every home, none in the homes; a relative one is the default', () => {
    const p = fakePackage();
    fs.writeFileSync(path.join(p.cli, 'main.bundle.cjs'), mainBundle('SHARED'));
    sleep(SETTLED_WAIT_MS);
    const shared = path.join(p.base, 'shared-cache');
    const inShared = () => (fs.existsSync(shared) ? fs.readdirSync(shared).sort() : []);
    const other = path.join(p.base, 'other-home');
    expect(p.run(['list'], { TAKEBACK_CODE_CACHE: shared })).toMatchObject({ code: 0, stdout: 'SHARED list\n' });
    const [name] = inShared();
    expect(name).toMatch(/^main-list-[0-9a-f]{8}\.v8$/);
    expect(fs.statSync(shared).mode & 0o777).toBe(0o700);
    const first = fs.statSync(path.join(shared, name!));
    // Another home's first run reads it: not written again, and nothing in either home.
    expect(p.run(['list'], { TAKEBACK_CODE_CACHE: shared, TAKEBACK_HOME: other })).toMatchObject({ code: 0, stdout: 'SHARED list\n' });
    expect(inShared()).toEqual([name]);
    expect(fs.statSync(path.join(shared, name!)).ino).toBe(first.ino);
    expect(fs.statSync(path.join(shared, name!)).mtimeMs).toBe(first.mtimeMs);
    expect(p.caches()).toEqual([]);
    expect(fs.existsSync(path.join(other, 'cache'))).toBe(false);
    // A value that is not an absolute path (nor 0) keeps the cache in the home.
    expect(p.run(['list'], { TAKEBACK_CODE_CACHE: 'shared-cache' })).toMatchObject({ code: 0, stdout: 'SHARED list\n' });
    expect(p.caches()).toEqual([name]);
  });

  it('a bundle older than the compiled module is not used; the hook bundles load as before', () => {
    const p = fakePackage();
    fs.writeFileSync(path.join(p.cli, 'main.bundle.cjs'), mainBundle('BUNDLE'));
    fs.writeFileSync(path.join(p.cli, 'main.js'), `export async function main(argv) { process.stdout.write('MODULE ' + argv.join(',') + '\\n'); return 0; }\n`);
    const t = Date.now() / 1000;
    fs.utimesSync(path.join(p.cli, 'main.bundle.cjs'), t - 60, t - 60);
    expect(p.run(['list'])).toMatchObject({ code: 0, stdout: 'MODULE list\n' });
    fs.utimesSync(path.join(p.cli, 'main.js'), t - 120, t - 120);
    expect(p.run(['list'])).toMatchObject({ code: 0, stdout: 'BUNDLE list\n' });

    // `hook <agent>` (exactly two arguments) runs hook.bundle.cjs; with TAKEBACK_HOOK_DAEMON, forward.bundle.cjs first.
    fs.writeFileSync(path.join(p.cli, 'hook.bundle.cjs'), `exports.runHook = (agent, text) => { require('node:fs').writeSync(1, 'HOOK ' + agent + ' ' + (text ?? 'stdin') + '\\n'); return 0; };\n`);
    fs.writeFileSync(path.join(p.cli, 'forward.bundle.cjs'), `exports.runForwardedHook = async (agent, inProcess) => { require('node:fs').writeSync(1, 'FORWARD ' + agent + '\\n'); await inProcess('given'); return 0; };\n`);
    expect(p.run(['hook', 'codex'], { TAKEBACK_HOOK_DAEMON: '0' })).toMatchObject({ code: 0, stdout: 'HOOK codex stdin\n' });
    expect(p.run(['hook', 'codex'], { TAKEBACK_HOOK_DAEMON: '1' })).toMatchObject({ code: 0, stdout: 'FORWARD codex\nHOOK codex given\n' });
    expect(p.run(['hook', 'codex', 'x'])).toMatchObject({ code: 0, stdout: 'BUNDLE hook,codex,x\n' });
  });

  it('the real bundles print the same with and without the cache', () => {
    const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-cache-home-')));
    made.push(home);
    const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      spawnSync(process.execPath, [BIN, ...args], { cwd: home, env: cleanEnv({ HOME: home, TAKEBACK_HOME: home, TAKEBACK_CODE_CACHE: undefined, ...env }), encoding: 'utf8' });
    const settled = Date.now() - fs.statSync(path.join(REPO_ROOT, 'dist', 'server', 'cli', 'main.bundle.cjs')).ctimeMs;
    if (settled < SETTLED_WAIT_MS) sleep(SETTLED_WAIT_MS - settled);
    const plain = run(['--version'], { TAKEBACK_CODE_CACHE: '0' });
    expect(plain.status).toBe(0);
    for (let i = 0; i < 2; i++) expect(run(['--version'])).toMatchObject({ status: 0, stdout: plain.stdout, stderr: '' });
    expect(fs.readdirSync(path.join(home, 'cache')).some((n) => n.startsWith('main-version-'))).toBe(true);
  });
});

describe('sha256Hex (the workspace key without node:crypto)', () => {
  it('is SHA-256, as node:crypto computes it, of strings (as UTF-8) and bytes', () => {
    for (let len = 0; len < 200; len++) for (const ch of ['a', 'é', '€', '😀']) expect(sha256Hex(ch.repeat(len))).toBe(sha256(ch.repeat(len)));
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) & 0xff));
    expect(sha256Hex(bytes)).toBe(sha256(bytes));
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
