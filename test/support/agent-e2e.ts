// One end-to-end scenario for the agents driven through an OpenAI-compatible stand-in for their
// model (Qwen Code, GitHub Copilot CLI, Cline CLI: ./qwen.ts, ./copilot.ts, ./cline.ts): `takeback
// init <agent>` writes the hooks in a scratch git repository, the REAL agent runs two turns
// scripted by the chat stub on 127.0.0.1 — a file tool creating a file, a file tool editing one, `sed -i`, `mv`, `rm` and a file tool over the moved file — and its real hooks
// record into a private TAKEBACK_HOME. Then the command line lists one set per changing tool call
// (agent, session, pairing), and undoes every call one by one back to the committed tree, redoes
// them one by one, and undoes and redoes whole turns: every step checked byte for byte (bytes,
// mode, type, folders) against trees computed here from what each tool does, not from takeback.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startChatStub } from './openai-chat-stub.js';
import type { ChatStep, ChatStub } from './openai-chat-stub.js';
import { changedPaths, edited, expectedStatus, fileEntry, fileOf, readTree, replaceOnce, sedLines, treeDiff, withChanges } from './trees.js';
import type { Tree } from './trees.js';
import { e2eHelpers, git, mkTemp, reportTimings, rmAll, takebackInit } from './workspace.js';
import { describeAgentRun } from './agent-bin.js';
import type { AgentRun } from './agent-bin.js';

/** The steps an agent's model script is made of, in that agent's own tools. */
export interface AgentTools {
  /**
   * One or more steps that create `file` (absolute) with `content`, or overwrite it when it holds
   * `previous` (a read first where the agent wants one; a replacement of the whole text where
   * the agent's file tools cannot overwrite).
   */
  write(file: string, content: string, previous: string | null): ChatStep[];
  /** One or more steps that replace `old` by `new` once in `file` (absolute); a read first where the agent wants one. */
  edit(file: string, old: string, replacement: string): ChatStep[];
  /** One or more steps that run `command` in the workspace; `edits`: the files it edits in place (absolute), read first where the agent wants that. */
  shell(command: string, edits: string[]): ChatStep[];
}

export interface AgentScenario {
  /** The agent as takeback names it (`takeback init NAME`, `list --agent NAME`). */
  agent: string;
  /** For log lines, e.g. "[qwen-e2e]". */
  label: string;
  tools: AgentTools;
  /** The tool names the sets must carry: of a file tool creating a file, overwriting one, editing one, and of the shell. */
  toolNames: { create: string; overwrite: string; edit: string; shell: string };
  /** How takeback pairs this agent's tool calls. */
  pairedBy: 'id' | 'order';
  /**
   * Runs turn `n` (1 or 2) of the agent in `work` against the stub at `baseUrl` with a private
   * `home`, the hooks' environment `hookEnv` added to the agent's own.
   */
  runTurn(n: 1 | 2, o: { work: string; home: string; baseUrl: string; prompt: string; hookEnv: Record<string, string | undefined> }): Promise<AgentRun>;
  /** Whether both turns are one session of the agent (else each turn is a session of its own). */
  oneSession: boolean;
  /** Whether the hooks see the prompt, which then labels its turn (else a turn has no label). */
  labelled: boolean;
  /** What else to check of the hooks init wrote, in the committed workspace `work`. */
  checkInit(work: string): void;
  /** Run on the workspace after init, before it is committed (what the agent writes there on its first start, say). */
  prepare?(work: string): void;
  /** Ends what the agent's runs left running in `work` (a background process of its own), before the folders go. */
  cleanup?(work: string): Promise<void>;
}

const PROMPT_1 = 'Turn one: add a greeter, reword, retune, move.';
const PROMPT_2 = 'Turn two: drop the scanner, rewrite the entry.';

