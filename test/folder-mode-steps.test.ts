// An undo or redo that changes a folder's mode as well as files inside it: the agent ran
// `chmod 000 sub` after changing files in it. Run as a user without the superuser's override
// (as root, the test runs takeback as nobody), where a folder of mode 000 cannot be read,
// searched or written even by its owner: each step completes (the folder's mode set where it
// lets the other writes through), and a step that fails puts the folder's mode back too.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sandbox, type Run, type Sandbox } from './support/takeback.js';

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

/** `takeback ...args` in the workspace as this user, or as nobody when this is root. */
function tbAs(sb: Sandbox, args: string[]): Run {
  const cmd = asRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, BIN, ...args] : [process.execPath, BIN, ...args];
  const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd: sb.ws, env: sb.env, encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr } as Run;
}

/** Mode bits of workspace path `rel`. */
const modeOf = (sb: Sandbox, rel: string) => fs.lstatSync(sb.abs(rel)).mode & 0o7777;

/** The files below `sub` (name → content), looked at with the folder opened up for a moment. */
function contents(sb: Sandbox): Record<string, string> {
  const mode = modeOf(sb, 'sub');
  fs.chmodSync(sb.abs('sub'), 0o755);
  try {
    return Object.fromEntries(fs.readdirSync(sb.abs('sub')).sort().map((n) => [n, fs.readFileSync(path.join(sb.abs('sub'), n), 'utf8')]));
  } finally {
    fs.chmodSync(sb.abs('sub'), mode);
  }
}

/**
 * A workspace where the agent ran `chmod 000 sub` (set 1), then a command opened it up again and
 * changed files in it (set 2): undoing set 2 puts `sub` back to mode 000 and the files as they
 * were. Owned by the user takeback runs as.
 */
function setUp(): Sandbox {
  const sb = sandbox();
  sb.write('sub/a.txt', 'before\n');
  sb.write('sub/b.txt', 'removed by the agent\n');
  sb.write('sub/c.txt', 'made mode 600 by the agent\n');
  sb.write('keep.txt', 'keep\n');
  if (asRoot) spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, sb.base]);
  const r1 = tbAs(sb, ['run', '--', 'chmod', '000', 'sub']);
  expect(r1.code, r1.stderr).toBe(0);
  const r2 = tbAs(sb, ['run', '--', 'sh', '-c', 'chmod 755 sub && printf "after\\n" >> sub/a.txt && rm sub/b.txt && printf "new\\n" > sub/new.txt && chmod 600 sub/c.txt']);
  expect(r2.code, r2.stderr).toBe(0);
  return sb;
}

describe.skipIf(process.platform === 'win32' || (asRoot && !fs.existsSync('/usr/bin/setpriv')))('an undo that puts a folder back to mode 000, with changes inside it', () => {
  it('completes: the folder is closed again only after the writes inside it', () => {
    const sb = setUp();
    const u = tbAs(sb, ['undo', '2']);
    expect(u.code, u.stderr).toBe(0);
    expect(modeOf(sb, 'sub')).toBe(0);
    expect(contents(sb)).toEqual({ 'a.txt': 'before\n', 'b.txt': 'removed by the agent\n', 'c.txt': 'made mode 600 by the agent\n' });
    fs.chmodSync(sb.abs('sub'), 0o755);
    expect(modeOf(sb, 'sub/c.txt')).toBe(0o644);
  });

  it('that fails part-way puts the folder’s mode back with everything else', () => {
    const sb = setUp();
    // The user makes a file a folder with something in it: the undo (forced) must stop there.
    fs.rmSync(sb.abs('sub/new.txt'));
    fs.mkdirSync(sb.abs('sub/a.txt.d'));
    fs.rmSync(sb.abs('sub/a.txt'));
    fs.renameSync(sb.abs('sub/a.txt.d'), sb.abs('sub/a.txt'));
    fs.writeFileSync(sb.abs('sub/a.txt/mine.txt'), 'mine\n');
    if (asRoot) spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, sb.abs('sub')]);
    const u = tbAs(sb, ['undo', '2', '--force']);
    expect(u.code).not.toBe(0);
    expect(u.stderr).toMatch(/nothing was changed: refusing to write sub\/a\.txt: a folder that is not empty is in the way/);
    expect(modeOf(sb, 'sub')).toBe(0o755);
    expect(fs.readFileSync(sb.abs('sub/a.txt/mine.txt'), 'utf8')).toBe('mine\n');
    expect(fs.readdirSync(sb.abs('sub')).sort()).toEqual(['a.txt', 'c.txt']);
    expect(modeOf(sb, 'sub/c.txt')).toBe(0o600);
  });
});
