// A property test of the whole loop, against a model: random workspaces, random agent operations
// (file tools and shell commands: writes, appends, deletes, renames, mode changes, links, nested
// folders made and removed), and the person's own command outside any turn, then random undo and
// redo selections (one change, the last agent's change, a turn, everything after a turn). The model knows only what the test did — the tree before and after
// each operation, read from disk — never what takeback recorded.
//
// The property, for every step:
// - an undo or redo that says it wrote leaves exactly the model's tree (bytes, modes, types, link
//   text), and one that refuses (exit 1, conflicts) leaves the tree as it was;
// - it refuses only where the model sees a reason: a path of the selection that another change
//   still in place also touched, or that is not what the selection expects;
// - nothing outside the workspace changes (a folder beside it, reachable through a link inside it).
//
// Runs TAKEBACK_PROPERTY_RUNS cases (default 30) of one fast-check stream; fast-check prints the
// seed and the path of the shrunk case of a failure (fc.assert's `seed` and `path` replay it). The
// seed is fixed (20261201) so that CI is repeatable; TAKEBACK_PROPERTY_SEED runs others.
//
// Each case starts about twenty `takeback` processes one after another, so the cases are shared
// out among PROPERTY_PARTS test files (test/property-<n>.test.ts), which vitest runs at the same
// time as other files: part n runs its consecutive share of the one stream's cases (fast-check's
// `path` skips the cases before it), so the parts together run exactly the cases one file would.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sandbox, type Sandbox } from './takeback.js';
import { readTree, sameEntry, treeDiff, type Entry, type Tree } from './trees.js';

const RUNS = Number(process.env.TAKEBACK_PROPERTY_RUNS ?? 30);
const SEED = Number(process.env.TAKEBACK_PROPERTY_SEED ?? 20261201);

/** How many test files share the cases: test/property-1.test.ts up to this. */
export const PROPERTY_PARTS = 3;

/** Files an operation may touch. Top-level ones are also what file tools name. */
const TOP = ['a.txt', 'b.bin', 'e.sh'] as const;
const NESTED = ['sub/c.txt', 'sub/deep/d.txt', 'new/x.txt'] as const;
const FILES = [...TOP, ...NESTED] as const;

/** One agent operation, as a shell script run in the workspace. */
type Op =
  | { kind: 'write'; path: string; text: string }
  | { kind: 'append'; path: string; text: string }
  | { kind: 'delete'; path: string }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'chmod'; path: string; exec: boolean }
  | { kind: 'link'; path: string; target: string }
  | { kind: 'rmdir'; dir: string }
  | { kind: 'crlf'; path: string };

/** How an operation reaches takeback: a file tool naming its path, or a command scanned before and after. */
type Via = 'tool' | 'run';

interface Step {
  op: Op;
  via: Via;
}

/** What is done to the recorded changes after the operations. */
type Action =
  | { kind: 'undo-last' }
  | { kind: 'redo-last' }
  | { kind: 'undo-id'; pick: number }
  | { kind: 'redo-id'; pick: number }
  | { kind: 'undo-turn'; turn: 1 | 2 }
  | { kind: 'redo-turn'; turn: 1 | 2 }
  | { kind: 'undo-after-turn' };

const text = fc.stringMatching(/^[a-z \n]{0,40}$/);
const anyFile = fc.constantFrom(...FILES);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), path: anyFile, text }),
  fc.record({ kind: fc.constant('append' as const), path: anyFile, text }),
  fc.record({ kind: fc.constant('delete' as const), path: anyFile }),
  fc.record({ kind: fc.constant('rename' as const), from: anyFile, to: anyFile }),
  fc.record({ kind: fc.constant('chmod' as const), path: anyFile, exec: fc.boolean() }),
  fc.record({ kind: fc.constant('link' as const), path: fc.constantFrom('ln1', 'sub/ln2'), target: fc.constantFrom('a.txt', '../outside/o.txt', 'missing') }),
  fc.record({ kind: fc.constant('rmdir' as const), dir: fc.constantFrom('sub', 'new') }),
  fc.record({ kind: fc.constant('crlf' as const), path: anyFile }),
);

