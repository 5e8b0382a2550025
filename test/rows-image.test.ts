// The rows image (server/core/scan/rows-image.ts): a large snapshot index's rows kept in one file
// beside the journal, read by a new process instead of the database, with the folders written
// since read from the database. Here the size bound is 0 (TAKEBACK_ROWS_IMAGE_MIN_BYTES), so a
// small tree has one. Each opening of the journal stands for a new process. The rows an image
// gives must be the database's, byte for byte; an image that does not stand for the rows now
// (torn, replaced, or behind a write that kept none) is never read.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openWorkspace, type Workspace } from '../server/core/open-workspace.js';
import { readRowsImage, writeRowsImage } from '../server/core/scan/rows-image.js';
import { ROWS_IMAGE, SnapshotIndex } from '../server/core/scan/snapshot-index.js';
import { canMount, REQUIRED, smallDisk } from './support/disk.js';
import { sandbox, setsOf, type Sandbox } from './support/takeback.js';

const mountable = canMount();
if (!mountable && REQUIRED) throw new Error('rows-image.test.ts: mounting a tmpfs needs root on Linux (CI runs as root)');

const BOUND = 'TAKEBACK_ROWS_IMAGE_MIN_BYTES';
let was: string | undefined;
beforeEach(() => {
  was = process.env[BOUND];
  process.env[BOUND] = '0';
});
afterEach(() => {
  if (was === undefined) delete process.env[BOUND];
  else process.env[BOUND] = was;
});

/** A new opening of the journal (a new process): its scan's changed paths, sorted, and where its rows came from. */
function scanFresh(sb: Sandbox): { changed: string[]; from: string | null; rows: Map<string, Buffer>; db: Map<string, Buffer> } {
  const ws: Workspace = openWorkspace({ workspace: sb.ws, env: sb.env });
  try {
    const changed = ws.journal.write(() => scanAndCommit(ws).changes.map((c) => c.path).sort());
    const from = ws.journal.snapshot.rowsReadFrom;
    // The rows this process holds after its scan, against every row read from the database alone.
    const rows = new Map([...ws.journal.snapshot.rows()].map(([k, v]) => [k, Buffer.from(v)]));
    const db = new Map([...new SnapshotIndex(ws.journal.db).rows()].map(([k, v]) => [k, Buffer.from(v)]));
    return { changed, from, rows, db };
  } finally {
    ws.journal.close();
  }
}

/** The rows as a sorted list of [folder, hex], to compare two maps byte for byte. */
const flat = (m: Map<string, Buffer>) => [...m].map(([k, v]) => [k, v.toString('hex')]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));

function seed(sb: Sandbox): void {
  sb.write('a.txt', 'a\n');
  for (let d = 0; d < 6; d++) for (let f = 0; f < 4; f++) sb.write(`p${d}/q/f${f}.txt`, `${d} ${f}\n`);
  sb.write('gone/x.txt', 'x\n');
  sb.write('crlf.txt', Buffer.from('one\r\ntwo\r\n'));
}

