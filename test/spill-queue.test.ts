// The spill's queue in process, on a real folder: records come back whole and in order, a record
// cut short at any byte (a writer killed mid-append) or a slot left claimed by a dead writer is
// dropped and never blocks the records after it, and folding the queue into a real journal
// applies the whole ones and names the cut one.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, onTestFinished } from 'vitest';
import { foldSpill, queueOps } from '../server/core/capture/queued.js';
import { HolderWriter, readHolder, reserveHolder } from '../server/core/journal/holder.js';
import { SLOT_BYTES, SPILL_SLOTS, hasQueued, queued, release, reserveSpill, spill, spillDir } from '../server/core/journal/spill.js';
import { unitWorkspace } from './support/unit-workspace.js';

function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-spill-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The bytes `spill` writes for `value` (header and JSON), read back from a slot it queued. */
function recordOf(dir: string, value: unknown): Buffer {
  expect(spill(dir, value)).toBe(true);
  const name = fs.readdirSync(spillDir(dir)).find((n) => n.startsWith('q.'))!;
  const bytes = fs.readFileSync(path.join(spillDir(dir), name));
  release(dir, name);
  const nl = bytes.indexOf(0x0a);
  const len = Number(bytes.subarray(0, nl).toString('latin1').split(' ')[1]);
  return bytes.subarray(0, nl + 1 + len);
}

/** A queued slot named to come before every other, holding `bytes` and zeros after. */
function plantQueued(dir: string, bytes: Buffer): void {
  const free = fs.readdirSync(spillDir(dir)).find((n) => n.startsWith('f.'))!;
  const slot = Buffer.alloc(SLOT_BYTES);
  bytes.copy(slot);
  fs.writeFileSync(path.join(spillDir(dir), free), slot);
  fs.renameSync(path.join(spillDir(dir), free), path.join(spillDir(dir), `q.0000000000001.000000.1.${free.slice(2)}`));
}

