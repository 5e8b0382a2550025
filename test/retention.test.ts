// Bounded storage (issue 5): change sets expire past the retention time or, past the size limit,
// oldest first; an expired set stays as a tombstone whose id answers "expired" (exit 4); blobs
// nothing refers to are swept by `takeback gc` (every workspace's journal is read first, and
// young blobs are left alone); `doctor` says what is kept and why. Real CLI, real folders.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { filesOf, lines, sandbox, setsOf, sha256, sleep, type Sandbox } from './support/takeback.js';

const DAY_MS = 86_400_000;

/**
 * Makes every set of the journal of `sb` (its only one) `days` older: an age the retention rules
 * see whatever the machine's load, where a sleep between two sets would be outrun by a slow
 * process start.
 */
function age(sb: Sandbox, days: number): void {
  const db = new Database(path.join(sb.journalDir(), 'journal.db'));
  try {
    db.prepare('UPDATE sets SET created_at = created_at - ?').run(days * DAY_MS);
  } finally {
    db.close();
  }
}

function blobPath(sb: Sandbox, content: string): string {
  const h = sha256(content);
  return path.join(sb.home, 'blobs', h.slice(0, 2), h.slice(2));
}

/** `takeback gc --json` with extra environment. */
function gc(sb: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}): any {
  return sb.json(['gc', ...args], { env: { ...sb.env, ...env } });
}

describe('expiry by age', () => {
  it('a set past the retention time becomes a tombstone: list --all shows it, its id answers expired (exit 4)', async () => {
    const sb = sandbox();
    sb.write('a.txt', 'one\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "two\\n" > a.txt']);
    age(sb, 40);
    sb.tb(['run', '--', 'sh', '-c', 'printf "three\\n" > a.txt']);
    const [first, second] = setsOf(sb.json(['list']));

    // Twenty days of retention: the first set (40 days old) goes, the second stays.
    const r = gc(sb, ['--grace', '0'], { TAKEBACK_RETENTION_DAYS: '20' });
    expect(r.expired).toEqual({ byAge: 1, bySize: 0 });
    expect(r.sets.live).toBe(1);

    expect(sb.json(['list']).sets.map((s: any) => s.id)).toEqual([second.id]);
    const all = sb.json(['list', '--all']).sets;
    expect(all.map((s: any) => [s.id, s.state])).toEqual([
      [second.id, 'applied'],
      [first.id, 'expired'],
    ]);
    expect(filesOf(all[1])).toEqual({ 'a.txt': 'modified' }); // the tombstone keeps its paths
    expect(sb.tb(['list', '--all']).stdout).toMatch(/expired/);

    for (const args of [['show', first.id], ['undo', first.id], ['redo', first.id], ['preview', first.id]]) {
      const run = sb.tb(args);
      expect(run.code, args.join(' ')).toBe(4);
      expect(run.stderr).toMatch(/expired/);
    }
    expect(sb.json(['show', first.id], { code: 4 }).error.code).toBe('expired');

    // Its copy of "one" is swept (nothing else refers to it); the live set still undoes.
    expect(fs.existsSync(blobPath(sb, 'one\n'))).toBe(false);
    sb.json(['undo', second.id]);
    expect(sb.read('a.txt').toString()).toBe('two\n');
    sb.json(['redo', second.id]);
    expect(sb.read('a.txt').toString()).toBe('three\n');
  });

  it('--dry-run expires and sweeps nothing; a whole turn expires and --turn skips it', () => {
    const sb = sandbox();
    sb.write('f.txt', 'v0\n');
    sb.tb(['turn', 'begin', '--id', 'T1']);
    sb.tb(['run', '--', 'sh', '-c', 'printf "v1\\n" > f.txt']);
    sb.tb(['turn', 'end']);
    const blobsBefore = sb.blobs();
    const dry = gc(sb, ['--dry-run', '--grace', '0'], { TAKEBACK_RETENTION_DAYS: '0' });
    expect(dry.dryRun).toBe(true);
    expect(dry.expired.byAge).toBe(1);
    expect(dry.use.unreferenced.count).toBeGreaterThan(0);
    expect(sb.blobs()).toEqual(blobsBefore);
    expect(sb.json(['list']).sets).toHaveLength(1);

    gc(sb, ['--grace', '0'], { TAKEBACK_RETENTION_DAYS: '0' });
    expect(sb.json(['list']).sets).toHaveLength(0);
    const undo = sb.json(['undo', '--turn', 'T1']);
    expect(undo.sets).toEqual([]);
    expect(sb.read('f.txt').toString()).toBe('v1\n');
  });
});

