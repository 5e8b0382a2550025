// The layers (.dependency-cruiser.cjs) hold in this tree, and the rules catch what they are for:
// a wrong-way import, a cycle between modules, a cycle between folders. The rules are run with
// the real dependency-cruiser, on this repository and on small trees written to a temporary
// folder.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/takeback.js';

const CRUISER = path.join(REPO_ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const CONFIG = path.join(REPO_ROOT, '.dependency-cruiser.cjs');

/** Runs dependency-cruiser with the repository's rules on `server` and `protocol` under `cwd`: its exit code and the rules it names. */
function cruise(cwd: string): { code: number | null; rules: string[]; out: string } {
  const r = spawnSync(process.execPath, [CRUISER, '--config', CONFIG, '--output-type', 'err', 'server', 'protocol'], { cwd, encoding: 'utf8' });
  const out = r.stdout + r.stderr;
  return { code: r.status, rules: [...new Set([...out.matchAll(/^\s*error ([a-z-]+):/gm)].map((m) => m[1]!))].sort(), out };
}

/** A tree of TypeScript files (`files`: path → text) with the repository's tsconfig, in a new temporary folder. */
function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-layers-'));
  fs.copyFileSync(path.join(REPO_ROOT, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
  // The repository's packages, so that an import of one resolves as it would here.
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  fs.mkdirSync(path.join(dir, 'protocol', 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'protocol', 'src', 'index.ts'), 'export const version = 1;\n');
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), text);
  }
  return dir;
}

describe('the layers', () => {
  it('hold in this repository', () => {
    const r = cruise(REPO_ROOT);
    expect(r.rules, r.out).toEqual([]);
    expect(r.code, r.out).toBe(0);
  });

  it('a wrong-way import fails: the domain reaching up into service, the daemon into an agent, protocol into the server', () => {
    const dir = tree({
      'server/core/open-workspace.ts': "import { listChanges } from '../service/history.js';\nexport const e = listChanges;\n",
      'server/service/history.ts': 'export const listChanges = 1;\n',
      'server/daemon/lifecycle.ts': "import { claude } from '../agents/claude-code.js';\nexport const d = claude;\n",
      'server/agents/claude-code.ts': 'export const claude = 1;\n',
      'protocol/src/types.ts': "import { e } from '../../server/core/open-workspace.js';\nexport const t = e;\n",
    });
    try {
      const r = cruise(dir);
      expect(r.code, r.out).not.toBe(0);
      expect(r.rules, r.out).toEqual(['core-is-the-bottom', 'daemon-knows-no-agent', 'protocol-stands-alone']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the domain importing the LSP library or the protocol fails', () => {
    const dir = tree({
      'server/core/journal/db.ts': "import type { ResponseError } from 'vscode-jsonrpc';\nimport type { T } from '../../../protocol/src/types.js';\nexport type D = ResponseError | T;\n",
      'protocol/src/types.ts': 'export type T = number;\n',
    });
    try {
      const r = cruise(dir);
      expect(r.code, r.out).not.toBe(0);
      expect(r.rules, r.out).toEqual(['core-owns-its-vocabulary', 'core-speaks-no-lsp']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a cycle between two modules fails, and so does one between two folders', () => {
    const dir = tree({
      'server/agents/actions.ts': "import type { Spec } from './spec.js';\nexport type Action = Spec | 1;\n",
      'server/agents/spec.ts': "import type { Action } from './actions.js';\nexport type Spec = Action | 2;\n",
      'server/core/store/gc.ts': "import { sets } from '../journal/sets.js';\nexport const gc = sets;\n",
      'server/core/journal/sets.ts': "import { blobs } from '../store/blobs.js';\nexport const sets = blobs;\n",
      'server/core/store/blobs.ts': 'export const blobs = 1;\n',
    });
    try {
      const r = cruise(dir);
      expect(r.code, r.out).not.toBe(0);
      expect(r.rules, r.out).toEqual(['no-cycle', 'no-folder-cycle']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
