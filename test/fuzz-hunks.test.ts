// The protocol's narrowing fields under malformed and hostile values, sent to the built
// `takeback serve` over real stdio: `selector.lines` (huge, negative, reversed, not integers, not
// numbers, with no path or two), `selector.paths` (outside the workspace, through a link to a
// folder outside, with a NUL), `selector.includeUnclaimed`, `changes/list`'s `hunks`, per-hunk
// undo and redo (`direction`), the code action's range, and the same selectors through
// `workspace/executeCommand`. The workspace holds a turn whose tool call changed three lines of
// notes.md far apart (three hunks) and an edit no tool call claimed (c.txt).
//
// For every message: an answer (a result, or an error that is InvalidParams, NotFound,
// OutsideWorkspace or InvalidId — never an internal error); the next valid request served; a
// refusal (or an answer that wrote nothing) leaves every file as it was, inside the workspace and
// beside it; a step that wrote moved whole hunks only (each of notes.md's three lines is the
// agent's or as it was, c.txt before or after), never outside. At the end the journal is still in
// step with the disk: an undo of the whole turn from the command line puts every file back as it
// was before the turn, `redo --last` brings back what the fuzz left, and redoing the tool call's
// change the rest of its hunks.
//
// TAKEBACK_FUZZ_HUNK_MESSAGES messages (default 600), with a fixed seed so that CI is repeatable;
// TAKEBACK_FUZZ_SEED runs others.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../protocol/src/errors.js';
import { rawServe } from './support/raw-rpc.js';
import { lines, sandbox } from './support/takeback.js';
import { readTree, treeDiff, type Tree } from './support/trees.js';

const MESSAGES = Number(process.env.TAKEBACK_FUZZ_HUNK_MESSAGES ?? 600);
const SEED = Number(process.env.TAKEBACK_FUZZ_SEED ?? 20261202);

/** The lines of notes.md the tool call changed (three hunks, far apart). */
const AGENT_LINES = [3, 20, 35];
const NOTES = lines('line', 40);
const AGENT_NOTES = NOTES.split('\n')
  .map((l, i) => (AGENT_LINES.includes(i + 1) ? `agent ${i + 1}` : l))
  .join('\n');

/** Numbers a range may hold: inside the file, at its edges, past it, negative, huge, not integers. */
const numbers = fc.constantFrom(0, 1, 2, 3, 4, 19, 20, 21, 35, 40, 41, 1000, -1, -3, -(2 ** 53), 1.5, 0.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e21, 1e308, -1e308);
const notNumbers = fc.constantFrom(null, '3', '', true, [], {}, [3], { n: 3 });

const linesArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ start: numbers, end: numbers }) },
  { weight: 2, arbitrary: fc.tuple(numbers, numbers).map(([a, b]) => ({ start: Math.min(a, b), end: Math.max(a, b) })) },
  { weight: 1, arbitrary: fc.record({ start: fc.oneof(numbers, notNumbers), end: fc.oneof(numbers, notNumbers) }) },
  { weight: 1, arbitrary: fc.constantFrom({}, { start: 3 }, { end: 3 }, { start: 3, end: 3, extra: 1 }, [3, 3], 3, '3-5', null) },
);

/** The folder beside the workspace, and paths that name it (directly, through a link inside, or by absolute path). */
function pathsArb(ws: string, outside: string): fc.Arbitrary<unknown> {
  const one = fc.constantFrom(
    'notes.md',
    'c.txt',
    'a.txt',
    path.join(ws, 'notes.md'),
    './notes.md',
    'sub/../notes.md',
    'ln/notes.md',
    'ln/../notes.md',
    '../outside/notes.md',
    path.join(outside, 'notes.md'),
    '/etc/passwd',
    'notes.md\0',
    '',
    '.',
    '..',
    'missing.md',
  );
  return fc.oneof(
    { weight: 6, arbitrary: one.map((p) => [p]) },
    { weight: 1, arbitrary: fc.tuple(one, one).map(([a, b]) => [a, b]) },
    { weight: 1, arbitrary: fc.constantFrom([], 'notes.md', [1], [null], null) },
  );
}

