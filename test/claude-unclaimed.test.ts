// Edits made while a turn of the REAL Claude Code is open that no tool call claims: the real
// `claude -p` runs a turn scripted by the model stub on 127.0.0.1 (Write, then Bash `sed -i`),
// and between the two tool calls the person edits another file (the stub's onStep: Claude Code
// waits for the model's answer, so the edit lands between the calls). Its real hooks record the
// turn; the edit is the turn's "changed during this turn". `undo --turn` takes back the agent's
// two calls and leaves the edit, the preview names it, and `--include-unclaimed`, or its id,
// takes it back too.
//
// Needs the CLI: scripts/install-claude.sh (or CLAUDE=/path/to/claude). Skips with a message
// if none is found, and FAILS instead when TAKEBACK_REQUIRE_CLAUDE=1 (CI).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { CLAUDE_BIN, REPO_ROOT, describeRun, runClaude } from './support/claude.js';
import type { ClaudeResult } from './support/claude.js';
import { startModelStub } from './support/model-stub.js';
import type { ModelStub, Step } from './support/model-stub.js';
import { readTree, treeDiff } from './support/trees.js';
import type { Tree } from './support/trees.js';
import { e2eHelpers, mkTemp, rmAll, scratchWorkspace, takebackInit } from './support/workspace.js';

const { bin: CLAUDE, version: VERSION, skipReason: SKIP_REASON } = gateAgent(CLAUDE_BIN, 'unclaimed edits with the real Claude Code', '[claude-unclaimed]');

const SOURCE = path.join(REPO_ROOT, 'node_modules', 'commander');
const SED = "sed -i 's/Did you mean/Perhaps you meant/' lib/suggestSimilar.js";
const MINE = '// a note of mine, typed while the agent worked\n';

describe.skipIf(!CLAUDE)(CLAUDE ? `unclaimed edits during a turn of the real Claude Code ${VERSION}` : `unclaimed edits with the real Claude Code — ${SKIP_REASON}`, () => {
  let work: string;
  let home: string;
  let tbHome: string;
  let stub: ModelStub;
  let run: ClaudeResult;
  /** Before the turn, and after it. */
  let T0: Tree;
  let T1: Tree;
  const { tb } = e2eHelpers(() => work, () => tbHome, []);
  const expectTree = (t: Tree, what: string) => expect(treeDiff(readTree(work), t), what).toEqual([]);

  beforeAll(async () => {
    work = await scratchWorkspace('takeback-unclaimed-work-', SOURCE, { name: 'README.md', target: 'Readme.md' }, 'commander, as published');
    home = await mkTemp('takeback-unclaimed-home-');
    tbHome = await mkTemp('takeback-unclaimed-journal-');
    takebackInit(work, tbHome, ['claude-code']);
    T0 = readTree(work);
    const script: Step[] = [
      [{ type: 'tool_use', name: 'Write', input: { file_path: path.join(work, 'src/greet.js'), content: 'module.exports = () => "hi";\n' } }],
      [{ type: 'tool_use', name: 'Bash', input: { command: SED, description: 'Soften the suggestions' } }],
      [{ type: 'text', text: 'Done.' }],
    ];
    // Before the Bash call is handed out (after the Write's hooks ran), the person edits lib/error.js.
    const onStep = (i: number) => {
      if (i === 1) fs.appendFileSync(path.join(work, 'lib/error.js'), MINE);
    };
    stub = await startModelStub(script, { onStep });
    run = await runClaude({ cwd: work, home, baseUrl: stub.url, prompt: 'Add a greeting, soften the suggestions.', env: { TAKEBACK_HOME: tbHome }, outputFormat: 'json', timeoutMs: 120_000 });
    T1 = readTree(work);
  }, 300_000);

  afterAll(async () => {
    await stub?.close();
    if (process.env.KEEP_E2E) console.info(`[claude-unclaimed] kept ${work} (TAKEBACK_HOME=${tbHome})`);
    else rmAll(work, home, tbHome);
  });

  it('the turn ran both tool calls, and the edit between them is the turn\'s "changed during this turn"', () => {
    expect(run.code, describeRun(run)).toBe(0);
    const sets = tb(['list', '--json']).json.sets as { id: string; label: string; source: { kind: string }; files: { path: string }[] }[];
    const byKind = Object.fromEntries(sets.map((s) => [s.label, s.files.map((f) => f.path)]));
    expect(byKind).toEqual({ 'Write src/greet.js': ['src', 'src/greet.js'], [`Bash: ${SED}`]: ['lib/suggestSimilar.js'], 'changed during this turn': ['lib/error.js'] });
  });

  it('preview --turn names the edit as left as it is; undo --turn takes back the two tool calls and leaves it', () => {
    const sets = tb(['list', '--json']).json.sets as { id: string; source: { kind: string } }[];
    const unclaimed = sets.find((s) => s.source.kind === 'turn')!.id;
    const preview = tb(['preview', '--turn', '1', '--json']).json;
    expect(preview.skipped).toEqual([{ id: unclaimed, reason: 'left as they are: changed during the turn by no tool call' }]);
    expect(preview.files.map((f: { path: string }) => f.path).sort()).toEqual(['lib/suggestSimilar.js', 'src', 'src/greet.js']);
    expect(tb(['preview', '--turn', '1']).stdout).toContain(`#${unclaimed} left as they are: changed during the turn by no tool call`);

    tb(['undo', '--turn', '1']);
    expect(fs.readFileSync(path.join(work, 'lib/error.js'), 'utf8').endsWith(MINE)).toBe(true);
    expect(fs.existsSync(path.join(work, 'src/greet.js'))).toBe(false);
    expect(fs.readFileSync(path.join(work, 'lib/suggestSimilar.js'), 'utf8')).toContain('Did you mean');
    tb(['redo', '--turn', '1']);
    expectTree(T1, 'after redo --turn 1');
  });

  it('--include-unclaimed takes the edit back too (the tree before the turn); so does its id', () => {
    tb(['undo', '--turn', '1', '--include-unclaimed']);
    expectTree(T0, 'after undo --turn 1 --include-unclaimed');
    tb(['redo', '--turn', '1', '--include-unclaimed']);
    expectTree(T1, 'after redo --turn 1 --include-unclaimed');
    const unclaimed = (tb(['list', '--json']).json.sets as { id: string; source: { kind: string } }[]).find((s) => s.source.kind === 'turn')!.id;
    tb(['undo', unclaimed]);
    expect(fs.readFileSync(path.join(work, 'lib/error.js'), 'utf8').endsWith(MINE)).toBe(false);
  });
});
