// A workspace outside git with more folders than inotify watches are left: the capture daemon
// runs in a user namespace of its own whose watch limit is 100 (`unshare -U -r`, then
// /proc/sys/user/max_inotify_watches: the machine's limit, and every other process's, untouched;
// Watchman hidden in its own mount namespace), over 300 folders. Its watcher cannot subscribe
// (inotify_add_watch fails part way), so it never vouches: every scan walks, a change deep in any
// folder is recorded by every shell tool call, and undone byte for byte.
import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, hookAsync, sleep, sandbox, setsOf, type Sandbox } from './support/takeback.js';
import { until } from './support/procs.js';
import { answers, bashCall, handledBy, quiet, socketFile } from './support/daemon.js';
import { hookLog } from './support/takeback.js';
import { REQUIRED } from './support/disk.js';

const SESSION = 'a7c4f000-0000-4000-8000-000000000001';
const canUnshare = process.platform === 'linux' && spawnSync('unshare', ['-U', '-r', '-m', 'sh', '-c', 'echo 100 > /proc/sys/user/max_inotify_watches && mount --bind /bin/false /bin/true']).status === 0;
const ev = (sb: Sandbox, name: string, extra: object = {}) => ({ session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra });
const bash = (sb: Sandbox, command: string): Promise<void> => bashCall(sb, ev, command);

describe.skipIf(!canUnshare && !REQUIRED)('more folders than inotify watches left', () => {
  it('every shell call still records a change in any folder, and its undo gives the bytes back', async () => {
    const sb = sandbox({ env: { TAKEBACK_HOOK_DAEMON: '1', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', TAKEBACK_LOG_LEVEL: 'debug', TAKEBACK_WATCH_SYNC: 'always' } });
    for (let i = 0; i < 300; i++) sb.write(`a${i % 10}/b${i}/f.txt`, `f ${i}\n`);
    // Watchman, where installed, is hidden in the daemon's mount namespace: @parcel/watcher would take it over inotify.
    const script = 'echo 100 > /proc/sys/user/max_inotify_watches && { w=$(command -v watchman) && mount --bind /bin/false "$w" || true; } && exec "$0" "$1" hook-daemon';
    const daemon = spawn('unshare', ['-U', '-r', '-m', 'sh', '-c', script, process.execPath, BIN], { cwd: sb.ws, env: sb.env, stdio: 'ignore' });
    onTestFinished(() => {
      if (daemon.exitCode === null) daemon.kill('SIGKILL');
    });
    await until('the daemon to answer', async () => socketFile(sb) !== null && (await answers(socketFile(sb)!)), 60_000);
    quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
    quiet(await hookAsync(ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { cwd: sb.ws, env: sb.env }));
    // Past the racy window (2 s) after the session's first scan: a watcher trusted by then gives the
    // calls below their hints (heard after `sleep`), one that is not makes them walk.
    await sleep(2500);
    const picks = [7, 150, 299, 42, 263, 88];
    for (const i of picks) {
      await bash(sb, `echo changed >> a${i % 10}/b${i}/f.txt`);
      const last = setsOf(sb.json(['list'])).at(-1);
      expect(last.files.map((f: any) => f.path)).toEqual([`a${i % 10}/b${i}/f.txt`]);
    }
    sb.json(['undo', '--turn', 't1']);
    for (const i of picks) expect(sb.read(`a${i % 10}/b${i}/f.txt`).toString()).toBe(`f ${i}\n`);
    expect(daemon.exitCode).toBeNull();
    // Every event went to the daemon in its namespace, whose watcher could not subscribe: every scan walked.
    expect(new Set(handledBy(sb).map((h) => h.pid))).toEqual(new Set([daemon.pid]));
    expect(hookLog(sb)).not.toContain('watch: hints');
  }, 120_000);
});
