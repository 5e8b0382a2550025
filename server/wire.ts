import type * as W from '../protocol/src/types.js';
import type { CommandScan } from './core/capture/command.js';
import type { ApplyResult } from './core/plan/apply.js';
import type { Action, Conflict, Plan } from './core/plan/plan.js';
import type { ChangeHunk } from './core/plan/hunks.js';
import type { LineRange } from './core/plan/merge.js';
import type { LineSpan, PreviewFile } from './core/plan/preview.js';
import type * as D from './core/types.js';
import type { ChangeSet, FileChange, FileState, Turn } from './core/types.js';
import { findRenames } from './core/renames.js';

/*
 * The engine's model as the JSON shapes of `protocol/src/types.ts`: the CLI's `--json` output
 * and the sidecar's results are made here, once. The engine (server/core) and the services
 * (server/service) import nothing of the protocol: they name the wire's shapes through the
 * re-exports below.
 */

export type {
  ApplyResult as WireApplyResult,
  CaptureBeginResult,
  CaptureEndResult,
  CaptureStatus,
  ChangeSetDetail,
  ChangeSetSummary,
  ListResult,
  PreviewResult,
  TurnBeginResult,
  TurnEndResult,
  TurnSummary,
} from '../protocol/src/types.js';

/**
 * True when A and B are the same type: the compiler's identity, stricter than assignability both
 * ways (which takes `{ a?: string }` and `{ a?: string; b?: number }` as equal).
 */
export type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Compiles only for `true`. */
export type Holds<T extends true> = T;

/**
 * The vocabulary the engine and the wire both name, held equal by the compiler: a value added to
 * or dropped from one side and not the other fails `tsc` here, so the wire never carries a word
 * the engine does not know, nor the reverse.
 */
export type VocabularyChecks = [
  Holds<Same<D.FileType, W.FileType>>,
  Holds<Same<D.GapReason, W.GapReason>>,
  Holds<Same<D.CaptureGap, W.CaptureGap>>,
  Holds<Same<D.ChangeStatus, W.ChangeStatus>>,
  Holds<Same<D.ChangeSource, W.ChangeSource>>,
  Holds<Same<D.SourceKind, W.ChangeSource['kind']>>,
  Holds<Same<D.SetState, W.SetState>>,
  Holds<Same<D.HistoryEntry, W.HistoryEntry>>,
  Holds<Same<D.HistoryEntry['action'], W.HistoryEntry['action']>>,
  Holds<Same<Turn, W.TurnSummary>>,
  Holds<Same<Action, W.Action>>,
  Holds<Same<Conflict, W.Conflict>>,
  Holds<Same<Conflict['reason'], W.Conflict['reason']>>,
  Holds<Same<PreviewFile, W.PreviewFile>>,
  Holds<Same<LineSpan, W.LineSpan>>,
  Holds<Same<CommandScan, W.CaptureScan>>,
  Holds<Same<CommandScan['status'], W.CaptureScan['status']>>,
  Holds<Same<Plan['direction'], W.PreviewResult['direction']>>,
  Holds<Same<ApplyResult['direction'], W.ApplyResult['direction']>>,
];

/** A one-line label for a change set: `Edit src/a.ts`, `Bash: sed -i …`, `changed during this turn`, `saved in Helix`. */
export function setLabel(s: ChangeSet): string {
  const src = s.source;
  if (src.kind === 'turn') return 'changed during this turn';
  if (src.kind === 'person') return `saved in ${src.editor}`;
  if (src.kind === 'replaced') return `what ${src.direction} --force of ${src.sets.map((id) => `#${id}`).join(', ')} replaced`;
  if (src.kind === 'command') {
    const cmd = src.command.replace(/\s+/g, ' ').trim();
    const short = cmd.length > 72 ? `${cmd.slice(0, 71)}…` : cmd;
    return src.tool ? `${src.tool}: ${short}` : short || 'command';
  }
  const first = s.files.find((f) => !(f.after.exists && f.after.type === 'dir') && !(f.before.exists && f.before.type === 'dir')) ?? s.files[0];
  return first ? `${src.tool} ${first.path}` : src.tool;
}

/** A path's summary; `rename`, when the path is either half of a rename (core/renames.ts), names the other half. */
function fileSummary(f: FileChange, rename?: { renamedFrom: string } | { renamedTo: string }): W.FileSummary {
  const s = f.after.exists ? f.after : f.before;
  const type = s.exists ? s.type : 'file';
  const state = fileState(f);
  const lines = rename ? { added: 0, removed: 0, ...rename } : { added: f.added, removed: f.removed };
  return { path: f.path, status: f.status, ...lines, undoable: !f.gap, gap: f.gap ?? null, undone: Boolean(f.undone), ...(f.partial ? { partial: true } : {}), state, type };
}

function fileState(f: FileChange): W.FileChangeState {
  return f.state ?? (f.partial ? 'partial' : f.undone ? 'undone' : 'applied');
}

