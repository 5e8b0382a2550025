// Capture that cannot see a change names it: a folder that could not be listed is a capture gap
// (at the baseline, in doctor; on the change where it opens up, since what it held before is not
// known), and nothing found in it is taken for created, so that an undo never deletes it.
// Run as a user without the superuser's override (as root, takeback runs as nobody).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
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

describe.skipIf(process.platform === 'win32' || (asRoot && !fs.existsSync('/usr/bin/setpriv')))('a folder unreadable at the baseline', () => {
  it('is a named gap where it opens up; what is found in it is not taken for created, and the undo leaves it as it is', () => {
    const sb = sandbox();
    sb.write('locked/a.txt', 'a before\n');
    sb.write('locked/b.txt', 'b before\n');
    sb.write('plain.txt', 'plain\n');
    fs.chmodSync(sb.abs('locked'), 0o000);
    if (asRoot) spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, sb.base]);
    const base = tbAs(sb, ['run', '--', 'true']);
    expect(base.code, base.stderr).toBe(0);
    const r = tbAs(sb, ['run', '--', 'sh', '-c', 'chmod 755 locked && rm locked/a.txt && printf "b after\\n" > locked/b.txt && printf "p2\\n" > plain.txt']);
    expect(r.code, r.stderr).toBe(0);
    const list = JSON.parse(tbAs(sb, ['list', '--json']).stdout);
    const set = list.sets[0];
    const byPath = Object.fromEntries(set.files.map((f: any) => [f.path, f]));
    expect(Object.keys(byPath).sort()).toEqual(['locked', 'plain.txt']);
    expect(byPath.locked).toMatchObject({ gap: 'unreadable' });
    expect(byPath['plain.txt']).toMatchObject({ status: 'modified', gap: null });
    const u = tbAs(sb, ['undo', set.id]);
    expect(u.stdout + u.stderr).toMatch(/locked: not restored \(could not be read when it changed/);
    // What the agent left in the folder stays: nothing was known to put back or remove.
    expect(fs.readFileSync(sb.abs('locked/b.txt'), 'utf8')).toBe('b after\n');
    expect(fs.readFileSync(sb.abs('plain.txt'), 'utf8')).toBe('plain\n');
  });

  it('made by a command and closed by it: a named gap, and the undo does not take the folder away', () => {
    const sb = sandbox();
    sb.write('plain.txt', 'plain\n');
    if (asRoot) spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, sb.base]);
    expect(tbAs(sb, ['run', '--', 'true']).code).toBe(0);
    const r = tbAs(sb, ['run', '--', 'sh', '-c', 'mkdir shut && printf "x\\n" > shut/x.txt && chmod 000 shut']);
    expect(r.code, r.stderr).toBe(0);
    const set = JSON.parse(tbAs(sb, ['list', '--json']).stdout).sets[0];
    expect(set.files).toEqual([expect.objectContaining({ path: 'shut', status: 'created', gap: 'unreadable' })]);
    const p = tbAs(sb, ['preview', set.id]);
    expect(p.stdout).toMatch(/shut: cannot be restored/);
    tbAs(sb, ['undo', set.id]);
    fs.chmodSync(sb.abs('shut'), 0o755);
    expect(fs.readFileSync(sb.abs('shut/x.txt'), 'utf8')).toBe('x\n');
  });

  it('is named by doctor while it stays unreadable', () => {
    const sb = sandbox();
    sb.write('locked/a.txt', 'a\n');
    fs.chmodSync(sb.abs('locked'), 0o000);
    if (asRoot) spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, sb.base]);
    expect(tbAs(sb, ['run', '--', 'true']).code).toBe(0);
    const d = tbAs(sb, ['doctor']);
    expect(d.stdout).toMatch(/locked/);
    expect(d.stdout).not.toMatch(/no problems found/);
  });
});

