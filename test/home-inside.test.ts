// TAKEBACK_HOME inside the workspace: takeback's own store (blobs, the journal's database and its
// WAL, logs) is left out of every scan and every file tool's capture, an undo of the last change
// moves only the agent's file and leaves the store whole, and doctor says so.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesOf, sandbox, walkAll } from './support/takeback.js';

/** Every file under `dir` with its size, for "the store is intact" (nothing under it removed). */
function filesUnder(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of walkAll(dir)) if (fs.lstatSync(f).isFile()) out.set(path.relative(dir, f), fs.lstatSync(f).size);
  return out;
}

describe('TAKEBACK_HOME inside the workspace', () => {
  it('a command that changes a file, then undo --last: only the file moves, the store is intact', () => {
    const sb = sandbox();
    const home = path.join(sb.ws, 'state', 'tb');
    sb.env.TAKEBACK_HOME = home;
    sb.write('a.txt', 'v1\n');
    sb.write('b.txt', 'b1\n');
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    // The command changes a.txt; takeback itself writes blobs and its database meanwhile.
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "v2\\n" > a.txt']).code).toBe(0);
    // A file tool call too, through the hooks.
    const ev = (name: string) => ({
      hook_event_name: name, cwd: sb.ws, session_id: 's', tool_name: 'Write', tool_use_id: 'toolu_1',
      tool_input: { file_path: sb.abs('b.txt'), content: 'b2\n' }, tool_response: { success: true },
    });
    expect(sb.hook(ev('PreToolUse')).code).toBe(0);
    sb.write('b.txt', 'b2\n');
    expect(sb.hook(ev('PostToolUse')).code).toBe(0);
    // One more command, so that the store has moved between two scans.
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);

    const sets = sb.json(['list']).sets;
    const recorded = sets.flatMap((s: any) => s.files.map((f: any) => f.path));
    expect(recorded.filter((p: string) => p.startsWith('state'))).toEqual([]);
    expect(sets.map((s: any) => filesOf(s))).toEqual([{ 'b.txt': 'modified' }, { 'a.txt': 'modified' }]);

    const store = filesUnder(path.join(home, 'blobs'));
    expect(store.size).toBeGreaterThan(0);
    const undo = sb.json(['undo', '--last']);
    expect(undo.applied.map((a: any) => a.path)).toEqual(['b.txt']);
    const undo2 = sb.json(['undo', sets[1].id]); // the command, outside any turn: by its id
    expect(undo2.applied.map((a: any) => a.path)).toEqual(['a.txt']);
    expect(sb.read('a.txt').toString()).toBe('v1\n');
    expect(sb.read('b.txt').toString()).toBe('b1\n');
    // Nothing in the store went: every blob there before the undo is there after it.
    const after = filesUnder(path.join(home, 'blobs'));
    for (const [f, size] of store) expect(after.get(f), f).toBe(size);
    const journals = fs.readdirSync(path.join(home, 'workspaces'));
    expect(journals.length).toBe(1);
    expect(fs.existsSync(path.join(home, 'workspaces', journals[0]!, 'journal.db'))).toBe(true);

    // doctor names it.
    const doctor = sb.json(['doctor']);
    expect(doctor.problems.join('\n')).toMatch(/TAKEBACK_HOME \(.*state\/tb\) is inside this workspace: every scan and capture leaves it out/);
  });
});