/** A file tool touches one top-level file by writing it; anything else goes through a command. */
const stepArb: fc.Arbitrary<Step> = fc.tuple(opArb, fc.boolean()).map(([op, tool]) => ({
  op,
  via: tool && (op.kind === 'write' || op.kind === 'append' || op.kind === 'crlf') && (TOP as readonly string[]).includes(op.path) ? 'tool' : 'run',
}));

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.constant({ kind: 'undo-last' as const }),
  fc.constant({ kind: 'redo-last' as const }),
  fc.record({ kind: fc.constant('undo-id' as const), pick: fc.nat(20) }),
  fc.record({ kind: fc.constant('redo-id' as const), pick: fc.nat(20) }),
  fc.record({ kind: fc.constant('undo-turn' as const), turn: fc.constantFrom(1 as const, 2 as const) }),
  fc.record({ kind: fc.constant('redo-turn' as const), turn: fc.constantFrom(1 as const, 2 as const) }),
  fc.constant({ kind: 'undo-after-turn' as const }),
);

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The shell script of an operation; it always succeeds (a missing file makes it do nothing). */
function script(op: Op): string {
  const mk = (p: string) => (p.includes('/') ? `mkdir -p ${q(path.dirname(p))} && ` : '');
  switch (op.kind) {
    case 'write':
      return `${mk(op.path)}rm -f ${q(op.path)} 2>/dev/null; [ -d ${q(op.path)} ] || printf %s ${q(op.text)} > ${q(op.path)}`;
    case 'append':
      return `[ -f ${q(op.path)} ] && [ ! -L ${q(op.path)} ] && printf %s ${q(op.text)} >> ${q(op.path)}; true`;
    case 'delete':
      return `[ -f ${q(op.path)} ] && rm -f ${q(op.path)}; true`;
    case 'rename':
      return op.from === op.to ? 'true' : `[ -f ${q(op.from)} ] && [ ! -L ${q(op.from)} ] && ${mk(op.to)}mv -f ${q(op.from)} ${q(op.to)}; true`;
    case 'chmod':
      return `[ -f ${q(op.path)} ] && [ ! -L ${q(op.path)} ] && chmod ${op.exec ? '755' : '644'} ${q(op.path)}; true`;
    case 'link':
      return `${mk(op.path)}rm -f ${q(op.path)}; ln -s ${q(op.target)} ${q(op.path)}`;
    case 'rmdir':
      return `rm -rf ${q(op.dir)}`;
    case 'crlf':
      return `[ -f ${q(op.path)} ] && [ ! -L ${q(op.path)} ] && printf '\\357\\273\\277one\\r\\ntwo\\r\\n\\377\\n' > ${q(op.path)}; true`;
  }
}

/** The paths whose entries differ between two trees. */
function touched(a: Tree, b: Tree): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((p) => !sameEntry(a.get(p), b.get(p))).sort();
}

/** One recorded change as the model knows it: the trees around it and the paths it touched. */
interface Change {
  id: string;
  /** Its turn; null for the person's own `takeback run` outside any turn, which `undo --last` never names. */
  turn: 1 | 2 | null;
  before: Tree;
  after: Tree;
  paths: string[];
  undone: boolean;
}

/** The initial workspace: a few files of each kind, a folder, and a link out of the workspace. */
function seed(sb: Sandbox): void {
  sb.write('a.txt', 'alpha\nbeta\n');
  sb.write('b.bin', Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 0]));
  sb.write('e.sh', '#!/bin/sh\necho hi\n', 0o755);
  sb.write('sub/c.txt', 'gamma\r\ndelta\r\n');
  sb.write('sub/deep/d.txt', '\uFEFFbom\n');
  fs.mkdirSync(path.join(sb.base, 'outside'), { recursive: true });
  fs.writeFileSync(path.join(sb.base, 'outside', 'o.txt'), 'outside the workspace\n');
  fs.symlinkSync('../outside', path.join(sb.ws, 'out'));
}

/**
 * The model's verdict on moving `sel` (all in the wanted state) in `direction` from `now`: the
 * tree it should leave, and whether a conflict is allowed (some path of the selection is touched
 * by another change still in place, or is not what the selection expects).
 */
