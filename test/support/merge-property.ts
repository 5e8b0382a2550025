// A property test of the three-way merge's bytes: random files (CRLF, LF and lone CR mixed, a
// BOM, no final newline, bytes that are not UTF-8, NUL bytes, lines of 100,000 bytes, runs of
// 50,000 lines), a random change of the agent, then random later edits of the person's.
//
// The file is built of slots between kept runs of lines that neither side touches; each slot is
// left alone, changed by the agent, or changed by the person afterwards (or, for the overlap
// case, changed by both). Every line carries its slot's tag, so that lines of different slots
// never look alike and the model's answer is the only right one:
// - edits that do not overlap: the undo takes the agent's slots back and keeps the person's
//   (exactly the model's bytes); the redo right after it gives back exactly the person's file;
//   in process, the redo merged instead (the agent's change made again over the undone file)
//   gives back the person's file too;
// - a slot both changed: the undo refuses (exit 1, a conflict on the file) and writes nothing;
// - a NUL byte anywhere: not text, never merged: a refusal too, unless no merge is needed.
//
// Runs TAKEBACK_PROPERTY_RUNS cases through the real CLI (default 30) and 100 times as many in
// process (mergeBytes alone); fast-check prints the seed and the shrunk case of a failure. The
// seed is fixed so that CI is repeatable; TAKEBACK_PROPERTY_SEED runs others.
//
// The generators, the model and the reporter are shared by the two test files of the property,
// which vitest can run at the same time: test/property-merge.test.ts (in process) and
// test/property-merge-cli.test.ts (through the CLI: takeback processes one after another).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { isMergeableText } from '../../server/core/plan/merge.js';

export const RUNS = Number(process.env.TAKEBACK_PROPERTY_RUNS ?? 30);
export const SEED = Number(process.env.TAKEBACK_PROPERTY_SEED ?? 20261202);

/** One line: its bytes (no `\n`, no tag yet) and its end. */
interface Line {
  body: Uint8Array;
  eol: '\n' | '\r\n';
}

/** A slot: what it holds before the agent (`o`), and the side that changes it to `x` (for `both`: the agent to `x`, then the person to `y`). */
type Slot = { who: 'none'; o: Line[] } | { who: 'agent'; o: Line[]; x: Line[] } | { who: 'person'; o: Line[]; x: Line[] } | { who: 'both'; o: Line[]; x: Line[]; y: Line[] };

/** A kept run: its lines, or MANY (50,000 short lines, made once). */
type Run = Line[] | typeof MANY;

/** A run of 50,000 short lines, LF and CRLF mixed. */
const MANY = Symbol('50,000 lines');
const MANY_COUNT = 50_000;

/** MANY's bytes with run `i`'s tag, made once per run. */
const manyBytes = new Map<number, Buffer>();
function many(i: number): Buffer {
  let b = manyBytes.get(i);
  if (!b) {
    let text = '';
    for (let k = 0; k < MANY_COUNT; k++) text += `k${k}\x01k${i}${k % 3 === 0 ? '\r\n' : '\n'}`;
    b = Buffer.from(text, 'latin1');
    manyBytes.set(i, b);
  }
  return b;
}

/** A file: kept runs of lines with a slot between each two (the first and last run may be empty); no final newline in the versions that say so. */
interface Shape {
  kept: Run[];
  slots: Slot[];
  /** Per version (before the agent, after it, after the person), whether its last line has no end. */
  noEol: { o: boolean; a: boolean; p: boolean };
}

const BOM = [0xef, 0xbb, 0xbf];
/** The bytes of very long lines (a prefix of it), made once. */
const LONG = new Uint8Array(100_000).fill(0x78);

/** A line's bytes: plain text, arbitrary bytes (never `\n`, NUL only where `nul`), a BOM before text, a lone CR inside, or a very long run. */
function bodyArb(nul: boolean): fc.Arbitrary<Uint8Array> {
  const text = fc.stringMatching(/^[a-z =]{0,12}$/).map((s) => new Uint8Array(Buffer.from(s, 'latin1')));
  const bytes = fc.uint8Array({ maxLength: 10 }).map((b) => b.map((c) => (c === 0x0a || c === 0x01 || (c === 0 && !nul) ? 0x80 : c)));
  return fc.oneof(
    { weight: 6, arbitrary: text },
    { weight: 3, arbitrary: bytes },
    { weight: 1, arbitrary: text.map((t) => new Uint8Array([...BOM, ...t])) },
    { weight: 1, arbitrary: fc.tuple(text, text).map(([a, b]) => new Uint8Array([...a, 0x0d, ...b])) },
    { weight: 1, arbitrary: fc.constantFrom(20_000, 100_000).map((n) => LONG.subarray(0, n)) },
  );
}

