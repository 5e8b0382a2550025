// Proves the Gemini CLI harness: the REAL `gemini` CLI, driven by a scripted model on 127.0.0.1,
// runs its real tools (write_file, replace, run_shell_command) on real files in a temp folder,
// and its real hooks fire — from the user's ~/.gemini/settings.json and from the project's
// .gemini/settings.json — with the payloads takeback would rely on, over a session of two turns
// (the second with `--resume latest`).
//
// Needs the CLI: scripts/install-gemini.sh (or GEMINI=/path/to/gemini). Skips only if none is
// found, and fails instead when TAKEBACK_REQUIRE_AGENTS=1. With UPDATE_GEMINI_FIXTURES=1 it
// (re)writes test/fixtures/gemini-events/.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { checkFixtureShapes, pickEvents } from './support/event-fixtures.js';
import {
  DEFAULT_GEMINI_MODEL,
  GEMINI_BIN,
  PINNED_GEMINI_VERSION,
  describeGeminiRun,
  geminiFunctionResponses,
  makeGeminiHookLog,
  replace,
  runGemini,
  runShell,
  startGeminiStub,
  text,
  writeFile,
} from './support/gemini.js';
import type { GeminiHookLog, GeminiResult, GeminiStep, GeminiStub } from './support/gemini.js';
import { rmAll, runFolders, seedHarnessFiles } from './support/workspace.js';

// With TAKEBACK_REQUIRE_AGENTS=1 (CI) a missing binary fails the run instead of skipping it.
const { bin: GEMINI, version: VERSION, skipReason: SKIP_REASON } = gateAgent(GEMINI_BIN, 'real Gemini CLI', '[gemini-harness]');

const PROMPT_1 = 'Turn one: add the new module, fix the notes, tidy the files.';
const PROMPT_2 = 'Turn two: a few more changes.';
const FINAL_1 = 'Turn one is done.';
const FINAL_2 = 'Turn two is done.';
/** Shell commands that run in parallel (one model response); each notes when it starts and ends. */
const PAR_A = 'echo start-a >> order.txt; sleep 1; echo end-a >> order.txt';
const PAR_B = 'echo start-b >> order.txt; sleep 1; echo end-b >> order.txt';

const read = (file: string) => fs.readFileSync(file, 'utf8');

/** The fields of an event other than the common ones and the hook_event_name. */
const keys = (e: any) => Object.keys(e).sort();