const GREET = "export function greet(name) {\n  return 'Hello, ' + name + '!';\n}\n";
const POSIX = "'use strict';\r\n// The posix flavour, moved here (CRLF kept).\r\nmodule.exports = require('./parse');";
const SEED: Record<string, { bytes: Buffer; mode?: number }> = {
  'notes.md': { bytes: Buffer.from('# Notes\n\nThe quick brown fox.\n') },
  'lib/parse.js': { bytes: Buffer.from("module.exports = (s) => {\n  if (typeof s !== 'string') throw new TypeError('Expected a string');\n  return s;\n};\n") },
  'posix.js': { bytes: Buffer.from("'use strict';\nmodule.exports = require('./lib/parse');\n") },
  'scan.js': { bytes: Buffer.from('#!/bin/sh\necho scanning\n'), mode: 0o755 },
  'data.bin': { bytes: Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]) },
};
const EDIT = { file: 'notes.md', old: 'quick brown', new: 'slow red' };
const SED = "sed -i 's/Expected a string/Expected the input to be a string/' lib/parse.js";
const MV = 'mv posix.js lib/posix-entry.js';
const RM = 'rm scan.js';

interface Call {
  turn: 't1' | 't2';
  kind: 'create' | 'overwrite' | 'edit' | 'shell';
  command?: string;
}