function linesArb(nul: boolean, max: number): fc.Arbitrary<Line[]> {
  return fc.array(fc.record({ body: bodyArb(nul), eol: fc.constantFrom('\n' as const, '\r\n' as const) }), { maxLength: max });
}

/** A kept run: a few random lines, now and then 50,000 short ones. */
function keptArb(nul: boolean, minLength: number): fc.Arbitrary<Run> {
  return fc.oneof({ weight: 30, arbitrary: linesArb(nul, 4).filter((l) => l.length >= minLength) }, { weight: 1, arbitrary: fc.constant(MANY) });
}

/** A shape of 1 to 5 slots; `overlap` makes one slot changed by both, with o, x and y not all alike (at most one of them empty). */
function shapeArb(opts: { nul: boolean; overlap: boolean }): fc.Arbitrary<Shape> {
  const { nul } = opts;
  const slot: fc.Arbitrary<Slot> = fc.oneof(
    fc.record({ who: fc.constant('none' as const), o: linesArb(nul, 3) }),
    fc.record({ who: fc.constant('agent' as const), o: linesArb(nul, 3), x: linesArb(nul, 3) }),
    fc.record({ who: fc.constant('person' as const), o: linesArb(nul, 3), x: linesArb(nul, 3) }),
  );
  const both: fc.Arbitrary<Slot> = fc
    .record({ who: fc.constant('both' as const), o: linesArb(nul, 3), x: linesArb(nul, 3), y: linesArb(nul, 3) })
    .filter((s) => [s.o, s.x, s.y].filter((l) => l.length === 0).length <= 1);
  const inner = keptArb(nul, 1);
  const edge = keptArb(nul, 0);
  const noEol = fc.record({ o: fc.boolean(), a: fc.boolean(), p: fc.boolean() });
  // One arbitrary per number of slots, made once (making them is what costs).
  const byCount = [1, 2, 3, 4, 5].map((n) =>
    fc
      .record({
        slots: fc.array(slot, { minLength: n, maxLength: n }),
        at: fc.nat(n - 1),
        both,
        inner: fc.array(inner, { minLength: n - 1, maxLength: n - 1 }),
        first: edge,
        last: edge,
        noEol,
      })
      .map(({ slots, at, both: b, inner: runs, first, last, noEol: flags }): Shape => {
        if (opts.overlap) slots[at] = b;
        return { kept: [first, ...runs, last], slots, noEol: flags };
      }),
  );
  return fc.oneof(...byCount);
}

const nonEmpty = (run: Run) => run === MANY || run.length > 0;

/** The lines slot `s` holds in version `v`, and which of its lists they are. */
function slotLines(s: Slot, v: 'o' | 'a' | 'p' | 'undone'): [Line[], string] {
  if (s.who === 'none') return [s.o, 'o'];
  if (s.who === 'agent') return v === 'a' || v === 'p' ? [s.x, 'x'] : [s.o, 'o'];
  if (s.who === 'person') return v === 'p' || v === 'undone' ? [s.x, 'x'] : [s.o, 'o'];
  return v === 'o' ? [s.o, 'o'] : v === 'a' ? [s.x, 'x'] : v === 'p' ? [s.y, 'y'] : [s.o, 'o'];
}

/**
 * The bytes of `shape` as version `v` has them: before the agent, after it, after the person, or
 * what the undo leaves (the agent's slots back as they were, the person's kept). Its last line
 * has no end when the version says so: a file ending in kept lines ends alike in every version
 * (the flag of `o`); one ending in a slot's lines cuts that slot's own last line, each version
 * by its own flag (the undone one by that of the version whose lines it takes).
 */
