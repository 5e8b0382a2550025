// Full disks and stuck locks: a hook never stands in the agent's way, and what the journal could
// not take is queued in the spill beside it and folded in later, what could not be kept named.
// The full disk is a real one: a small tmpfs mounted as TAKEBACK_HOME (root only; CI runs as
// root, so there the test runs, and a machine that cannot mount fails it under CI's variables).
// The stuck lock is a real writer of the journal stopped with SIGSTOP while it holds the lock.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reserveSpill, SLOT_BYTES, SPILL_SLOTS, spillDir } from '../server/core/journal/spill.js';
import { canMount, REQUIRED, smallDisk } from './support/disk.js';
import { sandbox, setsOf, stoppedWriter } from './support/takeback.js';
import { hookEvent, hookOk } from './support/hook-events.js';

const mountable = canMount();
if (!mountable && REQUIRED) throw new Error('spill.test.ts: mounting a tmpfs needs root on Linux (CI runs as root)');

/** A hook run that must not stand in the way: exit 0, nothing on stdout, and not killed by the (generous) timeout. */

describe.skipIf(!mountable)('a full disk under TAKEBACK_HOME', () => {
  it('hooks exit 0 with nothing on stdout; once space is back, list names the changes that could not be kept as gaps, the turn is closed, doctor says how many', () => {
    const disk = smallDisk(2048);
    const sb = sandbox({ git: true, env: { TAKEBACK_HOME: disk.dir } });
    for (let i = 1; i <= 20; i++) sb.write(`src/f${i}.txt`, `line ${i}\n`);
    sb.write('notes.md', 'before\n');
    hookOk(sb, hookEvent(sb, 'SessionStart', { source: 'startup' }));
    hookOk(sb, hookEvent(sb, 'UserPromptSubmit', { prompt: 'rename the lines' }));

    disk.fill();
    hookOk(sb, hookEvent(sb, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'sed -i s/line/LINE/ src/*.txt' }, tool_use_id: 'toolu_bash' }));
    sb.sh('sed -i s/line/LINE/ src/*.txt');
    hookOk(sb, hookEvent(sb, 'PostToolUse', { tool_name: 'Bash', tool_input: { command: 'sed -i s/line/LINE/ src/*.txt' }, tool_use_id: 'toolu_bash' }));
    const write = { tool_name: 'Write', tool_input: { file_path: sb.abs('notes.md'), content: 'after\n' }, tool_use_id: 'toolu_write' };
    hookOk(sb, hookEvent(sb, 'PreToolUse', write));
    sb.write('notes.md', 'after\n');
    hookOk(sb, hookEvent(sb, 'PostToolUse', write));
    hookOk(sb, hookEvent(sb, 'Stop'));

    disk.free();
    const list = sb.json(['list']);
    expect(list.turns).toHaveLength(1);
    expect(list.turns[0].end).not.toBeNull(); // the Stop was folded in: the turn is closed
    const sets = setsOf(list);
    const bash = sets.find((s: any) => s.source.kind === 'command');
    expect(bash.source.command).toBe('sed -i s/line/LINE/ src/*.txt');
    const bashFiles = bash.files.filter((f: any) => f.path.startsWith('src/'));
    expect(bashFiles).toHaveLength(20);
    for (const f of bashFiles) expect(f.gap).toBe('not-kept');
    const tool = sets.find((s: any) => s.source.kind === 'tool');
    expect(tool.source.tool).toBe('Write');
    expect(tool.files.map((f: any) => [f.path, f.gap])).toEqual([['notes.md', 'not-kept']]);
    const text = sb.tb(['list']);
    expect(text.code).toBe(0);
    // Disk full is named; on a loaded machine a hook may also have waited past its second on the
    // lock of the one before it (then "journal busy" is named beside it, and that is right too).
    expect(text.stdout).toMatch(/! \d+ changes could not be kept \(disk full(, journal busy)?, at \d{4}-\d\d-\d\d \d\d:\d\d\)/);
    expect(text.stdout).not.toContain('in progress');
    const doctor = sb.json(['doctor']);
    expect(doctor.unkept.count).toBeGreaterThanOrEqual(2);
    expect(doctor.unkept.causes).toContain('disk-full');
    expect(doctor.unkept.causes.filter((c: string) => c !== 'disk-full' && c !== 'journal-busy')).toEqual([]);
    expect(doctor.queued).toBe(0);
    expect(doctor.captures.open).toBe(0);
    expect(doctor.problems.join('\n')).toMatch(/changes could not be kept \(disk full(, journal busy)?, at /);
    // A gap is never undone: the undo of the turn writes nothing over the files.
    const undo = sb.tb(['undo', '--turn', list.turns[0].id]);
    expect(sb.read('notes.md').toString()).toBe('after\n');
    expect(sb.read('src/f1.txt').toString()).toBe('LINE 1\n');
    expect(undo.stdout).toContain('src/f1.txt: not restored (could not be kept when it changed: the journal could not be written then)');
    expect(undo.code).toBe(6); // never reported as success
  });

  it('takeback run -- CMD runs CMD and gives its exit code, and the command is named as not kept once space is back', () => {
    const disk = smallDisk(2048);
    const sb = sandbox({ git: true, env: { TAKEBACK_HOME: disk.dir } });
    sb.write('a.txt', 'a\n');
    expect(sb.tb(['list']).code).toBe(0); // the journal and its spill exist
    disk.fill();
    const r = sb.tb(['run', '--', 'sh', '-c', 'echo ran > made.txt; exit 3'], { timeout: 25_000 });
    expect(r.signal).toBeNull();
    expect(r.code).toBe(3);
    expect(sb.read('made.txt').toString()).toBe('ran\n');
    expect(r.stderr).toMatch(/not recording this command/);
    disk.free();
    const d = sb.json(['doctor']);
    expect(d.unkept.count).toBe(1);
    expect(sb.tb(['list']).stdout).toMatch(/1 change could not be kept \(disk full, at /);
  });
});

