// Issue 5: per-turn overhead does not grow with the size of files the agent did not touch. A
// 5 GiB sparse file (untracked, not ignored: a disk image, a dataset) sits in the workspace
// through a whole session — the session's first snapshot, a turn, a file tool call, a Bash call
// that changes a small file, and one that changes the big file itself — and takeback never reads
// it: every hook runs under a shell whose /proc/<pid>/io counts the bytes its children read
// (`rchar`), and the sum stays far below the file's size. The big file's change is named as a
// capture gap (too large to keep); the small file's is recorded and undone byte for byte.
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, filesOf, sandbox, setsOf } from './support/takeback.js';

const SESSION = 'b16f11e0-0000-4000-8000-000000000001';
const BIG = 5 * 1024 ** 3;
const linux = process.platform === 'linux' && fs.existsSync('/proc/self/io');

describe.skipIf(!linux)('a 5 GiB sparse file in the workspace', () => {
  it('is never read: a session of hooks reads a small fraction of it, records the small change, names the big one as a gap', () => {
    const sb = sandbox({ git: true });
    for (let i = 0; i < 20; i++) sb.write(`src/f${i}.txt`, `file ${i}\n`.repeat(50));
    sb.sh('git add -A && git -c user.name=t -c user.email=t@t commit -qm start');
    const fd = fs.openSync(sb.abs('disk.img'), 'w');
    fs.ftruncateSync(fd, BIG);
    fs.closeSync(fd);
    expect(fs.statSync(sb.abs('disk.img')).blocks * 512).toBeLessThan(1024 * 1024); // sparse: almost no blocks

    /** Runs one hook under a shell and returns the bytes it and its children read. */
    const hook = (event: object): number => {
      const r = spawnSync('sh', ['-c', `"$0" "$1" hook claude-code; grep '^rchar:' /proc/$$/io`, process.execPath, BIN], {
        cwd: sb.ws,
        env: sb.env,
        input: JSON.stringify({ session_id: SESSION, cwd: sb.ws, ...event }),
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      return Number(/rchar: (\d+)/.exec(r.stdout)![1]);
    };
    let read = 0;
    read += hook({ hook_event_name: 'SessionStart', source: 'startup' });
    read += hook({ hook_event_name: 'UserPromptSubmit', prompt: 'change things' });
    const edit = { tool_name: 'Edit', tool_use_id: 'toolu_e', tool_input: { file_path: sb.abs('src/f1.txt') } };
    read += hook({ hook_event_name: 'PreToolUse', ...edit });
    sb.write('src/f1.txt', 'edited\n');
    read += hook({ hook_event_name: 'PostToolUse', ...edit });
    const bash = { tool_name: 'Bash', tool_use_id: 'toolu_b', tool_input: { command: "sed -i 's/file/line/' src/f2.txt" } };
    read += hook({ hook_event_name: 'PreToolUse', ...bash });
    sb.sh(bash.tool_input.command);
    read += hook({ hook_event_name: 'PostToolUse', ...bash });
    const grow = { tool_name: 'Bash', tool_use_id: 'toolu_g', tool_input: { command: 'truncate -s +4096 disk.img' } };
    read += hook({ hook_event_name: 'PreToolUse', ...grow });
    sb.sh(grow.tool_input.command);
    read += hook({ hook_event_name: 'PostToolUse', ...grow });
    read += hook({ hook_event_name: 'Stop' });

    console.info(`[sparse-file] nine hooks read ${(read / 1048576).toFixed(1)} MB in all`);
    // Nine Node processes read their code and the journal: tens of MB at most, never the 5 GiB.
    expect(read).toBeLessThan(64 * 1024 * 1024);
    const sets = setsOf(sb.json(['list']));
    expect(sets.map((s: any) => [s.source.tool, filesOf(s)])).toEqual([
      ['Edit', { 'src/f1.txt': 'modified' }],
      ['Bash', { 'src/f2.txt': 'modified' }],
      ['Bash', { 'disk.img': 'modified' }],
    ]);
    // The big file's change is a capture gap; the journal holds none of its bytes.
    const preview = sb.json(['preview', sets[2].id]);
    expect(JSON.stringify(preview)).toMatch(/too-large/);
    let blobBytes = 0;
    for (const b of sb.blobs()) blobBytes += fs.statSync(`${sb.home}/blobs/${b.slice(0, 2)}/${b.slice(2)}`).size;
    expect(blobBytes).toBeLessThan(1024 * 1024);
    // The small change comes back byte for byte.
    expect(sb.tb(['undo', sets[1].id]).code).toBe(0);
    expect(sb.read('src/f2.txt').toString()).toBe('file 2\n'.repeat(50));
  });
});