describe('the size limit', () => {
  it('past TAKEBACK_MAX_JOURNAL_BYTES the oldest sets expire first, until what is kept fits', () => {
    const sb = sandbox();
    // Five commands, each rewriting a 20 KB file with new bytes.
    for (let k = 0; k < 5; k++) sb.tb(['run', '--', 'sh', '-c', `printf '${lines(`version ${k}`, 1000).replace(/\n/g, '\\n')}' > big.txt`]);
    const sets = setsOf(sb.json(['list']));
    expect(sets).toHaveLength(5);
    // Room for about half of what is kept now (the snapshot keeps the newest version whatever happens).
    const all = gc(sb, ['--dry-run']).use.total.bytes;
    const limit = Math.floor(all * 0.6);
    const r = gc(sb, ['--grace', '0'], { TAKEBACK_MAX_JOURNAL_BYTES: String(limit) });
    expect(r.expired.byAge).toBe(0);
    expect(r.expired.bySize).toBeGreaterThan(0);
    expect(r.expired.bySize).toBeLessThan(5);
    expect(r.use.total.bytes - r.use.unreferenced.bytes).toBeLessThanOrEqual(limit);
    const states = setsOf(sb.json(['list', '--all'])).map((s: any) => s.state);
    const n = r.expired.bySize;
    expect(states).toEqual([...Array(n).fill('expired'), ...Array(5 - n).fill('applied')]);
    // The newest set is whole: it undoes and redoes.
    sb.json(['undo', sets.at(-1).id]);
    sb.json(['redo', '--last']);
    expect(sb.tb(['show', sets[0].id]).code).toBe(4);
  });
});

describe('the sweep', () => {
  it('keeps blobs that are young, that the snapshot or a tool call in flight refers to, or that another workspace uses', async () => {
    const sb = sandbox();
    const other = path.join(sb.base, 'other');
    fs.mkdirSync(other);
    sb.write('shared.txt', 'original\n');
    fs.writeFileSync(path.join(other, 'shared.txt'), 'original\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "edited\\n" > shared.txt']); // workspace 1 keeps "original"
    age(sb, 40);
    sb.tb(['run', '--', 'sh', '-c', 'printf "edited too\\n" > shared.txt'], { cwd: other }); // workspace 2 keeps it too
    // A file tool call that began and has not ended refers to its "before".
    sb.write('pending.txt', 'in flight\n');
    sb.tb(['capture', 'begin', '--id', 'p1', '--tool', 'Write', 'pending.txt']);

    // Default grace: the sets of workspace 1 expire, but nothing just stored is swept.
    const soft = gc(sb, [], { TAKEBACK_RETENTION_DAYS: '20' });
    expect(soft.workspaces).toBe(2);
    expect(soft.expired.byAge).toBe(1);
    expect(soft.use.unreferenced.count).toBe(0);
    expect(fs.existsSync(blobPath(sb, 'edited\n'))).toBe(true);

    // No grace: only what nothing refers to goes. (The default retention: workspace 1's sets are
    // expired already, and workspace 2's set, however long this took, stays live.)
    gc(sb, ['--grace', '0']);
    expect(fs.existsSync(blobPath(sb, 'original\n'))).toBe(true); // workspace 2's live set
    expect(fs.existsSync(blobPath(sb, 'edited too\n'))).toBe(true); // workspace 2's snapshot
    expect(fs.existsSync(blobPath(sb, 'edited\n'))).toBe(true); // workspace 1's snapshot
    expect(fs.existsSync(blobPath(sb, 'in flight\n'))).toBe(true); // the capture in flight
    sb.json(['undo', sb.json(['list'], { cwd: other }).sets[0].id], { cwd: other });
    expect(fs.readFileSync(path.join(other, 'shared.txt'), 'utf8')).toBe('original\n');

    // The capture ends and records; then the next command still has its full "before".
    sb.write('pending.txt', 'written\n');
    sb.tb(['capture', 'end', '--id', 'p1']);
    sb.tb(['run', '--', 'sh', '-c', 'printf "later\\n" > shared.txt']);
    sb.json(['undo', sb.json(['list']).sets[0].id]);
    expect(sb.read('shared.txt').toString()).toBe('edited\n');
  });

  it('storing bytes already kept freshens the blob, so a sweep leaves it to the set about to refer to it', () => {
    const sb = sandbox();
    sb.write('a.txt', 'same bytes\n');
    sb.tb(['run', '--', 'true']);
    const blob = blobPath(sb, 'same bytes\n');
    const old = Date.now() / 1000 - 7200;
    fs.utimesSync(blob, old, old);
    sb.tb(['run', '--', 'sh', '-c', 'printf "same bytes\\n" > b.txt']);
    expect(fs.statSync(blob).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    // Leftovers of a writer killed mid-write go once old enough.
    const tmp = path.join(path.dirname(blob), '.tmp-999999-deadbeef');
    fs.writeFileSync(tmp, 'torn');
    fs.utimesSync(tmp, old, old);
    gc(sb, []);
    expect(fs.existsSync(tmp)).toBe(false);
    expect(fs.existsSync(blob)).toBe(true);
  });
});