/** Registers the scenario's tests in the current describe block. */
export function agentE2E(s: AgentScenario): void {
  let work: string;
  let home: string;
  let tbHome: string;
  let stub: ChatStub;
  const runs: AgentRun[] = [];
  const timings: { what: string; ms: number }[] = [];
  let T0: Tree;
  let T1: Tree;
  let T2: Tree;
  const E: Tree[] = [];
  let ids: string[] = [];
  /** How many scripted steps the two turns have. */
  let scripted = 0;
  const p = (rel: string) => path.join(work, rel);
  const calls: Call[] = [
    { turn: 't1', kind: 'create' },
    { turn: 't1', kind: 'edit' },
    { turn: 't1', kind: 'shell', command: SED },
    { turn: 't1', kind: 'shell', command: MV },
    { turn: 't2', kind: 'shell', command: RM },
    { turn: 't2', kind: 'overwrite' },
  ];
  const { tb, states, expectTree, expectAllSets, expectGitClean, expectPreview } = e2eHelpers(() => work, () => tbHome, timings);
  const what = (k: number) => `#${k} ${calls[k - 1]!.turn} ${calls[k - 1]!.command ?? calls[k - 1]!.kind}`;

  beforeAll(async () => {
    work = await mkTemp(`takeback-${s.agent}-e2e-work-`);
    home = await mkTemp(`takeback-${s.agent}-e2e-home-`);
    tbHome = await mkTemp(`takeback-${s.agent}-e2e-journal-`);
    for (const [rel, f] of Object.entries(SEED)) {
      fs.mkdirSync(path.dirname(p(rel)), { recursive: true });
      fs.writeFileSync(p(rel), f.bytes);
      if (f.mode) fs.chmodSync(p(rel), f.mode);
    }
    git(work, 'init', '-q');
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'seed');
    takebackInit(work, tbHome, [s.agent]);
    if (s.prepare) {
      s.prepare(work);
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', 'prepared');
    }
    T0 = readTree(work);

    const turn1: ChatStep[] = [
      ...s.tools.write(p('lib/greet.js'), GREET, null),
      ...s.tools.edit(p(EDIT.file), EDIT.old, EDIT.new),
      ...s.tools.shell(SED, [p('lib/parse.js')]),
      ...s.tools.shell(MV, []),
    ];
    const turn2: ChatStep[] = [...s.tools.shell(RM, []), ...s.tools.write(p('lib/posix-entry.js'), POSIX, SEED['posix.js']!.bytes.toString())];
    scripted = turn1.length + turn2.length;
    stub = await startChatStub({ steps: turn1, finalText: 'Turn one is done.' });
    const hookEnv = { TAKEBACK_HOME: tbHome, TAKEBACK_LOG_LEVEL: 'debug' };
    const turn = async (n: 1 | 2, prompt: string) => {
      const r = await s.runTurn(n, { work, home, baseUrl: stub.url, prompt, hookEnv });
      runs.push(r);
      // Nothing below means anything after a failed run: say how it failed.
      if (r.code !== 0 || r.timedOut) throw new Error(`turn ${n}: ${describeAgentRun(s.agent, r)}`);
    };
    await turn(1, PROMPT_1);
    T1 = readTree(work);
    stub.push(...turn2);
    await turn(2, PROMPT_2);
    T2 = readTree(work);
    console.info(`${s.label} turn 1 took ${runs[0]!.durationMs} ms, turn 2 ${runs[1]!.durationMs} ms`);

    // The tree after each changing tool call, from what the tool does.
    E[0] = T0;
    E[1] = withChanges(E[0], { 'lib/greet.js': fileEntry(Buffer.from(GREET), fileOf(T1, 'lib/greet.js').mode) });
    E[2] = withChanges(E[1], { [EDIT.file]: edited(E[1], EDIT.file, replaceOnce(EDIT.old, EDIT.new)) });
    E[3] = withChanges(E[2], { 'lib/parse.js': edited(E[2], 'lib/parse.js', sedLines('Expected a string', 'Expected the input to be a string')) });
    E[4] = withChanges(E[3], { 'posix.js': undefined, 'lib/posix-entry.js': E[3].get('posix.js') });
    E[5] = withChanges(E[4], { 'scan.js': undefined });
    // The overwrite's bytes as the agent wrote them (read before any undo): Copilot's edit gives
    // the new text the file's own line ends (LF), where the others keep the CRLFs they were sent.
    E[6] = withChanges(E[5], { 'lib/posix-entry.js': fileEntry(fileOf(T2, 'lib/posix-entry.js').bytes, fileOf(E[5], 'lib/posix-entry.js').mode) });
    try {
      ids = (tb(['list', '--json']).json.sets as { id: string }[]).map((x) => x.id).reverse();
    } catch {
      /* left empty: the list test says why */
    }
  }, 300_000);

  afterAll(async () => {
    await stub?.close();
    if (work) await s.cleanup?.(work);
    reportTimings(s.label, timings);
    if (process.env.KEEP_E2E) console.info(`${s.label} kept ${work} (TAKEBACK_HOME=${tbHome}, HOME=${home})`);
    else rmAll(work, home, tbHome);
  });

  it('init wrote the hooks, and the hooks ran takeback with no failure', () => {
    s.checkInit(work);
    const log = fs.readFileSync(path.join(tbHome, 'logs', 'hook.log'), 'utf8');
    expect(log).not.toMatch(new RegExp(`hook ${s.agent} failed|input is not JSON|no hook_event_name|no begin`));
    const doctor = tb(['doctor', '--json']).json;
    expect(doctor.captures.open, JSON.stringify(doctor)).toBe(0);
    expect(doctor.turns).toEqual({ total: 2, open: 0, endLost: 0 });
  });

  it('both turns ran every scripted call, and the files are in the states the tools left', () => {
    for (const r of runs) expect(r.code, `${r.argv.join(' ')}\n${r.stdout.slice(0, 3000)}\n${r.stderr.slice(0, 3000)}`).toBe(0);
    expect(stub.stepsUsed, 'every scripted step was asked for').toBe(scripted);
    expect(treeDiff(T1, E[4]!), 'after turn 1').toEqual([]);
    expect(treeDiff(T2, E[6]!), 'after turn 2').toEqual([]);
    const lf = (t: string) => t.replaceAll('\r\n', '\n');
    expect(lf(fileOf(T2, 'lib/posix-entry.js').bytes.toString()), 'the overwrite, line ends aside').toBe(lf(POSIX));
    for (let k = 1; k <= calls.length; k++) expect(changedPaths(E[k - 1]!, E[k]!).length, what(k)).toBeGreaterThan(0);
  });

  it(`list --json: one set per changing tool call, by ${s.agent}, in two turns, with the files each touched`, () => {
    const list = tb(['list', '--json']).json;
    expect(list.turns.map((t: any) => [t.id, t.agent, t.label])).toEqual([
      ['t2', s.agent, s.labelled ? PROMPT_2 : null],
      ['t1', s.agent, s.labelled ? PROMPT_1 : null],
    ]);
    for (const t of list.turns) expect(t.end, `turn ${t.id} ended`).not.toBeNull();
    const sessions = new Set(list.turns.map((t: any) => t.session));
    expect(sessions.size, 'sessions of the two turns').toBe(s.oneSession ? 1 : 2);
    for (const id of sessions) expect(id).toEqual(expect.any(String));
    const sets = [...list.sets].reverse();
    expect(
      sets.map((x: any) => [x.turn, x.agent, x.state, x.source.kind, x.source.tool, x.source.command ?? null, x.source.pairedBy ?? 'id']),
      JSON.stringify(list.sets, null, 1),
    ).toEqual(
      calls.map((c) => [
        c.turn,
        s.agent,
        'applied',
        c.kind === 'shell' ? 'command' : 'tool',
        s.toolNames[c.kind],
        c.command ?? null,
        s.pairedBy,
      ]),
    );
    expect(sets.map((x: any) => x.id)).toEqual(ids);
    sets.forEach((x: any, i: number) => {
      const [before, after] = [E[i]!, E[i + 1]!];
      expect(x.files.map((f: any) => [f.path, f.status]).sort(), `${what(i + 1)}: ${JSON.stringify(x.files)}`).toEqual(
        changedPaths(before, after).map((k) => [k, expectedStatus(before.get(k), after.get(k))]),
      );
      for (const f of x.files) expect(f.undoable, `${x.id} ${f.path}`).toBe(true);
    });
  });

  it(`list --agent ${s.agent}: every set and turn; claude-code: none`, () => {
    const all = tb(['list', '--json']).json;
    const mine = tb(['list', '--agent', s.agent, '--json']).json;
    expect(mine.sets.map((x: any) => x.id)).toEqual(all.sets.map((x: any) => x.id));
    expect(mine.turns.map((t: any) => t.id)).toEqual(['t2', 't1']);
    expect(tb(['list', '--agent', 'claude-code']).stdout).toContain(`(agents with changes here: ${s.agent})`);
  });

  it('undoes every tool call one at a time, newest first, down to the committed tree; then redoes them one by one', () => {
    for (let k = calls.length; k >= 1; k--) {
      const undo = tb(['undo', ids[k - 1]!, '--json']).json;
      expect(undo.conflicts, what(k)).toEqual([]);
      expectTree(E[k - 1]!, `after undoing ${what(k)}`);
    }
    expectTree(T0, 'everything undone');
    expectGitClean();
    expectAllSets('undone');
    for (let k = 1; k <= calls.length; k++) {
      const redo = tb(['redo', ids[k - 1]!, '--json']).json;
      expect(redo.conflicts, what(k)).toEqual([]);
      expectTree(E[k]!, `after redoing ${what(k)}`);
    }
    expectTree(T2, 'everything redone');
    expectAllSets('applied');
  });

  it('undoes turn 2 as a whole, then turn 1 (the committed tree); redoes both', () => {
    expectPreview(['--turn', '2'], T1, T2);
    tb(['undo', '--turn', '2']);
    expectTree(T1, 'after undo --turn 2');
    const st = states();
    calls.forEach((c, i) => expect(st.get(ids[i]!), what(i + 1)).toBe(c.turn === 't2' ? 'undone' : 'applied'));
    tb(['undo', '--turn', '1']);
    expectTree(T0, 'after undo --turn 1');
    expectGitClean();
    tb(['redo', '--turn', '1']);
    expectTree(T1, 'after redo --turn 1');
    tb(['redo', '--turn', '2']);
    expectTree(T2, 'after redo --turn 2');
  });
}
