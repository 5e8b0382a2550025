// Every entry point finds the workspace by one rule: the CLI (from a folder and with --workspace),
// an agent's hook (by its event's cwd) and the sidecar (by the folder its editor names) open the
// same journal for the same folder, outside git too, where the rule is journal-aware.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { overStdio } from './support/lsp-client.js';
import { sandbox, setsOf } from './support/takeback.js';

describe('one workspace root for every entry point', () => {
  it('outside git, a subfolder of a folder whose journal recorded something opens that journal, from the CLI, a hook and the sidecar', async () => {
    const sb = sandbox();
    sb.write('top.txt', 'a\n');
    sb.write('sub/s.txt', 'a\n');
    expect(sb.tb(['run', '--', 'sh', '-c', 'echo b > top.txt']).code).toBe(0);
    const sub = sb.abs('sub');

    expect(sb.json(['list'], { cwd: sub }).workspace).toBe(sb.ws);
    expect(sb.json(['--workspace', sub, 'list']).workspace).toBe(sb.ws);
    expect(sb.json(['--workspace', 'sub', 'list']).workspace).toBe(sb.ws);

    const event = { session_id: 's-1', transcript_path: null, cwd: sub, model: 'm', permission_mode: 'bypassPermissions' };
    for (const ev of [
      { ...event, hook_event_name: 'SessionStart', source: 'startup' },
      { ...event, hook_event_name: 'UserPromptSubmit', turn_id: 'turn-1', prompt: 'from the subfolder' },
    ]) {
      const r = sb.hook(ev, { agent: 'codex', cwd: sub });
      expect([r.code, r.stdout]).toEqual([0, '']);
    }
    expect(sb.json(['list']).turns.map((t: any) => t.label)).toContain('from the subfolder');

    const { editor, child } = overStdio(sub, 'neovim', sb.env);
    try {
      await editor.initialize();
      const list = await editor.request<any>('changes/list', {});
      expect(list.workspace).toBe(sb.ws);
      expect(setsOf(list).map((s: any) => s.label)).toEqual(["sh -c 'echo b > top.txt'"]);
    } finally {
      await editor.request('shutdown').catch(() => undefined);
      editor.conn.sendNotification('exit').catch(() => undefined);
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    }
    // One journal: none was made for the subfolder.
    expect(fs.readdirSync(path.join(sb.home, 'workspaces'))).toHaveLength(1);
  });
});