/**
 * Each file of `s` summed up, a rename's two paths linked to each other — while both halves are
 * in the same state (one half undone on its own is two changes again).
 */
function fileSummaries(s: ChangeSet): W.FileSummary[] {
  const from = findRenames(s.files);
  if (from.size > 0) {
    const byPath = new Map(s.files.map((f) => [f.path, f]));
    for (const [n, o] of [...from]) if (fileState(byPath.get(n)!) !== fileState(byPath.get(o)!)) from.delete(n);
  }
  if (from.size === 0) return s.files.map((f) => fileSummary(f));
  const to = new Map([...from].map(([n, o]) => [o, n]));
  return s.files.map((f) => {
    const o = from.get(f.path);
    const n = to.get(f.path);
    return fileSummary(f, o !== undefined ? { renamedFrom: o } : n !== undefined ? { renamedTo: n } : undefined);
  });
}

/** A change set as `changes/list` and `takeback list --json` give it: its files summed up, with a label. */
export function toSetSummary(s: ChangeSet): W.ChangeSetSummary {
  const files = fileSummaries(s);
  let added = 0;
  let removed = 0;
  for (const f of files) {
    added += f.added;
    removed += f.removed;
  }
  return {
    id: s.id,
    turn: s.turn,
    agent: s.agent,
    session: s.session,
    source: s.source,
    label: setLabel(s),
    state: s.state,
    time: s.time,
    added,
    removed,
    files,
  };
}

function wireState(s: FileState): W.FileState {
  return { ...s };
}

/** A change set in full (`changes/show`, `takeback show --json`): each file's states before and after, and the history. */
export function toSetDetail(s: ChangeSet): W.ChangeSetDetail {
  const sum = toSetSummary(s);
  return {
    ...sum,
    files: sum.files.map((f, i) => ({ ...f, before: wireState(s.files[i]!.before), after: wireState(s.files[i]!.after) })),
    history: s.history,
  };
}

/** A line range (`end < start`: none, the place just before `start`) as the wire's span: its first line and how many. */
function toLineSpan(r: LineRange): W.LineSpan {
  return { start: r.start, lines: Math.max(0, r.end - r.start + 1) };
}

/** A hunk of a change placed in the file now, as `changes/list` gives it with `hunks`. */
export function toFileHunk(h: ChangeHunk): W.FileHunk {
  return { before: toLineSpan(h.before), after: toLineSpan(h.after), now: h.now ? toLineSpan(h.now) : null };
}

/** A turn as the wire gives it. */
export function toTurnSummary(t: Turn): W.TurnSummary {
  return { id: t.id, seq: t.seq, agent: t.agent, session: t.session, agentTurn: t.agentTurn, label: t.label, start: t.start, end: t.end, endLost: t.endLost };
}

/** A preview (`undo/preview`, `takeback preview --json`): the plan's direction and sets, each file's diff, the conflicts and gaps counted. */
export function toPreviewResult(plan: Plan, files: PreviewFile[]): W.PreviewResult {
  return {
    direction: plan.direction,
    sets: plan.sets.map((s) => s.id),
    skipped: plan.skipped,
    files: files.map((f) => ({
      path: f.path,
      action: f.action,
      conflict: f.conflict,
      diff: f.diff,
      note: f.note,
      gap: f.gap,
      sets: f.sets,
      ...(f.merged ? { merged: true } : {}),
      ...(f.hunks ? { hunks: f.hunks } : {}),
    })),
    conflicts: files.filter((f) => f.conflict).length,
    gaps: files.filter((f) => f.gap).map((f) => f.gap!),
  };
}

/** The outcome of an undo or redo written by takeback itself (every path `via: 'disk'`). */
export function toApplyResult(r: ApplyResult): W.ApplyResult {
  return {
    direction: r.direction,
    sets: r.sets,
    applied: r.applied.map((f) => toAppliedFile(f, 'disk')),
    conflicts: r.conflicts.map(toConflictFile),
    gaps: r.gaps,
    skipped: r.skipped,
    written: r.written,
    forced: r.forced,
    complete: r.gaps.length === 0,
    notes: r.notes,
  };
}

/** A path an undo or redo wrote (or found in place), and where it landed. */
export function toAppliedFile(f: { path: string; action: Action; merged?: Buffer | null }, via: 'disk' | 'editor'): W.AppliedFile {
  return { path: f.path, action: f.action, via, ...(f.merged ? { merged: true } : {}) };
}

/** A path that conflicts, as the wire gives it. Its `conflict` is set (the planner's conflicts all are). */
export function toConflictFile(f: { path: string; conflict: Conflict | null }): W.ConflictFile {
  const c = f.conflict!;
  return { path: f.path, reason: c.reason, detail: c.detail, ...(c.combined ? { combined: c.combined } : {}) };
}
