// A person's own files named like a watcher's sync cookie (scan/watcher.ts puts its cookies at
// the root of a workspace outside git as `.takeback-watch-cookie-<pid>-<n>`): real processes, the
// real binary and the capture daemon watching the workspace. A file of that name with bytes in it,
// at the root or deeper, is the person's, recorded, undone and redone exactly, by the daemon's
// warm scans given the watcher's hints as by a walk with no daemon; the daemon's own cookies are
// never recorded and never left behind.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WATCH_COOKIE_PREFIX } from '../server/core/scan/filter.js';
import { hookAsync, hookLog, sandbox, setsOf, sleep, type Sandbox } from './support/takeback.js';
import { bashCall, quiet, settled, startDaemon } from './support/daemon.js';

const SESSION = 'c00c1e00-0000-4000-8000-000000000001';
function ev(sb: Sandbox, name: string, extra: object = {}): object {
  return { session_id: SESSION, cwd: sb.ws, hook_event_name: name, ...extra };
}

const bash = (sb: Sandbox, command: string): Promise<void> => bashCall(sb, ev, command);

const COOKIE = `${WATCH_COOKIE_PREFIX}1-1`;

/** The turn below, run with the daemon (`hinted`: its warm scans given the watcher's hints) or without it (every scan walks); what it recorded, and the trees around it. */
async function turn(hinted: boolean) {
  const sb = sandbox({ env: { TAKEBACK_HOOK_DAEMON: hinted ? '1' : '0', TAKEBACK_WATCH_SYNC: 'always', TAKEBACK_HOOK_DAEMON_IDLE_MS: '60000', TAKEBACK_LOG_LEVEL: 'debug' } });
  sb.write(COOKIE, 'mine at the root\n');
  sb.write(`sub/${COOKIE}`, 'mine deeper\n');
  sb.write('other.txt', 'other\n');
  if (hinted) await startDaemon(sb);
  quiet(await hookAsync(ev(sb, 'SessionStart', { source: 'startup' }), { cwd: sb.ws, env: sb.env }));
  quiet(await hookAsync(ev(sb, 'UserPromptSubmit', { prompt: 'p' }), { cwd: sb.ws, env: sb.env }));
  // Past the racy window (2 s) after the session's first scan: the daemon's scans take hints from here on.
  await sleep(2500);
  const before = sb.tree();
  // Each call's scans sync with the watcher (a cookie of the daemon's at the root meanwhile):
  // the person's file of a cookie's name is changed, removed, made anew.
  await bash(sb, `printf 'changed\\n' > ${COOKIE} && printf 'changed deeper\\n' > sub/${COOKIE}`);
  await bash(sb, `rm ${COOKIE}`);
  await bash(sb, `printf 'back\\n' > ${COOKIE} && echo more >> other.txt`);
  quiet(await hookAsync(ev(sb, 'Stop'), { cwd: sb.ws, env: sb.env }));
  // The daemon answers Stop before its record, whose scan syncs through a cookie of its own: the
  // tree is read once that record is made.
  await settled(sb);
  const after = sb.tree();
  const sets = setsOf(sb.json(['list'])).map((s: any) => [s.source.kind, s.turn, s.files.map((f: any) => `${f.status} ${f.path}`).sort()]);
  expect(hookLog(sb).includes('watch: hints'), 'the scans took hints').toBe(hinted);
  sb.json(['undo', '--turn', 't1']);
  const undone = sb.tree();
  sb.json(['redo', '--last']);
  const redone = sb.tree();
  // Only the person's files of that name are there: no cookie of the daemon's left behind.
  const left = fs.readdirSync(sb.ws).filter((n) => n.startsWith(WATCH_COOKIE_PREFIX));
  return { before, after, sets, undone, redone, left };
}

describe('files named like a sync cookie in a watched workspace outside git', () => {
  it('a person’s, with bytes, at the root and deeper: recorded, undone and redone exactly, with hints as with a walk; no cookie of the daemon is recorded or left', async () => {
    const hinted = await turn(true);
    expect(hinted.sets).toEqual([
      ['command', 't1', [`modified ${COOKIE}`, `modified sub/${COOKIE}`]],
      ['command', 't1', [`deleted ${COOKIE}`]],
      ['command', 't1', [`created ${COOKIE}`, 'modified other.txt']],
    ]);
    expect(hinted.undone).toEqual(hinted.before);
    expect(hinted.redone).toEqual(hinted.after);
    expect(hinted.left).toEqual([COOKIE]);
    const walked = await turn(false);
    expect(walked).toEqual(hinted);
  }, 120_000);
});