describe('names that are not valid UTF-8', () => {
  // A name of bytes that are not UTF-8 (Latin-1 "é"): Node's string paths cannot spell it.
  const RAW = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]); // caf\xe9.txt
  const SHOWN = 'caf\uFFFD.txt';

  it('made, changed and removed by commands: each change named as a gap, never invisible, and the undo writes nothing there', () => {
    const sb = sandbox();
    sb.write('plain.txt', 'plain\n');
    sb.tb(['run', '--', 'true']);
    const made = sb.tb(['run', '--', 'sh', '-c', "printf 'one\\n' > \"$(printf 'caf\\351.txt')\" && mkdir \"$(printf 'dir\\377')\" && touch -d 2020-01-01 \"$(printf 'caf\\351.txt')\" ."]);
    expect(made.code, made.stderr).toBe(0);
    const onDisk = () => fs.readdirSync(sb.ws, { encoding: 'buffer' }).filter((b) => b.equals(RAW));
    expect(onDisk()).toHaveLength(1);
    const first = sb.json(['list']).sets[0];
    expect(first.files.map((f: any) => [f.path, f.status, f.gap]).sort()).toEqual([
      [SHOWN, 'created', 'name-not-utf8'],
      ['dir\uFFFD', 'created', 'name-not-utf8'],
    ]);
    // Its folder's stat and its own are old (not racy): only a look at it by its bytes sees the append.
    const count = sb.json(['list']).sets.length;
    const change = sb.tb(['run', '--', 'sh', '-c', "printf 'two\\n' >> \"$(printf 'caf\\351.txt')\""]);
    expect(change.code, change.stderr).toBe(0);
    const changed = sb.json(['list']).sets;
    expect(changed).toHaveLength(count + 1);
    expect(changed[0].files.map((f: any) => [f.path, f.status, f.gap])).toEqual([[SHOWN, 'modified', 'name-not-utf8']]);
    const rm = sb.tb(['run', '--', 'sh', '-c', "rm \"$(printf 'caf\\351.txt')\""]);
    expect(rm.code, rm.stderr).toBe(0);
    const second = sb.json(['list']).sets[0];
    expect(second.id).not.toBe(first.id);
    expect(second.files.map((f: any) => [f.path, f.status, f.gap])).toEqual([[SHOWN, 'deleted', 'name-not-utf8']]);
    const preview = sb.tb(['preview', first.id]);
    expect(preview.stdout).toMatch(/dir\uFFFD: cannot be restored.*not valid UTF-8/);
    sb.tb(['undo', first.id]);
    expect(fs.readdirSync(sb.ws, { encoding: 'buffer' }).some((b) => b.equals(Buffer.from([0x64, 0x69, 0x72, 0xff])))).toBe(true);
    // A warm scan with nothing moved records nothing more.
    const total = sb.json(['list']).sets.length;
    sb.tb(['run', '--', 'true']);
    expect(sb.json(['list']).sets).toHaveLength(total);
  });
});

describe('a file tool whose path is not valid UTF-8', () => {
  it('names it as a gap rather than recording nothing', () => {
    const sb = sandbox();
    sb.write('plain.txt', 'plain\n');
    // The agent's event spells the name lossily (JSON holds text): U+FFFD for the byte \xe9.
    const shown = sb.abs('caf\uFFFD.txt');
    sb.tb(['capture', 'begin', '--id', 'w1', '--tool', 'Write', shown]);
    sb.sh("printf 'one\\n' > \"$(printf 'caf\\351.txt')\"");
    sb.tb(['capture', 'end', '--id', 'w1']);
    const set = sb.json(['list']).sets[0];
    expect(set.files).toEqual([expect.objectContaining({ path: 'caf\uFFFD.txt', gap: 'name-not-utf8' })]);
  });
});

