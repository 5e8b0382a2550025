// The first scan's native listing (native/scan-list.c, read by server/core/scan/listing.ts)
// against the walk that lists each folder in JavaScript: on one tree with links (to a folder, a
// dangling one), odd names (not UTF-8, a newline, spaces and accents), ignored and excluded
// folders, a nested .gitignore with a negation, files git's index vouches for and racy files just
// written, both walks write the same rows byte for byte and the same meta; a second full walk (the
// rules moved) after changes reports the same changes. Where the module is not built (no
// compiler) the scan lists in JavaScript, and this test says so and checks nothing native.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openWorkspace, type Workspace } from '../server/core/open-workspace.js';
import { readGitIndex, readGitTable } from '../server/core/scan/git-index.js';
import { decodeListing, ListedNames, listFolders } from '../server/core/scan/listing.js';
import { decodeRow } from '../server/core/scan/packed.js';
import { haveNativeList } from '../server/core/scan/native.js';
import { sandbox } from './support/takeback.js';

/** Runs `fn` with the native listing turned on or off for the scans it makes. */
function withNativeList<T>(on: boolean, fn: () => T): T {
  const was = process.env.TAKEBACK_NATIVE_LIST;
  process.env.TAKEBACK_NATIVE_LIST = on ? '1' : '0';
  try {
    return fn();
  } finally {
    if (was === undefined) delete process.env.TAKEBACK_NATIVE_LIST;
    else process.env.TAKEBACK_NATIVE_LIST = was;
  }
}