function expectedMove(changes: Change[], sel: Change[], direction: 'undo' | 'redo', now: Tree): { tree: Tree; mayConflict: boolean } {
  const walk = [...sel].sort((a, b) => (direction === 'undo' ? Number(b.id) - Number(a.id) : Number(a.id) - Number(b.id)));
  const expected = new Map<string, Entry | undefined>();
  const target = new Map<string, Entry | undefined>();
  for (const c of walk) {
    for (const p of c.paths) {
      const [from, to] = direction === 'undo' ? [c.after.get(p), c.before.get(p)] : [c.before.get(p), c.after.get(p)];
      if (!expected.has(p)) expected.set(p, from);
      target.set(p, to);
    }
  }
  let mayConflict = false;
  const selIds = new Set(sel.map((c) => c.id));
  for (const p of target.keys()) {
    // A path already as the step leaves it is no conflict; one neither expected nor the target is.
    if (!sameEntry(now.get(p), expected.get(p)) && !sameEntry(now.get(p), target.get(p))) mayConflict = true;
    if (changes.some((c) => !selIds.has(c.id) && !c.undone && c.paths.includes(p))) mayConflict = true;
  }
  const tree: Tree = new Map(now);
  for (const [p, e] of target) {
    if (e) tree.set(p, e);
    else tree.delete(p);
  }
  // A folder the step would remove stays when something else is still in it.
  for (const [p, e] of now) {
    if (e.type !== 'dir' || tree.has(p)) continue;
    if ([...tree.keys()].some((k) => k.startsWith(`${p}/`))) tree.set(p, e);
  }
  // A folder that must exist for what the step writes stays (or comes back) too.
  for (const k of [...tree.keys()]) {
    for (let d = path.posix.dirname(k); d !== '.'; d = path.posix.dirname(d)) {
      if (!tree.has(d)) {
        const e = now.get(d) ?? target.get(d) ?? expected.get(d) ?? walk.map((c) => (direction === 'undo' ? c.before : c.after).get(d)).find(Boolean);
        if (e) tree.set(d, e);
      }
    }
  }
  return { tree, mayConflict };
}

function outsideTree(sb: Sandbox): Tree {
  return readTree(path.join(sb.base, 'outside'));
}

