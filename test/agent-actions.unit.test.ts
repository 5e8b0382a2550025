// Each agent's reading of its hook events, in this process: the payloads the real Claude Code,
// Codex CLI, Gemini CLI, Qwen Code, GitHub Copilot CLI and Cline CLI sent
// (test/fixtures/<agent>-events/, placeholders filled with a
// workspace path) turned into takeback's actions by the agent's `actions()`, through the
// registry the hook uses. And the shapes a payload should not have (fields missing, of the wrong
// type) yielding nothing to capture rather than throwing.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { orderKey } from '../server/agents/actions.js';
import { AGENTS } from '../server/agents/registry.js';
import type { AgentAction, EventContext } from '../server/agents/spec.js';

/** Where the recorded events say the agent worked (never touched: `actions()` reads the event only). */
const WS = '/work-unit/project';

const FILL: Record<string, string> = { WORKSPACE: WS, HOME: '/home-unit', CODEX_HOME: '/codex-home-unit', WORKSPACE_SLUG: '-work-unit-project', PROJECT_SLUG: 'project' };

/** The placeholders of a recorded payload's text filled in. */
const fill = (text: string) => text.replace(/\$\{([A-Z_]+)\}/g, (m, name: string) => FILL[name] ?? m);

const dir = (agent: string) => path.join(import.meta.dirname, 'fixtures', `${agent}-events`);

/** One recorded event of `agent` (`claude`, `codex`, `gemini`), by fixture name. */
const event = (agent: string, name: string) => JSON.parse(fill(fs.readFileSync(path.join(dir(agent), `${name}.json`), 'utf8')));

