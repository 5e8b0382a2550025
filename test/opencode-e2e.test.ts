// takeback end to end with the REAL opencode and the REAL Kilo Code CLI: `takeback init opencode`
// (and `init kilo`) puts takeback's plugin in the project, committed; the real `opencode run`
// then does two turns of one session against a scripted model on loopback (test/support/
// opencode-agent.ts), each with a file tool and shell commands (`sed -i`, `mv`, `rm`, `chmod`);
// every tool call and every turn is undone and redone byte for byte, modes included. Then
// opencode (its plugin installed for the user, `init opencode --user`) and the real Claude Code
// work in one folder at the same time: the file both touched
// is a conflict when undoing the first agent's turn, and undoing the other agent's turn gives
// back exactly what the first left.
//
// Without the binaries (scripts/install-opencode.sh, scripts/install-claude.sh) the suites are
// skipped, unless TAKEBACK_REQUIRE_AGENTS=1 (CI), where a missing one fails.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { BIN } from './support/takeback.js';
import { CLAUDE_BIN, describeRun, runClaude, type ClaudeResult } from './support/claude.js';
import { startModelStub, type ModelStub, type Step } from './support/model-stub.js';
import { describeOpencodeRun, KILO, OPENCODE, removeAgentOwnFiles, runOpencode, type OpencodeFlavor } from './support/opencode-agent.js';
import type { AgentRun } from './support/agent-bin.js';
import { changedPaths, edited, entryOf, fileEntry, readTree, replaceOnce, sedLines, treeDiff, withChanges, type Tree } from './support/trees.js';
import { e2eHelpers, git, mkTemp, reportTimings, rmAll, takebackInit } from './support/workspace.js';

/** The committed files of each workspace: text, a file with CRLF and no final newline, bytes that are not UTF-8, a script. */
const FILES: Record<string, string | Buffer> = {
  'README.md': '# tiny\n\nA tiny project for takeback.\n',
  'lib/a.txt': 'alpha\nbeta\ngamma\n',
  'lib/b.txt': 'b stays b\r\nno final newline',
  'lib/d.bin': Buffer.from([0x00, 0xff, 0xfe, 0x10, 0x80, 0x0a]),
  'run.sh': '#!/bin/sh\necho run\n',
  'shared.txt': 'one\ntwo\nthree\nfour\nfive\n',
};

async function tinyWorkspace(prefix: string): Promise<string> {
  const work = await mkTemp(prefix);
  for (const [rel, content] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(work, rel)), { recursive: true });
    fs.writeFileSync(path.join(work, rel), content);
  }
  git(work, 'init', '-q');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'tiny project');
  return work;
}

const PROMPT_1 = 'Turn one: add the greeter, fix the readme, tidy lib.';
const PROMPT_2 = 'Turn two: make run.sh runnable and rename the greeter.';
const FINAL_1 = 'Turn one is done.';
const FINAL_2 = 'Turn two is done.';
const GREET = "export const greet = (name) => 'Hello, ' + name;\n";
const SED_1 = "sed -i 's/beta/BETA/' lib/a.txt && mv lib/b.txt lib/c.txt && rm lib/d.bin";
const SHELL_2 = 'chmod +x run.sh && mv src/greet.js src/hello.js';
const A_NEW = 'alpha\nBETA\nGAMMA, rewritten\n';

/** opencode hands `run`'s message to its plugins in quotes. */
const quoted = (p: string) => `"${p}"`;