describe('doctor', () => {
  it('says how much is kept and why, and the retention rules', () => {
    const sb = sandbox({ env: { TAKEBACK_RETENTION_DAYS: '7', TAKEBACK_MAX_JOURNAL_BYTES: String(50 * 1048576) } });
    sb.write('a.txt', 'a\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "b\\n" > a.txt']);
    const d = sb.json(['doctor']);
    expect(d.storage.limits).toMatchObject({ retentionDays: 7, maxJournalBytes: 50 * 1048576 });
    expect(d.storage.sets.live).toBe(1);
    expect(d.storage.use.total.count).toBe(d.blobs.count);
    expect(d.storage.use.sets.count + d.storage.use.working.count + d.storage.use.young.count + d.storage.use.unreferenced.count).toBe(d.blobs.count);
    const text = sb.tb(['doctor']).stdout;
    expect(text).toMatch(/for 1 change sets/);
    expect(text).toMatch(/sets expire after 7 days, and oldest first past 50\.0 MB/);
  });
});

describe('compressed copies', () => {
  it('a copy of 4 KB or more is kept compressed when that pays, and comes back byte for byte', () => {
    const sb = sandbox();
    const text = lines('a line of text that compresses well', 2000);
    sb.write('big.txt', text);
    sb.write('small.txt', 'small\n');
    sb.tb(['run', '--', 'sh', '-c', 'printf "replaced\\n" > big.txt && printf "s2\\n" > small.txt']);
    expect(fs.statSync(blobPath(sb, text)).size).toBeLessThan(text.length / 4);
    expect(fs.readFileSync(blobPath(sb, 'small\n'), 'utf8')).toBe('small\n'); // under 4 KB: as is
    sb.json(['undo', sb.json(['list']).sets[0].id]);
    expect(sb.read('big.txt').toString()).toBe(text);
    expect(sb.read('small.txt').toString()).toBe('small\n');
  });
});

describe('when the rules run', () => {
  it("an agent's session start runs gc in the background, at most every 6 hours", async () => {
    const sb = sandbox();
    sb.write('a.txt', 'a\n');
    const start = { session_id: 's1', cwd: sb.ws, hook_event_name: 'SessionStart', source: 'startup' };
    expect(sb.hook(start).code).toBe(0);
    const stamp = path.join(sb.home, 'gc.json');
    // The sweep runs in a process of its own and leaves what it did in gc.json.
    for (let i = 0; i < 100 && !/"time"/.test(fs.existsSync(stamp) ? fs.readFileSync(stamp, 'utf8') : ''); i++) await sleep(100);
    const first = JSON.parse(fs.readFileSync(stamp, 'utf8'));
    expect(first.expired).toEqual({ byAge: 0, bySize: 0 });
    // Not again within 6 hours.
    expect(sb.hook({ ...start, session_id: 's2' }).code).toBe(0);
    await sleep(500);
    expect(JSON.parse(fs.readFileSync(stamp, 'utf8')).time).toBe(first.time);
  });
});
