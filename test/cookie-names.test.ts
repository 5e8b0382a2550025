// A person's own files named like a watcher's sync cookie (scan/watcher.ts puts its cookies at
// the root of a workspace outside git as `.takeback-watch-cookie-<pid>-<n>`): real processes, the
// real binary and the capture daemon watching the workspace. A file of that name with bytes in it,
// at the root or deeper, is the person's, recorded, undone and redone exactly; the daemon's own
// cookies are never recorded and never left behind.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WATCH_COOKIE_PREFIX } from '../server/core/scan/filter.js';
import { hookAsync, sandbox, setsOf, type Sandbox } from './support/takeback.js';
import { quiet, startDaemon } from './support/daemon.js';

const SESSION = 'c00c1e00-0000-4000-8000-000000000001';
let calls = 0;

function ev(sb: Sandbox, name: string, extra: object = {}): object {
  return { session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra };
}

/** One Bash tool call running `command` in the workspace, bracketed by its hooks. */
async function bash(sb: Sandbox, command: string): Promise<void> {
  const call = { tool_name: 'Bash', tool_use_id: `toolu_${++calls}`, tool_input: { command } };
  quiet(await hookAsync(ev(sb, 'PreToolUse', call), { cwd: sb.ws, env: sb.env }), `Pre ${command}`);
  sb.sh(command);
  quiet(await hookAsync(ev(sb, 'PostToolUse', { ...call, tool_response: {} }), { cwd: sb.ws, env: sb.env }), `Post ${command}`);
}

const COOKIE = `${WATCH_COOKIE_PREFIX}1-1`;

describe('files named like a sync cookie in a watched workspace outside git', () => {
  it('a person’s, with bytes, at the root and deeper: recorded, undone and redone exactly; no cookie of the daemon is recorded or left', async () => {
    const sb = sandbox({ env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000' } });
    sb.write(COOKIE, 'mine at the root\n');
    sb.write(`sub/${COOKIE}`, 'mine deeper\n');
    sb.write('other.txt', 'other\n');
    await startDaemon(sb);
    quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
    quiet(await hookAsync(ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { cwd: sb.ws, env: sb.env }));
    const before = sb.tree();
    // Warm brackets, each with the watcher's sync: the root's name is changed, removed, made anew.
    await bash(sb, `printf 'changed\\n' > ${COOKIE} && printf 'changed deeper\\n' > sub/${COOKIE}`);
    await bash(sb, `rm ${COOKIE}`);
    await bash(sb, `printf 'back\\n' > ${COOKIE} && echo more >> other.txt`);
    quiet(await hookAsync(ev(sb, 'Stop'), { cwd: sb.ws, env: sb.env }));
    const after = sb.tree();
    const commands = setsOf(sb.json(['list'])).filter((s: any) => s.source.kind === 'command');
    expect(commands.map((s: any) => s.files.map((f: any) => `${f.status} ${f.path}`).sort())).toEqual([
      [`modified ${COOKIE}`, `modified sub/${COOKIE}`],
      [`deleted ${COOKIE}`],
      [`created ${COOKIE}`, 'modified other.txt'],
    ]);
    expect(commands.map((s: any) => s.turn)).toEqual(['t1', 't1', 't1']);
    sb.json(['undo', '--turn', 't1']);
    expect(sb.tree()).toEqual(before);
    sb.json(['redo', '--last']);
    expect(sb.tree()).toEqual(after);
    // Only the person's files of that name are there: the daemon's cookies went once heard.
    expect(fs.readdirSync(sb.ws).filter((n) => n.startsWith(WATCH_COOKIE_PREFIX))).toEqual([COOKIE]);
  }, 120_000);
});
