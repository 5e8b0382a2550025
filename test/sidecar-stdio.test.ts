// The built `takeback serve` over real stdio (`npm run build` first; `npm test` does), with the
// agent's turn through the built `takeback hook claude-code`: the same suite as in-process, plus
// what only a real process shows: LSP's exit codes and a clean stdout.
import { describe, expect, it } from 'vitest';
import { cliHook, makeWorkspace } from './support/agent-sim.js';
import { overStdio } from './support/lsp-client.js';
import { sidecarSuite } from './support/sidecar-suite.js';

sidecarSuite((ws, kind) => overStdio(ws.root, kind, ws.env).editor, cliHook);

describe('takeback serve, the process', () => {
  it('answers initialize with its name and version, and exits 0 after shutdown and exit', async () => {
    const ws = makeWorkspace();
    try {
      const { editor, child, stderr } = overStdio(ws.root, 'neovim', ws.env);
      const init = await editor.initialize();
      expect(init.serverInfo).toEqual({ name: 'takeback', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
      expect(init.capabilities.executeCommandProvider?.commands).toEqual(['takeback.undo', 'takeback.undoForce', 'takeback.redo', 'takeback.preview']);
      const exited = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
      await editor.close();
      expect(await exited).toBe(0);
      expect(stderr()).toBe('');
    } finally {
      ws.cleanup();
    }
  });

  it('exits 1 when stdin closes without shutdown', async () => {
    const ws = makeWorkspace();
    try {
      const { editor, child } = overStdio(ws.root, 'headless', ws.env);
      await editor.initialize();
      const exited = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
      child.stdin!.end();
      expect(await exited).toBe(1);
    } finally {
      ws.cleanup();
    }
  });
});