describe.skipIf(!GEMINI)(GEMINI ? `real Gemini CLI ${VERSION} (${GEMINI})` : `real Gemini CLI — ${SKIP_REASON}`, () => {
  describe('a two-turn session: write_file, replace, run_shell_command, failures, parallel calls; then --resume latest', () => {
    let work: string; // the workspace
    let home: string; // gemini's private HOME
    let aside: string; // the hook logger and its logs, outside the workspace
    let stub: GeminiStub;
    let userLog: GeminiHookLog;
    let projectLog: GeminiHookLog;
    let run1: GeminiResult;
    let run2: GeminiResult;
    let events: any[];

    beforeAll(async () => {
      ({ work, home, aside } = await runFolders('gemini'));
      seedHarnessFiles(work);
      // The same logger in both settings files, under different names and logs (hooks with the
      // same name and command are run once), and with both matcher spellings.
      userLog = makeGeminiHookLog(aside, 'user', '^(write_file|replace|run_shell_command)$');
      projectLog = makeGeminiHookLog(aside, 'project', 'write_file|replace|run_shell_command');

      const turn1: GeminiStep[] = [
        [text('I will create the module first.'), writeFile(path.join(work, 'src/lib/new.ts'), 'export const answer = 42;\n')],
        // write_file over an existing file (no read needed first).
        [writeFile(path.join(work, 'notes.md'), '# Notes\n\nThe quick brown fox.\nMore.\n')],
        [replace(path.join(work, 'notes.md'), 'quick brown', 'slow red', 'Recolour the fox.')],
        // A relative path.
        [replace('src/lib/new.ts', '42', '43', 'Bump the answer.')],
        // A replace that does not match: the tool fails, the file stays.
        [replace(path.join(work, 'notes.md'), 'NOT THERE', 'x', 'Fails.')],
        [runShell("sed -i 's/a/b/' f.txt && mv x y && rm z")],
        // A failing command that still changed a file.
        [runShell('echo partial > partial.txt && exit 3')],
        // Two shell calls in one response: they run in parallel.
        [runShell(PAR_A), runShell(PAR_B)],
        // Two file tools in one response: they run one after the other.
        [writeFile('rel.txt', 'relative\n'), writeFile(path.join(work, 'rel2.txt'), 'r2\n')],
        [text(FINAL_1)],
      ];
      stub = await startGeminiStub({ steps: turn1 });
      run1 = await runGemini({
        cwd: work,
        home,
        baseUrl: stub.url,
        prompt: PROMPT_1,
        userSettings: userLog.settings,
        projectSettings: projectLog.settings,
        outputFormat: 'json',
      });
      stub.push([runShell("printf 'more\\n' >> f.txt && mkdir -p out && cp y out/y.copy")], [text(FINAL_2)]);
      run2 = await runGemini({ cwd: work, home, baseUrl: stub.url, prompt: PROMPT_2, resume: 'latest', outputFormat: 'json', userSettings: userLog.settings });
      console.info(`[gemini-harness] gemini ${VERSION}: turn 1 took ${run1.durationMs} ms, turn 2 ${run2.durationMs} ms`);
      events = userLog.read();
    });

    afterAll(async () => {
      await stub?.close();
      rmAll(work, home, aside);
    });

    it('both turns ran to the end, and the whole script was used', () => {
      expect(run1.code, describeGeminiRun(run1)).toBe(0);
      expect(run2.code, describeGeminiRun(run2)).toBe(0);
      // AfterAgent's prompt_response joins every text of the turn; the json's response too.
      expect(run1.json?.response, describeGeminiRun(run1)).toContain(FINAL_1);
      expect(run2.json?.response, describeGeminiRun(run2)).toBe(FINAL_2);
      expect(stub.stepsUsed).toBe(12);
      expect(stub.stepRequests.map((r) => r.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      // Nothing but the streaming model API, for the model asked for: no side requests.
      for (const r of stub.requests) expect(r.url).toBe(`/v1beta/models/${DEFAULT_GEMINI_MODEL}:streamGenerateContent?alt=sse`);
      // The resumed run sent the first turn's conversation along.
      expect(JSON.stringify(stub.stepRequests[10]!.body.contents)).toContain('echo partial > partial.txt');
    });

    it('the tools ran for real, in cwd: files on disk', () => {
      expect(read(path.join(work, 'src/lib/new.ts'))).toBe('export const answer = 43;\n');
      expect(read(path.join(work, 'notes.md'))).toBe('# Notes\n\nThe slow red fox.\nMore.\n');
      expect(read(path.join(work, 'f.txt'))).toBe('b cat sat\nmore\n');
      expect(fs.existsSync(path.join(work, 'x'))).toBe(false);
      expect(read(path.join(work, 'y'))).toBe('x contents\n');
      expect(fs.existsSync(path.join(work, 'z'))).toBe(false);
      expect(read(path.join(work, 'partial.txt'))).toBe('partial\n');
      expect(read(path.join(work, 'rel.txt'))).toBe('relative\n');
      expect(read(path.join(work, 'rel2.txt'))).toBe('r2\n');
      expect(read(path.join(work, 'out/y.copy'))).toBe('x contents\n');
      // Both parallel commands started before either ended.
      const order = read(path.join(work, 'order.txt')).trim().split('\n');
      expect(order.slice(0, 2).sort()).toEqual(['start-a', 'start-b']);
      expect(order.slice(2).sort()).toEqual(['end-a', 'end-b']);
      // gemini's own state stayed out of the workspace (only the settings we wrote are there).
      expect(fs.readdirSync(path.join(work, '.gemini'))).toEqual(['settings.json']);
    });

    it('the model got the results: a replace without a match and a failing command', () => {
      const responses = geminiFunctionResponses(stub);
      expect(responses.map((r) => r.name)).toEqual([
        'write_file', 'write_file', 'replace', 'replace', 'replace', 'run_shell_command', 'run_shell_command',
        'run_shell_command', 'run_shell_command', 'write_file', 'write_file', 'run_shell_command',
      ]);
      // The CLI makes its own call ids for the model ("<tool>_<time>_<n>"); hooks never see them.
      for (const r of responses) expect(r.id).toMatch(new RegExp(`^${r.name}_\\d+_\\d+$`));
      expect(responses[4].response.error).toMatch(/Could not find an exact match/);
      expect(responses[6].response.output).toMatch(/Exit Code: 3/);
      expect(responses[6].response.error).toBeUndefined();
    });

    it('hooks fire from both ~/.gemini/settings.json and <cwd>/.gemini/settings.json, alike', () => {
      const project = projectLog.read();
      // The project settings, written before turn 1, were still there for turn 2.
      // The same events; the two parallel shell calls' hooks may land in either order in each log.
      const strip = (e: any) => JSON.stringify([e.hook_event_name, e.tool_name ?? null, e.tool_input ?? null]);
      expect(project.map(strip).sort()).toEqual(events.map(strip).sort());
      expect(project.length).toBe(events.length);
      // The CLI remembers the project hooks it has warned about.
      const trusted = JSON.parse(read(path.join(home, '.gemini', 'trusted_hooks.json')));
      expect(Object.keys(trusted)).toEqual([work]);
    });

    it('fired the events in order; parallel shell calls: both BeforeTool, then both AfterTool', () => {
      const seq = events.map((e) => [e.hook_event_name, e.tool_name ?? e.source ?? e.reason ?? null]);
      expect(seq).toEqual([
        ['SessionStart', 'startup'],
        ['BeforeAgent', null],
        ['BeforeTool', 'write_file'],
        ['AfterTool', 'write_file'],
        ['BeforeTool', 'write_file'],
        ['AfterTool', 'write_file'],
        ['BeforeTool', 'replace'],
        ['AfterTool', 'replace'],
        ['BeforeTool', 'replace'],
        ['AfterTool', 'replace'],
        ['BeforeTool', 'replace'], // no match: AfterTool still fires, with tool_response.error
        ['AfterTool', 'replace'],
        ['BeforeTool', 'run_shell_command'],
        ['AfterTool', 'run_shell_command'],
        ['BeforeTool', 'run_shell_command'], // exit 3: AfterTool still fires
        ['AfterTool', 'run_shell_command'],
        ['BeforeTool', 'run_shell_command'], // the parallel pair
        ['BeforeTool', 'run_shell_command'],
        ['AfterTool', 'run_shell_command'],
        ['AfterTool', 'run_shell_command'],
        ['BeforeTool', 'write_file'], // two write_files in one response: one after the other
        ['AfterTool', 'write_file'],
        ['BeforeTool', 'write_file'],
        ['AfterTool', 'write_file'],
        ['AfterAgent', null],
        ['SessionEnd', 'exit'],
        ['SessionStart', 'resume'],
        ['BeforeAgent', null],
        ['BeforeTool', 'run_shell_command'],
        ['AfterTool', 'run_shell_command'],
        ['AfterAgent', null],
        ['SessionEnd', 'exit'],
      ]);
      const par = events.filter((e) => e.tool_input?.command === PAR_A || e.tool_input?.command === PAR_B);
      expect(par.map((e) => e.hook_event_name)).toEqual(['BeforeTool', 'BeforeTool', 'AfterTool', 'AfterTool']);
    });

    it('every event has session_id, transcript_path, cwd, timestamp; one session over both turns', () => {
      expect(run1.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(run2.sessionId).toBe(run1.sessionId);
      // Transcripts live in ~/.gemini/tmp/<slug>/chats/: the slug is the workspace's basename,
      // lower-cased, non-alphanumerics as "-" (with "-N" on a clash), kept in ~/.gemini/projects.json.
      const slug = projectSlug(home, work);
      expect(slug).toBe(path.basename(work).toLowerCase().replace(/[^a-z0-9]+/g, '-'));
      const chats = path.join(home, '.gemini', 'tmp', slug, 'chats');
      for (const e of events) {
        expect(e.session_id).toBe(run1.sessionId);
        expect(e.cwd).toBe(work);
        expect(e.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(path.dirname(e.transcript_path)).toBe(chats);
        expect(path.basename(e.transcript_path)).toMatch(new RegExp(`^session-.*-${run1.sessionId!.slice(0, 8)}\\.jsonl$`));
      }
      // The transcript is stable within a session... except on the resumed SessionStart, which
      // names session-<minute of the resume>-<id8>.jsonl (another file once the minute changed);
      // the events after it name the first one again.
      const paths = events.map((e) => e.transcript_path);
      const resumed = events.findIndex((e) => e.source === 'resume');
      expect(new Set(paths.filter((_, i) => i !== resumed)).size).toBe(1);
      for (const p of new Set(paths)) expect(fs.existsSync(p)).toBe(true);
    });

    it('no id pairs BeforeTool with AfterTool, and there is no turn id: exactly these fields', () => {
      const base = ['cwd', 'hook_event_name', 'session_id', 'timestamp', 'transcript_path'];
      const fields = (name: string) => [...new Set(events.filter((e) => e.hook_event_name === name).map((e) => keys(e).join(',')))];
      expect(fields('SessionStart')).toEqual([[...base, 'source'].sort().join(',')]);
      expect(fields('BeforeAgent')).toEqual([[...base, 'prompt'].sort().join(',')]);
      expect(fields('BeforeTool')).toEqual([[...base, 'tool_input', 'tool_name'].sort().join(',')]);
      expect(fields('AfterTool')).toEqual([[...base, 'tool_input', 'tool_name', 'tool_response'].sort().join(',')]);
      expect(fields('AfterAgent')).toEqual([[...base, 'prompt', 'prompt_response', 'stop_hook_active'].sort().join(',')]);
      expect(fields('SessionEnd')).toEqual([[...base, 'reason'].sort().join(',')]);
    });

    it('BeforeAgent has the prompt; AfterAgent the prompt and every text of the turn', () => {
      expect(events.filter((e) => e.hook_event_name === 'BeforeAgent').map((e) => e.prompt)).toEqual([PROMPT_1, PROMPT_2]);
      const after = events.filter((e) => e.hook_event_name === 'AfterAgent');
      expect(after.map((e) => e.prompt)).toEqual([PROMPT_1, PROMPT_2]);
      expect(after.map((e) => e.prompt_response)).toEqual([`I will create the module first.\n${FINAL_1}`, FINAL_2]);
      expect(after.map((e) => e.stop_hook_active)).toEqual([false, false]);
    });

    it('AfterTool carries the same tool_input as BeforeTool: the model\'s args, relative paths as sent', () => {
      const tools = events.filter((e) => e.hook_event_name === 'BeforeTool' || e.hook_event_name === 'AfterTool');
      // Outside the parallel pair, each BeforeTool is followed by its AfterTool.
      const pre = tools.filter((e) => e.hook_event_name === 'BeforeTool');
      const post = tools.filter((e) => e.hook_event_name === 'AfterTool');
      // The parallel pair's AfterTools come in the order the calls finished: compared as sets.
      const key = (e: any) => JSON.stringify([e.tool_name, e.tool_input]);
      expect(pre.map(key).sort()).toEqual(post.map(key).sort());
      expect(pre.map((e) => e.tool_name)).toEqual(post.map((e) => e.tool_name));
      // Relative paths are not resolved in tool_input; tool_response.returnDisplay.filePath is absolute.
      const rel = post.find((e) => e.tool_name === 'replace' && e.tool_input.file_path === 'src/lib/new.ts');
      expect(rel.tool_input).toEqual({ file_path: 'src/lib/new.ts', old_string: '42', new_string: '43', instruction: 'Bump the answer.' });
      expect(rel.tool_response.returnDisplay.filePath).toBe(path.join(work, 'src/lib/new.ts'));
      const relWrite = post.find((e) => e.tool_name === 'write_file' && e.tool_input.file_path === 'rel.txt');
      expect(relWrite.tool_response.returnDisplay.filePath).toBe(path.join(work, 'rel.txt'));
    });

    it('write_file: create, then overwrite', () => {
      const [create, overwrite] = events.filter((e) => e.hook_event_name === 'AfterTool' && e.tool_name === 'write_file');
      expect(create.tool_input).toEqual({ file_path: path.join(work, 'src/lib/new.ts'), content: 'export const answer = 42;\n' });
      expect(create.tool_response.llmContent).toMatch(/^Successfully created and wrote to new file/);
      expect(create.tool_response.returnDisplay).toMatchObject({
        filePath: path.join(work, 'src/lib/new.ts'),
        fileName: 'new.ts',
        originalContent: '',
        newContent: 'export const answer = 42;\n',
        isNewFile: true,
      });
      expect(overwrite.tool_response.llmContent).toMatch(/^Successfully overwrote file/);
      expect(overwrite.tool_response.returnDisplay).toMatchObject({
        originalContent: '# Notes\n\nThe quick brown fox.\n',
        newContent: '# Notes\n\nThe quick brown fox.\nMore.\n',
        isNewFile: false,
      });
      expect(create.tool_response.error).toBeUndefined();
    });

    it('replace: an edit, and one that does not match (AfterTool with tool_response.error)', () => {
      const [edit, , miss] = events.filter((e) => e.hook_event_name === 'AfterTool' && e.tool_name === 'replace');
      expect(edit.tool_input).toEqual({ file_path: path.join(work, 'notes.md'), old_string: 'quick brown', new_string: 'slow red', instruction: 'Recolour the fox.' });
      expect(edit.tool_response.returnDisplay).toMatchObject({
        filePath: path.join(work, 'notes.md'),
        originalContent: '# Notes\n\nThe quick brown fox.\nMore.\n',
        newContent: '# Notes\n\nThe slow red fox.\nMore.\n',
        isNewFile: false,
      });
      expect(typeof edit.tool_response.returnDisplay.fileDiff).toBe('string');
      expect(miss.tool_response.error).toMatchObject({ type: 'edit_no_occurrence_found' });
      expect(miss.tool_response.returnDisplay).toMatch(/^Error: Could not find an exact match/);
    });

    it('run_shell_command: tool_input.command; a non-zero exit is no error, only "Exit Code: N" in llmContent', () => {
      const posts = events.filter((e) => e.hook_event_name === 'AfterTool' && e.tool_name === 'run_shell_command');
      expect(posts[0].tool_input).toEqual({ command: "sed -i 's/a/b/' f.txt && mv x y && rm z" });
      expect(posts[0].tool_response).toEqual({ llmContent: expect.stringMatching(/Output: \(empty\)/), returnDisplay: '' });
      expect(posts[1].tool_input).toEqual({ command: 'echo partial > partial.txt && exit 3' });
      expect(posts[1].tool_response.error).toBeUndefined();
      expect(posts[1].tool_response.llmContent).toMatch(/Exit Code: 3/);
      expect(posts[1].tool_response.returnDisplay).toBe('Command exited with code: 3');
    });

    it('matches the recorded fixtures\' shapes (field names), for the pinned version', () => {
      checkFixtureShapes({
        agent: 'gemini',
        version: VERSION,
        pinned: PINNED_GEMINI_VERSION,
        events,
        pick: pickFixtures,
        placeholders: () => [
          [work, '${WORKSPACE}'],
          [home, '${HOME}'],
          [`/tmp/${projectSlug(home, work)}/`, '/tmp/${PROJECT_SLUG}/'],
        ],
      });
    });
  });

  describe('a hook\'s exit code and output', () => {
    it('nothing + exit 0 is silent; text + exit 0 is shown; exit 1 warns; exit 2 with text blocks the tool', async () => {
      const { work, home, aside } = await runFolders('gemini');
      // A BeforeTool hook whose behaviour the command chooses (never do anything but the first in product).
      const judge = path.join(aside, 'judge.cjs');
      fs.writeFileSync(
        judge,
        `let s = ''; process.stdin.on('data', (d) => (s += d)); process.stdin.on('end', () => {
  const c = JSON.parse(s).tool_input.command;
  if (c.includes('#PLAIN')) { process.stdout.write('plain text from hook\\n'); process.exit(0); }
  if (c.includes('#WARN')) { process.stderr.write('warning from hook\\n'); process.exit(1); }
  if (c.includes('#BLOCK')) { process.stderr.write('blocked by hook\\n'); process.exit(2); }
  if (c.includes('#SILENT2')) process.exit(2);
  if (c.includes('#MISSING')) { process.stderr.write('sh: 1: takeback: not found\\n'); process.exit(127); }
});\n`,
      );
      const log = makeGeminiHookLog(aside, 'user');
      const settings = structuredClone(log.settings);
      (settings.hooks.BeforeTool as any[]).push({
        matcher: 'run_shell_command',
        hooks: [{ name: 'judge', type: 'command', command: `${JSON.stringify(process.execPath)} ${JSON.stringify(judge)}`, timeout: 10_000 }],
      });
      const commands = ['echo > quiet.txt', 'echo > plain.txt #PLAIN', 'echo > warn.txt #WARN', 'echo > blocked.txt #BLOCK', 'echo > silent2.txt #SILENT2', 'echo > missing.txt #MISSING'];
      // One command per model response, so they run one after the other.
      const stub = await startGeminiStub({ steps: commands.map((c) => [runShell(c)]) });
      try {
        const r = await runGemini({ cwd: work, home, baseUrl: stub.url, prompt: 'hooks', userSettings: settings });
        expect(r.code, describeGeminiRun(r)).toBe(0);
        const ran = fs.readdirSync(work).sort();
        expect(ran).toEqual(['plain.txt', 'quiet.txt', 'silent2.txt', 'warn.txt']);
        expect(r.stderr).toContain('Hook system message: plain text from hook');
        expect(r.stderr).toContain('Hook system message: Warning: warning from hook');
        const responses = geminiFunctionResponses(stub);
        expect(responses[3].response).toEqual({ error: 'Tool execution blocked: blocked by hook' });
        // Any exit code >= 2 with text blocks: a hook command that is not found (127) blocks every tool.
        expect(responses[5].response).toEqual({ error: 'Tool execution blocked: sh: 1: takeback: not found' });
        // A blocked tool gets no AfterTool.
        const events = log.read().filter((e) => e.tool_name);
        expect(events.filter((e) => e.hook_event_name === 'BeforeTool').length).toBe(6);
        expect(events.filter((e) => e.hook_event_name === 'AfterTool').map((e) => e.tool_input.command)).toEqual([
          commands[0], commands[1], commands[2], commands[4],
        ]);
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
    'before-agent': find(ev('BeforeAgent')),
    'after-agent': find(ev('AfterAgent')),
    'session-end': find(ev('SessionEnd')),
    'before-tool-write-file': find(ev('BeforeTool', 'write_file')),
    'after-tool-write-file-create': find(ev('AfterTool', 'write_file')),
    'after-tool-write-file-overwrite': find(ev('AfterTool', 'write_file'), 1),
    'before-tool-replace': find(ev('BeforeTool', 'replace')),
    'after-tool-replace': find(ev('AfterTool', 'replace')),
    'after-tool-replace-relative': find(ev('AfterTool', 'replace'), 1),
    'after-tool-replace-no-match': find(ev('AfterTool', 'replace'), 2),
    'before-tool-run-shell-command': find(ev('BeforeTool', 'run_shell_command')),
    'after-tool-run-shell-command': find(ev('AfterTool', 'run_shell_command')),
    'after-tool-run-shell-command-exit-3': find(ev('AfterTool', 'run_shell_command'), 1),
  }));
}

/** The folder name gemini gives the project under ~/.gemini/tmp/ (from ~/.gemini/projects.json). */
function projectSlug(home: string, work: string): string {
  return JSON.parse(read(path.join(home, '.gemini', 'projects.json'))).projects[work];
}
