import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ignore from 'ignore';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openWorkspace } from '../server/core/open-workspace.js';
import { decodeRow } from '../server/core/scan/packed.js';
import { FolderRules, RULES_CACHE_BOUND, ruleDepths, ScanFilter } from '../server/core/scan/filter.js';
import { sandbox } from './support/takeback.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('FolderRules', () => {
  it('answers as one long-lived ignore instance does past the bound at which it is made anew', () => {
    const root = '*.log\n!keep.log\nbuild/\n/scratch/\n';
    const exclude = 'secret-*\n!secret-ok\n';
    const texts = [root, exclude];
    const rules = new FolderRules(texts);
    const plain = ignore().add(root).add(exclude);
    const names = ['a.log', 'keep.log', 'build/', 'build/x.ts', 'scratch/', 'src/scratch/', 'secret-1', 'secret-ok', 'src/main.ts', 'deep/er/keep.log'];
    let ignored = 0;
    for (let i = 0; i < RULES_CACHE_BOUND * 3 + 7; i++) {
      const name = names[i % names.length] ?? '';
      // A new path each time (as a walk asks), in folders that repeat (as a walk's do).
      const p = name.endsWith('/') ? `d${i % 97}/${name.slice(0, -1)}${i}/` : `d${i % 97}/f${i}-${name}`;
      const want = plain.test(p);
      expect(rules.test(p)).toEqual(want);
      if (i > RULES_CACHE_BOUND * 2 && want.ignored) ignored++;
    }
    // Past the second renewal the rules still ignore (the texts carried over, not an empty instance).
    expect(ignored).toBeGreaterThan(RULES_CACHE_BOUND / 8);
  });
});

describe('ScanFilter over more paths than the rules cache holds', () => {
  it('skips what git ignores, a deeper negation taking back the root rule, to the last path asked', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-filter-rules-'));
    made.push(root);
    fs.writeFileSync(path.join(root, '.gitignore'), '*.log\n/out/\n');
    fs.mkdirSync(path.join(root, 'pkg', 'logs'), { recursive: true });
    fs.writeFileSync(path.join(root, 'pkg', '.gitignore'), '!kept.log\n');
    fs.mkdirSync(path.join(root, 'out'));
    const filter = new ScanFilter(root, ['.git', 'node_modules']);
    const asked = RULES_CACHE_BOUND * 2 + 11;
    for (let i = 0; i < asked; i++) {
      const k = i % 4;
      const rel = k === 0 ? `pkg/logs/run${i}.log` : k === 1 ? `pkg/logs/kept.log` : k === 2 ? `src${i % 13}/f${i}.ts` : `out/f${i}.ts`;
      const want = k === 0 || k === 3;
      expect(filter.skips(rel, false), rel).toBe(want);
    }
    expect(filter.skips('pkg/kept.log', false)).toBe(false);
    expect(filter.skips('a.log', false)).toBe(true);
  });
});