describe('a skipped folder whose contents change during a command', () => {
  it('is named as a capture gap on that change (made, changed, removed), in the preview before anything is written; .git is not', () => {
    const sb = sandbox({ git: true });
    sb.write('.gitignore', 'out/\nnode_modules/\n');
    sb.write('src/a.txt', 'a\n');
    sb.write('node_modules/left-pad/index.js', 'module.exports = 1;\n');
    sb.write('out/old.bin', 'old\n');
    sb.sh('git add -A && git commit -qm base');
    sb.tb(['run', '--', 'true']);
    const r = sb.tb(['run', '--', 'sh', '-c', 'rm -r node_modules/left-pad && mv out/old.bin out/new.bin && mkdir .venv && printf "x\\n" > src/a.txt && git add -A && git commit -qm two']);
    expect(r.code, r.stderr).toBe(0);
    const set = sb.json(['list']).sets[0];
    expect(set.files.map((f: any) => [f.path, f.status, f.gap]).sort()).toEqual([
      ['.venv', 'created', 'excluded'],
      ['node_modules', 'modified', 'excluded'],
      ['out', 'modified', 'excluded'],
      ['src/a.txt', 'modified', null],
    ]);
    // `list` names them too, though a file of the change is listed (folders alone are not).
    const listed = sb.tb(['list']).stdout;
    for (const dir of ['.venv', 'node_modules', 'out']) expect(listed).toMatch(new RegExp(`^ +${dir.replace('.', '\\.')} .*\\[gap: excluded\\]$`, 'm'));
    const preview = sb.tb(['preview', set.id]);
    expect(preview.stdout).toMatch(/node_modules: cannot be restored.*a file rewritten in place inside it is not/);
    // The folder it could not take back is named, and the undo is not a success.
    const undo = sb.tb(['undo', set.id]);
    expect(undo.code).toBe(6);
    expect(undo.stdout).toMatch(/node_modules: not restored/);
    expect(undo.stdout).toMatch(/Not complete: 3 files of the selected changes could not be taken back/);
    expect(sb.read('src/a.txt').toString()).toBe('a\n');
    expect(sb.exists('.venv')).toBe(true);
    // Nothing moved in them since: a command records nothing more.
    const n = sb.json(['list']).sets.length;
    sb.tb(['run', '--', 'true']);
    expect(sb.json(['list']).sets).toHaveLength(n);
  });

  it('deep inside, where the folder\'s own stat does not move (node_modules/x/y/z.js made, removed), is named too; nothing when nothing moved', () => {
    for (const script of ['printf "z\\n" > node_modules/x/y/z.js', 'rm node_modules/x/y/old.js', 'mkdir node_modules/x/y/w/v']) {
      const sb = sandbox(); // outside git: node_modules is skipped by name
      sb.write('src/a.txt', 'a\n');
      sb.write('node_modules/x/y/old.js', 'old\n');
      sb.write('node_modules/x/y/w/keep.js', 'keep\n');
      sb.tb(['run', '--', 'true']);
      const top = fs.lstatSync(sb.abs('node_modules'));
      const x = fs.lstatSync(sb.abs('node_modules/x'));
      expect(sb.tb(['run', '--', 'sh', '-c', script]).code).toBe(0);
      // The stats of node_modules and of x did not move: only a folder further down did.
      expect([fs.lstatSync(sb.abs('node_modules')).mtimeMs, fs.lstatSync(sb.abs('node_modules/x')).mtimeMs]).toEqual([top.mtimeMs, x.mtimeMs]);
      const sets = sb.json(['list']).sets;
      expect(sets, script).toHaveLength(1);
      expect(sets[0].files.map((f: any) => [f.path, f.status, f.gap]), script).toEqual([['node_modules', 'modified', 'excluded']]);
      sb.tb(['run', '--', 'true']);
      expect(sb.json(['list']).sets, script).toHaveLength(1);
    }
  });
});

describe('a folder skipped, or no longer, because the rules changed', () => {
  it('is not named as a gap: nothing was made or removed in it', () => {
    const sb = sandbox({ git: true });
    sb.write('.gitignore', 'gen/\n');
    sb.write('gen/a.txt', 'a\n');
    sb.write('out/b.txt', 'b\n');
    sb.tb(['run', '--', 'true']);
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "out/\\n" > .gitignore']).code).toBe(0);
    const set = sb.json(['list']).sets[0];
    expect(set.files.filter((f: { gap: string | null }) => f.gap)).toEqual([]);
  });
});
