import type * as W from '../protocol/src/types.js';
import type { ApplyResult } from './core/plan/apply.js';
import type { Plan } from './core/plan/plan.js';
import type { PreviewFile } from './core/plan/preview.js';
import type { ChangeSet, FileChange, FileState, Turn } from './core/types.js';

/*
 * The engine's model as the JSON shapes of `protocol/src/types.ts`: the CLI's `--json` output
 * and the sidecar's results are made here, once.
 */

/** A one-line label for a change set: `Edit src/a.ts`, `Bash: sed -i …`, `changed during this turn`. */
export function setLabel(s: ChangeSet): string {
  const src = s.source;
  if (src.kind === 'turn') return 'changed during this turn';
  if (src.kind === 'replaced') return `what ${src.direction} --force of ${src.sets.map((id) => `#${id}`).join(', ')} replaced`;
  if (src.kind === 'command') {
    const cmd = src.command.replace(/\s+/g, ' ').trim();
    const short = cmd.length > 72 ? `${cmd.slice(0, 71)}…` : cmd;
    return src.tool ? `${src.tool}: ${short}` : short || 'command';
  }
  const first = s.files.find((f) => !(f.after.exists && f.after.type === 'dir') && !(f.before.exists && f.before.type === 'dir')) ?? s.files[0];
  return first ? `${src.tool} ${first.path}` : src.tool;
}

function fileSummary(f: FileChange): W.FileSummary {
  const s = f.after.exists ? f.after : f.before;
  const type = s.exists ? s.type : 'file';
  return { path: f.path, status: f.status, added: f.added, removed: f.removed, undoable: !f.gap, gap: f.gap ?? null, undone: Boolean(f.undone), type };
}

export function toSetSummary(s: ChangeSet): W.ChangeSetSummary {
  let added = 0;
  let removed = 0;
  for (const f of s.files) {
    added += f.added;
    removed += f.removed;
  }
  return { id: s.id, turn: s.turn, agent: s.agent, session: s.session, source: s.source, label: setLabel(s), state: s.state, time: s.time, added, removed, files: s.files.map(fileSummary) };
}

function wireState(s: FileState): W.FileState {
  return { ...s };
}

export function toSetDetail(s: ChangeSet): W.ChangeSetDetail {
  const sum = toSetSummary(s);
  return {
    ...sum,
    files: s.files.map((f) => ({ ...fileSummary(f), before: wireState(f.before), after: wireState(f.after) })),
    history: s.history,
  };
}

export function toTurnSummary(t: Turn): W.TurnSummary {
  return { id: t.id, seq: t.seq, agent: t.agent, session: t.session, agentTurn: t.agentTurn, label: t.label, start: t.start, end: t.end };
}

export function toPreviewResult(plan: Plan, files: PreviewFile[]): W.PreviewResult {
  return {
    direction: plan.direction,
    sets: plan.sets.map((s) => s.id),
    skipped: plan.skipped,
    files: files.map((f) => ({ path: f.path, action: f.action, conflict: f.conflict, diff: f.diff, note: f.note, gap: f.gap, sets: f.sets })),
    conflicts: files.filter((f) => f.conflict).length,
    gaps: files.filter((f) => f.gap).map((f) => f.gap!),
  };
}

export function toApplyResult(r: ApplyResult, via: (path: string) => 'disk' | 'editor' = () => 'disk'): W.ApplyResult {
  return {
    direction: r.direction,
    sets: r.sets,
    applied: r.applied.map((f) => ({ path: f.path, action: f.action, via: via(f.path) })),
    conflicts: r.conflicts.map((f) => ({ path: f.path, reason: f.conflict!.reason, detail: f.conflict!.detail })),
    gaps: r.gaps,
    skipped: r.skipped,
    written: r.written,
    forced: r.forced,
    notes: r.notes,
  };
}
