// Generated workspaces for the benchmarks: git repositories with everything committed, made
// once and kept in the cache folder between runs (a `.complete` marker says a tree is whole).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Bumped when the layout below changes, so that an old cached tree is made again. */
const LAYOUT = 'v1';

/** A small seeded generator (mulberry32): the same tree on every machine. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Text of about `bytes` bytes that looks like source code. */
export function sourceText(rand, bytes, tag) {
  const lines = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const line = `export const ${tag}_${i} = ${Math.floor(rand() * 1e9)}; // ${'x'.repeat(Math.floor(rand() * 40))}`;
    lines.push(line);
    n += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

function git(cwd, ...args) {
  return execFileSync('git', args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 1 << 30,
    env: { ...process.env, GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.invalid', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.invalid' },
  }).toString();
}

/** Makes `dir` a git repository with everything (not ignored) committed. */
export function commitAll(dir) {
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'core.autocrlf', 'false');
  // No auto-gc in the background (the commit of 100,000 files would start one, and the gc below
  // would then find it running and fail).
  git(dir, 'config', 'gc.auto', '0');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench tree');
  // Pack the objects now (as a real clone would have them) rather than let auto-gc start mid-run.
  git(dir, 'gc', '-q');
}

/**
 * A generated tree of `files` files (about 1.2 KB of text each on average, a few larger ones),
 * 20 files a folder four levels deep, with a root `.gitignore` and a nested one, some ignored files
 * present (never committed), all the rest committed. Returns its path.
 */
export function generated(cache, files, log) {
  const dir = join(cache, `gen-${files}-${LAYOUT}`);
  if (existsSync(join(dir, '.complete'))) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`generating a ${files}-file git repository in ${dir} (once; kept for later runs)`);
  const rand = rng(files);
  writeFileSync(join(dir, '.gitignore'), '*.log\n/scratch/\n');
  let made = 0;
  for (let a = 0; made < files; a++) {
    for (let b = 0; b < 10 && made < files; b++) {
      for (let c = 0; c < 10 && made < files; c++) {
        const d = join(dir, `pkg${a}`, `mod${b}`, `part${c}`);
        mkdirSync(d, { recursive: true });
        for (let f = 0; f < 20 && made < files; f++) {
          const big = rand() < 0.01;
          const size = big ? 20_000 + Math.floor(rand() * 60_000) : 100 + Math.floor(rand() * 2000);
          writeFileSync(join(d, `file${f}.ts`), sourceText(rand, size, `v${made}`));
          made++;
        }
      }
    }
  }
  // A nested .gitignore and a few ignored files: the scan must skip them as git does.
  writeFileSync(join(dir, 'pkg0', '.gitignore'), '*.gen.ts\n');
  made++;
  for (let i = 0; i < 5; i++) writeFileSync(join(dir, 'pkg0', `out${i}.gen.ts`), sourceText(rand, 500, `g${i}`));
  mkdirSync(join(dir, 'scratch'));
  for (let i = 0; i < 50; i++) writeFileSync(join(dir, 'scratch', `s${i}.txt`), sourceText(rand, 300, `s${i}`));
  writeFileSync(join(dir, 'debug.log'), 'ignored\n');
  commitAll(dir);
  writeFileSync(join(dir, '.git', 'info', 'bench'), `${files}\n`);
  writeFileSync(join(dir, '.complete'), '');
  // `.complete` itself is untracked: ignore it locally so that the tree stays "everything committed".
  writeFileSync(join(dir, '.git', 'info', 'exclude'), '.complete\n');
  return dir;
}

/** A copy of a real folder (this project's node_modules), as a git repository with everything committed. */
export function realTree(cache, source, log) {
  const dir = join(cache, `real-node_modules-${LAYOUT}`);
  if (existsSync(join(dir, '.complete'))) return dir;
  rmSync(dir, { recursive: true, force: true });
  log(`copying ${source} to ${dir} (once; kept for later runs)`);
  cpSync(source, dir, { recursive: true, verbatimSymlinks: true });
  commitAll(dir);
  writeFileSync(join(dir, '.complete'), '');
  writeFileSync(join(dir, '.git', 'info', 'exclude'), '.complete\n');
  return dir;
}