/** A selector built of one kind (or none, or two) and the narrowing fields, each maybe malformed. */
function selectorArb(ids: { notes: string; unclaimed: string; turn: string }, ws: string, outside: string): fc.Arbitrary<Record<string, unknown>> {
  const kind = fc.constantFrom<Record<string, unknown>>(
    { ids: [ids.notes] },
    { ids: [ids.unclaimed] },
    { ids: [ids.notes, ids.unclaimed] },
    { ids: ['999999'] },
    { ids: ['../1'] },
    { turn: ids.turn },
    { afterTurn: ids.turn },
    { last: true },
    {},
    { last: true, turn: ids.turn },
  );
  const hostile = fc
    .record(
      {
        kind,
        paths: pathsArb(ws, outside),
        lines: linesArb,
        includeUnclaimed: fc.constantFrom<unknown>(true, false, null, 'yes', 1),
      },
      { requiredKeys: ['kind'] },
    )
    .map(({ kind: k, ...rest }) => ({ ...k, ...rest }));
  // Well formed: the tool call's set (or the turn) narrowed to notes.md and a range of it, which
  // takes a hunk, several, or none.
  const line = fc.integer({ min: 1, max: 45 });
  const wellFormed = fc
    .record({
      kind: fc.constantFrom<Record<string, unknown>>({ ids: [ids.notes] }, { turn: ids.turn }, { turn: ids.turn, includeUnclaimed: true }, { ids: [ids.notes, ids.unclaimed] }),
      range: fc.oneof(fc.tuple(line, line).map(([a, b]) => ({ start: Math.min(a, b), end: Math.max(a, b) })), fc.constant(null)),
      path: fc.constantFrom('notes.md', path.join(ws, 'notes.md'), './notes.md'),
    })
    .map(({ kind: k, range, path: p }) => ({ ...k, paths: [p], ...(range ? { lines: range } : {}) }));
  return fc.oneof(hostile, wellFormed);
}