describe('the spill queue', () => {
  it('sets its slots aside once, full size and 0600, and gives records back whole and in order', () => {
    const dir = tmp();
    expect(reserveSpill(dir)).toBe(false);
    const names = fs.readdirSync(spillDir(dir)).sort();
    expect(names).toHaveLength(SPILL_SLOTS);
    for (const n of names) {
      const st = fs.statSync(path.join(spillDir(dir), n));
      expect(st.size).toBe(SLOT_BYTES);
      expect(st.mode & 0o777).toBe(0o600);
      expect(st.blocks * 512).toBeGreaterThanOrEqual(SLOT_BYTES); // written out, not a sparse hole
    }
    for (let i = 0; i < 5; i++) expect(spill(dir, { n: i, text: 'é\n' })).toBe(true);
    expect(reserveSpill(dir)).toBe(true);
    const { entries, dropped } = queued<{ n: number; text: string }>(dir);
    expect(dropped).toBe(0);
    expect(entries.map((e) => e.value)).toEqual([0, 1, 2, 3, 4].map((n) => ({ n, text: 'é\n' })));
    for (const e of entries) release(dir, e.name);
    expect(hasQueued(dir)).toBe(false);
    expect(fs.readdirSync(spillDir(dir)).filter((n) => n.startsWith('f.'))).toHaveLength(SPILL_SLOTS);
  });

  it('refuses a record over a slot and says so when every slot is taken, writing nothing', () => {
    const dir = tmp();
    reserveSpill(dir);
    expect(spill(dir, { big: 'x'.repeat(SLOT_BYTES) })).toBe(false);
    for (let i = 0; i < SPILL_SLOTS; i++) expect(spill(dir, { i })).toBe(true);
    expect(spill(dir, { i: 'one more' })).toBe(false);
    expect(queued(dir).entries).toHaveLength(SPILL_SLOTS);
    expect(spill(tmp(), { none: true })).toBe(false); // no spill set aside
  });

  it('a record cut short at any byte is dropped and freed, and the records after it come back', () => {
    const dir = tmp();
    reserveSpill(dir);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.nat(), fc.jsonValue({ maxDepth: 2 }), (value, cutAt, later) => {
        const whole = recordOf(dir, value);
        plantQueued(dir, whole.subarray(0, cutAt % whole.length));
        expect(spill(dir, later)).toBe(true);
        const { entries, dropped } = queued<unknown>(dir);
        expect(dropped).toBe(1);
        expect(entries.map((e) => e.value)).toEqual([JSON.parse(JSON.stringify(later))]);
        for (const e of entries) release(dir, e.name);
        expect(fs.readdirSync(spillDir(dir)).filter((n) => n.startsWith('f.'))).toHaveLength(SPILL_SLOTS);
      }),
      { numRuns: 150 },
    );
  });

  it('a slot claimed by a writer that was killed is freed; one claimed by a live writer is left to it', () => {
    const dir = tmp();
    reserveSpill(dir);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const names = fs.readdirSync(spillDir(dir)).filter((n) => n.startsWith('f.'));
    fs.renameSync(path.join(spillDir(dir), names[0]!), path.join(spillDir(dir), `c.${names[0]!.slice(2)}.${dead}.dead`));
    fs.renameSync(path.join(spillDir(dir), names[1]!), path.join(spillDir(dir), `c.${names[1]!.slice(2)}.${process.pid}.live`));
    expect(spill(dir, { after: true })).toBe(true);
    const { entries, dropped } = queued<unknown>(dir);
    expect(dropped).toBe(1);
    expect(entries.map((e) => e.value)).toEqual([{ after: true }]);
    const left = fs.readdirSync(spillDir(dir));
    expect(left.filter((n) => n.startsWith('c.'))).toEqual([`c.${names[1]!.slice(2)}.${process.pid}.live`]);
  });

  it('folding into a real journal applies the whole records in order and names the one cut short', () => {
    const ws = unitWorkspace();
    const dir = ws.journal.dir;
    const good = recordOf(dir, { cause: 'journal-busy', ops: [{ op: 'lost', what: 'never seen' }] });
    plantQueued(dir, good.subarray(0, good.length - 3));
    const files = { root: ws.root, config: ws.config, blobs: ws.journal.blobs };
    const who = { agent: 'claude-code', session: 's', agentTurn: null };
    expect(queueOps(dir, files, 'journal-busy', [{ op: 'turn-begin', label: 'queued turn', ...who }])).toBe(true);
    expect(queueOps(dir, files, 'journal-busy', [{ op: 'turn-end', ...who }])).toBe(true);
    expect(foldSpill(ws)).toBe(2);
    expect(hasQueued(dir)).toBe(false);
    const turns = ws.journal.turns.all();
    expect(turns.map((t) => [t.label, t.end !== null])).toEqual([['queued turn', true]]);
    expect(ws.journal.unkept.all().map((u) => u.what)).toEqual(['an event queued while the journal could not be written was cut short']);
    // Folded once: a second fold finds nothing.
    expect(foldSpill(ws)).toBe(0);
    expect(ws.journal.turns.all()).toHaveLength(1);
  });

  it('a whole record that cannot be folded in is dropped and named, and does not hold the events after it', () => {
    const ws = unitWorkspace();
    const dir = ws.journal.dir;
    expect(spill(dir, { cause: 'journal-busy', ops: [{ op: 'files-begin', id: '../bad id', tool: 'Write', files: [] }] })).toBe(true);
    const files = { root: ws.root, config: ws.config, blobs: ws.journal.blobs };
    expect(queueOps(dir, files, 'journal-busy', [{ op: 'turn-begin', label: 'after the bad one', agent: 'codex', session: 's', agentTurn: null }])).toBe(true);
    expect(foldSpill(ws)).toBe(2);
    expect(hasQueued(dir)).toBe(false);
    expect(ws.journal.turns.all().map((t) => t.label)).toEqual(['after the bad one']);
    expect(ws.journal.unkept.all().map((u) => u.what)).toEqual([expect.stringMatching(/^a queued event that could not be folded in \(.*capture id/)]);
  });
});

describe('the lock-holder record', () => {
  it('names this process, its command cut to fit, and the time, in a file of a fixed size written in place', () => {
    const dir = tmp();
    reserveHolder(dir);
    const argv = process.argv;
    process.argv = [...argv, 'x'.repeat(2000)];
    try {
      const w = new HolderWriter(dir);
      w.write(1_796_000_000_000);
      w.write(1_796_000_000_123);
      w.close();
    } finally {
      process.argv = argv;
    }
    expect(fs.statSync(path.join(dir, 'holder')).size).toBe(512);
    const h = readHolder(dir)!;
    expect(h.pid).toBe(process.pid);
    expect(h.since).toBe(1_796_000_000_123);
    expect(h.command.length).toBeGreaterThan(100);
    expect(h.command.endsWith('x')).toBe(true);
  });
});