describe('the rows image', () => {
  it('is written after a full read, then read by the next process with the folders written since from the database', () => {
    const sb = sandbox();
    seed(sb);
    expect(scanFresh(sb).changed).toEqual([]); // the baseline: no image before it
    const second = scanFresh(sb); // reads the database, writes the image
    expect(second.from).toBe('database');
    expect(fs.existsSync(path.join(sb.journalDir(), ROWS_IMAGE))).toBe(true);
    expect(fs.statSync(path.join(sb.journalDir(), ROWS_IMAGE)).mode & 0o777).toBe(0o600);

    // Changes in two folders, a folder made and one removed: each next process reads the image.
    sb.write('p1/q/f0.txt', 'changed\n');
    sb.write('p4/q/new.txt', 'new\n');
    sb.write('made/y.txt', 'y\n');
    fs.rmSync(sb.abs('gone'), { recursive: true });
    const third = scanFresh(sb);
    expect(third.from).toBe('image');
    expect(third.changed).toEqual(['gone', 'gone/x.txt', 'made', 'made/y.txt', 'p1/q/f0.txt', 'p4/q/new.txt']);
    expect(flat(third.rows)).toEqual(flat(third.db));

    const fourth = scanFresh(sb);
    expect(fourth.from).toBe('image');
    expect(fourth.changed).toEqual([]);
    expect(flat(fourth.rows)).toEqual(flat(fourth.db));
    expect([...fourth.rows.keys()]).not.toContain('gone');
    expect([...fourth.rows.keys()]).toContain('made');

    sb.write('made/y.txt', 'y2\n');
    fs.rmSync(sb.abs('p2'), { recursive: true });
    const fifth = scanFresh(sb);
    expect(fifth.from).toBe('image');
    expect(fifth.changed).toEqual(['made/y.txt', 'p2', 'p2/q', 'p2/q/f0.txt', 'p2/q/f1.txt', 'p2/q/f2.txt', 'p2/q/f3.txt']);
    expect(flat(fifth.rows)).toEqual(flat(fifth.db));
  });

  it('is not read when rows were written since by a takeback that keeps no image', () => {
    const sb = sandbox();
    seed(sb);
    scanFresh(sb);
    scanFresh(sb); // the image
    // A write that names no folder moved, as a takeback without images makes: the rows and their generation change, the image's meta does not.
    sb.write('p3/q/f1.txt', 'changed\n');
    const older = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      const plain = new SnapshotIndex(older.journal.db);
      older.journal.write(() => {
        const rows = plain.rows();
        plain.writeRows(new Map([['p3/q', Buffer.from(rows.get('p3/q')!)]]), ['p5/q']);
      });
    } finally {
      older.journal.close();
    }
    const next = scanFresh(sb);
    expect(next.from).toBe('database');
    // p5/q's row was removed by that write: its files are found again as new; p3/q's change is seen.
    expect(next.changed).toEqual(['p3/q/f1.txt', 'p5/q/f0.txt', 'p5/q/f1.txt', 'p5/q/f2.txt', 'p5/q/f3.txt']);
    expect(flat(next.rows)).toEqual(flat(next.db));
    // That read wrote a new image, which the next process reads.
    const after = scanFresh(sb);
    expect(after.from).toBe('image');
    expect(after.changed).toEqual([]);
  });

  it('is not read when torn, replaced by another, or not an image at all', () => {
    const sb = sandbox();
    seed(sb);
    scanFresh(sb);
    scanFresh(sb);
    const file = path.join(sb.journalDir(), ROWS_IMAGE);
    const whole = fs.readFileSync(file);
    const spoil: [string, (b: Buffer) => Buffer][] = [
      ['torn', (b) => b.subarray(0, b.length - 3)],
      ['cut after its token', (b) => b.subarray(0, 40)],
      ['another token', (b) => Buffer.concat([b.subarray(0, 12), Buffer.from('ff'), b.subarray(14)])],
      ['longer', (b) => Buffer.concat([b, Buffer.from('\0')])],
      ['empty', () => Buffer.alloc(0)],
    ];
    for (const [why, make] of spoil) {
      fs.writeFileSync(file, make(whole));
      sb.write('a.txt', `a ${why}\n`);
      const next = scanFresh(sb);
      expect({ why, from: next.from }).toEqual({ why, from: 'database' });
      expect(next.changed).toEqual(['a.txt']);
      expect(flat(next.rows)).toEqual(flat(next.db));
    }
    // A link where the image was is neither read nor written through: the database is read, and
    // the image written after replaces the link, its target untouched.
    fs.rmSync(file);
    const elsewhere = path.join(sb.base, 'elsewhere');
    fs.writeFileSync(elsewhere, 'not an image\n');
    fs.symlinkSync(elsewhere, file);
    sb.write('a.txt', 'a link\n');
    const linked = scanFresh(sb);
    expect(linked.from).toBe('database');
    expect(linked.changed).toEqual(['a.txt']);
    expect(fs.readFileSync(elsewhere, 'utf8')).toBe('not an image\n');
    expect(fs.lstatSync(file).isFile()).toBe(true);
    expect(scanFresh(sb).from).toBe('image');
    // A FIFO there is never waited on (a process that opened it to read would wait for a writer for good).
    fs.rmSync(file);
    spawnSync('mkfifo', [file]);
    expect(fs.lstatSync(file).isFIFO()).toBe(true);
    sb.write('a.txt', 'a fifo\n');
    const run = sb.tb(['capture', 'begin', '--id', 'fifo'], { timeout: 20_000, env: { ...sb.env, [BOUND]: '0' } });
    expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
    expect(fs.lstatSync(file).isFile()).toBe(true);
  });

  it('is not read once the table of the folders moved since is gone, and is no longer kept in step', () => {
    const sb = sandbox();
    seed(sb);
    scanFresh(sb);
    scanFresh(sb); // the image
    const ws = openWorkspace({ workspace: sb.ws, env: sb.env });
    try {
      ws.journal.db.exec('DROP TABLE snapshot_moved');
    } finally {
      ws.journal.close();
    }
    // With the bound back at its default, no image is written again on this small tree.
    delete process.env[BOUND];
    sb.write('made/y.txt', 'y\n');
    const first = scanFresh(sb);
    expect(first.from).toBe('database');
    expect(first.changed).toEqual(['made', 'made/y.txt']);
    sb.write('other/z.txt', 'z\n');
    const second = scanFresh(sb);
    expect(second.from).toBe('database');
    expect(second.changed).toEqual(['other', 'other/z.txt']);
    expect(flat(second.rows)).toEqual(flat(second.db));
  });

  it('reads back every byte written, rows larger than the buffer it writes through and names of any length included', () => {
    const sb = sandbox();
    const file = path.join(sb.base, ROWS_IMAGE);
    const rows = new Map<string, Buffer>();
    for (let i = 0; i < 3000; i++) rows.set(`d${i}/é ${'x'.repeat(i % 300)}`, Buffer.alloc(1000 + (i % 7), i & 0xff));
    rows.set('big', Buffer.alloc(1_500_000, 7));
    rows.set('', Buffer.alloc(0));
    rows.set(`long ${'名'.repeat(400_000)}`, Buffer.from('after a name past the buffer'));
    rows.set('bigger', Buffer.alloc(3_000_001, 9));
    expect(writeRowsImage(file, 'cc33', rows)).toBe(true);
    const back = readRowsImage(file, 'cc33')!;
    expect(back.dirs).toEqual([...rows.keys()]);
    back.rows.forEach((r, i) => expect(r.equals(rows.get(back.dirs[i]!)!)).toBe(true));
    expect(fs.readdirSync(sb.base).filter((n) => n.startsWith(ROWS_IMAGE))).toEqual([ROWS_IMAGE]);
    // A folder name UTF-8 cannot carry unchanged: no image.
    expect(writeRowsImage(file, 'dd44', new Map([['a\ud800b', Buffer.from('x')]]))).toBe(false);
    expect(readRowsImage(file, 'cc33')).not.toBeNull();
  });

  it.runIf(mountable)('leaves the image there as it was when a full disk takes the new one short', () => {
    const disk = smallDisk(256);
    const file = path.join(disk.dir, ROWS_IMAGE);
    const small = new Map([['', Buffer.from('row bytes')]]);
    expect(writeRowsImage(file, 'aa11', small)).toBe(true);
    const before = fs.readFileSync(file);
    const big = new Map<string, Buffer>();
    for (let i = 0; i < 64; i++) big.set(`d${i}`, Buffer.alloc(8192, i));
    expect(writeRowsImage(file, 'bb22', big)).toBe(false);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(fs.readdirSync(disk.dir)).toEqual([ROWS_IMAGE]);
    expect(readRowsImage(file, 'aa11')?.dirs).toEqual(['']);
    expect(readRowsImage(file, 'bb22')).toBeNull();
  });

  it('keeps command brackets through the CLI exact over many of them, odd names included', () => {
    const sb = sandbox({ env: { [BOUND]: '0' } });
    seed(sb);
    const odd = Buffer.concat([Buffer.from(sb.ws + '/'), Buffer.from([0x6e, 0xff, 0x2e, 0x64])]);
    fs.mkdirSync(odd);
    fs.writeFileSync(Buffer.concat([odd, Buffer.from('/in.txt')]), 'odd\n');
    sb.write('spaced name/é.txt', 'é\n');
    sb.tb(['capture', 'begin', '--id', 'warm0']);
    sb.tb(['capture', 'end', '--id', 'warm0']);
    for (let i = 0; i < 4; i++) {
      expect(sb.tb(['capture', 'begin', '--id', `c${i}`]).code).toBe(0);
      sb.write(`p${i}/q/f1.txt`, `bracket ${i}\n`);
      sb.write(`spaced name/é.txt`, `é ${i}\n`);
      if (i === 2) fs.rmSync(sb.abs('gone'), { recursive: true });
      expect(sb.tb(['capture', 'end', '--id', `c${i}`]).code).toBe(0);
    }
    expect(fs.existsSync(path.join(sb.journalDir(), ROWS_IMAGE))).toBe(true);
    const sets = setsOf(sb.json(['list']));
    const files = sets.map((s: { files: { path: string }[] }) => s.files.map((f) => f.path).sort());
    expect(files).toEqual([
      ['p0/q/f1.txt', 'spaced name/é.txt'],
      ['p1/q/f1.txt', 'spaced name/é.txt'],
      ['gone', 'gone/x.txt', 'p2/q/f1.txt', 'spaced name/é.txt'],
      ['p3/q/f1.txt', 'spaced name/é.txt'],
    ]);
    // Undo of the last bracket brings its file back exactly.
    expect(sb.tb(['undo', sets[3].id]).code).toBe(0);
    expect(sb.read('p3/q/f1.txt').toString()).toBe('3 1\n');
    expect(sb.read('spaced name/é.txt').toString()).toBe('é 2\n');
  });
});
