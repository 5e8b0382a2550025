import { createHash } from 'node:crypto';
import { TakebackError, checkId } from '../errors.js';
import type { Turn } from '../types.js';
import { writeTxn, type Db } from './db.js';
import { statement } from '../statements.js';

interface TurnRow {
  id: string;
  seq: number;
  agent: string | null;
  session: string | null;
  label: string | null;
  started_at: number;
  ended_at: number | null;
  agent_turn: string | null;
  end_lost: number | null;
}

function toTurn(r: TurnRow): Turn {
  return { id: r.id, seq: r.seq, agent: r.agent, session: r.session, agentTurn: r.agent_turn, label: r.label, start: r.started_at, end: r.ended_at, endLost: r.end_lost === 1 };
}

/** The first line of a prompt, at most 80 characters: a turn's label. */
export function labelFromPrompt(prompt: string | undefined | null): string | null {
  if (!prompt) return null;
  const line = prompt.split(/\r?\n/).find((l) => l.trim() !== '')?.trim() ?? '';
  if (!line) return null;
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/**
 * A prompt's key (32 hex digits of the SHA-256 of its text's UTF-8 bytes): with the session it
 * names, what tells the same prompt event handled twice from another prompt when the agent gives
 * the prompt no id of its own. Null for no prompt.
 */
export function promptKey(prompt: string | null | undefined): string | null {
  if (prompt === null || prompt === undefined) return null;
  return createHash('sha256').update(prompt, 'utf8').digest('hex').slice(0, 32);
}

/** Turns: begun by a prompt, ended when the agent stops. */
export class Turns {
  constructor(private readonly db: Db) {}

  /**
   * Begins a turn. `id` defaults to `t<seq>`. A session's previous turn still open is ended
   * first (an agent killed before its Stop hook never ends its turn otherwise). `promptKey`: the
   * key of the prompt that began it ({@link promptKey}), kept for {@link twinOf}.
   */
  begin(opts: { id?: string; agent?: string | null; session?: string | null; agentTurn?: string | null; label?: string | null; promptKey?: string | null; now?: number }): Turn {
    if (opts.id !== undefined) checkId(opts.id, 'turn id');
    const now = opts.now ?? Date.now();
    return writeTxn(this.db, () => {
      if (opts.session) {
        this.db.prepare('UPDATE turns SET ended_at = ? WHERE ended_at IS NULL AND session = ?').run(now, opts.session);
      }
      const seq = ((this.db.prepare('SELECT max(seq) AS m FROM turns').get() as { m: number | null }).m ?? 0) + 1;
      const id = opts.id ?? `t${seq}`;
      if (this.db.prepare('SELECT 1 FROM turns WHERE id = ?').get(id)) {
        throw new TakebackError('usage', `turn ${id} already exists`, { id });
      }
      this.db
        .prepare('INSERT INTO turns (id, seq, agent, session, agent_turn, label, started_at, prompt_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
        .run(id, seq, opts.agent ?? null, opts.session ?? null, opts.agentTurn ?? null, opts.label ?? null, now, opts.promptKey ?? null);
      return {
        id,
        seq,
        agent: opts.agent ?? null,
        session: opts.session ?? null,
        agentTurn: opts.agentTurn ?? null,
        label: opts.label ?? null,
        start: now,
        end: null,
        endLost: false,
      };
    });
  }

  /** Marks turn `id` ended. Ending an ended turn changes nothing. */
  end(id: string, now = Date.now()): void {
    this.db.prepare('UPDATE turns SET ended_at = ? WHERE id = ? AND ended_at IS NULL').run(now, id);
  }

  /**
   * Marks turn `id` ended at `at` (ms since the epoch), its end never heard: see
   * {@link Turn.endLost}. Ending an ended turn changes nothing.
   */
  endLost(id: string, at: number): void {
    this.db.prepare('UPDATE turns SET ended_at = ?, end_lost = 1 WHERE id = ? AND ended_at IS NULL').run(at, id);
  }

  /**
   * The open turns of an agent's session with nothing heard of them since `before` (ms since the
   * epoch), oldest first, each with the time of its last event (`last`: its begin, its newest
   * change set, its newest tool call still in flight): no change set recorded and no tool call
   * begun since. Their end was lost (the agent killed, its stop event never sent). A turn of no
   * session (a script's `takeback turn begin`) is ended by its script, however long it takes:
   * among them only with `scripts`.
   */
  quietSince(before: number, opts: { scripts?: boolean } = {}): { turn: Turn; last: number }[] {
    const rows = this.db
      .prepare(
        `SELECT t.*, max(t.started_at,
             coalesce((SELECT max(s.created_at) FROM sets s WHERE s.turn = t.id), 0),
             coalesce((SELECT max(c.started_at) FROM captures c WHERE c.turn = t.id), 0)) AS last
           FROM turns t WHERE t.ended_at IS NULL ${opts.scripts ? '' : 'AND t.session IS NOT NULL'} AND t.started_at < ?
           AND NOT EXISTS (SELECT 1 FROM sets s WHERE s.turn = t.id AND s.created_at >= ?)
           AND NOT EXISTS (SELECT 1 FROM captures c WHERE c.turn = t.id AND c.started_at >= ?)
         ORDER BY t.seq`,
      )
      .all(before, before, before) as (TurnRow & { last: number })[];
    return rows.map((r) => ({ turn: toTurn(r), last: r.last }));
  }

  /** The turns closed with their end never heard ({@link Turn.endLost}), newest first, at most `limit`, and how many there are. */
  endedLost(limit: number): { turns: Turn[]; count: number } {
    const rows = this.db.prepare('SELECT * FROM turns WHERE end_lost = 1 ORDER BY seq DESC LIMIT ?').all(limit) as TurnRow[];
    const { n } = this.db.prepare('SELECT count(*) AS n FROM turns WHERE end_lost = 1').get() as { n: number };
    return { turns: rows.map(toTurn), count: n };
  }

  /** The open turn of `session` (or, without a session, the newest open turn), if any. */
  open(session?: string | null): Turn | null {
    const row = (
      session
        ? statement(this.db, 'SELECT * FROM turns WHERE ended_at IS NULL AND session = ? ORDER BY seq DESC LIMIT 1').get(session)
        : statement(this.db, 'SELECT * FROM turns WHERE ended_at IS NULL ORDER BY seq DESC LIMIT 1').get()
    ) as TurnRow | undefined;
    return row ? toTurn(row) : null;
  }

  /**
   * The turn a tool call of `session` belongs to: the session's open turn, else the newest open
   * turn that belongs to no session (one a script began), else none. Never another session's
   * turn: two agents at work in one folder keep their tool calls apart, and a command of no
   * session (the person's `takeback run`) never joins an agent's turn — one left open by an
   * agent that failed before it could end it would otherwise take the person's work as its own.
   */
  forSession(session: string | null | undefined): Turn | null {
    const own = session ? this.open(session) : null;
    if (own) return own;
    const row = statement(this.db, 'SELECT * FROM turns WHERE ended_at IS NULL AND session IS NULL ORDER BY seq DESC LIMIT 1').get() as TurnRow | undefined;
    return row ? toTurn(row) : null;
  }

  /**
   * The turn a prompt event of `session` with key `key` ({@link promptKey}) began already, when
   * it is that same event handled a second time: the session's open turn, begun by a prompt of
   * that key, with nothing in it yet (no tool call open, no change set). Null otherwise.
   *
   * For an agent that gives its prompts no id of their own (Claude Code's `prompt_id` can be
   * absent): Claude Code sends each event to its http hook and to the command hook beside it at
   * once and waits for both before it goes on, so while a capture daemon starts both can record
   * the same prompt, the second finding the turn as the first left it. A person who sends the
   * same prompt again into a turn that holds nothing (the first one stopped at once) gets one
   * turn for the two: nothing was recorded that could be given to the wrong one.
   */
  twinOf(session: string, key: string): Turn | null {
    const row = this.db
      .prepare(
        `SELECT t.* FROM turns t WHERE t.ended_at IS NULL AND t.session = ? AND t.prompt_key = ?
           AND NOT EXISTS (SELECT 1 FROM sets s WHERE s.turn = t.id)
           AND NOT EXISTS (SELECT 1 FROM captures c WHERE c.turn = t.id)
         ORDER BY t.seq DESC LIMIT 1`,
      )
      .get(session, key) as TurnRow | undefined;
    return row ? toTurn(row) : null;
  }

  /** The turn an agent knows as `agentTurn` in `session` (Codex's `turn_id`), if any. */
  byAgentTurn(session: string | null, agentTurn: string): Turn | null {
    const row = this.db
      .prepare('SELECT * FROM turns WHERE agent_turn = ? AND (session IS ? OR ? IS NULL) ORDER BY seq DESC LIMIT 1')
      .get(agentTurn, session, session) as TurnRow | undefined;
    return row ? toTurn(row) : null;
  }

  /**
   * Finds a turn by id, or by its number when `ref` is all digits and no turn has that id
   * (`--turn 2` means turn `t2`). Throws `invalid-id` or `not-found`.
   */
  get(ref: string): Turn {
    checkId(ref, 'turn id');
    let row = this.db.prepare('SELECT * FROM turns WHERE id = ?').get(ref) as TurnRow | undefined;
    if (!row && /^\d+$/.test(ref)) row = this.db.prepare('SELECT * FROM turns WHERE seq = ?').get(Number(ref)) as TurnRow | undefined;
    if (!row) throw new TakebackError('not-found', `no turn ${ref}`, { id: ref });
    return toTurn(row);
  }

  /** Every turn (of `agent`, when given), oldest first. */
  all(agent?: string): Turn[] {
    const rows = agent === undefined ? this.db.prepare('SELECT * FROM turns ORDER BY seq').all() : this.db.prepare('SELECT * FROM turns WHERE agent = ? ORDER BY seq').all(agent);
    return (rows as TurnRow[]).map(toTurn);
  }

  /** How many turns there are (of `agent`, when given). */
  count(agent?: string): number {
    const r = (agent === undefined ? this.db.prepare('SELECT count(*) AS n FROM turns').get() : this.db.prepare('SELECT count(*) AS n FROM turns WHERE agent = ?').get(agent)) as { n: number };
    return r.n;
  }

  /** The newest `limit` turns (of `agent`, when given), oldest first: `list` reads only those. */
  newest(limit: number, agent?: string): Turn[] {
    const rows =
      agent === undefined
        ? this.db.prepare('SELECT * FROM turns ORDER BY seq DESC LIMIT ?').all(limit)
        : this.db.prepare('SELECT * FROM turns WHERE agent = ? ORDER BY seq DESC LIMIT ?').all(agent, limit);
    return (rows as TurnRow[]).map(toTurn).reverse();
  }
}
