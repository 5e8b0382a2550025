// A hook event prepared ahead of its handling (cli/hook.ts prepareHookText, as the capture daemon
// does while its watcher syncs for the event): the event read and its journal opened then; its
// actions run on that journal afterwards, or on one opened anew when it was closed meanwhile to
// make room for another workspace's.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scanAndCommit } from '../server/core/capture/scan-commit.js';
import { openWorkspace } from '../server/core/open-workspace.js';
import { acquireWorkspace, closeKeptWorkspaces, keepWorkspacesOpen, releaseWorkspace } from '../server/daemon/kept-workspaces.js';
import { handleHookText, prepareHookText } from '../server/cli/hook.js';
import { sandbox, type Sandbox } from './support/takeback.js';

afterEach(() => {
  closeKeptWorkspaces();
  keepWorkspacesOpen(0);
});

/** Runs `fn` with `sb`'s TAKEBACK_HOME (the hook reads `process.env`, as the daemon sets it per event). */
function withHome<T>(sb: Sandbox, fn: () => T): T {
  const before = process.env.TAKEBACK_HOME;
  process.env.TAKEBACK_HOME = sb.home;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env.TAKEBACK_HOME;
    else process.env.TAKEBACK_HOME = before;
  }
}

/** A workspace with its first snapshot, its journal closed again. */
function baseline(sb: Sandbox): void {
  sb.write('a.txt', 'a\n');
  const ws = openWorkspace({ workspace: sb.ws, env: sb.env });
  try {
    expect(ws.journal.write(() => scanAndCommit(ws)).status).toBe('baseline');
  } finally {
    ws.journal.close();
  }
}

const bash = (sb: Sandbox, event: string, id: string) =>
  JSON.stringify({ session_id: 's', cwd: sb.ws, hook_event_name: event, tool_name: 'Bash', tool_input: { command: 'make' }, tool_use_id: id, ...(event === 'PostToolUse' ? { tool_response: {} } : {}) });

/** The files of the set the command `id` recorded in `sb`'s journal, read by a process of its own. */
function setOf(sb: Sandbox, id: string): string[] {
  const sets = sb.json(['list', '--all']) as { sets?: { source?: { toolCallId?: string }; files: { path: string }[] }[] };
  const found = (sets.sets ?? []).find((s) => s.source?.toolCallId === id);
  return (found?.files ?? []).map((f) => f.path).sort();
}

describe('a hook event prepared ahead of its handling', () => {
  it("runs a command's begin on the journal opened ahead, the one this process keeps", () => {
    const sb = sandbox();
    baseline(sb);
    keepWorkspacesOpen(2);
    withHome(sb, () => {
      const prepared = prepareHookText('claude-code', bash(sb, 'PreToolUse', 'toolu_ahead'));
      expect(prepared?.ev.hook_event_name).toBe('PreToolUse');
      const opened = prepared!.event.opened;
      expect(opened?.root).toBe(fs.realpathSync(sb.ws));
      // Kept open: the next acquire of that workspace is the same journal.
      const again = acquireWorkspace({ cwd: sb.ws });
      expect(again).toBe(opened);
      releaseWorkspace(again);
      expect(handleHookText('claude-code', bash(sb, 'PreToolUse', 'toolu_ahead'), '', undefined, prepared)).toBe(true);
      expect(opened!.journal.captures.inFlight('command', 0)).toBe(1);
      sb.write('made.txt', 'by the command\n');
      expect(handleHookText('claude-code', bash(sb, 'PostToolUse', 'toolu_ahead'), '')).toBe(true);
    });
    expect(setOf(sb, 'toolu_ahead')).toEqual(['made.txt']);
  });

  it('opens the journal anew when the one opened ahead was closed since to make room for another', () => {
    const sb = sandbox();
    const other = sandbox();
    baseline(sb);
    keepWorkspacesOpen(1);
    withHome(sb, () => {
      const prepared = prepareHookText('claude-code', bash(sb, 'PreToolUse', 'toolu_closed'));
      const opened = prepared!.event.opened!;
      expect(opened.root).toBe(fs.realpathSync(sb.ws));
      // Another workspace acquired meanwhile (a baseline kept in the background): the first is closed.
      const second = acquireWorkspace({ cwd: other.ws });
      releaseWorkspace(second);
      expect(() => opened.journal.captures.inFlight('command', 0)).toThrow();
      expect(handleHookText('claude-code', bash(sb, 'PreToolUse', 'toolu_closed'), '', undefined, prepared)).toBe(true);
      sb.write('made.txt', 'by the command\n');
      expect(handleHookText('claude-code', bash(sb, 'PostToolUse', 'toolu_closed'), '')).toBe(true);
    });
    expect(setOf(sb, 'toolu_closed')).toEqual(['made.txt']);
    // Nothing went to the spill: the begin was recorded, not queued.
    expect(fs.existsSync(path.join(sb.home, 'logs', 'hook.log')) ? fs.readFileSync(path.join(sb.home, 'logs', 'hook.log'), 'utf8') : '').not.toMatch(/queued|failed/);
  });

  it('prepares nothing for text that is not an event, an unknown agent, or an event that touches no journal', () => {
    const sb = sandbox();
    baseline(sb);
    keepWorkspacesOpen(2);
    withHome(sb, () => {
      expect(prepareHookText('claude-code', '{not json')).toBeNull();
      expect(prepareHookText('no-such-agent', bash(sb, 'PreToolUse', 'toolu_x'))).toBeNull();
      expect(prepareHookText('claude-code', JSON.stringify({ cwd: sb.ws }))).toBeNull();
      const note = prepareHookText('claude-code', JSON.stringify({ session_id: 's', cwd: sb.ws, hook_event_name: 'Notification', message: 'hi' }));
      expect(note?.event.opened ?? null).toBeNull();
    });
  });
});