describe("a folder's children asked about by name", () => {
  // Lines of every kind: by name, folder-only, anchored at one depth and another, wildcards in an
  // anchored line, negations of both kinds, and lines read whole (`**`, a bracket, an escape).
  const POOL = ['*.log', '!keep.log', 'build/', '/scratch/', 'a/b', '/x', 'd/*.ts', 'a/*', 'q?', '!q1', 'mod*/', '!mod2/', 'a/b/c/', '*.gen.ts', '!a/keep.gen.ts', '# a comment', '', '  ', 'foo  ', 'x/y/z/w'];
  const WHOLE = ['**/deep', 'a/**/c', '[ab].txt', '\\#hash', '/'];
  const NAMES = ['a.log', 'keep.log', 'build', 'scratch', 'a', 'b', 'c', 'x', 'd', 'e.ts', 'q1', 'q2', 'mod1', 'mod2', 'f.gen.ts', 'keep.gen.ts', 'foo', 'deep', 'y', 'z', 'w', 'a.txt', '#hash', 'plain'];

  /** A small generator of the same numbers each run (the test must fail the same way twice). */
  const seeded = (seed: number) => () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);

  it('gives the verdict of the whole path, for rules of every kind and folders of every depth', () => {
    const rnd = seeded(18);
    let checked = 0;
    let ignored = 0;
    for (let set = 0; set < 60; set++) {
      const lines = Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => POOL[Math.floor(rnd() * POOL.length)]!);
      if (set % 5 === 4) lines.push(WHOLE[Math.floor(rnd() * WHOLE.length)]!);
      const texts = set % 3 === 0 ? [lines.slice(0, 2).join('\n'), lines.slice(2).join('\n')] : [lines.join('\n')];
      const rules = new FolderRules(texts);
      const plain = ignore();
      for (const t of texts) plain.add(t);
      for (let k = 0; k < 40; k++) {
        const depth = Math.floor(rnd() * 5);
        const sub = Array.from({ length: depth }, () => NAMES[Math.floor(rnd() * NAMES.length)]!).join('/');
        const children = rules.childrenOf(sub);
        for (const name of NAMES) {
          for (const isDir of [false, true]) {
            const whole = `${sub === '' ? '' : `${sub}/`}${name}${isDir ? '/' : ''}`;
            const want = plain.test(whole);
            const got = children(name, isDir);
            expect({ ignored: got.ignored, unignored: got.unignored }, `${JSON.stringify(texts)} ${whole}`).toEqual({ ignored: want.ignored, unignored: want.unignored });
            checked++;
            if (want.ignored) ignored++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100_000);
    expect(ignored).toBeGreaterThan(checked / 20);
  });

  it('reads anchored lines by their depth and leaves whole what it cannot read with certainty', () => {
    expect(ruleDepths(['*.log\n/scratch/\n# c\n!keep.log\nd/*.ts\n'])).toEqual({ basename: ['*.log', '!keep.log'], depth: 2 });
    expect(ruleDepths(['build/\n', 'a/b/c/\n'])).toEqual({ basename: ['build/'], depth: 3 });
    // git's own exclude file, all comments (one of them a bracket): nothing read whole.
    expect(ruleDepths(['# *.[oa]\n# *~\n', '*.log\n'])).toEqual({ basename: ['*.log'], depth: 0 });
    for (const whole of ['**/x', 'a/**', '[/]x', '\\!x', 'a//b', '/', 'a\r\nb', '\uFEFFx']) expect(ruleDepths([whole]).depth, whole).toBe(Infinity);
  });
});

describe("a walk's verdicts on a folder's children, kept by name across folders", () => {
  it('are the whole paths’ verdicts, each folder told by its own folder whether the rules above ignore it', () => {
    // Rule files at three depths; folders ignored by an outer file and taken back by an inner one
    // (their children then under an ignored folder for the outer file); names repeated in every folder.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-child-rules-'));
    made.push(root);
    const rules: Record<string, string> = {
      '': '*.log\nmod*/\n/scratch/\nbuild/\n!keep.log\n',
      pkg1: '!mod2/\n*.gen.ts\nsrc/*/deep/\n',
      'pkg1/mod2': '!a.log\nindex.ts\n',
      'pkg2/lib': 'x/y/\n',
    };
    const names = ['index.ts', 'a.log', 'keep.log', 'f.gen.ts', 'build', 'mod1', 'mod2', 'src', 'deep', 'scratch', 'x', 'y', 'lib', 'pkg1', 'pkg2'];
    const walkNames = ['mod1', 'mod2', 'src', 'deep', 'x', 'y', 'lib', 'pkg1', 'pkg2', 'build', 'scratch'];
    // A tree four levels deep of those folder names (a few of each), with the rule files.
    const mk = (dir: string, depth: number) => {
      fs.mkdirSync(path.join(root, dir), { recursive: true });
      if (depth === 0) return;
      for (const n of walkNames.filter((_, i) => (i + depth + dir.length) % 3 === 0)) mk(dir === '' ? n : `${dir}/${n}`, depth - 1);
    };
    mk('', 4);
    for (const d of ['pkg1', 'pkg1/mod2', 'pkg2/lib', 'pkg1/src/x']) mk(d, 2);
    for (const [d, text] of Object.entries(rules)) fs.writeFileSync(path.join(root, d, '.gitignore'), text);
    const filter = new ScanFilter(root, ['.git']);
    const ancestorsOf = (dir: string) => (dir === '' ? [''] : ['', ...dir.split('/').map((_, i, a) => a.slice(0, i + 1).join('/'))]);
    let checked = 0;
    let ignoredSeen = 0;
    let ownIgnoredSeen = 0;
    let level: [string, readonly boolean[] | undefined][] = [['', undefined]];
    while (level.length > 0) {
      const next: [string, readonly boolean[] | undefined][] = [];
      for (const [dir, own] of level) {
        const chain = filter.chainFor(ancestorsOf(dir));
        const got = filter.childRules(chain, dir, own);
        for (const name of names) {
          for (const isDir of [false, true]) {
            const rel = dir === '' ? name : `${dir}/${name}`;
            const want = filter.ignoredIn(chain, rel, isDir);
            expect(got.ignored(name, isDir), `${rel}${isDir ? '/' : ''}`).toBe(want);
            checked++;
            if (want) ignoredSeen++;
          }
        }
        for (const d of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
          if (!d.isDirectory() || got.ignored(d.name, true)) continue;
          const rel = dir === '' ? d.name : `${dir}/${d.name}`;
          const own = got.ownOf(d.name);
          // Each rule file's own verdict on the folder kept, as its whole path gives it.
          expect(own, rel).toEqual(chain.map(([cd, ig]) => ig.test(`${cd === '' ? rel : rel.slice(cd.length + 1)}/`).ignored));
          if (own.includes(true)) ownIgnoredSeen++;
          next.push([rel, own]);
        }
      }
      level = next;
    }
    expect(checked).toBeGreaterThan(2000);
    expect(ignoredSeen).toBeGreaterThan(checked / 10);
    expect(ownIgnoredSeen).toBeGreaterThan(0); // pkg1/mod2: ignored by the root's file, taken back by pkg1's
  });
});

describe('the first scan with rules asked by name', () => {
  it('keeps exactly the paths the filter keeps by whole paths: nested rules, negations, tracked and ignored, odd names', () => {
    const sb = sandbox({ git: true });
    sb.write('.gitignore', '*.log\n/scratch/\nbuild/\n!keep.log\nmod*/\n!mod2/\nlib/gen/\n');
    for (let p = 0; p < 3; p++) {
      for (let m = 0; m < 4; m++) for (const f of ['index.ts', 'a.log', 'keep.log', 'x.gen.ts', 'keep.gen.ts']) sb.write(`pkg${p}/mod${m}/${f}`, `${p}${m}${f}\n`);
      sb.write(`pkg${p}/src/mod9/deep/er/f.ts`, 'deep\n');
      sb.write(`pkg${p}/scratch/s.txt`, 'not at the root: kept\n');
    }
    sb.write('pkg1/.gitignore', '*.gen.ts\n!keep.gen.ts\n/mod3/\nsrc/*/deep/\n');
    sb.write('pkg2/mod2/.gitignore', '!a.log\nindex.ts\n');
    sb.write('scratch/t.txt', 'ignored at the root\n');
    sb.write('build/out.js', 'ignored\n');
    sb.write('lib/gen/tracked.ts', 'an ignored folder holding a tracked file\n');
    sb.write('lib/main.ts', 'kept\n');
    sb.write('tracked.log', 'tracked, and ignored\n');
    fs.writeFileSync(sb.abs('pkg0/new\nline.log'), 'a newline in the name\n');
    fs.writeFileSync(Buffer.concat([Buffer.from(`${sb.ws}/pkg0/`), Buffer.from([0x6e, 0xff, 0x2e, 0x6c, 0x6f, 0x67])]), 'not utf-8\n');
    fs.writeFileSync(Buffer.concat([Buffer.from(`${sb.ws}/pkg0/`), Buffer.from([0x6f, 0xfe, 0x2e, 0x74, 0x73])]), 'not utf-8\n');
    const env = { ...sb.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
    expect(spawnSync('sh', ['-c', 'git add . && git add -f lib/gen/tracked.ts tracked.log && git commit -qm init'], { cwd: sb.ws, env }).status).toBe(0);

    // The paths the filter keeps when asked about each whole path, as the scan asked before.
    const filter = new ScanFilter(sb.ws, ['.git', 'node_modules']);
    const want: string[] = [];
    const walk = (dir: string) => {
      for (const d of fs.readdirSync(dir === '' ? sb.ws : sb.abs(dir), { withFileTypes: true })) {
        const rel = dir === '' ? d.name : `${dir}/${d.name}`;
        if (filter.skips(rel, d.isDirectory())) continue;
        want.push(rel);
        if (d.isDirectory()) walk(rel);
      }
    };
    walk('');
    expect(want).toContain('pkg2/mod2/a.log');
    expect(want).not.toContain('tracked.log');
    expect(want).not.toContain('pkg1/src/mod9/deep');

    for (const native of ['1', '0']) {
      const was = process.env.TAKEBACK_NATIVE_LIST;
      process.env.TAKEBACK_NATIVE_LIST = native;
      const ws = openWorkspace({ workspace: sb.ws, env: { ...sb.env, TAKEBACK_HOME: path.join(sb.base, `home-${native}`) } });
      try {
        expect(ws.journal.write(() => scanAndCommit(ws)).status).toBe('baseline');
        const got: string[] = [];
        for (const [dir, row] of ws.journal.snapshot.rows()) for (const e of decodeRow(row)) got.push(dir === '' ? e.name : `${dir}/${e.name}`);
        expect(got.sort(), `TAKEBACK_NATIVE_LIST=${native}`).toEqual([...want].sort());
      } finally {
        ws.journal.close();
        if (was === undefined) delete process.env.TAKEBACK_NATIVE_LIST;
        else process.env.TAKEBACK_NATIVE_LIST = was;
      }
    }
  });
});