function suite(flavor: OpencodeFlavor) {
  const gated = gateAgent(flavor.bin, `takeback end to end with the real ${flavor.agent}`, `[${flavor.agent}-e2e]`);
  return describe.skipIf(!gated.bin)(gated.bin ? `takeback end to end with the real ${flavor.agent} ${gated.version}` : `${flavor.agent} — ${gated.skipReason}`, () => {
    let work: string;
    let home: string;
    let tbHome: string;
    let stub: ModelStub;
    let run1: AgentRun;
    let run2: AgentRun;
    /** A copy of the agent's project folder as the first run left it, takeback's plugin aside. */
    let agentOwn: string;
    let T0: Tree;
    let T1: Tree;
    let T2: Tree;
    const E: Tree[] = [];
    /** The tool calls that change files, in order. */
    const calls: { turn: string; tool: string; command?: string; path?: string }[] = [
      { turn: 't1', tool: 'write', path: 'src/greet.js' },
      { turn: 't1', tool: 'edit', path: 'README.md' },
      { turn: 't1', tool: 'bash', command: SED_1 },
      { turn: 't2', tool: 'bash', command: SHELL_2 },
      { turn: 't2', tool: 'write', path: 'lib/a.txt' },
      { turn: 't2', tool: 'edit', path: 'src/hello.js' },
    ];
    let ids: string[] = [];
    const timings: { what: string; ms: number }[] = [];
    const { tb, expectTree, expectAllSets, expectGitClean, expectPreview } = e2eHelpers(() => work, () => tbHome, timings);

    beforeAll(async () => {
      work = await tinyWorkspace(`takeback-${flavor.agent}-e2e-work-`);
      home = await mkTemp(`takeback-${flavor.agent}-e2e-home-`);
      tbHome = await mkTemp(`takeback-${flavor.agent}-e2e-journal-`);
      takebackInit(work, tbHome, [flavor.agent]);
      T0 = readTree(work);
      const p = (rel: string) => path.join(work, rel);
      const turn1: Step[] = [
        [{ type: 'text', text: 'The greeter first.' }, { type: 'tool_use', name: 'write', input: { filePath: p('src/greet.js'), content: GREET } }],
        // A relative path: the project folder's.
        [{ type: 'tool_use', name: 'edit', input: { filePath: 'README.md', oldString: 'A tiny project', newString: 'A very tiny project' } }],
        // read changes nothing: the plugin does not hand it over.
        [{ type: 'tool_use', name: 'read', input: { filePath: p('lib/a.txt') } }],
        [{ type: 'tool_use', name: 'bash', input: { command: SED_1, description: 'Tidy lib' } }],
        [{ type: 'text', text: FINAL_1 }],
      ];
      stub = await startModelStub(turn1);
      const common = { flavor, bin: gated.bin!, cwd: work, baseUrl: stub.url, home, env: { TAKEBACK_HOME: tbHome, TAKEBACK_LOG_LEVEL: 'debug' } };
      run1 = await runOpencode({ ...common, prompt: PROMPT_1 });
      // What the agent wrote into its folder at start, for the --remove case below.
      agentOwn = await mkTemp(`takeback-${flavor.agent}-e2e-own-`);
      fs.cpSync(path.join(work, flavor.projectDir), agentOwn, { recursive: true, filter: (src) => !src.startsWith(path.join(work, flavor.projectDir, 'plugins')) });
      removeAgentOwnFiles(work, flavor);
      T1 = readTree(work);
      stub.push(
        [{ type: 'tool_use', name: 'bash', input: { command: SHELL_2, description: 'Runnable, renamed' } }],
        [{ type: 'tool_use', name: 'write', input: { filePath: p('lib/a.txt'), content: A_NEW } }],
        [{ type: 'tool_use', name: 'edit', input: { filePath: p('src/hello.js'), oldString: "'Hello, '", newString: "'Hi there, '" } }],
        // An edit that fails (its text is not in the file): no tool.execute.after comes.
        [{ type: 'tool_use', name: 'edit', input: { filePath: p('README.md'), oldString: 'no such text', newString: 'x' } }],
        [{ type: 'text', text: FINAL_2 }],
      );
      run2 = await runOpencode({ ...common, prompt: PROMPT_2, continueSession: true });
      removeAgentOwnFiles(work, flavor);
      T2 = readTree(work);
      console.info(`[${flavor.agent}-e2e] ${flavor.agent} ${gated.version}: turn 1 took ${run1.durationMs} ms, turn 2 ${run2.durationMs} ms`);

      E[0] = T0;
      E[1] = withChanges(E[0], { src: entryOf(T1, 'src'), 'src/greet.js': fileEntry(Buffer.from(GREET), entryOf(T1, 'src/greet.js').mode) });
      E[2] = withChanges(E[1], { 'README.md': edited(E[1], 'README.md', replaceOnce('A tiny project', 'A very tiny project')) });
      E[3] = withChanges(E[2], { 'lib/a.txt': edited(E[2], 'lib/a.txt', sedLines('beta', 'BETA')), 'lib/b.txt': undefined, 'lib/c.txt': E[2].get('lib/b.txt'), 'lib/d.bin': undefined });
      E[4] = withChanges(E[3], { 'run.sh': { ...entryOf(E[3], 'run.sh'), mode: entryOf(T2, 'run.sh').mode }, 'src/greet.js': undefined, 'src/hello.js': E[3].get('src/greet.js') });
      E[5] = withChanges(E[4], { 'lib/a.txt': fileEntry(Buffer.from(A_NEW), entryOf(E[4], 'lib/a.txt').mode) });
      E[6] = withChanges(E[5], { 'src/hello.js': edited(E[5], 'src/hello.js', replaceOnce("'Hello, '", "'Hi there, '")) });
      // A turn's end is handed over as opencode exits: it may be recorded just after.
      await until(() => tb(['list', '--json']).json.turns.every((t: any) => t.end !== null), 60_000);
      ids = [...tb(['list', '--agent', flavor.agent, '--json']).json.sets].reverse().map((s: any) => s.id);
    }, 700_000);

    afterAll(async () => {
      await stub?.close();
      reportTimings(`[${flavor.agent}-e2e]`, timings);
      if (process.env.KEEP_E2E) console.info(`[${flavor.agent}-e2e] kept ${work} (TAKEBACK_HOME=${tbHome}, HOME=${home})`);
      else rmAll(work, home, tbHome, agentOwn);
    });

    it('both turns ran every scripted tool call in one session, and the plugin handed over every event', () => {
      expect(run1.code, describeOpencodeRun(flavor, run1)).toBe(0);
      expect(run2.code, describeOpencodeRun(flavor, run2)).toBe(0);
      expect(run1.stdout, describeOpencodeRun(flavor, run1)).toContain(FINAL_1);
      expect(run2.stdout, describeOpencodeRun(flavor, run2)).toContain(FINAL_2);
      expect(stub.stepsUsed).toBe(10);
      const log = fs.readFileSync(path.join(tbHome, 'logs', 'hook.log'), 'utf8');
      expect(log).not.toMatch(/failed|plugin \w+:|input is not JSON|no begin/);
      expect(log.match(new RegExp(`${flavor.agent} tool\\.execute\\.after: capture toolu_stub_\\d+ ended: set \\d+`, 'g')) ?? [], log).toHaveLength(calls.length);
      expect(log.match(new RegExp(`${flavor.agent} session\\.idle: turn t\\d ended`, 'g')) ?? [], log).toHaveLength(2);
      expect(tb(['doctor', '--json']).json.captures.open).toBe(0);
    });

    it('the files are in the states the tools left (known trees), the plugin still committed in place', () => {
      expect(treeDiff(T1, E[3]!), 'after turn 1').toEqual([]);
      expect(treeDiff(T2, E[6]!), 'after turn 2').toEqual([]);
      expect(entryOf(T2, 'run.sh').mode & 0o111).not.toBe(0);
      expect(fs.existsSync(path.join(work, flavor.projectDir, 'plugins', 'takeback.js'))).toBe(true);
    });

    it(`init ${flavor.agent} --remove leaves a project as it was before init, what ${flavor.agent} wrote into its folder at start included`, async () => {
      expect(fs.readdirSync(agentOwn).length, 'the agent wrote nothing into its folder').toBeGreaterThan(0);
      const fresh = await tinyWorkspace(`takeback-${flavor.agent}-e2e-remove-`);
      try {
        const before = readTree(fresh);
        const env = { ...process.env, TAKEBACK_HOME: tbHome, NO_COLOR: '1' };
        expect(spawnSync(process.execPath, [BIN, 'init', flavor.agent], { cwd: fresh, env, encoding: 'utf8' }).status).toBe(0);
        fs.cpSync(agentOwn, path.join(fresh, flavor.projectDir), { recursive: true });
        const r = spawnSync(process.execPath, [BIN, 'init', flavor.agent, '--remove'], { cwd: fresh, env, encoding: 'utf8' });
        expect([r.status, r.stderr]).toEqual([0, '']);
        expect(treeDiff(readTree(fresh), before)).toEqual([]);
        expect(git(fresh, 'status', '--porcelain', '--ignored')).toBe('');
      } finally {
        rmAll(fresh);
      }
    });

    it(`list --agent ${flavor.agent}: two turns of one session with their prompts, one set per tool call paired by the call's id`, () => {
      const list = tb(['list', '--agent', flavor.agent, '--json']).json;
      expect(list.turns.map((t: any) => [t.id, t.agent, t.label])).toEqual([
        ['t2', flavor.agent, quoted(PROMPT_2)],
        ['t1', flavor.agent, quoted(PROMPT_1)],
      ]);
      expect(list.turns[0].session).toMatch(/^ses_/);
      expect(list.turns[1].session).toBe(list.turns[0].session);
      const sets = [...list.sets].reverse();
      // The failed edit changed nothing: its capture, closed at the turn's end, records no set.
      expect(sets.map((s: any) => [s.turn, s.source.tool, s.source.command ?? null, s.source.toolCallId])).toEqual(
        calls.map((c, i) => [c.turn, c.tool, c.command ?? null, stub.toolUseIds[i < 2 ? i : i + 1]]),
      );
      sets.forEach((s: any, i: number) => {
        expect(s.files.map((f: any) => f.path).sort(), `${calls[i]!.tool} ${calls[i]!.command ?? calls[i]!.path}`).toEqual(changedPaths(E[i]!, E[i + 1]!));
      });
      expect(tb(['list', '--agent', 'claude-code', '--json']).json.sets).toEqual([]);
    });

    it('undoes every tool call one at a time, newest first, down to the committed tree; redoes each', () => {
      for (let k = calls.length; k >= 1; k--) {
        expect(tb(['undo', ids[k - 1]!, '--json']).json.conflicts).toEqual([]);
        expectTree(E[k - 1]!, `after undoing call ${k}`);
      }
      expectGitClean();
      expectAllSets('undone');
      for (let k = 1; k <= calls.length; k++) {
        expect(tb(['redo', ids[k - 1]!, '--json']).json.conflicts).toEqual([]);
        expectTree(E[k]!, `after redoing call ${k}`);
      }
      expectAllSets('applied');
    });

    it('undoes turn 2, then turn 1 (the committed tree); redoes both', () => {
      expectPreview(['--turn', '2'], T1, T2);
      tb(['undo', '--turn', '2']);
      expectTree(T1, 'after undo --turn 2');
      tb(['undo', '--turn', '1']);
      expectTree(T0, 'after undo --turn 1');
      expectGitClean();
      tb(['redo', '--turn', '1']);
      expectTree(T1, 'after redo --turn 1');
      tb(['redo', '--turn', '2']);
      expectTree(T2, 'after redo --turn 2');
    });
  });
}