function version(shape: Shape, v: 'o' | 'a' | 'p' | 'undone'): Buffer {
  const bufs: Buffer[] = [];
  let lastEol = 0;
  const push = (line: Line, tag: string) => {
    bufs.push(Buffer.concat([line.body, Buffer.from(`\x01${tag}${line.eol}`, 'latin1')]));
    lastEol = line.eol.length;
  };
  shape.kept.forEach((run, i) => {
    if (run === MANY) {
      bufs.push(many(i));
      lastEol = (MANY_COUNT - 1) % 3 === 0 ? 2 : 1;
    } else for (const line of run) push(line, `k${i}`);
    const s = shape.slots[i];
    if (!s) return;
    const [lines, side] = slotLines(s, v);
    for (const line of lines) push(line, `s${i}${side}`);
  });
  let cut: boolean;
  if (nonEmpty(shape.kept[shape.kept.length - 1]!)) cut = shape.noEol.o;
  else {
    const s = shape.slots[shape.slots.length - 1]!;
    const flag = v === 'undone' ? (s.who === 'person' ? shape.noEol.p : shape.noEol.o) : shape.noEol[v];
    cut = flag && slotLines(s, v)[0].length > 0;
  }
  if (cut && bufs.length > 0) bufs[bufs.length - 1] = bufs[bufs.length - 1]!.subarray(0, bufs[bufs.length - 1]!.length - lastEol);
  return Buffer.concat(bufs);
}

/** The files of one case: before the agent, after it, after the person, what the undo should leave. */
export function versions(shape: Shape): { o: Buffer; a: Buffer; p: Buffer; undone: Buffer } {
  return { o: version(shape, 'o'), a: version(shape, 'a'), p: version(shape, 'p'), undone: version(shape, 'undone') };
}

/**
 * The shapes the model answers for: a file whose end is a slot's lines has each version's cut
 * end on the slot's own last line, which only holds when each version has lines in that slot
 * (else the cut would fall on the kept line before it, a change the slot does not own).
 */
function modelled(shape: Shape): boolean {
  if (nonEmpty(shape.kept[shape.kept.length - 1]!)) return true;
  const s = shape.slots[shape.slots.length - 1]!;
  const lists = s.who === 'none' ? [s.o] : s.who === 'both' ? [s.o, s.x, s.y] : [s.o, s.x];
  if (lists.some((l) => l.length === 0)) return !shape.noEol.o && !shape.noEol.a && !shape.noEol.p;
  // An end cut in one version and not the other is the slot's own change: only for the side that changes it.
  if (s.who === 'none') return shape.noEol.o === shape.noEol.a && shape.noEol.a === shape.noEol.p;
  if (s.who === 'agent') return shape.noEol.a === shape.noEol.p;
  if (s.who === 'person') return shape.noEol.o === shape.noEol.a;
  return true;
}

const hasNul = (b: Buffer) => !isMergeableText(b);

/** What the undo must do with these versions. */
export function verdict(v: ReturnType<typeof versions>, overlap: boolean): 'plain' | 'in-place' | 'refuse' | 'merge' {
  if (v.p.equals(v.a)) return 'plain';
  if (v.p.equals(v.o)) return 'in-place';
  if (hasNul(v.o) || hasNul(v.a) || hasNul(v.p)) return 'refuse';
  return overlap ? 'refuse' : 'merge';
}

/** A case: whether one slot is changed by both sides, and the shape; `nul` lets NUL bytes in. */
function caseOf(nul: boolean): fc.Arbitrary<[boolean, Shape]> {
  const side = (overlap: boolean) => fc.tuple(fc.constant(overlap), shapeArb({ nul, overlap }).filter(modelled));
  return fc.oneof(side(false), side(true));
}
export const caseArb = caseOf(false);
export const nulCaseArb = caseOf(true);

/**
 * fast-check's reporter for these cases, whose values hold lines of 100,000 bytes: a failure
 * says the seed, the path and what failed, and leaves the shrunk case's files in a folder it
 * names (before the agent, after it, after the person, what the undo should leave), not on the
 * screen.
 */
export function reporter(out: fc.RunDetails<[[boolean, Shape]]>): void {
  if (!out.failed) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'takeback-property-merge-'));
  const [[overlap, shape]] = out.counterexample!;
  const v = versions(shape);
  for (const [k, b] of Object.entries(v)) fs.writeFileSync(path.join(dir, `${k}.txt`), b);
  fs.writeFileSync(path.join(dir, 'case.txt'), `overlap ${overlap}\nslots ${shape.slots.map((s) => s.who).join(' ')}\nverdict ${verdict(v, overlap)}\n`);
  throw new Error(`property failed (seed ${out.seed}, path "${out.counterexamplePath}", after ${out.numRuns} cases; the files are in ${dir}): ${String((out.errorInstance as Error | undefined)?.message ?? out.errorInstance)}`);
}
