// Vitest global setup: the tests run the built CLI (bin/takeback.js → dist/), so build once
// before any test when dist/ is missing or older than a source file. `npm test` builds first
// anyway (pretest); this covers `npx vitest run test/FILE`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function sources(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, d.name);
    if (d.isDirectory()) out.push(...sources(abs));
    else if (d.name.endsWith('.ts') && !d.name.endsWith('.d.ts')) out.push(abs);
  }
  return out;
}

/** True when some compiled file is missing or older than its source (or than tsconfig.json). */
function stale(): boolean {
  const config = fs.statSync(path.join(ROOT, 'tsconfig.json')).mtimeMs;
  for (const src of [...sources(path.join(ROOT, 'server')), ...sources(path.join(ROOT, 'protocol'))]) {
    const out = path.join(ROOT, 'dist', path.relative(ROOT, src)).replace(/\.ts$/, '.js');
    let built: number;
    try {
      built = fs.statSync(out).mtimeMs;
    } catch {
      return true;
    }
    if (built < fs.statSync(src).mtimeMs || built < config) return true;
  }
  return false;
}

/** True when /dev/null is still the character device (a test run as root must never replace it). */
function devNullIntact(): boolean {
  try {
    return fs.lstatSync('/dev/null').isCharacterDevice();
  } catch {
    return false;
  }
}

/** Fails the run when something replaced /dev/null (tmux and the shell tests break after that). */
function teardown(): void {
  if (!devNullIntact()) throw new Error('/dev/null is no longer a character device: a test replaced it');
}

export default function setup(): () => void {
  if (!devNullIntact()) throw new Error('/dev/null is not a character device on this machine: restore it (mknod -m 666 /dev/null c 1 3)');
  build();
  return teardown;
}

function build(): void {
  if (!stale()) return;
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status === 0) return;
  // tsc emits despite type errors: when every file was still written, say so and go on (the
  // type errors are `npm run typecheck`'s business); otherwise there is nothing to test.
  if (stale()) throw new Error(`npm run build failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  console.warn(`[global-setup] npm run build reported errors; dist/ was still written:\n${r.stdout}${r.stderr}`);
}