function runCase(steps: Step[], actions: Action[]): void {
  const sb = sandbox();
  seed(sb);
  const outside0 = outsideTree(sb);
  const changes: Change[] = [];
  const turnIds: string[] = [];
  for (const [t, half] of [steps.slice(0, Math.ceil(steps.length / 2)), steps.slice(Math.ceil(steps.length / 2))].entries()) {
    const turn = (t + 1) as 1 | 2;
    const begun = sb.json(['turn', 'begin', '--label', `turn ${turn}`]);
    turnIds.push(begun.turn?.id ?? begun.id);
    for (const [i, step] of half.entries()) {
      const before = readTree(sb.ws);
      if (step.via === 'tool') {
        const id = `tool_${turn}_${i}`;
        expect(sb.tb(['capture', 'begin', '--id', id, '--tool', 'Write', (step.op as { path: string }).path]).code).toBe(0);
        sb.sh(script(step.op));
        expect(sb.tb(['capture', 'end', '--id', id]).code).toBe(0);
      } else {
        const r = sb.tb(['run', '--', 'sh', '-c', script(step.op)]);
        expect(r.code, r.stderr).toBe(0);
      }
      const after = readTree(sb.ws);
      const paths = touched(before, after);
      if (paths.length === 0) continue;
      changes.push({ id: '', turn, before, after, paths, undone: false });
    }
    expect(sb.tb(['turn', 'end']).code).toBe(0);
  }
  // The person's own command, outside any turn: a change like any other, but never the agent's.
  const unturned = readTree(sb.ws);
  expect(sb.tb(['run', '--', 'sh', '-c', 'echo mine >> person.txt']).code).toBe(0);
  const mine = readTree(sb.ws);
  changes.push({ id: '', turn: null, before: unturned, after: mine, paths: touched(unturned, mine), undone: false });
  // The sets takeback recorded, oldest first, matched to the model's changes one to one: each
  // operation that changed something is one set, with the same paths.
  const list = sb.json(['list', '--all']);
  const sets = [...list.sets].reverse().filter((s: any) => s.source.kind !== 'turn');
  const unclaimed = list.sets.filter((s: any) => s.source.kind === 'turn');
  expect(unclaimed, 'every change was made by a captured operation').toEqual([]);
  expect(sets.map((s: any) => s.files.map((f: any) => f.path).sort())).toEqual(changes.map((c) => c.paths));
  sets.forEach((s: any, i: number) => (changes[i]!.id = s.id));

  const describe = () => `steps ${JSON.stringify(steps)}\nactions ${JSON.stringify(actions)}`;
  for (const action of actions) {
    const now = readTree(sb.ws);
    let sel: Change[];
    let args: string[];
    let direction: 'undo' | 'redo';
    switch (action.kind) {
      case 'undo-last': {
        direction = 'undo';
        const last = changes.filter((c) => !c.undone && c.turn !== null).at(-1);
        sel = last ? [last] : [];
        args = ['undo', '--last'];
        break;
      }
      case 'redo-last':
        // What the most recent undo took back: the model follows takeback's answer below.
        direction = 'redo';
        sel = [];
        args = ['redo', '--last'];
        break;
      case 'undo-id':
      case 'redo-id': {
        direction = action.kind === 'undo-id' ? 'undo' : 'redo';
        const pool = changes.filter((c) => c.undone === (direction === 'redo'));
        const c = pool[action.pick % Math.max(pool.length, 1)];
        sel = c ? [c] : [];
        args = [direction, c?.id ?? '1'];
        break;
      }
      case 'undo-turn':
      case 'redo-turn':
        direction = action.kind === 'undo-turn' ? 'undo' : 'redo';
        sel = changes.filter((c) => c.turn === action.turn && c.undone === (direction === 'redo'));
        args = [direction, '--turn', turnIds[action.turn - 1]!];
        break;
      case 'undo-after-turn':
        direction = 'undo';
        // Turn 2, and the person's command recorded after turn 1 ended.
        sel = changes.filter((c) => c.turn !== 1 && !c.undone);
        args = ['undo', '--after-turn', turnIds[0]!];
        break;
    }
    const r = sb.tb([...args, '--json']);
    const after = readTree(sb.ws);
    const out = r.stdout.trim() ? JSON.parse(r.stdout) : null;
    if (action.kind === 'redo-last') {
      if (r.code === 3) {
        expect(treeDiff(after, now), describe()).toEqual([]);
        continue;
      }
      sel = changes.filter((c) => (out?.sets ?? []).includes(c.id));
      if (r.code === 1) {
        expect(treeDiff(after, now), `a refused redo --last wrote\n${describe()}`).toEqual([]);
        continue;
      }
    }
    if (sel.length === 0) {
      // Nothing in the wanted state: nothing may be written, whatever the answer.
      expect(treeDiff(after, now), `${args.join(' ')} with nothing to move wrote\n${describe()}`).toEqual([]);
      continue;
    }
    const model = expectedMove(changes, sel, direction, now);
    if (r.code === 1) {
      expect(model.mayConflict, `${args.join(' ')} refused where the model sees no conflict: ${r.stdout}\n${describe()}`).toBe(true);
      expect(treeDiff(after, now), `a refused ${args.join(' ')} wrote\n${describe()}`).toEqual([]);
      continue;
    }
    expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}\n${describe()}`).toBe(0);
    expect(out.written, describe()).toBe(true);
    expect(treeDiff(after, model.tree), `${args.join(' ')} left another tree than the model's\n${describe()}`).toEqual([]);
    for (const c of sel) c.undone = direction === 'undo';
  }
  expect(treeDiff(outsideTree(sb), outside0), 'the folder outside the workspace changed').toEqual([]);
}

/**
 * The cases of part `part` (1 to PROPERTY_PARTS) of the stream: `{ from, runs }`, the index of its
 * first case and how many it runs. The parts are consecutive and cover cases 0 to RUNS - 1 once.
 */
export function partCases(part: number, runs = RUNS, parts = PROPERTY_PARTS): { from: number; runs: number } {
  if (!Number.isInteger(part) || part < 1 || part > parts) throw new Error(`no property part ${part} of ${parts}`);
  const from = Math.floor(((part - 1) * runs) / parts);
  return { from, runs: Math.floor((part * runs) / parts) - from };
}

/**
 * Declares part `part` (1 to PROPERTY_PARTS) of the property as one vitest test: its share of the
 * seed's cases (partCases), each checked by runCase, shrunk on a failure.
 */
export function describePropertyPart(part: number): void {
  const { from, runs } = partCases(part);
  describe('undo and redo against a model of the tree (property)', () => {
    it(`random operations, random selections: the model's tree, or a refusal that writes nothing (cases ${from + 1}-${from + runs} of ${RUNS})`, () => {
      fc.assert(
        fc.property(fc.array(stepArb, { minLength: 2, maxLength: 6 }), fc.array(actionArb, { minLength: 1, maxLength: 5 }), (steps, actions) => runCase(steps, actions)),
        { numRuns: runs, seed: SEED, ...(from > 0 ? { path: String(from) } : {}), endOnFailure: true },
      );
    }, 600_000);
  });
}
