// Claude Code hook events as the tests of the capture path send them, and the journal moved back
// in time, for the cases about what a start does with what was left long ago.

import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import type { Sandbox } from './takeback.js';

/** An hour, in ms. */
export const HOUR = 60 * 60 * 1000;

/** A hook event named `name` of `session` in the sandbox's workspace, with `extra` fields. */
export function hookEvent(sb: Sandbox, name: string, extra: Record<string, unknown> = {}, session = 'sess-1'): Record<string, unknown> {
  return { hook_event_name: name, session_id: session, cwd: sb.ws, ...extra };
}

/** Runs `takeback hook claude-code` with `ev` and checks what every hook must do: exit 0, not killed, nothing on stdout. */
export function hookOk(sb: Sandbox, ev: unknown): void {
  const r = sb.hook(ev, { timeout: 25_000 });
  expect(r.signal, JSON.stringify(ev)).toBeNull();
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe('');
}

/** Moves every time the sandbox's journal holds `ms` into the past, as if it had all happened that long ago. */
export function ageJournal(sb: Sandbox, ms: number): void {
  const db = new Database(path.join(sb.journalDir(), 'journal.db'), { timeout: 20_000 });
  try {
    db.prepare('UPDATE turns SET started_at = started_at - ?, ended_at = ended_at - ?').run(ms, ms);
    db.prepare('UPDATE captures SET started_at = started_at - ?').run(ms);
    db.prepare('UPDATE sets SET created_at = created_at - ?').run(ms);
  } finally {
    db.close();
  }
}
