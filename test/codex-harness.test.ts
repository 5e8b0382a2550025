// Proves the Codex CLI harness: the REAL `codex exec`, driven by a scripted Responses-API stub on
// 127.0.0.1, runs its real tools (the shell's exec_command and apply_patch) on real files in a
// temp folder, and its real hooks fire — from the project's .codex/hooks.json and from
// $CODEX_HOME/hooks.json — with the payloads takeback relies on, over a session of three turns
// (`codex exec`, then `codex exec resume --last`, then `codex exec resume <SESSION_ID>`).
//
// Needs the CLI: scripts/install-codex.sh (or CODEX=/path/to/codex). Skips only if none is found,
// and fails instead when TAKEBACK_REQUIRE_AGENTS=1 (or TAKEBACK_REQUIRE_CODEX=1). With
// UPDATE_CODEX_FIXTURES=1 it (re)writes test/fixtures/codex-events/.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import {
  ALL_CODEX_HOOK_EVENTS,
  CODEX_BIN,
  CODEX_HOOK_EVENTS,
  PINNED_CODEX_VERSION,
  applyPatchCall,
  codexToolOutputs,
  describeCodexRun,
  hookTrustToml,
  listCodexHooks,
  makeCodexHookLog,
  patchText,
  projectTrustToml,
  runCodex,
  shellCall,
  startCodexStub,
  textItem,
} from './support/codex.js';
import type { CodexHookLog, CodexResult, CodexStub } from './support/codex.js';
import { checkFixtureShapes, pickEvents } from './support/event-fixtures.js';
import { rmAll, runFolders, seedHarnessFiles } from './support/workspace.js';

const { bin: CODEX, version: VERSION, skipReason: SKIP_REASON } = gateAgent(CODEX_BIN, 'real Codex CLI', '[codex-harness]');

const PROMPT_1 = 'Turn one: tidy the files and patch the notes.';
const PROMPT_2 = 'Turn two: a little more.';
const PROMPT_3 = 'Turn three: one last thing.';
const FINAL_1 = 'Turn one is done.';
const FINAL_2 = 'Turn two is done.';
const FINAL_3 = 'Turn three is done.';

const read = (file: string) => fs.readFileSync(file, 'utf8');
const label = (e: any) => [e.hook_event_name, e.tool_name ?? e.source ?? null];
const strip = ({ _via, ...rest }: any) => rest;

const PATCH_1 = patchText([
  { update: 'notes.md', hunks: [{ lines: [' # Notes', ' ', '-The quick brown fox.', '+The slow red fox.'] }] },
  { add: 'src/lib/new.ts', lines: ['export const answer = 42;'] },
  { delete: 'gone.txt' },
  { update: 'old.txt', moveTo: 'moved/new.txt', hunks: [{ lines: ['-move me', '+moved'] }] },
]);
const PATCH_FAILING = patchText([{ update: 'missing.txt', hunks: [{ lines: ['-x', '+y'] }] }]);
const PATCH_2 = patchText([{ update: 'src/lib/new.ts', hunks: [{ lines: ['-export const answer = 42;', '+export const answer = 43;'] }] }]);

