// Several processes writing the journal at once: 8 hook processes in parallel (Write and Bash
// tool calls of one turn, the first ones on a journal that does not exist yet), and 8 `takeback
// run` at once. No set is lost and the journal loads.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesOf, hookAsync, sandbox, type Run, type Sandbox } from './support/takeback.js';

const SESSION = 'c0ffee00-0000-4000-8000-000000000001';

function event(sb: Sandbox, name: string, extra: object = {}): object {
  return { session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra };
}

function expectQuiet(runs: Run[]): void {
  for (const r of runs) {
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
  }
}

describe('parallel processes', () => {
  it('8 hook processes at once (6 Write, 2 Bash), twice: no set lost, journal loads', async () => {
    const sb = sandbox();
    sb.write('seed.txt', 'seed\n');
    for (let i = 0; i < 6; i += 2) sb.write(`w1-${i}.txt`, `old ${i}\n`); // some Writes modify, some create
    const opts = { cwd: sb.ws, env: sb.env };
    const writeIds: Record<string, string> = {};
    const bashFiles: string[] = [];

    for (const round of [1, 2]) {
      if (round === 2) expectQuiet([await hookAsync(event(sb, 'UserPromptSubmit', { prompt: 'round two' }), opts)]);
      const tools = [
        ...[0, 1, 2, 3, 4, 5].map((i) => ({ id: `toolu_w${round}_${i}`, tool: 'Write', file: `w${round}-${i}.txt`, content: `round ${round} write ${i}\n` })),
        ...[0, 1].map((i) => ({ id: `toolu_b${round}_${i}`, tool: 'Bash', file: `bash${round}-${i}.txt`, content: `bash ${round} ${i}\n` })),
      ];
      const input = (t: (typeof tools)[number]) =>
        t.tool === 'Write' ? { file_path: sb.abs(t.file), content: t.content } : { command: `printf '${t.content.trimEnd()}\\n' > ${t.file}` };
      // Round 1 starts on a journal that does not exist yet: 8 processes create it at once.
      const pre = await Promise.all(tools.map((t) => hookAsync(event(sb, 'PreToolUse', { tool_name: t.tool, tool_input: input(t), tool_use_id: t.id }), opts)));
      expectQuiet(pre);
      for (const t of tools) fs.writeFileSync(sb.abs(t.file), t.content);
      const post = await Promise.all(
        tools.map((t) => hookAsync(event(sb, 'PostToolUse', { tool_name: t.tool, tool_input: input(t), tool_use_id: t.id, tool_response: {} }), opts)),
      );
      expectQuiet(post);
      for (const t of tools) if (t.tool === 'Write') writeIds[t.id] = t.file;
      else bashFiles.push(t.file);
      expectQuiet([await hookAsync(event(sb, 'Stop'), opts)]);
    }

    expect(fs.existsSync(path.join(sb.home, 'logs', 'hook.log'))).toBe(false); // nothing failed
    const list = sb.json(['list']);
    // Every Write has its own set holding exactly its file.
    for (const [id, file] of Object.entries(writeIds)) {
      const sets = list.sets.filter((s: any) => s.source.toolCallId === id);
      expect(sets, id).toHaveLength(1);
      expect(filesOf(sets[0]), id).toEqual({ [file]: file.startsWith('w1-') && Number(file.slice(3, 4)) % 2 === 0 ? 'modified' : 'created' });
    }
    // Every file a Bash call made is in some set (two commands at once cannot tell whose is whose).
    for (const file of bashFiles) expect(list.sets.some((s: any) => s.files.some((f: any) => f.path === file)), file).toBe(true);
    // Round 1 ran in no turn (no prompt came first); round 2 in turn t1.
    expect(list.turns).toHaveLength(1);
    expect(list.sets.filter((s: any) => s.turn === 't1').length).toBeGreaterThanOrEqual(7);
    const doc = sb.json(['doctor']);
    expect(doc.problems).toEqual([]);
    expect(doc.captures.open).toBe(0);
    // The whole history undoes and redoes in one go.
    const before = sb.tree();
    const ids = list.sets.map((s: any) => s.id);
    sb.json(['undo', ...ids]);
    expect(Object.keys(sb.tree()).sort()).toEqual(['seed.txt', 'w1-0.txt', 'w1-2.txt', 'w1-4.txt']);
    sb.json(['redo', ...ids]);
    expect(sb.tree()).toEqual(before);
  });

  it('8 takeback run at once: every file is recorded', async () => {
    const sb = sandbox();
    sb.write('seed.txt', 'seed\n');
    sb.tb(['run', '--', 'true']);
    const runs = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6, 7].map((i) => sb.tbAsync(['run', '--', 'sh', '-c', `printf '${i}\\n' > r${i}.txt && printf '${i}\\n' >> seed.txt`])),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const list = sb.json(['list']);
    for (let i = 0; i < 8; i++) expect(list.sets.some((s: any) => s.files.some((f: any) => f.path === `r${i}.txt`)), `r${i}.txt`).toBe(true);
    expect(sb.json(['doctor']).problems).toEqual([]);
  });
});
