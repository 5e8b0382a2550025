// protocol/ as a package a client can depend on: it compiles on its own (rootDir src: an import of
// server code fails the build), emits .d.ts for every module, its emitted JavaScript needs only
// the dependencies its package.json names, and package.json points at what the build emits.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/lsp-client.js';

const PROTOCOL = path.join(REPO_ROOT, 'protocol');

describe('the protocol package', () => {
  it('builds alone to JavaScript and .d.ts, needing only the dependencies it declares', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-protocol-'));
    try {
      execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(PROTOCOL, 'tsconfig.json'), '--outDir', out], {
        stdio: 'pipe',
      });
      const pkg = JSON.parse(fs.readFileSync(path.join(PROTOCOL, 'package.json'), 'utf8'));
      const sources = fs.readdirSync(path.join(PROTOCOL, 'src')).filter((n) => n.endsWith('.ts'));
      for (const src of sources) {
        expect(fs.existsSync(path.join(out, src.replace(/\.ts$/, '.d.ts'))), `${src}: no .d.ts`).toBe(true);
        const js = fs.readFileSync(path.join(out, src.replace(/\.ts$/, '.js')), 'utf8');
        for (const [, spec] of js.matchAll(/from '([^']+)'/g)) {
          if (spec!.startsWith('./')) expect(sources, `${src} imports ${spec}`).toContain(spec!.slice(2).replace(/\.js$/, '.ts'));
          else expect(Object.keys(pkg.dependencies), `${src} imports ${spec}, which protocol/package.json does not name`).toContain(spec);
        }
      }
      expect(pkg.types).toBe('dist/index.d.ts');
      expect(pkg.main).toBe('dist/index.js');
      const index = fs.readFileSync(path.join(out, 'index.d.ts'), 'utf8');
      for (const m of sources.filter((n) => n !== 'index.ts')) expect(index).toContain(`from './${m.replace(/\.ts$/, '.js')}'`);
      // The params' types are inferred from their schemas, and declared for clients.
      expect(fs.readFileSync(path.join(out, 'methods.d.ts'), 'utf8')).toMatch(/export type UndoApplyParams = v\.InferInput<typeof UndoApplyParams>/);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