/** Waits until `cond` holds, polling; throws after `ms`. */
async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting for the turns to end');
    await new Promise((r) => setTimeout(r, 200));
  }
}

suite(OPENCODE);
suite(KILO);

const oc = gateAgent(OPENCODE.bin, 'opencode and Claude Code in one folder at the same time', '[opencode-e2e]');
const claude = gateAgent(CLAUDE_BIN, 'opencode and Claude Code in one folder at the same time', '[opencode-e2e]');

describe.skipIf(!oc.bin || !claude.bin)(
  oc.bin && claude.bin ? `opencode ${oc.version} and Claude Code ${claude.version} in one folder at the same time: one journal` : `opencode and Claude Code in one folder — ${!oc.bin ? oc.skipReason : claude.skipReason}`,
  () => {
    const CLAUDE_PROMPT = 'Claude: add cc.txt and stress line three.';
    const OC_PROMPT = 'opencode: add oc.txt, then settle line three and rename oc.txt.';
    // opencode's shell call waits (up to two minutes) for Claude Code's edit of shared.txt, so
    // that both agents run at once and the file's line three changes in a known order.
    const OC_SHELL = "for i in $(seq 1200); do grep -q THREE shared.txt && break; sleep 0.1; done; sed -i 's/THREE/3/' shared.txt && mv oc.txt oc2.txt";
    let work: string;
    let ocHome: string;
    let claudeHome: string;
    let tbHome: string;
    let ocStub: ModelStub;
    let claudeStub: ModelStub;
    let ocRun: AgentRun;
    let claudeRun: ClaudeResult;
    let T0: Tree;
    let TB: Tree; // after both
    let afterClaude: Tree; // what Claude Code alone left
    let claudeTurn: string;
    let ocTurn: string;
    const timings: { what: string; ms: number }[] = [];
    const { tb, expectTree, expectGitClean } = e2eHelpers(() => work, () => tbHome, timings);

    beforeAll(async () => {
      work = await tinyWorkspace('takeback-opencode-e2e-both-');
      ocHome = await mkTemp('takeback-opencode-e2e-both-home-');
      claudeHome = await mkTemp('takeback-opencode-e2e-claude-home-');
      tbHome = await mkTemp('takeback-opencode-e2e-both-journal-');
      takebackInit(work, tbHome, ['claude-code'], 'takeback for Claude Code');
      // opencode's plugin for the user (its private HOME): the folder opencode loads every plugin of, unregistered.
      const init = spawnSync(process.execPath, [BIN, 'init', 'opencode', '--user'], {
        cwd: work,
        env: { ...process.env, HOME: ocHome, XDG_CONFIG_HOME: path.join(ocHome, '.config'), TAKEBACK_HOME: tbHome },
        encoding: 'utf8',
      });
      expect(init.stdout, init.stderr).toContain(`installed takeback's plugin as ${path.join(ocHome, '.config', 'opencode', 'plugins', 'takeback.js')}`);
      T0 = readTree(work);
      const p = (rel: string) => path.join(work, rel);
      claudeStub = await startModelStub([
        [{ type: 'tool_use', name: 'Write', input: { file_path: p('cc.txt'), content: 'from Claude Code\n' } }],
        // Edit refuses a file that was not Read first in the session.
        [{ type: 'tool_use', name: 'Read', input: { file_path: p('shared.txt') } }],
        [{ type: 'tool_use', name: 'Edit', input: { file_path: p('shared.txt'), old_string: 'three', new_string: 'THREE' } }],
        [{ type: 'text', text: 'Claude is done.' }],
      ]);
      ocStub = await startModelStub([
        [{ type: 'tool_use', name: 'write', input: { filePath: p('oc.txt'), content: 'from opencode\n' } }],
        [{ type: 'tool_use', name: 'bash', input: { command: OC_SHELL, description: 'Settle line three' } }],
        [{ type: 'text', text: 'opencode is done.' }],
      ]);
      const env = { TAKEBACK_HOME: tbHome, TAKEBACK_LOG_LEVEL: 'debug' };
      [ocRun, claudeRun] = await Promise.all([
        runOpencode({ flavor: OPENCODE, bin: oc.bin!, cwd: work, baseUrl: ocStub.url, home: ocHome, prompt: OC_PROMPT, env }),
        runClaude({ cwd: work, home: claudeHome, baseUrl: claudeStub.url, prompt: CLAUDE_PROMPT, env, outputFormat: 'json', timeoutMs: 180_000 }),
      ]);
      TB = readTree(work);
      await until(() => tb(['list', '--json']).json.turns.length === 2 && tb(['list', '--json']).json.turns.every((t: any) => t.end !== null), 60_000);
      const turns = tb(['list', '--json']).json.turns;
      claudeTurn = turns.find((t: any) => t.agent === 'claude-code')?.id;
      ocTurn = turns.find((t: any) => t.agent === 'opencode')?.id;
      afterClaude = withChanges(T0, {
        'cc.txt': fileEntry(Buffer.from('from Claude Code\n'), entryOf(TB, 'cc.txt').mode),
        'shared.txt': edited(T0, 'shared.txt', replaceOnce('three', 'THREE')),
      });
    }, 700_000);

    afterAll(async () => {
      await ocStub?.close();
      await claudeStub?.close();
      reportTimings('[opencode-e2e] one folder:', timings);
      if (process.env.KEEP_E2E) console.info(`[opencode-e2e] kept ${work} (TAKEBACK_HOME=${tbHome})`);
      else rmAll(work, ocHome, claudeHome, tbHome);
    });

    it('both agents ran their turn at once, each through its own hooks, and nothing failed', () => {
      expect(ocRun.code, describeOpencodeRun(OPENCODE, ocRun)).toBe(0);
      expect(claudeRun.code, describeRun(claudeRun)).toBe(0);
      expect(ocStub.stepsUsed).toBe(3);
      expect(claudeStub.stepsUsed).toBe(4);
      const log = fs.readFileSync(path.join(tbHome, 'logs', 'hook.log'), 'utf8');
      expect(log).not.toMatch(/failed|plugin opencode:|no begin/);
      expect(treeDiff(TB, withChanges(afterClaude, { 'shared.txt': edited(afterClaude, 'shared.txt', replaceOnce('THREE', '3')), 'oc2.txt': fileEntry(Buffer.from('from opencode\n'), entryOf(TB, 'oc2.txt').mode) }))).toEqual([]);
    });

    it('list: a claude-code turn and an opencode turn, each set with its agent and only its own files', () => {
      const list = tb(['list', '--json']).json;
      const sets = [...list.sets].reverse().map((s: any) => [s.agent, s.source.tool, s.files.map((f: any) => f.path).sort()]);
      expect(sets.filter((s) => s[0] === 'claude-code'), JSON.stringify(list.sets)).toEqual([
        ['claude-code', 'Write', ['cc.txt']],
        ['claude-code', 'Edit', ['shared.txt']],
      ]);
      expect(sets.filter((s) => s[0] === 'opencode'), JSON.stringify(list.sets)).toEqual([
        ['opencode', 'write', ['oc.txt']],
        ['opencode', 'bash', ['oc.txt', 'oc2.txt', 'shared.txt']],
      ]);
    });

    it("undoing Claude Code's turn first is a conflict on shared.txt (opencode changed the same line since): nothing is written", () => {
      const r = tb(['undo', '--turn', claudeTurn, '--json'], 1);
      expect(r.json.written).toBe(false);
      expect(r.json.conflicts.map((c: any) => c.path)).toEqual(['shared.txt']);
      expectTree(TB, 'a refused undo writes nothing');
    });

    it("undoing opencode's turn gives back exactly what Claude Code left; then Claude's turn undoes to the commit; both redo", () => {
      expect(tb(['undo', '--turn', ocTurn, '--json']).json.conflicts).toEqual([]);
      expectTree(afterClaude, "after undoing opencode's turn: Claude Code's tree");
      expect(tb(['undo', '--turn', claudeTurn, '--json']).json.conflicts).toEqual([]);
      expectTree(T0, "after undoing Claude Code's turn too");
      expectGitClean();
      tb(['redo', '--turn', claudeTurn]);
      expectTree(afterClaude, "after redoing Claude Code's turn");
      tb(['redo', '--turn', ocTurn]);
      expectTree(TB, "after redoing opencode's turn");
    });
  },
);
