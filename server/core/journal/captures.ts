import { checkId } from '../errors.js';
import { statement } from '../statements.js';
import type { FileState, GapReason } from '../types.js';
import type { Db } from './db.js';

/**
 * A tool call begun and not yet ended. For a file tool, `files` holds each path's state kept at
 * `begin` (absolute path → state, plus the folders that did not exist yet, and why its bytes
 * were not kept when they were not: `gap`). For a command,
 * `files` is empty: the workspace snapshot is the "before".
 */
export interface PendingCapture {
  id: string;
  kind: 'files' | 'command';
  turn: string | null;
  tool: string | null;
  command: string | null;
  start: number;
  files: { path: string; state: FileState; missingDirs: string[]; gap?: GapReason }[];
  /** The agent and its session (`null` when not known). */
  agent?: string | null;
  session?: string | null;
  /**
   * For an agent that gives no tool call id (Gemini CLI): what the end of the call is matched
   * with, the tool's name and a hash of its input (`write_file:3f2a…`). Null otherwise.
   */
  pair?: string | null;
  /** Set by {@link Captures.takeByOrder}: this capture was paired with its end by order. */
  pairedBy?: 'order';
}

interface Row {
  id: string;
  kind: string;
  turn: string | null;
  tool: string | null;
  command: string | null;
  started_at: number;
  files: string;
  agent: string | null;
  session: string | null;
  pair: string | null;
}

function toPending(row: Row): PendingCapture {
  return {
    id: row.id,
    kind: row.kind as PendingCapture['kind'],
    turn: row.turn,
    tool: row.tool,
    command: row.command,
    start: row.started_at,
    files: JSON.parse(row.files) as PendingCapture['files'],
    agent: row.agent,
    session: row.session,
    pair: row.pair,
  };
}

/**
 * How long (ms) a tool call may stay begun without an end before it is taken for one whose end
 * was lost: an hour, four times the longest a command counts as running (Claude Code's Bash stops
 * at 10 minutes), so that a slow call whose end still comes is never closed under it.
 */
export const STALE_CAPTURE_MS = 60 * 60 * 1000;

/** Tool calls in flight, keyed by the caller's id (Claude Code's `tool_use_id`). */
export class Captures {
  constructor(private readonly db: Db) {}

  /** Stores a pending capture; a second `begin` with the same id replaces the first. */
  put(c: PendingCapture): void {
    checkId(c.id, 'capture id');
    statement(this.db, 'INSERT OR REPLACE INTO captures (id, kind, turn, tool, command, started_at, files, agent, session, pair) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(c.id, c.kind, c.turn, c.tool, c.command, c.start, JSON.stringify(c.files), c.agent ?? null, c.session ?? null, c.pair ?? null);
  }

  /**
   * Removes and returns the capture that an end without an id belongs to (Gemini CLI gives none):
   * among the captures of `agent`'s `session`, the oldest with the same `pair` key (tool and
   * input), else the oldest of the same tool. Null when the session has none of that tool open
   * (an end is never paired with another tool's begin). The result is marked `pairedBy: 'order'`.
   */
  takeByOrder(agent: string, session: string | null, pair: string, tool: string): PendingCapture | null {
    const rows = this.db
      .prepare('SELECT * FROM captures WHERE agent = ? AND session IS ? ORDER BY started_at, rowid')
      .all(agent, session) as Row[];
    const row = rows.find((r) => r.pair === pair) ?? rows.find((r) => r.tool === tool);
    if (!row) return null;
    this.db.prepare('DELETE FROM captures WHERE id = ?').run(row.id);
    return { ...toPending(row), pairedBy: 'order' };
  }

  /** The pending capture `id`, left in place, or null if there is none. */
  peek(id: string): PendingCapture | null {
    checkId(id, 'capture id');
    const row = statement(this.db, 'SELECT * FROM captures WHERE id = ?').get(id) as Row | undefined;
    return row ? toPending(row) : null;
  }

  /** Removes and returns the pending capture `id`, or null if there is none. */
  take(id: string): PendingCapture | null {
    checkId(id, 'capture id');
    const row = statement(this.db, 'DELETE FROM captures WHERE id = ? RETURNING *').get(id) as Row | undefined;
    return row ? toPending(row) : null;
  }

  /**
   * Removes and returns the captures of `kind` of `turn` still open, oldest first: tool calls
   * whose end never came by the time the turn ended (a failed patch, a cancelled command).
   */
  takeOpen(turn: string, kind: PendingCapture['kind']): PendingCapture[] {
    const rows = this.db.prepare('DELETE FROM captures WHERE turn = ? AND kind = ? RETURNING *').all(turn, kind) as Row[];
    return rows.map(toPending).sort((a, b) => a.start - b.start);
  }

  /** True when a capture begun before `before` (ms since the epoch) has not ended. */
  hasStale(before: number): boolean {
    return this.db.prepare('SELECT 1 FROM captures WHERE started_at < ? LIMIT 1').get(before) !== undefined;
  }

  /**
   * Removes and returns the captures begun before `before` (ms since the epoch) whose end never
   * came, oldest first: the hook process that would have ended them was killed, or its event lost.
   */
  takeStale(before: number): PendingCapture[] {
    if (!this.hasStale(before)) return [];
    const rows = this.db.prepare('DELETE FROM captures WHERE started_at < ? RETURNING *').all(before) as Row[];
    return rows.map(toPending).sort((a, b) => a.start - b.start);
  }

  /** How many captures are in flight, and how many are older than `staleMs`. */
  counts(staleMs: number, now = Date.now()): { open: number; stale: number } {
    const r = this.db
      .prepare('SELECT count(*) AS open, sum(started_at < ?) AS stale FROM captures')
      .get(now - staleMs) as { open: number; stale: number | null };
    return { open: r.open, stale: r.stale ?? 0 };
  }

  /** How many captures of `kind` (other than `except`) began after `since` (ms since the epoch) and have not ended. */
  inFlight(kind: PendingCapture['kind'], since: number, except?: string): number {
    return (
      statement(this.db, 'SELECT count(*) AS n FROM captures WHERE kind = ? AND started_at >= ? AND id IS NOT ?').get(kind, since, except ?? null) as {
        n: number;
      }
    ).n;
  }

  /** Hashes of blobs that pending captures still refer to (kept by the sweep). */
  blobRefs(): string[] {
    const out: string[] = [];
    for (const r of this.db.prepare('SELECT files FROM captures').all() as { files: string }[]) {
      for (const f of JSON.parse(r.files) as PendingCapture['files']) {
        if (f.state.exists && f.state.type === 'file' && f.state.sha256) out.push(f.state.sha256);
      }
    }
    return out;
  }
}