/** The whole recorded session of `agent`, in the order its events fired. */
const session = (agent: string): any[] =>
  fill(fs.readFileSync(path.join(dir(agent), 'session.jsonl'), 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

type Name = 'claude-code' | 'codex' | 'gemini' | 'qwen-code' | 'copilot' | 'cline';

/** What agent `name` makes of `ev`, with the context it reads from the event (the hook's fallback folder `/fallback`). */
function act(name: Name, ev: any): { ctx: EventContext; actions: AgentAction[] } {
  const spec = AGENTS[name]!;
  // An agent that names its events otherwise (Cline's hookName) is read as the hook reads it.
  if (spec.parse) ev = spec.parse(ev) ?? ev;
  const ctx = spec.context(ev, '/fallback');
  return { ctx, actions: spec.actions(ev, ctx) };
}

const actions = (name: Name, ev: any) => act(name, ev).actions;

describe('Claude Code: the recorded events', () => {
  const ag = 'claude';
  const promptId = 'e6ca64c9-9460-4475-adf7-309b019b9077';

  it('the context: the agent, its session, its cwd', () => {
    expect(act('claude-code', event(ag, 'session-start')).ctx).toEqual({ agent: 'claude-code', session: '0ad02cef-23e5-49e9-8581-910f522ab66f', cwd: WS });
  });

  it('SessionStart (startup or resume) makes sure of a baseline; Stop ends the turn', () => {
    expect(actions('claude-code', event(ag, 'session-start'))).toEqual([{ kind: 'session-start' }]);
    expect(actions('claude-code', event(ag, 'session-start-resume'))).toEqual([{ kind: 'session-start' }]);
    expect(actions('claude-code', event(ag, 'stop'))).toEqual([{ kind: 'turn-end' }]);
  });

  it('UserPromptSubmit begins a turn named by its prompt_id, with the prompt', () => {
    expect(actions('claude-code', event(ag, 'user-prompt-submit'))).toEqual([
      { kind: 'turn-begin', prompt: 'Turn one: add the new module, fix the notes, tidy the files.', agentTurn: promptId },
    ]);
  });

  it('PreToolUse of Write and Edit begins a file capture of the absolute path, paired by tool_use_id', () => {
    expect(actions('claude-code', event(ag, 'pre-tool-use-write'))).toEqual([
      { kind: 'files-begin', pairing: { id: 'toolu_stub_001' }, tool: 'Write', paths: [`${WS}/src/lib/new.ts`] },
    ]);
    expect(actions('claude-code', event(ag, 'pre-tool-use-edit'))).toEqual([
      { kind: 'files-begin', pairing: { id: 'toolu_stub_003' }, tool: 'Edit', paths: [`${WS}/notes.md`] },
    ]);
  });

  it('PreToolUse of Bash begins a command capture with its command line', () => {
    expect(actions('claude-code', event(ag, 'pre-tool-use-bash'))).toEqual([
      { kind: 'command-begin', pairing: { id: 'toolu_stub_004' }, tool: 'Bash', command: "sed -i 's/a/b/' f.txt && mv x y && rm z" },
    ]);
  });

  it('PostToolUse and PostToolUseFailure end the capture of the same tool_use_id', () => {
    expect(actions('claude-code', event(ag, 'post-tool-use-edit'))).toEqual([{ kind: 'tool-end', pairing: { id: 'toolu_stub_003' }, tool: 'Edit' }]);
    expect(actions('claude-code', event(ag, 'post-tool-use-failure-bash'))).toEqual([{ kind: 'tool-end', pairing: { id: 'toolu_stub_005' }, tool: 'Bash' }]);
  });

  it('over the whole session: every capture begun is ended with the same pairing, and turns begin and end in step', () => {
    const all = session(ag).flatMap((e) => actions('claude-code', e));
    const begun = all.filter((a) => a.kind === 'files-begin' || a.kind === 'command-begin').map((a) => JSON.stringify((a as any).pairing));
    const ended = all.filter((a) => a.kind === 'tool-end').map((a) => JSON.stringify((a as any).pairing));
    expect(begun.length).toBeGreaterThan(3);
    expect(ended.sort()).toEqual([...begun].sort());
    expect(all.filter((a) => a.kind === 'turn-begin').length).toBe(all.filter((a) => a.kind === 'turn-end').length);
  });
});

describe('Codex CLI: the recorded events', () => {
  const ag = 'codex';
  const turnId = '01a22be9-e91c-74e1-b534-127b06622306';

  it('UserPromptSubmit begins a turn named by turn_id; Stop ends that turn', () => {
    expect(actions('codex', event(ag, 'user-prompt-submit'))).toEqual([{ kind: 'turn-begin', prompt: 'Turn one: tidy the files and patch the notes.', agentTurn: turnId }]);
    expect(actions('codex', event(ag, 'stop'))).toEqual([{ kind: 'turn-end', agentTurn: turnId }]);
  });

  it('apply_patch begins a file capture of every path its patch names (update, add, delete, both ends of a move)', () => {
    expect(actions('codex', event(ag, 'pre-tool-use-apply-patch'))).toEqual([
      {
        kind: 'files-begin',
        pairing: { id: 'call_stub_003' },
        tool: 'apply_patch',
        paths: [`${WS}/notes.md`, `${WS}/src/lib/new.ts`, `${WS}/gone.txt`, `${WS}/old.txt`, `${WS}/moved/new.txt`],
        agentTurn: turnId,
      },
    ]);
    expect(actions('codex', event(ag, 'pre-tool-use-apply-patch-failing'))).toEqual([
      { kind: 'files-begin', pairing: { id: 'call_stub_004' }, tool: 'apply_patch', paths: [`${WS}/missing.txt`], agentTurn: turnId },
    ]);
    expect(actions('codex', event(ag, 'post-tool-use-apply-patch'))).toEqual([{ kind: 'tool-end', pairing: { id: 'call_stub_003' }, tool: 'apply_patch' }]);
  });

  it('a patch given as `input` instead of `command` is read the same; a patch with relative paths takes the event\'s cwd', () => {
    const ev = event(ag, 'pre-tool-use-apply-patch');
    ev.tool_input = { input: ev.tool_input.command };
    ev.cwd = `${WS}/sub`;
    expect((actions('codex', ev)[0] as any).paths[0]).toBe(`${WS}/sub/notes.md`);
  });

  it('Bash begins a command capture in the event\'s cwd (a sub-folder too); its end pairs by call id', () => {
    const { ctx, actions: a } = act('codex', event(ag, 'pre-tool-use-bash-workdir'));
    expect(ctx.cwd).toBe(`${WS}/sub`);
    expect(a).toEqual([{ kind: 'command-begin', pairing: { id: 'call_stub_005' }, tool: 'Bash', command: 'pwd > where.txt', agentTurn: turnId }]);
    expect(actions('codex', event(ag, 'post-tool-use-bash-exit-3'))).toEqual([{ kind: 'tool-end', pairing: { id: 'call_stub_002' }, tool: 'Bash' }]);
  });

  it('a shell call\'s argv array is joined for people', () => {
    const ev = event(ag, 'pre-tool-use-bash');
    ev.tool_input = { command: ['bash', '-lc', 'ls'] };
    expect((actions('codex', ev)[0] as any).command).toBe('bash -lc ls');
  });

  it('events takeback has no use for are ignored: PreModelRequest, SessionEnd', () => {
    for (const name of ['pre-model-request', 'session-end']) {
      const a = actions('codex', event(ag, name));
      expect(a).toHaveLength(1);
      expect(a[0]!.kind).toBe('ignore');
    }
    expect(actions('codex', event(ag, 'session-start-resume'))).toEqual([{ kind: 'session-start' }]);
  });

  it('over the whole session: every capture begun but the failing patch\'s is ended with the same call id', () => {
    const all = session(ag).flatMap((e) => actions('codex', e));
    const ids = (kind: string[]) => all.filter((a) => kind.includes(a.kind)).map((a) => (a as any).pairing.id as string);
    const begun = ids(['files-begin', 'command-begin']);
    const ended = ids(['tool-end']);
    expect(begun).toContain('call_stub_004');
    // A patch that fails gets no PostToolUse (its capture ends at Stop).
    expect(ended).not.toContain('call_stub_004');
    expect(ended.sort()).toEqual(begun.filter((id) => id !== 'call_stub_004').sort());
  });
});

describe('Gemini CLI: the recorded events', () => {
  const ag = 'gemini';

  it('BeforeAgent begins a turn with the prompt, AfterAgent ends it; SessionEnd is ignored', () => {
    expect(actions('gemini', event(ag, 'before-agent'))).toEqual([{ kind: 'turn-begin', prompt: 'Turn one: add the new module, fix the notes, tidy the files.' }]);
    expect(actions('gemini', event(ag, 'after-agent'))).toEqual([{ kind: 'turn-end' }]);
    expect(actions('gemini', event(ag, 'session-end'))[0]!.kind).toBe('ignore');
  });

  it('BeforeTool of write_file and replace begins a file capture paired by order: the tool and its input', () => {
    const ev = event(ag, 'before-tool-write-file');
    expect(actions('gemini', ev)).toEqual([{ kind: 'files-begin', pairing: { order: orderKey('write_file', ev.tool_input) }, tool: 'write_file', paths: [`${WS}/src/lib/new.ts`] }]);
    const rep = event(ag, 'before-tool-replace');
    expect(actions('gemini', rep)).toEqual([{ kind: 'files-begin', pairing: { order: orderKey('replace', rep.tool_input) }, tool: 'replace', paths: [`${WS}/notes.md`] }]);
  });

  it('AfterTool yields the same pairing key as its BeforeTool (the key does not depend on field order), another call another key', () => {
    const before = actions('gemini', event(ag, 'before-tool-replace'))[0] as any;
    const after = actions('gemini', event(ag, 'after-tool-replace'))[0] as any;
    expect(after).toEqual({ kind: 'tool-end', pairing: before.pairing, tool: 'replace' });
    const reordered = event(ag, 'after-tool-replace');
    reordered.tool_input = Object.fromEntries(Object.entries(reordered.tool_input).reverse());
    expect((actions('gemini', reordered)[0] as any).pairing).toEqual(before.pairing);
    expect((actions('gemini', event(ag, 'after-tool-replace-no-match'))[0] as any).pairing).not.toEqual(before.pairing);
  });

  it('run_shell_command begins a command capture; a relative file_path takes the event\'s cwd', () => {
    const sh = event(ag, 'before-tool-run-shell-command');
    expect(actions('gemini', sh)).toEqual([
      { kind: 'command-begin', pairing: { order: orderKey('run_shell_command', sh.tool_input) }, tool: 'run_shell_command', command: "sed -i 's/a/b/' f.txt && mv x y && rm z" },
    ]);
    const rel = session(ag).find((e) => e.hook_event_name === 'BeforeTool' && e.tool_input?.file_path === 'src/lib/new.ts');
    expect(rel).toBeDefined();
    expect((actions('gemini', rel)[0] as any).paths).toEqual([`${WS}/src/lib/new.ts`]);
  });

  it('over the whole session, paired by order (two shell calls run side by side among them): each AfterTool\'s key is one a BeforeTool gave, as many times', () => {
    const all = session(ag).flatMap((e) => actions('gemini', e));
    const keys = (kinds: string[]) => all.filter((a) => kinds.includes(a.kind)).map((a) => (a as any).pairing.order as string);
    const begun = keys(['files-begin', 'command-begin']);
    expect(begun.length).toBeGreaterThan(5);
    expect(keys(['tool-end']).sort()).toEqual(begun.sort());
    // The two calls that ran side by side have keys of their own.
    const raw = session(ag);
    const i = raw.findIndex((e, n) => e.hook_event_name === 'BeforeTool' && raw[n + 1]?.hook_event_name === 'BeforeTool');
    expect(i).toBeGreaterThan(0);
    expect(orderKey(raw[i].tool_name, raw[i].tool_input)).not.toBe(orderKey(raw[i + 1].tool_name, raw[i + 1].tool_input));
  });
});

/** The actions of a whole recorded session, event by event (events not captured left out). */
const sessionActions = (name: Name, agent: string) => session(agent).map((e) => ({ e, a: actions(name, e) }));

/** Expects every tool-end of `all` to end exactly the pairings the begins gave, as many times. */
function expectPaired(all: AgentAction[], by: 'id' | 'order'): void {
  const keys = (kinds: string[]) => all.filter((a) => kinds.includes(a.kind)).map((a) => (a as any).pairing[by] as string);
  const begun = keys(['files-begin', 'command-begin']);
  expect(begun.length).toBeGreaterThan(2);
  for (const k of begun) expect(k).toEqual(expect.any(String));
  expect(keys(['tool-end']).sort()).toEqual(begun.sort());
}

describe('Qwen Code: the recorded events', () => {
  const ag = 'qwen-code';
  const all = () => sessionActions('qwen-code', ag);
  const sid = '3b9c4d2e-1111-4222-8333-444455556666';

  it('the context, the turns by prompt id (the empty UserPromptSubmit after each batch of tool results names the same turn), Stop ends it', () => {
    const evs = all();
    expect(act('qwen-code', evs[0]!.e).ctx).toEqual({ agent: 'qwen-code', session: sid, cwd: WS });
    const begins = evs.flatMap(({ a }) => a).filter((a) => a.kind === 'turn-begin');
    expect(new Set(begins.map((b: any) => b.agentTurn))).toEqual(new Set([`${sid}########0`, `${sid}########2`]));
    expect(begins.filter((b: any) => b.prompt !== null).map((b: any) => b.prompt)).toEqual(['do it', 'do it']);
    expect(evs.filter(({ e }) => e.hook_event_name === 'Stop').map(({ a }) => a)).toEqual([
      [{ kind: 'turn-end', agentTurn: `${sid}########0` }],
      [{ kind: 'turn-end', agentTurn: `${sid}########2` }],
    ]);
  });

  it('write_file and edit begin file captures of their absolute path, run_shell_command a command capture; read_file is not captured; paired by tool_use_id', () => {
    const begins = all()
      .filter(({ e }) => e.hook_event_name === 'PreToolUse')
      .map(({ e, a }) => [e.tool_name, a[0]!.kind, (a[0] as any).paths ?? (a[0] as any).command ?? null, (a[0] as any).pairing?.id === e.tool_use_id]);
    expect(begins).toEqual([
      ['write_file', 'files-begin', [`${WS}/b.txt`], true],
      ['read_file', 'ignore', null, false],
      ['edit', 'files-begin', [`${WS}/a.txt`], true],
      ['run_shell_command', 'command-begin', "sed -i 's/bye/ciao/' a.txt && mv b.txt c.txt", true],
      ['run_shell_command', 'command-begin', 'rm c.txt', true],
    ]);
    expectPaired(all().flatMap(({ a }) => a), 'id');
  });
});

describe('GitHub Copilot CLI: the recorded events (Claude Code\'s event names and payload shape)', () => {
  const ag = 'copilot';
  const all = () => sessionActions('copilot', ag);

  it('the context; UserPromptSubmit begins a turn with its prompt, Stop ends it, SessionStart makes sure of a baseline', () => {
    const evs = all();
    expect(act('copilot', evs[0]!.e).ctx).toEqual({ agent: 'copilot', session: 'e91849aa-6d04-4379-85db-8fbe93ffefd7', cwd: WS });
    const by = (name: string) => evs.filter(({ e }) => e.hook_event_name === name).map(({ a }) => a);
    expect(by('SessionStart')).toEqual([[{ kind: 'session-start' }]]);
    expect(by('UserPromptSubmit')).toEqual([[{ kind: 'turn-begin', prompt: 'do it' }]]);
    expect(by('Stop')).toEqual([[{ kind: 'turn-end' }]]);
  });

  it('Write (create) and Edit begin file captures of tool_input.path, Bash a command capture; each end pairs by order (tool and input)', () => {
    const begins = all()
      .filter(({ e }) => e.hook_event_name === 'PreToolUse')
      .map(({ e, a }) => [e.tool_name, a[0]!.kind, (a[0] as any).paths ?? (a[0] as any).command, (a[0] as any).pairing.order === orderKey(e.tool_name, e.tool_input)]);
    expect(begins).toEqual([
      ['Write', 'files-begin', [`${WS}/b.txt`], true],
      ['Edit', 'files-begin', [`${WS}/a.txt`], true],
      ['Bash', 'command-begin', 'sed -i s/bye/ciao/ a.txt && mv b.txt c.txt', true],
    ]);
    expectPaired(all().flatMap(({ a }) => a), 'order');
  });
});

describe('Cline CLI: the recorded events (hookName read as the event)', () => {
  const ag = 'cline';
  const all = () => sessionActions('cline', ag);

  it('the context (rootSessionId, the workspace root); a task\'s start begins a turn and its end ends it', () => {
    const evs = all();
    expect(act('cline', evs[0]!.e).ctx).toEqual({ agent: 'cline', session: '1796142725649_x75vt', cwd: WS });
    expect(evs[0]!.a).toEqual([{ kind: 'turn-begin', prompt: null }]);
    expect(evs.at(-1)!.a).toEqual([{ kind: 'turn-end' }]);
    expect(AGENTS.cline!.parse!({ hookName: 'agent_abort', taskId: 't' })).toEqual({ hookName: 'agent_abort', taskId: 't', hook_event_name: 'agent_abort' });
    expect(actions('cline', { hookName: 'agent_error', taskId: 't' })).toEqual([{ kind: 'turn-end' }]);
  });

  it('editor begins a file capture of its path, run_commands a command capture of its commands; paired by Cline\'s tool call id', () => {
    const begins = all()
      .filter(({ e }) => e.hookName === 'tool_call')
      .map(({ e, a }) => [e.tool_call.name, a[0]!.kind, (a[0] as any).paths ?? (a[0] as any).command, (a[0] as any).pairing.id]);
    expect(begins).toEqual([
      ['editor', 'files-begin', [`${WS}/b.txt`], 'call_stub_001'],
      ['editor', 'files-begin', [`${WS}/a.txt`], 'call_stub_002'],
      ['run_commands', 'command-begin', 'sed -i s/bye/ciao/ a.txt && mv b.txt c.txt', 'call_stub_003'],
    ]);
    expectPaired(all().flatMap(({ a }) => a), 'id');
    const two = { hookName: 'tool_call', taskId: 't', tool_call: { id: 'c9', name: 'run_commands', input: { commands: ['rm a', 'mv b c'] } } };
    expect(actions('cline', two)).toEqual([{ kind: 'command-begin', pairing: { id: 'c9' }, tool: 'run_commands', command: 'rm a; mv b c' }]);
    // apply_patch (offered to some models instead of editor): Codex's patch format, the input itself or its `input`.
    const patch = '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** Add File: b.txt\n+b\n*** End Patch\n';
    for (const input of [patch, { input: patch }]) {
      expect(actions('cline', { hookName: 'tool_call', workspaceRoots: [WS], tool_call: { id: 'p1', name: 'apply_patch', input } })).toEqual([
        { kind: 'files-begin', pairing: { id: 'p1' }, tool: 'apply_patch', paths: [`${WS}/src/a.ts`, `${WS}/b.txt`] },
      ]);
    }
    expect(actions('cline', { hookName: 'tool_result', tool_result: { id: 'p1', name: 'apply_patch' } })).toEqual([{ kind: 'tool-end', pairing: { id: 'p1' }, tool: 'apply_patch' }]);
  });

  it('a payload without hookName is no event (the hook logs it), tools not captured and bad shapes are ignored', () => {
    expect(AGENTS.cline!.parse!({ hook_event_name: 'PreToolUse' })).toBeNull();
    expect(AGENTS.cline!.parse!(null)).toBeNull();
    expect(AGENTS.cline!.parse!([1])).toBeNull();
    for (const ev of [
      { hookName: 'tool_call', tool_call: { id: 'x', name: 'read_files', input: { files: ['a'] } } },
      { hookName: 'tool_call', tool_call: { id: 'x', name: 'editor', input: { path: 3 } } },
      { hookName: 'tool_call' },
      { hookName: 'tool_result', tool_result: { id: 'x', name: 'search_codebase' } },
      { hookName: 'prompt_submit' },
      { hookName: 'tool_call', tool_call: { id: 'x', name: 'apply_patch', input: { input: 4 } } },
    ]) {
      const a = actions('cline', ev);
      expect(a.length > 0 && a.every((x) => x.kind === 'ignore'), JSON.stringify(ev)).toBe(true);
    }
    expect(AGENTS.cline!.context({ hook_event_name: 'agent_start', workspaceRoots: [5] } as any, '/fallback')).toEqual({ agent: 'cline', session: null, cwd: '/fallback' });
  });
});

describe('bad shapes yield nothing to capture, never an exception', () => {
  const base = { session_id: 's', cwd: WS };
  /** True when every action is `ignore` (with a reason). */
  const nothing = (a: AgentAction[]) => a.length > 0 && a.every((x) => x.kind === 'ignore' && typeof x.why === 'string' && x.why !== '');

  it('a file tool without its path, or with a path that is not a string, is ignored', () => {
    const cases: [Name, string, string, unknown][] = [
      ['claude-code', 'PreToolUse', 'Write', undefined],
      ['claude-code', 'PreToolUse', 'Edit', null],
      ['claude-code', 'PreToolUse', 'Write', { file_path: 42 }],
      ['claude-code', 'PreToolUse', 'Write', { file_path: '' }],
      ['claude-code', 'PreToolUse', 'NotebookEdit', { file_path: 'a.ipynb' }], // its field is notebook_path
      ['claude-code', 'PreToolUse', 'Write', 'file_path'],
      ['gemini', 'BeforeTool', 'write_file', { file_path: ['a', 'b'] }],
      ['gemini', 'BeforeTool', 'replace', {}],
      ['codex', 'PreToolUse', 'apply_patch', { command: 42 }],
      ['codex', 'PreToolUse', 'apply_patch', { command: '*** Begin Patch\n*** End Patch\n' }],
      ['codex', 'PreToolUse', 'apply_patch', undefined],
      ['qwen-code', 'PreToolUse', 'write_file', { path: 'a' }],
      ['qwen-code', 'PreToolUse', 'notebook_edit', { file_path: 'a.ipynb' }], // its field is notebook_path
      ['copilot', 'PreToolUse', 'Write', { file_path: 'a' }], // Copilot's field is path
      ['copilot', 'PreToolUse', 'Edit', { path: 7 }],
    ];
    for (const [agent, hook, tool, input] of cases) {
      const ev = { ...base, hook_event_name: hook, tool_name: tool, tool_use_id: 'x', ...(input === undefined ? {} : { tool_input: input }) };
      expect(nothing(actions(agent, ev)), `${agent} ${hook} ${tool} ${JSON.stringify(input)}`).toBe(true);
    }
  });

  it('a tool takeback does not capture, a tool name that is not a string, an unknown event: ignored, for every agent', () => {
    const evs: [Name, any][] = [
      ['claude-code', { ...base, hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: 'a' } }],
      ['claude-code', { ...base, hook_event_name: 'PreToolUse', tool_name: 7 }],
      ['claude-code', { ...base, hook_event_name: 'PreToolUse' }],
      ['claude-code', { ...base, hook_event_name: 'Notification' }],
      ['codex', { ...base, hook_event_name: 'PreToolUse', tool_name: 'web_search' }],
      ['codex', { ...base, hook_event_name: 'PostToolUse', tool_name: { name: 'Bash' } }],
      ['codex', { ...base, hook_event_name: 'PostToolUse' }],
      ['codex', { ...base, hook_event_name: '' }],
      ['gemini', { ...base, hook_event_name: 'BeforeTool', tool_name: 'read_file', tool_input: { file_path: 'a' } }],
      ['gemini', { ...base, hook_event_name: 'AfterTool', tool_name: null }],
      ['gemini', { ...base, hook_event_name: 'BeforeModel' }],
      ['qwen-code', { ...base, hook_event_name: 'PostToolUse', tool_name: 'read_file' }],
      ['qwen-code', { ...base, hook_event_name: 'PermissionRequest' }],
      ['copilot', { ...base, hook_event_name: 'PreToolUse', tool_name: 'View', tool_input: { path: 'a' } }],
      ['copilot', { ...base, hook_event_name: 'PostToolUse', tool_name: 'view' }],
      ['copilot', { ...base, hook_event_name: 'SessionEnd' }],
    ];
    for (const [agent, ev] of evs) expect(nothing(actions(agent, ev)), `${agent} ${JSON.stringify(ev)}`).toBe(true);
  });

  it('fields of the wrong type fall back rather than throw: no session, the hook\'s folder, no prompt, an empty command', () => {
    for (const name of ['claude-code', 'codex', 'gemini', 'qwen-code', 'copilot'] as Name[]) {
      const ctx = AGENTS[name]!.context({ hook_event_name: 'Stop', session_id: 5, cwd: ['x'] } as any, '/fallback');
      expect(ctx).toEqual({ agent: name, session: null, cwd: '/fallback' });
    }
    expect(actions('claude-code', { ...base, hook_event_name: 'UserPromptSubmit', prompt: { text: 'x' }, prompt_id: 3 })).toEqual([
      { kind: 'turn-begin', prompt: null, agentTurn: null },
    ]);
    expect(actions('codex', { ...base, hook_event_name: 'UserPromptSubmit', turn_id: ['t'] })).toEqual([{ kind: 'turn-begin', prompt: null, agentTurn: null }]);
    expect(actions('codex', { ...base, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: 'c', tool_input: { command: { argv: 1 } } })).toEqual([
      { kind: 'command-begin', pairing: { id: 'c' }, tool: 'Bash', command: '', agentTurn: null },
    ]);
    expect(actions('gemini', { ...base, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command: 12 } })[0]).toMatchObject({ kind: 'command-begin', command: '' });
  });
});