/** The rows of a workspace's snapshot, hex, keyed by folder. */
function rowsHex(ws: Workspace): Record<string, string> {
  return Object.fromEntries([...ws.journal.snapshot.rows()].map(([d, b]) => [d, Buffer.from(b).toString('hex')]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
}

describe('the native listing of a full walk', () => {
  it.runIf(haveNativeList())('writes the same rows and meta as the JavaScript listing, and a later full walk reports the same changes', () => {
    const sb = sandbox({ git: true });
    for (let d = 0; d < 6; d++) for (let f = 0; f < 8; f++) sb.write(`src/d${d}/f${f}.ts`, `export const v = ${d * 8 + f};\n`.repeat(1 + f));
    sb.write('naïve ☃ dir/é ü.txt', 'unicode\n');
    sb.write('run.sh', '#!/bin/sh\n', 0o755);
    sb.write('.gitignore', 'build-out/\n*.log\n');
    sb.write('build-out/a/b.js', 'ignored\n');
    sb.write('node_modules/pkg/index.js', 'excluded\n');
    sb.write('lib/.gitignore', '*.gen.ts\n!keep.gen.ts\n');
    sb.write('lib/x.gen.ts', 'ignored\n');
    sb.write('lib/keep.gen.ts', 'kept\n');
    fs.symlinkSync('src', sb.abs('to-src')); // a link to a folder: kept as a link, never followed
    fs.symlinkSync('nowhere', sb.abs('dangling'));
    fs.writeFileSync(sb.abs('new\nline.txt'), 'a newline in the name\n');
    fs.writeFileSync(Buffer.concat([Buffer.from(`${sb.ws}/`), Buffer.from([0x6e, 0xff, 0x2e, 0x74])]), 'not utf-8\n');
    // Tracked secrets by name (never git's blob: read, and kept as a gap), a file git tracks in an
    // excluded folder, a name that is U+FFFD itself, a fifo, and folders where a kept row loses
    // ignored children (an untracked log beside tracked files; a folder ignored by name deep down).
    sb.write('keys/id_rsa', 'not really a key\n');
    sb.write('keys/cert.pem', 'not really a cert\n');
    sb.write('keys/readme.md', 'keys\n');
    sb.write('.docker/config.json', '{}\n'); // a secret by its folder's name
    sb.write('app/config.json', '{}\n'); // not one
    sb.write('app/odd\\.ssh\\key.txt', 'a name with backslashes: a secret by its parts\n');
    sb.write('app/main.ts', 'export {};\n');
    // Names the listing must put in byte order, in a folder of few children and one of many:
    // prefixes of each other, case, punctuation, bytes past 0x7f.
    const order = ['a', 'ab', 'a.b', 'a-b', 'a_b', 'A', 'B', 'b', 'Z', 'z', '0', '9', '~', 'é', 'e', 'ü', '☃', 'ab0', 'ab.', 'abc'];
    for (const n of order) sb.write(`few/${n}`, `${n}\n`);
    for (const n of [...order, ...order.map((x) => `${x}${x}`)]) sb.write(`many/${n}`, `${n}\n`);
    sb.write('node_modules/vendored/index.js', 'tracked in an excluded folder\n');
    sb.write('src/d3/\uFFFD.ts', 'a valid name that is U+FFFD\n');
    sb.write('src/d4/trace.log', 'ignored, untracked\n');
    sb.write('src/d5/build-out/x.js', 'ignored folder, deep\n');
    spawnSync('mkfifo', [sb.abs('src/d1/fifo')]);
    const env = { ...sb.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
    expect(spawnSync('sh', ['-c', 'git add src run.sh .gitignore lib keys .docker app few many && git add -f node_modules/vendored && git commit -qm init'], { cwd: sb.ws, env }).status).toBe(0);
    // Racy: written after the commit, moments before the scans. The ignored log too: once the
    // rules no longer ignore it, a file made within the racy window of the last scan is reported
    // created (one made long before would be one the rules hid all along).
    sb.write('src/d0/f0.ts', 'rewritten just now\n');
    sb.write('debug.log', 'ignored\n');
    sb.write('fresh.txt', 'new\n');

    const open = (home: string) => openWorkspace({ workspace: sb.ws, env: { ...sb.env, TAKEBACK_HOME: path.join(sb.base, home) } });
    const plain = open('plain');
    const native = open('native');
    try {
      const scan = (ws: Workspace, on: boolean) => withNativeList(on, () => ws.journal.write(() => scanAndCommit(ws)));
      expect(scan(plain, false).status).toBe('baseline');
      expect(scan(native, true).status).toBe('baseline');
      const a = rowsHex(plain);
      expect(Object.keys(a)).toContain('src/d5');
      expect(Object.keys(a)).toContain('node_modules/vendored');
      expect(Object.keys(a)).not.toContain('build-out');
      expect(Object.keys(a)).not.toContain('src/d5/build-out');
      expect(Object.keys(a)).not.toContain('to-src');
      const keys = Object.fromEntries(decodeRow(Buffer.from(a.keys!, 'hex')).map((e) => [e.name, e.gap ?? (e.git ? 'git' : 'copied')]));
      expect(keys).toEqual({ 'id_rsa': 'secret', 'cert.pem': 'secret', 'readme.md': 'git' });
      const gaps = (dir: string) => Object.fromEntries(decodeRow(Buffer.from(a[dir]!, 'hex')).map((e) => [e.name, e.gap ?? (e.git ? 'git' : 'copied')]));
      expect(gaps('.docker')).toEqual({ 'config.json': 'secret' });
      expect(gaps('app')).toEqual({ 'config.json': 'git', 'main.ts': 'git', 'odd\\.ssh\\key.txt': 'secret' });
      expect(rowsHex(native)).toEqual(a);
      const meta = (ws: Workspace) => ({ ...ws.journal.snapshot.meta(), startedNs: '' });
      expect(meta(native)).toEqual(meta(plain));
      const m = plain.journal.snapshot.meta()!;
      expect(m.copied ?? 0).toBeLessThan(m.files); // git’s index vouched for some

      // Changes, then new rules: both walk everything again and report the same.
      sb.write('src/d1/f1.ts', 'changed\n');
      fs.rmSync(sb.abs('src/d2'), { recursive: true });
      sb.write('src/d6/new.ts', 'new\n');
      fs.rmSync(sb.abs('dangling'));
      fs.symlinkSync('run.sh', sb.abs('dangling'));
      sb.write('.gitignore', 'build-out/\n');
      const paths = (on: boolean, ws: Workspace) => scan(ws, on).changes.map((c) => `${c.path} ${c.before?.type ?? '-'}→${c.after?.type ?? '-'} ${c.after?.gap ?? ''}`);
      const want = paths(false, plain);
      expect(want).toContain('src/d1/f1.ts file→file ');
      expect(want).toContain('src/d6/new.ts -→file ');
      expect(want).toContain('debug.log -→file ');
      expect(paths(true, native)).toEqual(want);
      expect(rowsHex(native)).toEqual(rowsHex(plain));
    } finally {
      plain.journal.close();
      native.journal.close();
    }
  });

  it.runIf(haveNativeList())('says what a folder is: gone, a link (not followed), not a folder, or listed with each child’s lstat', () => {
    const sb = sandbox();
    sb.write('d/a.txt', 'abc');
    sb.write('file.txt', 'x');
    fs.symlinkSync('d', sb.abs('link'));
    expect(spawnSync('mkfifo', [sb.abs('pipe')]).status).toBe(0); // asked for as a folder: not opened, not waited on
    const names = ListedNames.make()!;
    const got = listFolders(sb.ws, ['d', 'gone', 'link', 'file.txt', 'pipe', ''], null, names)!.map((l) => l && decodeListing(l, false, names));
    expect(got.map((l) => (l ? [l.stat === null, l.names?.slice().sort() ?? null] : 'left'))).toEqual([
      [false, ['a.txt']],
      [true, null],
      [true, null],
      [true, null],
      [true, null],
      [false, ['d', 'file.txt', 'link', 'pipe']],
    ]);
    const st = fs.lstatSync(sb.abs('d/a.txt'));
    const at = got[0]!.stats[0]!;
    expect(at).toEqual({ mode: st.mode, size: 3, ino: st.ino, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs });
    const root = got[5]!;
    const link = root.stats[root.names!.indexOf('link')]!;
    expect(link.mode & 0o170000).toBe(0o120000);
  });

  it.runIf(haveNativeList())("matches children against git's index as readGitIndex does: index versions 2, 3 and 4, entries git would not trust, a split or torn index", () => {
    const sb = sandbox({ git: true });
    // Sorted by bytes, `a/b-x` and `a/c` (folder a) come either side of `a/b/c` (folder a/b).
    const files = ['top.txt', 'a/b-x', 'a/b/c', 'a/c', 'a/b/d/e.ts', 'déjà/é.txt', 'z/z', 'empty', 'assumed', 'skipped', 'racy', 'dist/out.js', 'pkg/build/b.txt'];
    for (const f of files) sb.write(f, f === 'empty' ? '' : `${f}\n`);
    sb.write('run.sh', '#!/bin/sh\n', 0o755);
    fs.mkdirSync(sb.abs('new\nline'));
    fs.writeFileSync(sb.abs('new\nline/f'), 'a newline in its folder\n');
    fs.writeFileSync(sb.abs('new\nname'), 'a newline in its name\n');
    fs.symlinkSync('top.txt', sb.abs('link'));
    sb.sh('git add -A && git -c user.name=t -c user.email=t@example.invalid commit -qm init');
    spawnSync('sleep', ['1.1']);
    sb.sh('git update-index --refresh >/dev/null; git update-index --assume-unchanged assumed && git update-index --skip-worktree skipped');
    sb.write('intent.txt', 'intent to add\n');
    sb.sh('git add -N intent.txt');
    // Racy: its entry's mtime is at or after the index file's.
    const later = new Date(Date.now() + 3600_000);
    fs.utimesSync(sb.abs('racy'), later, later);
    sb.sh('git update-index racy');

    /** Each regular file of the work tree (not .git) → git's blob for it by readGitIndex, and by the native listing. */
    const both = (): [Record<string, string | null>, Record<string, string | null>] => {
      const gi = readGitIndex(sb.ws)!;
      const table = readGitTable(sb.ws)!;
      expect(table).not.toBeNull();
      const byJs: Record<string, string | null> = {};
      const byNative: Record<string, string | null> = {};
      let level = [''];
      const names = ListedNames.make()!;
      while (level.length > 0) {
        const next: string[] = [];
        const listed = listFolders(sb.ws, level, table.table, names)!;
        level.forEach((dir, i) => {
          const l = decodeListing(listed[i]!, true, names);
          l.names!.forEach((name, k) => {
            const rel = dir === '' ? name : `${dir}/${name}`;
            const st = l.stats[k]!;
            if ((st.mode & 0o170000) === 0o040000) {
              if (name !== '.git') next.push(rel);
            } else if ((st.mode & 0o170000) === 0o100000) {
              byNative[rel] = l.oids![k]!;
              byJs[rel] = gi.vouches(rel, fs.lstatSync(sb.abs(rel)));
            }
          });
        });
        level = next;
      }
      return [byJs, byNative];
    };
    for (const version of ['3', '4', '2']) {
      if (version === '2') sb.sh('git update-index --no-assume-unchanged assumed && git update-index --no-skip-worktree skipped && git rm -q --cached intent.txt');
      sb.sh(`git update-index --index-version ${version}`);
      const [js, native] = both();
      expect(native, `index version ${version}`).toEqual(js);
      const vouched = Object.keys(js).filter((f) => js[f] !== null).sort();
      expect(vouched, `index version ${version}`).toEqual(['a/b-x', 'a/b/c', 'a/b/d/e.ts', 'a/c', 'déjà/é.txt', 'dist/out.js', 'pkg/build/b.txt', 'run.sh', 'top.txt', 'z/z', ...(version === '2' ? ['assumed', 'skipped'] : [])].sort());
      const names = ['.git', 'node_modules', 'dist', 'build'];
      expect(readGitTable(sb.ws, names)!.trackedExcluded).toEqual(readGitIndex(sb.ws, names)!.trackedExcluded);
      expect(readGitTable(sb.ws, names)!.trackedExcluded).toEqual(['dist', 'pkg/build']);
    }
    // An index this reader does not follow: neither reader uses it.
    sb.sh('git update-index --split-index');
    expect(readGitIndex(sb.ws)).toBeNull();
    expect(readGitTable(sb.ws)).toBeNull();
    sb.sh('git update-index --no-split-index');
    expect(readGitTable(sb.ws)).not.toBeNull();
    const index = fs.readFileSync(sb.abs('.git/index'));
    fs.writeFileSync(sb.abs('.git/index'), index.subarray(0, Math.floor(index.length / 2)));
    expect(readGitIndex(sb.ws)).toBeNull();
    expect(readGitTable(sb.ws)).toBeNull();
  });
});
