// Proves the Claude Code harness: the REAL `claude` CLI, driven by a scripted model on
// 127.0.0.1, runs its real tools (Write, Edit, Bash) on real files in a temp folder, and its
// real hooks fire with the payloads takeback relies on, over a session of two turns.
//
// Needs the CLI: scripts/install-claude.sh (or CLAUDE=/path/to/claude). Skips only if none
// is found, and fails instead when TAKEBACK_REQUIRE_CLAUDE=1. With UPDATE_CLAUDE_FIXTURES=1
// it (re)writes test/fixtures/claude-events/.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { CLAUDE_BIN, PINNED_CLAUDE_VERSION, describeRun, runClaude } from './support/claude.js';
import type { ClaudeResult } from './support/claude.js';
import { checkFixtureShapes, pickEvents } from './support/event-fixtures.js';
import { makeHookLog } from './support/hook-log.js';
import type { HookLog } from './support/hook-log.js';
import { startModelStub } from './support/model-stub.js';
import type { ModelStub, Step } from './support/model-stub.js';
import { rmAll, runFolders, seedHarnessFiles } from './support/workspace.js';

// With TAKEBACK_REQUIRE_CLAUDE=1 (CI) a missing binary fails the run instead of skipping it.
const { bin: CLAUDE, version: VERSION, skipReason: SKIP_REASON } = gateAgent(CLAUDE_BIN, 'real Claude Code', '[claude-harness]');

const PROMPT_1 = 'Turn one: add the new module, fix the notes, tidy the files.';
const PROMPT_2 = 'Turn two: a few more changes.';
const FINAL_1 = 'Turn one is done.';
const FINAL_2 = 'Turn two is done.';

const read = (file: string) => fs.readFileSync(file, 'utf8');

/** tool_result blocks sent back to the model, in order, over all step requests. */
function toolResults(stub: ModelStub): any[] {
  const seen = new Map<string, any>();
  for (const r of stub.stepRequests)
    for (const m of r.body?.messages ?? [])
      if (m.role === 'user' && Array.isArray(m.content))
        for (const b of m.content) if (b.type === 'tool_result' && !seen.has(b.tool_use_id)) seen.set(b.tool_use_id, b);
  return [...seen.values()];
}

const resultText = (b: any): string =>
  typeof b.content === 'string' ? b.content : (b.content ?? []).map((c: any) => c.text ?? '').join('');