describe.skipIf(!mountable)("the spill's slots set aside on a disk that fills", () => {
  const slots = (dir: string) => fs.readdirSync(spillDir(dir)).sort();

  it('a reservation the disk cut short leaves no half made slot of its own; the next one, with space back, makes all of them', () => {
    const disk = smallDisk(1024);
    // Room for fewer slots than a spill needs (32 of 8 KiB): the disk fills part-way through.
    const room = fs.statfsSync(disk.dir).bavail * fs.statfsSync(disk.dir).bsize;
    fs.writeFileSync(path.join(disk.dir, 'filler'), Buffer.alloc(room - 10 * SLOT_BYTES));
    expect(() => reserveSpill(disk.dir)).toThrow(/ENOSPC/);
    const left = slots(disk.dir);
    expect(left.filter((n) => n.startsWith('c.'))).toEqual([]);
    expect(left.filter((n) => n.startsWith('f.'))).toEqual([]); // none named free before all are on the disk
    disk.free();
    expect(reserveSpill(disk.dir)).toBe(false);
    const made = slots(disk.dir);
    expect(made).toEqual(Array.from({ length: SPILL_SLOTS }, (_, i) => `f.${String(i).padStart(2, '0')}`));
    for (const n of made) expect(fs.statSync(path.join(spillDir(disk.dir), n)).size).toBe(SLOT_BYTES);
  });

  it("a half made slot of a process that is gone is made again, a live process's is left to it", () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'takeback-spill-'));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    reserveSpill(dir);
    const gone = spawnSync('true').pid!; // a process that has exited
    const live = process.ppid;
    fs.renameSync(path.join(spillDir(dir), 'f.05'), path.join(spillDir(dir), `c.05.${gone}.new`));
    fs.truncateSync(path.join(spillDir(dir), `c.05.${gone}.new`), 100);
    fs.renameSync(path.join(spillDir(dir), 'f.06'), path.join(spillDir(dir), `c.06.${live}.new`));
    reserveSpill(dir);
    const now = slots(dir);
    expect(now).toContain('f.05');
    expect(now).not.toContain(`c.05.${gone}.new`);
    expect(fs.statSync(path.join(spillDir(dir), 'f.05')).size).toBe(SLOT_BYTES);
    expect(now).toContain(`c.06.${live}.new`);
    expect(now).not.toContain('f.06');
  });
});

describe('a writer stopped while it holds the journal', () => {
  it('a hook pair and takeback run return (their events queued), doctor names the stopped holder, and after SIGCONT the Write is folded in with its bytes', async () => {
    const sb = sandbox({ git: true });
    sb.write('a.txt', 'before\n');
    hookOk(sb, hookEvent(sb, 'SessionStart', { source: 'startup' }));
    hookOk(sb, hookEvent(sb, 'UserPromptSubmit', { prompt: 'edit a' }));

    // A real writer of the journal, stopped while it holds the write lock.
    const writer = await stoppedWriter(sb);

    const write = { tool_name: 'Write', tool_input: { file_path: sb.abs('a.txt'), content: 'after\n' }, tool_use_id: 'toolu_stuck' };
    hookOk(sb, hookEvent(sb, 'PreToolUse', write));
    sb.write('a.txt', 'after\n');
    hookOk(sb, hookEvent(sb, 'PostToolUse', write));

    // takeback run -- CMD runs CMD behind the stuck lock too, and gives its exit code.
    const run = sb.tb(['run', '--', 'sh', '-c', 'echo ran > run.txt; exit 4'], { timeout: 25_000 });
    expect(run.signal).toBeNull();
    expect(run.code).toBe(4);
    expect(sb.read('run.txt').toString()).toBe('ran\n');
    expect(run.stderr).toMatch(/not recording this command: the journal cannot be written \(database is locked\)/);

    const log = fs.readFileSync(path.join(sb.home, 'logs', 'hook.log'), 'utf8');
    expect(log).toContain(`the journal cannot take the event now (journal-busy, its lock last taken by pid ${writer.pid}): queued files-begin`);
    const stuck = sb.json(['doctor'], { timeout: 25_000 });
    expect(stuck.lock.held).toBe(true);
    expect(stuck.lock.holder.pid).toBe(writer.pid);
    expect(stuck.lock.holder.stopped).toBe(true);
    expect(stuck.queued).toBe(3);
    expect(stuck.problems.join('\n')).toMatch(new RegExp(`the journal is locked by pid ${writer.pid} \\(.*input-type=module.*\\) for \\d+ s, stopped`));

    const gone = new Promise((resolve) => writer.on('exit', resolve));
    writer.kill('SIGCONT');
    await gone;

    const sets = setsOf(sb.json(['list']));
    expect(sets).toHaveLength(1);
    expect(sets[0].source).toMatchObject({ kind: 'tool', tool: 'Write', toolCallId: 'toolu_stuck' });
    expect(sets[0].files.map((f: any) => [f.path, f.status, f.gap ?? null])).toEqual([['a.txt', 'modified', null]]);
    const after = sb.json(['doctor']);
    expect(after.lock.held).toBe(false);
    expect(after.queued).toBe(0);
    expect(after.unkept).toMatchObject({ count: 1, causes: ['journal-busy'] }); // the command run behind the lock
    expect(after.problems.join('\n')).toMatch(/1 change could not be kept \(journal busy, at /);
    // The bytes were kept while the lock was held: the change undoes.
    expect(sb.tb(['undo', '--last']).code).toBe(0);
    expect(sb.read('a.txt').toString()).toBe('before\n');
  });
});