/** Brings git's index up to date with the tree (stat only), so that the baselines start clean. */
export function refreshIndex(dir) {
  try {
    git(dir, 'update-index', '-q', '--really-refresh');
  } catch {
    // a dirty tree is reported by `git status` below
  }
  let st = git(dir, 'status', '--porcelain');
  if (st.trim() !== '') {
    // A run cut short left edits behind: this is the bench's own tree, put it back.
    git(dir, 'checkout', '-q', '--', '.');
    git(dir, 'clean', '-fdq');
    st = git(dir, 'status', '--porcelain');
  }
  if (st.trim() !== '') throw new Error(`${dir} is not clean:\n${st.slice(0, 500)}`);
}

export { git };

/**
 * A generated git tree of `files` files made the fast way, for the largest trees (1,000,000 files):
 * the blobs and one commit go straight into a pack through `git fast-import` (no loose objects, no
 * gc), then `git reset --hard` writes the work tree and the index with git's parallel checkout.
 * The layout is {@link generated}'s (20 files a folder, `pkgA/modB/partC`, the same ignore files
 * and ignored files), with smaller files (100 to 600 bytes, a few of 20 KB) so that the tree stays
 * about 4.5 GB on disk (a block a file). Kept in `cache` like the others; resolves to its path.
 */
export async function generatedFast(cache, files, log) {
  const dir = join(cache, `gen-${files}-fast-${LAYOUT}`);
  if (existsSync(join(dir, '.complete'))) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`generating a ${files}-file git repository in ${dir} through git fast-import (once; kept for later runs)`);
  const started = Date.now();
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'core.autocrlf', 'false');
  git(dir, 'config', 'gc.auto', '0');
  const { spawn } = await import('node:child_process');
  const fi = spawn('git', ['fast-import', '--quiet', '--done'], { cwd: dir, stdio: ['pipe', 'ignore', 'inherit'] });
  const done = new Promise((res, rej) => fi.on('exit', (code) => (code === 0 ? res() : rej(new Error(`git fast-import exited ${code}`)))));
  let chunk = [];
  let size = 0;
  /** Queues text for fast-import; waits for the pipe when a few megabytes are queued. */
  const put = async (s) => {
    chunk.push(s);
    size += s.length;
    if (size < 4 << 20) return;
    const ok = fi.stdin.write(chunk.join(''));
    chunk = [];
    size = 0;
    if (!ok) await new Promise((res) => fi.stdin.once('drain', res));
  };
  const blob = (mark, text) => put(`blob\nmark :${mark}\ndata ${Buffer.byteLength(text)}\n${text}\n`);
  const rand = rng(files);
  const paths = [];
  await blob(1, '*.log\n/scratch/\n');
  paths.push('.gitignore');
  await blob(2, '*.gen.ts\n');
  paths.push('pkg0/.gitignore');
  let made = 0;
  for (let a = 0; made < files; a++) {
    for (let b = 0; b < 10 && made < files; b++) {
      for (let c = 0; c < 10 && made < files; c++) {
        for (let f = 0; f < 20 && made < files; f++) {
          const big = rand() < 0.002;
          const bytes = big ? 20_000 : 100 + Math.floor(rand() * 500);
          await blob(paths.length + 1, sourceText(rand, bytes, `v${made}`));
          paths.push(`pkg${a}/mod${b}/part${c}/file${f}.ts`);
          made++;
        }
      }
    }
  }
  const stamp = `${Math.floor(Date.now() / 1000)} +0000`;
  await put(`commit refs/heads/main\ncommitter bench <bench@example.invalid> ${stamp}\ndata 10\nbench tree\n`);
  for (let i = 0; i < paths.length; i++) await put(`M 100644 :${i + 1} ${paths[i]}\n`);
  await put('\ndone\n');
  fi.stdin.end(chunk.join(''));
  await done;
  log(`  fast-import done in ${((Date.now() - started) / 1000).toFixed(0)} s; writing the work tree`);
  git(dir, '-c', 'checkout.workers=0', 'reset', '-q', '--hard', 'main');
  for (let i = 0; i < 5; i++) writeFileSync(join(dir, 'pkg0', `out${i}.gen.ts`), sourceText(rand, 500, `g${i}`));
  mkdirSync(join(dir, 'scratch'));
  for (let i = 0; i < 50; i++) writeFileSync(join(dir, 'scratch', `s${i}.txt`), sourceText(rand, 300, `s${i}`));
  writeFileSync(join(dir, 'debug.log'), 'ignored\n');
  writeFileSync(join(dir, '.git', 'info', 'bench'), `${files}\n`);
  writeFileSync(join(dir, '.git', 'info', 'exclude'), '.complete\n');
  writeFileSync(join(dir, '.complete'), '');
  log(`  made in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return dir;
}