describe.skipIf(!CLAUDE)(CLAUDE ? `real Claude Code ${VERSION} (${CLAUDE})` : `real Claude Code — ${SKIP_REASON}`, () => {
  describe('a two-turn session: Write, Read, Edit, Bash, a failing Bash; then --continue', () => {
    let work: string; // the workspace
    let home: string; // Claude's private HOME
    let aside: string; // the hook logger and its log, outside the workspace
    let stub: ModelStub;
    let hooks: HookLog;
    let run1: ClaudeResult;
    let run2: ClaudeResult;
    let events: any[];

    beforeAll(async () => {
      ({ work, home, aside } = await runFolders('claude'));
      seedHarnessFiles(work);
      hooks = makeHookLog(aside);

      const script: Step[] = [
        // turn 1
        [
          { type: 'text', text: 'I will create the module first.' },
          { type: 'tool_use', name: 'Write', input: { file_path: path.join(work, 'src/lib/new.ts'), content: 'export const answer = 42;\n' } },
        ],
        // Edit refuses a file that was not Read first in the session ("File has not been read yet").
        [{ type: 'tool_use', name: 'Read', input: { file_path: path.join(work, 'notes.md') } }],
        [{ type: 'tool_use', name: 'Edit', input: { file_path: path.join(work, 'notes.md'), old_string: 'quick brown', new_string: 'slow red' } }],
        [{ type: 'tool_use', name: 'Bash', input: { command: "sed -i 's/a/b/' f.txt && mv x y && rm z", description: 'Tidy the files' } }],
        // A failing tool that still changed a file.
        [{ type: 'tool_use', name: 'Bash', input: { command: 'echo partial > partial.txt && exit 3', description: 'Fails halfway' } }],
        [{ type: 'text', text: FINAL_1 }],
        // turn 2
        [{ type: 'tool_use', name: 'Bash', input: { command: "printf 'more\\n' >> f.txt && mkdir -p out && cp y out/y.copy", description: 'More shell changes' } }],
        // A relative path, on a file the session wrote in turn 1.
        [{ type: 'tool_use', name: 'Edit', input: { file_path: 'src/lib/new.ts', old_string: '42', new_string: '43' } }],
        // Write over an existing file (read in turn 1): a Write "update".
        [{ type: 'tool_use', name: 'Write', input: { file_path: path.join(work, 'notes.md'), content: '# Notes\n\nRewritten.\n' } }],
        [{ type: 'text', text: FINAL_2 }],
      ];
      stub = await startModelStub(script);

      run1 = await runClaude({ cwd: work, home, baseUrl: stub.url, prompt: PROMPT_1, settings: hooks.settings, outputFormat: 'json' });
      run2 = await runClaude({ cwd: work, home, baseUrl: stub.url, prompt: PROMPT_2, continueSession: true });
      console.info(`[claude-harness] claude ${VERSION}: turn 1 took ${run1.durationMs} ms, turn 2 ${run2.durationMs} ms`);
      events = hooks.read();
    });

    afterAll(async () => {
      await stub?.close();
      rmAll(work, home, aside);
    });

    it('both turns ran to the end, and the whole script was used', () => {
      expect(run1.code, describeRun(run1)).toBe(0);
      expect(run2.code, describeRun(run2)).toBe(0);
      expect(run1.json?.result, describeRun(run1)).toBe(FINAL_1);
      expect(run2.stdout.trim(), describeRun(run2)).toBe(FINAL_2);
      expect(stub.stepsUsed).toBe(10);
      // Every step request was answered from the script (none past its end).
      expect(stub.stepRequests.map((r) => r.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // Nothing but the Messages API was asked for.
      for (const r of stub.requests) expect(r.url, JSON.stringify(r.url)).toMatch(/^\/v1\/messages/);
    });

    it('the tools succeeded, except the one scripted to fail', () => {
      const results = toolResults(stub);
      expect(results.map((b) => b.tool_use_id)).toEqual(stub.toolUseIds);
      const failed = results.filter((b) => b.is_error).map((b) => `${b.tool_use_id}: ${resultText(b)}`);
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatch(/^toolu_stub_005: Exit code 3/);
    });

    it('changed the files on disk', () => {
      expect(read(path.join(work, 'src/lib/new.ts'))).toBe('export const answer = 43;\n');
      expect(read(path.join(work, 'notes.md'))).toBe('# Notes\n\nRewritten.\n');
      expect(read(path.join(work, 'f.txt'))).toBe('b cat sat\nmore\n');
      expect(fs.existsSync(path.join(work, 'x'))).toBe(false);
      expect(read(path.join(work, 'y'))).toBe('x contents\n');
      expect(fs.existsSync(path.join(work, 'z'))).toBe(false);
      expect(read(path.join(work, 'partial.txt'))).toBe('partial\n');
      expect(read(path.join(work, 'out/y.copy'))).toBe('x contents\n');
      // Claude's own state stayed out of the workspace (only the settings we wrote are there).
      expect(fs.readdirSync(path.join(work, '.claude'))).toEqual(['settings.json']);
    });

    it('fired the hooks in order', () => {
      const seq = events.map((e) => [e.hook_event_name, e.tool_name ?? e.source ?? null]);
      expect(seq).toEqual([
        ['SessionStart', 'startup'],
        ['UserPromptSubmit', null],
        ['PreToolUse', 'Write'],
        ['PostToolUse', 'Write'],
        // Read is not in the matcher: no events.
        ['PreToolUse', 'Edit'],
        ['PostToolUse', 'Edit'],
        ['PreToolUse', 'Bash'],
        ['PostToolUse', 'Bash'],
        ['PreToolUse', 'Bash'],
        ['PostToolUseFailure', 'Bash'],
        ['Stop', null],
        ['SessionStart', 'resume'],
        ['UserPromptSubmit', null],
        ['PreToolUse', 'Bash'],
        ['PostToolUse', 'Bash'],
        ['PreToolUse', 'Edit'],
        ['PostToolUse', 'Edit'],
        ['PreToolUse', 'Write'],
        ['PostToolUse', 'Write'],
        ['Stop', null],
      ]);
    });

    it('every event carries the session, cwd and transcript; one session over both turns', () => {
      expect(run1.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      for (const e of events) {
        expect(e.session_id).toBe(run1.sessionId);
        expect(e.cwd).toBe(work);
        expect(e.transcript_path).toBe(path.join(home, '.claude', 'projects', work.replace(/[^A-Za-z0-9]/g, '-'), `${run1.sessionId}.jsonl`));
      }
      expect(fs.existsSync(events[0].transcript_path)).toBe(true);
      // prompt_id: the same on every event of a turn, different between turns; absent on SessionStart.
      const turn1 = events.slice(1, 11);
      const turn2 = events.slice(12);
      expect(new Set(turn1.map((e) => e.prompt_id)).size).toBe(1);
      expect(new Set(turn2.map((e) => e.prompt_id)).size).toBe(1);
      expect(turn1[0].prompt_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(turn1[0].prompt_id).not.toBe(turn2[0].prompt_id);
      expect(events[0].prompt_id).toBeUndefined();
      for (const e of [...turn1, ...turn2]) expect(e.permission_mode).toBe('acceptEdits');
    });

    it('UserPromptSubmit has the prompt; Stop the last message', () => {
      const prompts = events.filter((e) => e.hook_event_name === 'UserPromptSubmit');
      expect(prompts.map((e) => e.prompt)).toEqual([PROMPT_1, PROMPT_2]);
      const stops = events.filter((e) => e.hook_event_name === 'Stop');
      expect(stops.map((e) => e.last_assistant_message)).toEqual([FINAL_1, FINAL_2]);
      expect(stops.map((e) => e.stop_hook_active)).toEqual([false, false]);
    });

    it('pairs each PreToolUse with its PostToolUse(Failure) by tool_use_id, the model\'s ids', () => {
      const pre = events.filter((e) => e.hook_event_name === 'PreToolUse');
      const post = events.filter((e) => e.hook_event_name === 'PostToolUse' || e.hook_event_name === 'PostToolUseFailure');
      expect(pre.map((e) => e.tool_use_id)).toEqual(post.map((e) => e.tool_use_id));
      // The Read (toolu_stub_002) fired nothing.
      expect(pre.map((e) => e.tool_use_id)).toEqual(stub.toolUseIds.filter((id) => id !== 'toolu_stub_002'));
      for (let i = 0; i < pre.length; i++) {
        expect(post[i].tool_name).toBe(pre[i].tool_name);
        expect(post[i].tool_input).toEqual(pre[i].tool_input);
      }
    });

    it('Write: tool_input and tool_response (create, then update)', () => {
      const [create, update] = events.filter((e) => e.hook_event_name === 'PostToolUse' && e.tool_name === 'Write');
      expect(create.tool_input).toEqual({ file_path: path.join(work, 'src/lib/new.ts'), content: 'export const answer = 42;\n' });
      expect(create.tool_response).toMatchObject({ type: 'create', filePath: path.join(work, 'src/lib/new.ts'), originalFile: null });
      expect(update.tool_response).toMatchObject({
        type: 'update',
        filePath: path.join(work, 'notes.md'),
        originalFile: '# Notes\n\nThe slow red fox.\n',
        content: '# Notes\n\nRewritten.\n',
      });
    });

    it('Edit: tool_input and tool_response; a relative path reaches the hooks absolute', () => {
      const [abs, rel] = events.filter((e) => e.hook_event_name === 'PostToolUse' && e.tool_name === 'Edit');
      expect(abs.tool_input).toEqual({ file_path: path.join(work, 'notes.md'), old_string: 'quick brown', new_string: 'slow red', replace_all: false });
      expect(abs.tool_response).toMatchObject({
        filePath: path.join(work, 'notes.md'),
        oldString: 'quick brown',
        newString: 'slow red',
        originalFile: '# Notes\n\nThe quick brown fox.\n',
      });
      expect(Array.isArray(abs.tool_response.structuredPatch)).toBe(true);
      // The model sent "src/lib/new.ts"; the hooks' tool_input has it resolved against cwd.
      expect(path.resolve(work, rel.tool_input.file_path)).toBe(path.join(work, 'src/lib/new.ts'));
      expect(rel.tool_response.originalFile).toBe('export const answer = 42;\n');
    });

    it('Bash: tool_input.command and tool_response; a failure reports error and is_interrupt', () => {
      const posts = events.filter((e) => e.tool_name === 'Bash' && e.hook_event_name === 'PostToolUse');
      expect(posts[0].tool_input).toMatchObject({ command: "sed -i 's/a/b/' f.txt && mv x y && rm z", description: 'Tidy the files' });
      expect(posts[0].tool_response).toMatchObject({ stdout: '', stderr: '', interrupted: false });
      const failure = events.find((e) => e.hook_event_name === 'PostToolUseFailure');
      expect(failure.tool_input.command).toBe('echo partial > partial.txt && exit 3');
      expect(failure.error).toMatch(/Exit code 3/);
      expect(failure.is_interrupt).toBe(false);
      expect(failure.tool_response).toBeUndefined();
    });

    it('matches the recorded fixtures\' shapes (field names), for the pinned version', () => {
      checkFixtureShapes({
        agent: 'claude',
        version: VERSION,
        pinned: PINNED_CLAUDE_VERSION,
        events,
        pick: pickFixtures,
        placeholders: () => [
          [home, '${HOME}'],
          [work, '${WORKSPACE}'],
          [work.replace(/[^A-Za-z0-9]/g, '-'), '${WORKSPACE_SLUG}'],
        ],
      });
    });
  });

  describe('a session resumed by id (--session-id, then --resume)', () => {
    it('keeps the session id and fires SessionStart with source "resume"', async () => {
      const { work, home, aside } = await runFolders('claude');
      const stub = await startModelStub([
        [{ type: 'tool_use', name: 'Bash', input: { command: 'echo one > one.txt', description: 'first' } }],
        [{ type: 'text', text: 'first done' }],
        [{ type: 'tool_use', name: 'Bash', input: { command: 'mv one.txt two.txt', description: 'second' } }],
        [{ type: 'text', text: 'second done' }],
      ]);
      try {
        const hooks = makeHookLog(aside);
        const sessionId = randomUUID();
        const r1 = await runClaude({ cwd: work, home, baseUrl: stub.url, prompt: 'one', settings: hooks.settings, sessionId });
        expect(r1.code, describeRun(r1)).toBe(0);
        const r2 = await runClaude({ cwd: work, home, baseUrl: stub.url, prompt: 'two', resume: sessionId, outputFormat: 'json' });
        expect(r2.code, describeRun(r2)).toBe(0);
        expect(r2.sessionId).toBe(sessionId);
        expect(fs.existsSync(path.join(work, 'one.txt'))).toBe(false);
        expect(read(path.join(work, 'two.txt'))).toBe('one\n');
        const events = hooks.read();
        expect(new Set(events.map((e) => e.session_id))).toEqual(new Set([sessionId]));
        expect(events.filter((e) => e.hook_event_name === 'SessionStart').map((e) => e.source)).toEqual(['startup', 'resume']);
        expect(events.filter((e) => e.hook_event_name === 'PostToolUse').map((e) => e.tool_input.command)).toEqual([
          'echo one > one.txt',
          'mv one.txt two.txt',
        ]);
        // The second run saw the first turn: its first request carries the whole conversation.
        const secondTurnFirst = stub.stepRequests[2]!;
        expect(JSON.stringify(secondTurnFirst.body.messages)).toContain('echo one > one.txt');
      } finally {
        await stub.close();
        rmAll(work, home, aside);
      }
    });
  });
});

// ---- fixtures ---------------------------------------------------------------------------

/** One payload of each event kind and tool, by fixture name (the SessionStarts: see pickEvents). */
function pickFixtures(events: any[]): Record<string, any> {
  return pickEvents(events, (find, ev) => ({
    'user-prompt-submit': find(ev('UserPromptSubmit')),
    'pre-tool-use-write': find(ev('PreToolUse', 'Write')),
    'post-tool-use-write-create': find(ev('PostToolUse', 'Write')),
    'post-tool-use-write-update': find(ev('PostToolUse', 'Write'), 1),
    'pre-tool-use-edit': find(ev('PreToolUse', 'Edit')),
    'post-tool-use-edit': find(ev('PostToolUse', 'Edit')),
    'pre-tool-use-bash': find(ev('PreToolUse', 'Bash')),
    'post-tool-use-bash': find(ev('PostToolUse', 'Bash')),
    'pre-tool-use-bash-failing': find(ev('PreToolUse', 'Bash'), 1),
    'post-tool-use-failure-bash': find(ev('PostToolUseFailure', 'Bash')),
    stop: find(ev('Stop')),
  }));
}
