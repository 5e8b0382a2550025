// The package takeback publishes builds its native module where it is installed (npm's install
// script runs scripts/build-native.mjs): every source native/binding.gyp compiles, every header
// they include, and the hook client's source must be in the tarball, or an install from the
// registry would fall back to JavaScript everywhere without a word.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(import.meta.dirname, '..');

describe('the published package', () => {
  it('holds every source and header the native module and the hook client are built from', () => {
    const gyp = JSON.parse(fs.readFileSync(path.join(ROOT, 'native', 'binding.gyp'), 'utf8')) as { targets: { sources: string[] }[] };
    const sources = [...gyp.targets.flatMap((t) => t.sources), 'hook-client.c'];
    const headers = sources.flatMap((s) => [...fs.readFileSync(path.join(ROOT, 'native', s), 'utf8').matchAll(/^#include "([^"]+)"/gm)].map((m) => m[1]!));
    expect(sources.length).toBeGreaterThan(1);
    expect(headers.length).toBeGreaterThan(0);

    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const packed = new Set((JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path));
    for (const f of ['native/binding.gyp', 'scripts/build-native.mjs', ...[...sources, ...headers].map((s) => `native/${s}`)]) expect(packed, f).toContain(f);
  });
});