describe.skipIf(!CODEX)(CODEX ? `real Codex CLI ${VERSION} (${CODEX})` : `real Codex CLI — ${SKIP_REASON}`, () => {
  describe('a three-turn session: shell, failing shell, apply_patch (update/add/delete/move), failing patch; resume --last; resume <id>', () => {
    let work: string; // the workspace (session cwd)
    let home: string; // CODEX_HOME = HOME
    let aside: string; // the hook logger and its log, outside the workspace
    let stub: CodexStub;
    let hooks: CodexHookLog;
    let runs: CodexResult[];
    let all: any[]; // every logged event, both sources
    let events: any[]; // those of $CODEX_HOME/hooks.json (all events)
    let project: any[]; // those of <cwd>/.codex/hooks.json (takeback's events + SessionEnd)

    beforeAll(async () => {
      ({ work, home, aside } = await runFolders('codex'));
      seedHarnessFiles(work);
      fs.writeFileSync(path.join(work, 'gone.txt'), 'bye\n');
      fs.writeFileSync(path.join(work, 'old.txt'), 'move me\n');
      fs.mkdirSync(path.join(work, 'sub'));
      hooks = makeCodexHookLog(aside);

      stub = await startCodexStub({
        steps: [
          [textItem('I will tidy up first.'), shellCall("sed -i 's/a/b/' f.txt && mv x y && rm z")],
          // A failing command that still changed a file.
          [shellCall('echo partial > partial.txt && exit 3')],
          [applyPatchCall(PATCH_1)],
          // A patch that does not apply: PreToolUse fires, PostToolUse does not.
          [applyPatchCall(PATCH_FAILING)],
          // A command in a subfolder (exec_command's workdir): the hooks' cwd is that folder.
          [shellCall('pwd > where.txt', { workdir: 'sub' })],
          [textItem(FINAL_1)],
        ],
      });
      // Both ways of installing hooks at once; the project's needs the project trusted.
      const common = { cwd: work, codexHome: home, baseUrl: stub.url, extraConfig: projectTrustToml(work) };
      const r1 = await runCodex({
        ...common,
        prompt: PROMPT_1,
        json: true,
        homeHooks: hooks.hooksJson('home', { events: ALL_CODEX_HOOK_EVENTS }),
        projectHooks: hooks.hooksJson('project', { events: [...CODEX_HOOK_EVENTS, 'SessionEnd'] }),
      });
      // A second turn of the same session: `codex exec resume --last PROMPT`.
      stub.push([shellCall("printf 'more\\n' >> f.txt")], [applyPatchCall(PATCH_2)], [textItem(FINAL_2)]);
      const r2 = await runCodex({ ...common, prompt: PROMPT_2, resume: 'last' });
      // A third: `codex exec resume <SESSION_ID> PROMPT`.
      stub.push([shellCall('mkdir -p out && cp y out/y.copy')], [textItem(FINAL_3)]);
      const r3 = await runCodex({ ...common, prompt: PROMPT_3, resume: r1.sessionId ?? 'missing-session-id', json: true });
      runs = [r1, r2, r3];
      console.info(`[codex-harness] codex ${VERSION}: turns took ${runs.map((r) => r.durationMs).join(', ')} ms`);
      all = hooks.read();
      events = all.filter((e) => e._via === 'home').map(strip);
      project = all.filter((e) => e._via === 'project').map(strip);
    });

    afterAll(async () => {
      await stub?.close();
      rmAll(work, home, aside);
    });

    it('all three turns ran to the end, one session, and the whole script was used', () => {
      for (const r of runs) expect(r.code, describeCodexRun(r)).toBe(0);
      expect(runs[0]!.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      // --json's thread.started and stderr's "session id:" agree: one session over three turns.
      expect(runs.map((r) => r.sessionId)).toEqual([runs[0]!.sessionId, runs[0]!.sessionId, runs[0]!.sessionId]);
      const lastText = (r: CodexResult) => r.events?.filter((e) => e.item?.type === 'agent_message').pop()?.item?.text;
      expect(lastText(runs[0]!)).toBe(FINAL_1);
      expect(runs[1]!.stdout.trim()).toBe(FINAL_2);
      expect(lastText(runs[2]!)).toBe(FINAL_3);
      expect(stub.stepsUsed).toBe(11);
      expect(stub.stepRequests.map((r) => r.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      // Nothing but the Responses API was asked for, always with the model from config.toml.
      for (const r of stub.requests) expect(`${r.method} ${r.url}`).toBe('POST /v1/responses');
      for (const r of stub.stepRequests) expect(r.body.model).toBe('gpt-5.5');
      // The tools offered include exec_command and apply_patch (the latter only for a catalogue model).
      const tools = stub.stepRequests[0]!.body.tools.map((t: any) => t.name ?? t.type);
      expect(tools).toEqual(expect.arrayContaining(['exec_command', 'apply_patch']));
      // The resumed turns carried the earlier history.
      expect(JSON.stringify(stub.stepRequests[6]!.body.input)).toContain('echo partial > partial.txt');
    });

    it('the tools ran for real: outputs sent back to the model', () => {
      const out = codexToolOutputs(stub);
      expect([...out.keys()]).toEqual(stub.callIds);
      expect(out.get('call_stub_001')).toMatch(/Process exited with code 0/);
      expect(out.get('call_stub_002')).toMatch(/Process exited with code 3/);
      expect(out.get('call_stub_003')).toMatch(/Success\. Updated the following files:\nA src\/lib\/new\.ts\nM notes\.md\nM moved\/new\.txt\nD gone\.txt/);
      expect(out.get('call_stub_004')).toMatch(/^apply_patch verification failed: Failed to read file to update .*missing\.txt/);
      expect(out.get('call_stub_007')).toMatch(/Success\. Updated the following files:\nM src\/lib\/new\.ts/);
    });

    it('changed the files on disk (the patch paths are relative to cwd)', () => {
      expect(read(path.join(work, 'notes.md'))).toBe('# Notes\n\nThe slow red fox.\n');
      expect(read(path.join(work, 'src/lib/new.ts'))).toBe('export const answer = 43;\n');
      expect(fs.existsSync(path.join(work, 'gone.txt'))).toBe(false);
      expect(fs.existsSync(path.join(work, 'old.txt'))).toBe(false);
      expect(read(path.join(work, 'moved/new.txt'))).toBe('moved\n');
      expect(read(path.join(work, 'f.txt'))).toBe('b cat sat\nmore\n');
      expect(fs.existsSync(path.join(work, 'x'))).toBe(false);
      expect(read(path.join(work, 'y'))).toBe('x contents\n');
      expect(fs.existsSync(path.join(work, 'z'))).toBe(false);
      expect(read(path.join(work, 'partial.txt'))).toBe('partial\n');
      expect(read(path.join(work, 'sub/where.txt'))).toBe(`${path.join(work, 'sub')}\n`);
      expect(read(path.join(work, 'out/y.copy'))).toBe('x contents\n');
      expect(fs.existsSync(path.join(work, 'missing.txt'))).toBe(false);
      // Codex's own state stayed out of the workspace (only the hooks.json we wrote is there).
      expect(fs.readdirSync(path.join(work, '.codex'))).toEqual(['hooks.json']);
    });

    it('fired the hooks in order ($CODEX_HOME/hooks.json, every event)', () => {
      const P = ['PreModelRequest', null];
      /** A resumed turn whose tools all ran: a model request before each tool call and one after the last. */
      const resumedTurn = (...tools: string[]) => [
        ['SessionStart', 'resume'],
        ['UserPromptSubmit', null],
        P,
        ...tools.flatMap((tool) => [['PreToolUse', tool], ['PostToolUse', tool], P]),
        ['Stop', null],
        ['SessionEnd', null],
      ];
      expect(events.map(label)).toEqual([
        ['SessionStart', 'startup'],
        ['UserPromptSubmit', null],
        P,
        ['PreToolUse', 'Bash'],
        ['PostToolUse', 'Bash'],
        P,
        ['PreToolUse', 'Bash'],
        ['PostToolUse', 'Bash'], // exit 3: still PostToolUse (there is no failure event)
        P,
        ['PreToolUse', 'apply_patch'],
        ['PostToolUse', 'apply_patch'],
        P,
        ['PreToolUse', 'apply_patch'], // the patch that did not apply: no PostToolUse
        P,
        ['PreToolUse', 'Bash'],
        ['PostToolUse', 'Bash'],
        P,
        ['Stop', null],
        ['SessionEnd', null],
        // turn 2: exec resume --last
        ...resumedTurn('Bash', 'apply_patch'),
        // turn 3: exec resume <id>
        ...resumedTurn('Bash'),
      ]);
    });

    it("the project's .codex/hooks.json (project trusted) fired the same events with the same payloads", () => {
      const wanted = new Set<string>([...CODEX_HOOK_EVENTS, 'SessionEnd']);
      expect(project).toEqual(events.filter((e) => wanted.has(e.hook_event_name)));
    });

    it('session_id, cwd, transcript; turn_id the same within a turn and new for each turn', () => {
      const sid = runs[0]!.sessionId;
      for (const e of events) expect(e.session_id).toBe(sid);
      const transcripts = new Set(events.map((e) => e.transcript_path));
      expect(transcripts.size).toBe(1);
      const [transcript] = [...transcripts];
      expect(transcript).toMatch(new RegExp(`^${home}/sessions/\\d{4}/\\d\\d/\\d\\d/rollout-[0-9T-]+-${sid}\\.jsonl$`));
      expect(fs.existsSync(transcript)).toBe(true);
      // cwd is the session's, except on the tool events of a command run in another workdir.
      for (const e of events) {
        const inSub = e.tool_input?.command === 'pwd > where.txt';
        expect(e.cwd).toBe(inSub ? path.join(work, 'sub') : work);
      }
      // Turns: split at SessionStart.
      const turns: any[][] = [];
      for (const e of events) (e.hook_event_name === 'SessionStart' ? turns[turns.push([]) - 1]! : turns[turns.length - 1]!).push(e);
      expect(turns).toHaveLength(3);
      const turnIds = turns.map((t) => {
        const withTurn = t.filter((e) => !['SessionStart', 'SessionEnd'].includes(e.hook_event_name));
        for (const e of t.filter((e) => ['SessionStart', 'SessionEnd'].includes(e.hook_event_name))) expect(e.turn_id).toBeUndefined();
        const ids = new Set(withTurn.map((e) => e.turn_id));
        expect(ids.size).toBe(1);
        return [...ids][0];
      });
      expect(new Set(turnIds).size).toBe(3);
      for (const id of turnIds) expect(id).toMatch(/^[0-9a-f-]{36}$/);
      // permission_mode and model on the session, prompt and tool events.
      for (const e of events.filter((e) => !['PreModelRequest', 'SessionEnd'].includes(e.hook_event_name))) {
        expect(e.permission_mode).toBe('bypassPermissions');
        expect(e.model).toBe('gpt-5.5');
      }
      expect(events.filter((e) => e.hook_event_name === 'SessionEnd').map((e) => e.reason)).toEqual(['other', 'other', 'other']);
    });

    it('UserPromptSubmit has the prompt; Stop the last message', () => {
      expect(events.filter((e) => e.hook_event_name === 'UserPromptSubmit').map((e) => e.prompt)).toEqual([PROMPT_1, PROMPT_2, PROMPT_3]);
      const stops = events.filter((e) => e.hook_event_name === 'Stop');
      expect(stops.map((e) => e.last_assistant_message)).toEqual([FINAL_1, FINAL_2, FINAL_3]);
      expect(stops.map((e) => e.stop_hook_active)).toEqual([false, false, false]);
    });

    it("pairs each PreToolUse with its PostToolUse by tool_use_id, the model's call ids", () => {
      const pre = events.filter((e) => e.hook_event_name === 'PreToolUse');
      const post = events.filter((e) => e.hook_event_name === 'PostToolUse');
      expect(pre.map((e) => e.tool_use_id)).toEqual(stub.callIds);
      // Every call but the failed patch (call_stub_004) has its PostToolUse.
      expect(post.map((e) => e.tool_use_id)).toEqual(stub.callIds.filter((id) => id !== 'call_stub_004'));
      for (const p of post) expect(p.tool_input).toEqual(pre.find((e) => e.tool_use_id === p.tool_use_id).tool_input);
    });

    it('Bash: tool_input {command}, tool_response the output as a string; exit status not in it', () => {
      const post = events.filter((e) => e.hook_event_name === 'PostToolUse' && e.tool_name === 'Bash');
      expect(post.map((e) => e.tool_input)).toEqual([
        { command: "sed -i 's/a/b/' f.txt && mv x y && rm z" },
        { command: 'echo partial > partial.txt && exit 3' },
        { command: 'pwd > where.txt' }, // workdir is not in tool_input: only in cwd
        { command: "printf 'more\\n' >> f.txt" },
        { command: 'mkdir -p out && cp y out/y.copy' },
      ]);
      for (const e of post) expect(e.tool_response).toBe('');
    });

    it('apply_patch: tool_input.command is the whole patch, as the model sent it; tool_response the summary', () => {
      const pre = events.filter((e) => e.hook_event_name === 'PreToolUse' && e.tool_name === 'apply_patch');
      expect(pre.map((e) => e.tool_input)).toEqual([{ command: PATCH_1 }, { command: PATCH_FAILING }, { command: PATCH_2 }]);
      const post = events.filter((e) => e.hook_event_name === 'PostToolUse' && e.tool_name === 'apply_patch');
      expect(post.map((e) => e.tool_input.command)).toEqual([PATCH_1, PATCH_2]);
      // Codex's summary names its own wall time (0 seconds quiet, 0.1 or more on a loaded machine).
      expect(post[0].tool_response).toMatch(
        /^Exit code: 0\nWall time: \d+(\.\d+)? seconds\nOutput:\nSuccess\. Updated the following files:\nA src\/lib\/new\.ts\nM notes\.md\nM moved\/new\.txt\nD gone\.txt\n$/,
      );
    });

    it('PreModelRequest: one per model request, with turn_id, thread_id and a request_id', () => {
      const pmr = events.filter((e) => e.hook_event_name === 'PreModelRequest');
      expect(pmr).toHaveLength(stub.stepRequests.length);
      for (const e of pmr) {
        expect(e.kind).toBe('sampling');
        expect(e.thread_id).toBe(e.session_id);
        expect(e.request_id).toMatch(/^[0-9a-f-]{36}$/);
      }
    });

    it("matches the recorded fixtures' shapes (field names), for the pinned version", () => {
      checkFixtureShapes({
        agent: 'codex',
        version: VERSION,
        pinned: PINNED_CODEX_VERSION,
        events,
        pick: pickFixtures,
        placeholders: () => [
          [home, '${CODEX_HOME}'],
          [work, '${WORKSPACE}'],
        ],
      });
    });
  });

  describe('hook configuration and trust', () => {
    let work: string;
    let home: string;
    let aside: string;
    let stub: CodexStub;

    beforeAll(async () => {
      ({ work, home, aside } = await runFolders('codex'));
      // Every run asks for one command and then finishes (past the script: the final text).
      stub = await startCodexStub({ steps: [] });
    });
    afterAll(async () => {
      await stub?.close();
      rmAll(work, home, aside);
    });

    /** One fresh run with its own workspace and home; returns the logged events and the result. */
    async function oneRun(setup: {
      project?: (log: CodexHookLog) => object;
      home?: (log: CodexHookLog) => object;
      extraConfig?: (cwd: string, codexHome: string) => Promise<string> | string;
      bypassHookTrust?: boolean;
      steps?: Parameters<CodexStub['push']>;
    }): Promise<{ r: CodexResult; events: any[]; cwd: string }> {
      const cwd = fs.mkdtempSync(path.join(work, 'w-'));
      const codexHome = fs.mkdtempSync(path.join(home, 'h-'));
      const log = makeCodexHookLog(fs.mkdtempSync(path.join(aside, 'a-')));
      if (setup.project) {
        fs.mkdirSync(path.join(cwd, '.codex'));
        fs.writeFileSync(path.join(cwd, '.codex', 'hooks.json'), JSON.stringify(setup.project(log)));
      }
      if (setup.home) fs.writeFileSync(path.join(codexHome, 'hooks.json'), JSON.stringify(setup.home(log)));
      const before = stub.stepsUsed;
      stub.push(...(setup.steps ?? [[shellCall('echo ran > ran.txt')]]));
      const extraConfig = setup.extraConfig ? await setup.extraConfig(cwd, codexHome) : '';
      const r = await runCodex({ cwd, codexHome, baseUrl: stub.url, prompt: 'go', extraConfig, bypassHookTrust: setup.bypassHookTrust });
      expect(r.code, describeCodexRun(r)).toBe(0);
      expect(stub.stepsUsed - before).toBe((setup.steps ?? [[]]).length);
      return { r, events: log.read(), cwd };
    }

    it('an untrusted project: its .codex/hooks.json is skipped, even with --dangerously-bypass-hook-trust', async () => {
      const { r, events, cwd } = await oneRun({ project: (l) => l.hooksJson('project'), home: (l) => l.hooksJson('home') });
      expect(r.stderr).toContain('Untrusted project-local configuration is disabled. Run `codex exec --trust`');
      expect(fs.existsSync(path.join(cwd, 'ran.txt'))).toBe(true);
      expect(new Set(events.map((e) => e._via))).toEqual(new Set(['home']));
    });

    it('without --dangerously-bypass-hook-trust and no saved hook trust, no hooks run (silently)', async () => {
      const { r, events, cwd } = await oneRun({
        project: (l) => l.hooksJson('project'),
        home: (l) => l.hooksJson('home'),
        extraConfig: (cwd) => projectTrustToml(cwd),
        bypassHookTrust: false,
      });
      expect(fs.existsSync(path.join(cwd, 'ran.txt'))).toBe(true);
      expect(events).toEqual([]);
      expect(r.stderr).not.toMatch(/hook/i);
    });

    it('saved trust ([hooks.state."<key>"] trusted_hash from hooks/list) runs both without the bypass flag', async () => {
      let listed: Awaited<ReturnType<typeof listCodexHooks>> | undefined;
      const { events } = await oneRun({
        project: (l) => l.hooksJson('project'),
        home: (l) => l.hooksJson('home'),
        extraConfig: async (cwd, codexHome) => {
          fs.writeFileSync(path.join(codexHome, 'config.toml'), projectTrustToml(cwd));
          listed = await listCodexHooks({ cwd, codexHome });
          return projectTrustToml(cwd) + '\n' + hookTrustToml(listed.hooks);
        },
        bypassHookTrust: false,
      });
      expect(listed!.warnings).toEqual([]);
      expect(listed!.hooks.map((h) => [h.source, h.eventName, h.trustStatus, h.timeoutSec])).toEqual(
        expect.arrayContaining([
          ['user', 'preToolUse', 'untrusted', 30],
          ['project', 'preToolUse', 'untrusted', 30],
        ]),
      );
      const home = listed!.hooks.find((h) => h.source === 'user' && h.eventName === 'preToolUse')!;
      expect(home.key).toBe(`${home.sourcePath}:pre_tool_use:0:0`);
      expect(home.currentHash).toMatch(/^sha256:[0-9a-f]{64}$/);
      const seq = (via: string) => events.filter((e) => e._via === via).map((e) => e.hook_event_name);
      expect(seq('home')).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']);
      expect(seq('project')).toEqual(seq('home'));
    });

    it('matchers are anchored regexes; "*", "" and none match all; apply_patch also answers to Edit and Write', async () => {
      const matchers = ['*', '', undefined, 'Bash', '^Bash$', 'Ba', 'bash', 'apply_patch', 'Bash|apply_patch', 'Edit', 'Write', 'exec_command', '['];
      const tag = (m: string | undefined) => (m === undefined ? '(none)' : JSON.stringify(m));
      const { r, events } = await oneRun({
        home: (l) => {
          const base = l.hooksJson('x', { events: ['PreToolUse'] }).hooks.PreToolUse![0]!.hooks[0]!.command;
          const cmd = (m: string | undefined) => base.replace(/"x"$/, JSON.stringify(`m=${tag(m)}`));
          return {
            hooks: {
              PreToolUse: matchers.map((m) => ({ ...(m === undefined ? {} : { matcher: m }), hooks: [{ type: 'command', command: cmd(m) }] })),
              // Stop has no tool: its matcher is ignored.
              Stop: [{ matcher: 'no-such-tool', hooks: [{ type: 'command', command: cmd('stop') }] }],
            },
          };
        },
        steps: [[shellCall('true')], [applyPatchCall(patchText([{ add: 'b.txt', lines: ['b'] }]))]],
      });
      const hit = (tool: string) => new Set(events.filter((e) => e.tool_name === tool).map((e) => e._via));
      expect(hit('Bash')).toEqual(new Set(['*', '', undefined, 'Bash', '^Bash$', 'Bash|apply_patch'].map((m) => `m=${tag(m)}`)));
      expect(hit('apply_patch')).toEqual(new Set(['*', '', undefined, 'apply_patch', 'Bash|apply_patch', 'Edit', 'Write'].map((m) => `m=${tag(m)}`)));
      expect(events.filter((e) => e.hook_event_name === 'Stop').map((e) => e._via)).toEqual([`m=${tag('stop')}`]);
      // An invalid regex: a warning, and only that group is dropped.
      expect(r.stderr).toMatch(/invalid matcher "\[" in .*hooks\.json/);
    });

    it('a hook that exits 1 is reported and ignored; a PreToolUse hook that exits 2 blocks the tool', async () => {
      const failing = path.join(aside, 'exit1.sh');
      const blocking = path.join(aside, 'exit2.sh');
      fs.writeFileSync(failing, '#!/bin/sh\necho failing-hook >&2\nexit 1\n', { mode: 0o755 });
      fs.writeFileSync(blocking, '#!/bin/sh\necho blocked-by-hook >&2\nexit 2\n', { mode: 0o755 });
      const { r, events, cwd } = await oneRun({
        home: (l) => {
          const h = l.hooksJson('log');
          h.hooks.PreToolUse!.push(
            { matcher: 'Bash', hooks: [{ type: 'command', command: failing }] },
            { matcher: 'apply_patch', hooks: [{ type: 'command', command: blocking }] },
          );
          return h;
        },
        steps: [[shellCall('echo ran > ran.txt')], [applyPatchCall(patchText([{ add: 'blocked.txt', lines: ['b'] }]))]],
      });
      expect(r.stderr).toContain('hook: PreToolUse Failed');
      expect(read(path.join(cwd, 'ran.txt'))).toBe('ran\n');
      expect(fs.existsSync(path.join(cwd, 'blocked.txt'))).toBe(false);
      expect(events.map(label)).toEqual([
        ['SessionStart', 'startup'],
        ['UserPromptSubmit', null],
        ['PreToolUse', 'Bash'],
        ['PostToolUse', 'Bash'],
        ['PreToolUse', 'apply_patch'],
        ['Stop', null],
      ]);
      const out = codexToolOutputs(stub);
      expect(out.get(stub.callIds[stub.callIds.length - 1]!)).toMatch(/^Command blocked by PreToolUse hook: blocked-by-hook/);
    });
  });
});

// ---- fixtures ---------------------------------------------------------------------------

/** One payload of each event kind and tool, by fixture name (the SessionStarts: see pickEvents). */
function pickFixtures(events: any[]): Record<string, any> {
  return pickEvents(events, (find, ev) => ({
    'user-prompt-submit': find(ev('UserPromptSubmit')),
    'pre-model-request': find(ev('PreModelRequest')),
    'pre-tool-use-bash': find(ev('PreToolUse', 'Bash')),
    'post-tool-use-bash': find(ev('PostToolUse', 'Bash')),
    'post-tool-use-bash-exit-3': find(ev('PostToolUse', 'Bash'), 1),
    'pre-tool-use-bash-workdir': find((e) => e.hook_event_name === 'PreToolUse' && e.tool_input?.command === 'pwd > where.txt'),
    'pre-tool-use-apply-patch': find(ev('PreToolUse', 'apply_patch')),
    'post-tool-use-apply-patch': find(ev('PostToolUse', 'apply_patch')),
    'pre-tool-use-apply-patch-failing': find(ev('PreToolUse', 'apply_patch'), 1),
    stop: find(ev('Stop')),
    'session-end': find(ev('SessionEnd')),
  }));
}
