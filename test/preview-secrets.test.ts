// A preview never prints a secret's bytes: a file that holds a token or a key as it is now (on
// disk, or as unsaved text in an editor's buffer) is said to be "a secret: not shown" instead of
// a diff, through the command line and through the sidecar alike.
import { describe, expect, it } from 'vitest';
import type { PreviewResult } from '../protocol/src/types.js';
import { AFTER, agentTurn, inProcessHook, makeWorkspace } from './support/agent-sim.js';
import { overStdio } from './support/lsp-client.js';
import { sandbox } from './support/takeback.js';

/** A GitHub token that secretlint's recommended rules report (see secrets-content.test.ts). */
const TOKEN = `ghp_${'A1b2C3d4E5'.repeat(3)}x9Y8z7`;
const LINES = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);

describe('preview of a file that holds a secret now', () => {
  it('the command line: "a secret: not shown", no diff, the token nowhere in its output (text and JSON)', () => {
    const sb = sandbox();
    sb.write('a.txt', `${LINES.join('\n')}\n`);
    expect(sb.tb(['run', '--', 'sh', '-c', "sed -i 's/line 1$/LINE 1/' a.txt"]).code).toBe(0);
    const id = sb.json(['list']).sets[0].id as string;
    // Later, someone pastes a token into the file: the undo would be a conflict, and its preview
    // must not show what the file holds now.
    sb.write('a.txt', `LINE 1\n${LINES.slice(1).join('\n')}\nTOKEN=${TOKEN}\n`);
    const text = sb.tb(['preview', id]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('a secret: not shown');
    expect(text.stdout).not.toContain(TOKEN);
    const [file] = sb.json(['preview', id]).files;
    expect(file).toMatchObject({ path: 'a.txt', diff: null, note: 'a secret: not shown' });
    expect(JSON.stringify(file)).not.toContain(TOKEN);
  });

  it('a file without a secret still shows its diff', () => {
    const sb = sandbox();
    sb.write('a.txt', `${LINES.join('\n')}\n`);
    expect(sb.tb(['run', '--', 'sh', '-c', "sed -i 's/line 1$/LINE 1/' a.txt"]).code).toBe(0);
    const id = sb.json(['list']).sets[0].id as string;
    const [file] = sb.json(['preview', id]).files;
    expect(file.note).toBeNull();
    expect(file.diff).toContain('-LINE 1\n+line 1\n');
  });

  it('the sidecar: unsaved text holding a token is a conflict whose preview shows no diff and no token', async () => {
    const ws = makeWorkspace();
    const { editor } = overStdio(ws.root, 'neovim', ws.env);
    try {
      agentTurn(ws, inProcessHook(ws));
      await editor.initialize();
      await editor.open('notes.md');
      await editor.type('notes.md', `${AFTER['notes.md']}TOKEN=${TOKEN}\n`);
      const preview = await editor.request<PreviewResult>('undo/preview', { selector: { turn: 't1' } });
      const notes = preview.files.find((f) => f.path === 'notes.md')!;
      expect(notes.conflict).toMatchObject({ reason: 'unsaved-in-editor' });
      expect(notes).toMatchObject({ diff: null, note: 'a secret: not shown' });
      expect(JSON.stringify(preview)).not.toContain(TOKEN);
      // The other files of the turn keep their diffs.
      expect(preview.files.find((f) => f.path === 'data.txt')!.diff).toContain('-BETA\n+beta\n');
    } finally {
      await editor.close();
      ws.cleanup();
    }
  });
});