/** One request of the fuzz: a method and its params. */
function requestArb(ids: { notes: string; unclaimed: string; turn: string }, ws: string, outside: string): fc.Arbitrary<{ method: string; params: unknown }> {
  const selector = selectorArb(ids, ws, outside);
  const position = fc.record({ line: fc.oneof(numbers, notNumbers), character: fc.oneof(fc.constantFrom(0, 1, 5), numbers) });
  const uri = fc.constantFrom(pathToFileURL(path.join(ws, 'notes.md')).href, pathToFileURL(path.join(ws, 'ln', 'notes.md')).href, pathToFileURL(path.join(outside, 'notes.md')).href, 'file:///etc/passwd');
  return fc.oneof(
    { weight: 3, arbitrary: fc.record({ method: fc.constant('undo/preview'), params: fc.record({ selector, direction: fc.constantFrom<unknown>('undo', 'redo', undefined, 'sideways') }) }) },
    { weight: 6, arbitrary: fc.record({ method: fc.constant('undo/apply'), params: fc.record({ selector, direction: fc.constantFrom<unknown>('undo', 'redo', undefined, 'sideways') }) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        method: fc.constant('changes/list'),
        params: fc.record({ hunks: fc.constantFrom<unknown>('notes.md', 'c.txt', 'ln/notes.md', '../outside/notes.md', path.join(outside, 'notes.md'), path.join(ws, 'notes.md'), 'notes.md\0', '', 3, null, [], true) }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        method: fc.constant('textDocument/codeAction'),
        params: fc.record({ textDocument: fc.record({ uri }), range: fc.record({ start: position, end: position }), context: fc.constant({ diagnostics: [] }) }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        method: fc.constant('workspace/executeCommand'),
        params: fc.record({ command: fc.constantFrom('takeback.undo', 'takeback.redo', 'takeback.preview'), arguments: selector.map((s) => [s]) }),
      }),
    },
  );
}

/** The errors a request of the fuzz may get: its params refused, nothing to move there, a path outside, a bad id. */
const ALLOWED = new Set<number>([ErrorCodes.InvalidParams, ErrorCodes.NotFound, ErrorCodes.OutsideWorkspace, ErrorCodes.InvalidId]);

/** What in `tree` (the sandbox: the workspace in ws/, TAKEBACK_HOME aside) no step of the fuzz may leave: each of notes.md's three lines the agent's or as it was, c.txt and a.txt before or after the turn. */
function reachable(tree: Tree, base: Tree): string[] {
  const bad: string[] = [];
  for (const p of new Set([...tree.keys(), ...base.keys()])) {
    if (p === 'tbhome' || p.startsWith('tbhome/')) continue;
    const now = tree.get(p);
    const was = base.get(p);
    if (p === 'ws/notes.md' && now?.type === 'file') {
      const got = now.bytes.toString('latin1').split('\n');
      const ok = got.length === 41 && got[40] === '' && got.slice(0, 40).every((l, i) => l === `line ${i + 1}` || (AGENT_LINES.includes(i + 1) && l === `agent ${i + 1}`));
      if (!ok) bad.push(`${p}: ${JSON.stringify(now.bytes.toString('latin1'))}`);
      continue;
    }
    if (p === 'ws/c.txt' && now?.type === 'file' && ['c before\n', 'c during the turn\n'].includes(now.bytes.toString())) continue;
    if (p === 'ws/a.txt' && now?.type === 'file' && ['a before\n', 'a by the tool\n'].includes(now.bytes.toString())) continue;
    if (JSON.stringify(now && { ...now, bytes: undefined }) !== JSON.stringify(was && { ...was, bytes: undefined })) bad.push(p);
  }
  return bad;
}

describe('the narrowing fields of the protocol under malformed and hostile values (fuzz)', () => {
  it(`${MESSAGES} requests with lines, paths, includeUnclaimed, hunks, per-hunk redo: each answered or refused, nothing written outside whole hunks`, async () => {
    const sb = sandbox({ git: true });
    sb.write('notes.md', NOTES);
    sb.write('c.txt', 'c before\n');
    sb.write('a.txt', 'a before\n');
    const outside = path.join(sb.base, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'notes.md'), NOTES);
    fs.symlinkSync('../outside', sb.abs('ln'));
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    // A turn: a tool call edits notes.md (three hunks) and writes a.txt; c.txt changes meanwhile, claimed by no tool call.
    const turn = sb.json(['turn', 'begin', '--label', 'the turn']);
    const turnId: string = turn.turn?.id ?? turn.id;
    expect(sb.tb(['capture', 'begin', '--id', 'tool_1', '--tool', 'Edit', 'notes.md', 'a.txt']).code).toBe(0);
    fs.writeFileSync(sb.abs('notes.md'), AGENT_NOTES);
    fs.writeFileSync(sb.abs('a.txt'), 'a by the tool\n');
    expect(sb.tb(['capture', 'end', '--id', 'tool_1']).code).toBe(0);
    fs.writeFileSync(sb.abs('c.txt'), 'c during the turn\n');
    expect(sb.tb(['turn', 'end']).code).toBe(0);
    const sets = sb.json(['list']).sets as { id: string; source: { kind: string } }[];
    const unclaimed = sets.find((s) => s.source.kind === 'turn')!.id;
    const notes = sets.find((s) => s.source.kind !== 'turn')!.id;
    const start = readTree(sb.base);

    const server = rawServe(sb.ws, sb.env);
    server.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, rootUri: pathToFileURL(sb.ws).href, capabilities: {} } });
    expect((await server.answer(1, 30_000)).result).toBeDefined();
    server.send({ jsonrpc: '2.0', method: 'initialized', params: {} });

    const requests = fc.sample(requestArb({ notes, unclaimed, turn: turnId }, sb.ws, outside), { numRuns: MESSAGES, seed: SEED });
    const outcomes: Record<string, number> = {};
    let id = 100;
    for (const [i, req] of requests.entries()) {
      const text = JSON.stringify(req).slice(0, 400);
      const before = readTree(sb.base);
      const n = id++;
      server.send({ jsonrpc: '2.0', id: n, ...req });
      const r = await server.answer(n, 60_000);
      if (r.error) {
        expect(ALLOWED.has(r.error.code), `message ${i} ${text}: ${r.error.code} ${r.error.message}`).toBe(true);
        outcomes[`error ${r.error.code}`] = (outcomes[`error ${r.error.code}`] ?? 0) + 1;
      } else outcomes[`${req.method} answered`] = (outcomes[`${req.method} answered`] ?? 0) + 1;
      // A code action offers only what its command would take: a range of whole lines, 1-based.
      if (req.method === 'textDocument/codeAction' && Array.isArray(r.result)) {
        for (const a of r.result as { command?: string | { arguments?: unknown[] }; arguments?: unknown[] }[]) {
          const args = (typeof a.command === 'object' ? a.command.arguments : a.arguments) ?? [];
          const range = (args[0] as { lines?: { start: number; end: number } } | undefined)?.lines;
          if (range) expect(Number.isInteger(range.start) && range.start >= 1 && Number.isInteger(range.end) && range.end >= range.start, `message ${i} ${text} offered ${JSON.stringify(range)}`).toBe(true);
        }
      }
      const after = readTree(sb.base);
      const wrote = treeDiff(after, before).filter((l) => !l.startsWith('tbhome/'));
      const result = r.result as { written?: boolean } | undefined;
      if (r.error || (req.method !== 'undo/apply' && req.method !== 'workspace/executeCommand') || result?.written === false) {
        expect(wrote, `message ${i} ${text} wrote, answering ${JSON.stringify(r).slice(0, 300)}`).toEqual([]);
      } else if (wrote.length > 0) {
        outcomes.wrote = (outcomes.wrote ?? 0) + 1;
        expect(reachable(after, start), `message ${i} ${text} left a state no whole-hunk step leaves`).toEqual([]);
      }
      // The next valid request is served.
      const probe = id++;
      server.send({ jsonrpc: '2.0', id: probe, method: 'changes/list', params: {} });
      expect((await server.answer(probe, 60_000)).result, `changes/list after message ${i} ${text}`).toMatchObject({ workspace: sb.ws });
    }
    server.send({ jsonrpc: '2.0', id: 2, method: 'shutdown' });
    await server.answer(2, 30_000);
    server.send({ jsonrpc: '2.0', method: 'exit' });
    expect(await server.exited).toBe(0);
    console.log(`fuzz-hunks: ${MESSAGES} requests: ${JSON.stringify(outcomes)}`);
    expect(outcomes.wrote ?? 0, 'some steps wrote (the fuzz reached the disk path)').toBeGreaterThan(0);

    // Nothing outside changed, and the journal is in step with the disk: the whole turn undone
    // (its unclaimed edit too, whatever hunks the fuzz left in place) gives the files before the
    // turn, and redone (the exact inverse of that undo) the files as the fuzz left them.
    expect(fs.readFileSync(path.join(outside, 'notes.md'), 'utf8')).toBe(NOTES);
    const left = ['notes.md', 'a.txt', 'c.txt'].map((f) => sb.read(f).toString());
    const u = sb.tb(['undo', '--turn', turnId, '--include-unclaimed']);
    expect([0, 3], `${u.stdout}${u.stderr}`).toContain(u.code);
    expect(['notes.md', 'a.txt', 'c.txt'].map((f) => sb.read(f).toString())).toEqual([NOTES, 'a before\n', 'c before\n']);
    const rd = sb.tb(['redo', '--last']);
    expect([0, 3], `${rd.stdout}${rd.stderr}`).toContain(rd.code);
    expect(['notes.md', 'a.txt', 'c.txt'].map((f) => sb.read(f).toString())).toEqual(left);
    // And the tool call's change redone, as often as it has steps to take back (each redo is the
    // inverse of one undo of some of its hunks), gives the turn's bytes.
    for (let k = 0; k < 10 && sb.read('notes.md').toString() !== AGENT_NOTES; k++) {
      const again = sb.tb(['redo', notes]);
      expect(again.code, `${again.stdout}${again.stderr}`).toBe(0);
    }
    expect(sb.read('notes.md').toString()).toBe(AGENT_NOTES);
  }, 900_000);
});

