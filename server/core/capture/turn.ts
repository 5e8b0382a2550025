import type { Engine } from '../engine.js';
import { entryState } from '../scan/scan.js';
import { isSecretPath } from '../secrets.js';
import type { ChangeSet, FileChange, Turn } from '../types.js';
import { makeChange } from './changes.js';
import { endFiles } from './files.js';
import { scanAndCommit } from './scan-commit.js';

/**
 * A turn begins (a prompt was submitted). The session's previous turn, if still open, is ended
 * first. The workspace snapshot is brought up to date without blaming anyone: what changed
 * between turns is the user's. Call inside a write transaction.
 */
export function beginTurn(
  engine: Engine,
  opts: { id?: string; agent?: string | null; session?: string | null; agentTurn?: string | null; label?: string | null; now?: number },
): { turn: Turn; closed: ChangeSet | null } {
  const { journal } = engine;
  const stale = opts.session ? journal.turns.open(opts.session) : null;
  const closed = stale ? endTurn(engine, stale.id).set : null;
  scanAndCommit(engine);
  const turn = journal.turns.begin(opts);
  return { turn, closed };
}

/**
 * A turn ends (the agent stopped). File tool calls of the turn still open are ended (their sets
 * recorded). Scans once more; what changed during the turn that no tool call of the turn claimed
 * is recorded as its own set ("changed during this turn"). Call inside a write transaction.
 */
export function endTurn(engine: Engine, turnId: string, now?: number): { set: ChangeSet | null } {
  const { journal } = engine;
  // A file tool whose end never came (a patch that failed part-way: Codex sends no PostToolUse)
  // still changed what it changed: its set is recorded now, as its own.
  for (const pending of journal.captures.takeOpenFiles(turnId)) endFiles(engine, pending);
  const outcome = scanAndCommit(engine);
  if (outcome.status === 'ok' && outcome.changes.length > 0) {
    journal.drift.add(
      turnId,
      outcome.changes.map((c) => ({ path: c.path, before: entryState(c.before), after: entryState(c.after) })),
    );
  }
  const drift = journal.drift.take(turnId);
  const claimed = new Set<string>();
  for (const s of journal.sets.list({ turn: turnId })) for (const f of s.files) claimed.add(f.path);
  const files: FileChange[] = [];
  for (const d of drift) {
    if (claimed.has(d.path)) continue;
    const unkept = (x: typeof d.before) => x.exists && x.type === 'file' && x.sha256 === null;
    const gap = unkept(d.before) || unkept(d.after) ? (isSecretPath(d.path) ? 'secret' : 'too-large') : undefined;
    const c = makeChange(journal.blobs, d.path, d.before, d.after, gap);
    if (c) files.push(c);
  }
  const set = journal.sets.add({ turn: turnId, source: { kind: 'turn' }, files, now });
  journal.turns.end(turnId, now);
  return { set };
}
