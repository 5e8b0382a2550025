// Large git repositories keep command capture (issue 5): a tracked file whose stat matches git's
// index is not copied by the first scan (the snapshot refers to git's blob); when a command changes
// it, its "before" is read back from git, byte for byte, and undo puts it back. Untracked files
// count against the limits as before. takeback never writes git's index or object store.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { readGitIndex, trackedExcludedDirs } from '../server/core/scan/git-index.js';
import { looksUpInGit } from '../server/core/scan/scan.js';
import { filesOf, sandbox, sleep, tree, type Sandbox } from './support/takeback.js';
import { unitWorkspace, type UnitWorkspace } from './support/unit-workspace.js';

function commitAll(sb: Sandbox): void {
  sb.sh('git add -A && git -c user.name=t -c user.email=t@example.invalid commit -q -m init');
}

/** git's own folder, file by file, without the index's racy stamps moving: what takeback must never write. */
function gitState(sb: Sandbox): unknown {
  return tree(sb.abs('.git'));
}

describe('git-backed snapshots', () => {
  it('tracked files are not copied by the first scan; a command that changes them is undone byte for byte', async () => {
    const sb = sandbox({ git: true, env: { TAKEBACK_MAX_WORKSPACE_FILES: '5' } });
    for (let i = 0; i < 30; i++) sb.write(`src/m${i % 3}/f${i}.txt`, `tracked file ${i}\n`.repeat(i + 1));
    sb.write('bin.dat', Buffer.from([0, 1, 2, 255, 254, 0, 10]));
    commitAll(sb);
    await sleep(1100); // past git's racy second for the index just written
    sb.sh('git status --porcelain'); // as a user would: refreshes the index
    const gitBefore = gitState(sb);

    // 31 tracked files, a limit of 5: still captured, and nothing tracked is copied.
    const r = sb.tb(['run', '--', 'true']);
    expect(r.stderr).not.toMatch(/not captured/);
    expect(sb.blobs()).toEqual([]);
    expect(sb.json(['doctor']).capture.commands).toBe(true);

    const before = sb.tree();
    sb.tb(['run', '--', 'sh', '-c', 'printf "changed\\n" > src/m0/f0.txt && rm src/m1/f1.txt && printf x >> bin.dat && printf n > new.txt']);
    const set = sb.json(['list']).sets[0];
    expect(filesOf(set)).toEqual({ 'bin.dat': 'modified', 'new.txt': 'created', 'src/m0/f0.txt': 'modified', 'src/m1/f1.txt': 'deleted' });
    // The "before"s were read back from git into the journal: the set shows line counts.
    expect(set.files.find((f: any) => f.path === 'src/m1/f1.txt').removed).toBe(2);
    sb.json(['undo', set.id]);
    expect(sb.tree()).toEqual(before);
    sb.json(['redo', set.id]);
    expect(sb.read('src/m0/f0.txt').toString()).toBe('changed\n');
    sb.json(['undo', set.id]);
    expect(sb.tree()).toEqual(before);
    expect(gitState(sb)).toEqual(gitBefore);
  });

  it('a dependency folder git tracks files in (a committed node_modules/) is scanned after all; an untracked one is not', () => {
    const sb = sandbox({ git: true });
    sb.write('node_modules/vendored/index.js', 'module.exports = 1;\n');
    sb.write('pkg/node_modules/dep/out.txt', 'built\n');
    sb.write('src/a.ts', 'export {};\n');
    commitAll(sb);
    sb.write('.venv/untracked.txt', 'x\n'); // `.venv` holds nothing git tracks: still skipped
    sb.tb(['run', '--', 'true']);
    const before = sb.tree();
    const r = sb.tb(['run', '--', 'sh', '-c', "sed -i 's/1/2/' node_modules/vendored/index.js && rm pkg/node_modules/dep/out.txt && printf y > .venv/untracked.txt && printf n > node_modules/vendored/new.js"]);
    expect(r.code).toBe(0);
    const set = sb.json(['list']).sets[0];
    expect(filesOf(set)).toEqual({ 'node_modules/vendored/index.js': 'modified', 'node_modules/vendored/new.js': 'created', 'pkg/node_modules/dep/out.txt': 'deleted' });
    sb.json(['undo', set.id]);
    const back = sb.tree();
    expect({ ...back, '.venv/untracked.txt': before['.venv/untracked.txt'] }).toEqual(before);

    // Once git tracks a file in `.venv` too, the next scan looks there (the index moved), and
    // what it finds there is the baseline, not a change.
    sb.sh('git add -f .venv/untracked.txt && git -c user.name=t -c user.email=t@example.invalid commit -q -m venv');
    expect(sb.tb(['run', '--', 'true']).stderr).not.toMatch(/recorded/);
    sb.tb(['run', '--', 'sh', '-c', 'printf z > .venv/untracked.txt']);
    expect(filesOf(sb.json(['list']).sets[0])).toEqual({ '.venv/untracked.txt': 'modified' });
  });

  it('build output (dist/, build/) is scanned unless .gitignore ignores it, tracked or not', () => {
    const sb = sandbox({ git: true });
    sb.write('.gitignore', 'build/\n');
    sb.write('src/a.ts', 'export {};\n');
    commitAll(sb);
    sb.write('dist/bundle.js', 'bundle 1\n'); // untracked, not ignored: git status shows it, the scan looks at it
    sb.write('build/x.o', 'object\n'); // ignored
    sb.tb(['run', '--', 'true']);
    expect(sb.tb(['run', '--', 'sh', '-c', "sed -i 's/1/2/' dist/bundle.js && printf again > build/x.o"]).code).toBe(0);
    const set = sb.json(['list']).sets[0];
    expect(filesOf(set)).toEqual({ 'dist/bundle.js': 'modified' });
    sb.json(['undo', set.id]);
    expect(sb.read('dist/bundle.js').toString()).toBe('bundle 1\n');
  });

  it("git's index is looked up a folder at a time as by whole paths, its folders' entries interleaved in its order", async () => {
    const sb = sandbox({ git: true });
    // Sorted by bytes, `a/b-x` and `a/c` (folder a) come either side of `a/b/c` (folder a/b).
    const files = ['top.txt', 'a/b-x', 'a/b/c', 'a/c', 'a/b/d/e.ts', 'déjà/é.txt', 'z/z'];
    for (const f of files) sb.write(f, `${f}\n`);
    fs.mkdirSync(sb.abs('new\nline'));
    fs.writeFileSync(sb.abs('new\nline/f'), 'a newline in its folder\n');
    commitAll(sb);
    await sleep(1100);
    sb.sh('git update-index --refresh');
    for (const version of ['2', '4']) {
      sb.sh(`git update-index --index-version ${version}`);
      const gi = readGitIndex(sb.ws)!;
      for (const f of files) {
        const st = fs.lstatSync(sb.abs(f));
        const slash = f.lastIndexOf('/');
        const oid = gi.vouches(f, st);
        expect(oid, f).toMatch(/^[0-9a-f]{40}$/);
        expect(gi.vouchesIn(slash < 0 ? '' : f.slice(0, slash))!(f.slice(slash + 1), st), f).toBe(oid);
        expect(gi.vouches(f, { ...st, size: st.size + 1 })).toBeNull();
      }
      // A path with a newline cannot be named to cat-file: never vouched for.
      expect(gi.vouches('new\nline/f', fs.lstatSync(sb.abs('new\nline/f')))).toBeNull();
      expect(gi.vouchesIn('new\nline')).toBeNull();
      expect(gi.vouchesIn('nowhere')).toBeNull();
      expect([...gi.folders.get('a')!.keys()].sort()).toEqual(['b-x', 'c']);
    }
  });

  it("the folders kept are read off git's index, version 2 and version 4 (paths prefix-compressed) alike", () => {
    const sb = sandbox({ git: true });
    for (const f of ['dist/a.js', 'dist/sub/b.js', 'pkg/build/c.txt', 'pkg/builder/d.txt', 'src/x.ts', 'node_modules/m/i.js', 'déjà/out/é.txt', 'top/node_modules/x/node_modules/y.js', 'src/out']) sb.write(f, `${f}\n`);
    commitAll(sb);
    const want = ['dist', 'déjà/out', 'node_modules', 'pkg/build', 'top/node_modules', 'top/node_modules/x/node_modules'];
    const names = ['.git', 'node_modules', 'dist', 'build', 'out'];
    expect(trackedExcludedDirs(sb.ws, names)).toEqual(want);
    // A first scan reads them off the same pass over the index that reads its entries.
    expect(readGitIndex(sb.ws, names)!.trackedExcluded).toEqual(want);
    sb.sh('git update-index --index-version 4');
    expect(trackedExcludedDirs(sb.ws, names)).toEqual(want);
    expect(readGitIndex(sb.ws, names)!.trackedExcluded).toEqual(want);
    expect(trackedExcludedDirs(sb.ws, ['.git'])).toEqual([]);
    expect(readGitIndex(sb.ws, ['.git'])!.trackedExcluded).toEqual([]);
  });

  it("the folders kept are the same read off git's index a few bytes at a time (entries across the parts, names longer than a part), version 2 and version 4", () => {
    const sb = sandbox({ git: true });
    const long = `l${'o'.repeat(250)}ng`;
    const deep = Array.from({ length: 11 }, () => long).join('/');
    const files = ['a/dist/x.js', `${deep}/dist/deep.js`, `${deep}/src/z.ts`, 'b/node_modules/q/r.js', 'c/src/é.ts', ...Array.from({ length: 40 }, (_, i) => `many/f${i}/build/g.txt`)];
    for (const f of files) sb.write(f, `${f.length}\n`);
    commitAll(sb);
    expect(`${deep}/dist/deep.js`.length).toBeGreaterThan(2 * 1024);
    const names = ['node_modules', 'dist', 'build'];
    const want = ['a/dist', 'b/node_modules', `${deep}/dist`, ...Array.from({ length: 40 }, (_, i) => `many/f${i}/build`)].sort();
    for (const version of ['2', '4']) {
      sb.sh(`git update-index --index-version ${version}`);
      expect(readGitIndex(sb.ws, names)!.trackedExcluded).toEqual(want);
      for (const part of [64, 100, 333, 4096, 1 << 20]) expect(trackedExcludedDirs(sb.ws, names, part)).toEqual(want);
    }
    // A torn index (cut short): no folders, as when it cannot be read.
    const index = sb.abs('.git/index');
    fs.truncateSync(index, Math.floor(fs.statSync(index).size / 2));
    expect(trackedExcludedDirs(sb.ws, names, 100)).toEqual([]);
  });

  it('untracked files still count against the limits; a file touched but unchanged is no change', async () => {
    const sb = sandbox({ git: true, env: { TAKEBACK_MAX_WORKSPACE_FILES: '3' } });
    for (let i = 0; i < 10; i++) sb.write(`t${i}.txt`, `t${i}\n`);
    commitAll(sb);
    await sleep(1100);
    sb.sh('git status --porcelain');
    sb.tb(['run', '--', 'true']);
    // touch: the stat moves, the bytes do not (the blob's id says so without git).
    expect(sb.tb(['run', '--', 'sh', '-c', 'touch t1.txt t2.txt']).stderr).not.toMatch(/recorded/);
    expect(sb.json(['list']).sets).toEqual([]);
    // Four untracked files: over the limit of three copied files.
    sb.tb(['run', '--', 'sh', '-c', 'for i in 1 2 3 4; do printf $i > u$i.txt; done']);
    expect(sb.json(['list']).sets).toEqual([]);
    expect(sb.tb(['run', '--', 'true']).stderr).toMatch(/not captured here \(over 3 files\)/);
  });

  it('a file whose bytes differ from its blob (an end-of-line filter) is copied, never taken from git', async () => {
    const sb = sandbox({ git: true });
    sb.write('.gitattributes', '*.txt text eol=crlf\n');
    sb.write('a.txt', 'one\ntwo\n');
    commitAll(sb);
    // Check it out again so that the work tree has the filtered (CRLF) bytes git wrote.
    fs.rmSync(sb.abs('a.txt'));
    sb.sh('git checkout -- a.txt');
    await sleep(1100);
    sb.sh('git status --porcelain');
    const crlf = sb.read('a.txt');
    expect(crlf.toString()).toBe('one\r\ntwo\r\n');
    sb.tb(['run', '--', 'true']);
    sb.tb(['run', '--', 'sh', '-c', 'printf "three\\n" > a.txt']);
    const set = sb.json(['list']).sets[0];
    expect(filesOf(set)).toEqual({ 'a.txt': 'modified' });
    sb.json(['undo', set.id]);
    expect(sb.read('a.txt').equals(crlf)).toBe(true);
  });

  /**
   * A workspace in this process whose tracked files `files` (path → bytes) were written an hour
   * ago and committed, and its first snapshot (every file git's blob, none read); then `rewrite`
   * written again with the same bytes (a `sed -i` that matched nothing), git's index refreshed
   * past its own racy second (it vouches for them as they now are), and a scan that reads them
   * (their stat moved) within their racy window. Returns the workspace and a scan of it.
   */
  async function racyTracked(files: Record<string, Buffer>, rewrite: string[]): Promise<{ ws: UnitWorkspace; scan: () => ReturnType<typeof scanAndCommit> }> {
    const ws = unitWorkspace();
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: ws.root, stdio: 'pipe' });
    const hourAgo = new Date(Date.now() - 3600_000);
    for (const [p, b] of Object.entries(files)) {
      ws.write(p, b);
      fs.utimesSync(ws.abs(p), hourAgo, hourAgo);
    }
    git('init', '-q');
    git('add', '-A');
    git('commit', '-q', '-m', 'init');
    const scan = () => ws.journal.write(() => scanAndCommit(ws));
    expect(scan().read).toBe(0);
    for (const p of rewrite) fs.writeFileSync(ws.abs(p), files[p]!);
    await sleep(1100);
    git('update-index', '-q', '--refresh');
    const moved = scan();
    expect(moved.read).toBe(rewrite.length);
    expect(moved.changes).toEqual([]);
    return { ws, scan };
  }

  it("a warm scan reads a few tracked files that are only racy again rather than git's whole index; many bytes of them, it looks them up", async () => {
    expect(looksUpInGit(10, 12_000, 97_000_000)).toBe(false);
    expect(looksUpInGit(200, 0, 97_000_000)).toBe(true);
    expect(looksUpInGit(1, 2_000_000, 1_000_000)).toBe(true);
    expect(looksUpInGit(1, 100, NaN)).toBe(false);

    // A file of 3 bytes against an index of a few hundred: read again, still git's blob.
    const small = await racyTracked({ 'a.txt': Buffer.from('a1\n'), 'b.txt': Buffer.from('b1\n') }, ['a.txt']);
    const again = small.scan();
    expect(again.read).toBe(1);
    expect(again.changes).toEqual([]);
    const blob = execFileSync('git', ['rev-parse', 'HEAD:a.txt'], { cwd: small.ws.root }).toString().trim();
    expect(small.ws.journal.snapshot.packedAt(['a.txt']).get('a.txt')?.git).toBe(blob);

    // 64 KiB of them: git's index vouches for them, none is read.
    const big = await racyTracked({ 'big.bin': Buffer.alloc(65_536, 7), 'c.txt': Buffer.from('c1\n') }, ['big.bin', 'c.txt']);
    const looked = big.scan();
    expect(looked.read).toBe(0);
    expect(looked.changes).toEqual([]);
  });
});