describe("the code action's range", () => {
  it('lines and characters that are negative or not integers are InvalidParams, never an action whose selector its own command refuses', async () => {
    const sb = sandbox({ git: true });
    sb.write('notes.md', NOTES);
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    expect(sb.tb(['run', '--', 'sed', '-i', 's/^line 3$/agent 3/', 'notes.md']).code).toBe(0);
    const server = rawServe(sb.ws, sb.env);
    server.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, rootUri: pathToFileURL(sb.ws).href, capabilities: {} } });
    expect((await server.answer(1, 30_000)).result).toBeDefined();
    server.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
    const uri = pathToFileURL(sb.abs('notes.md')).href;
    const bad = [
      { start: { line: -5, character: 0 }, end: { line: 2, character: 0 } },
      { start: { line: 1.5, character: 0 }, end: { line: 2, character: 0 } },
      { start: { line: 1, character: -1 }, end: { line: 2, character: 0 } },
      { start: { line: 1, character: 0 }, end: { line: 2.5, character: 0 } },
    ];
    let id = 10;
    for (const range of bad) {
      const n = id++;
      server.send({ jsonrpc: '2.0', id: n, method: 'textDocument/codeAction', params: { textDocument: { uri }, range, context: { diagnostics: [] } } });
      const r = await server.answer(n, 30_000);
      expect(r.error?.code, `${JSON.stringify(range)}: ${JSON.stringify(r)}`).toBe(ErrorCodes.InvalidParams);
    }
    // A good range over the agent's line still gets its action.
    server.send({ jsonrpc: '2.0', id: 99, method: 'textDocument/codeAction', params: { textDocument: { uri }, range: { start: { line: 2, character: 0 }, end: { line: 2, character: 3 } }, context: { diagnostics: [] } } });
    const ok = await server.answer(99, 30_000);
    expect(JSON.stringify(ok.result)).toContain('"lines":{"start":3,"end":3}');
    server.child.kill();
  }, 120_000);
});
