import type * as W from '../../protocol/src/types.js';
import { UNCLAIMED_REASON } from '../core/plan/select.js';
import type { GcReport } from '../core/gc/sweep.js';
import { NO_AGENT_HOOKED, type DoctorReport } from './doctor-report.js';
import type { ChangeFileDiff } from '../service/change-diff.js';
import { plural, takesBackHint } from '../service/text.js';
import { painter, type Style } from './style.js';

/*
 * Human output of the command line. `--json` prints the protocol's shapes instead (README.md).
 */

type Paint = (style: Style, text: string) => string;

const MINUS = '\u2212'; // − as in "+24 −7"

function counts(p: Paint, added: number, removed: number): string {
  return `${p('green', `+${added}`)} ${p('red', `${MINUS}${removed}`)}`;
}

/**
 * A path as the human output shows it: as it is, or — when it holds a control character (a
 * newline or a tab in a file name would break the layout) — quoted with JSON's escapes
 * (`"new\nline.txt"`), as git quotes such names.
 */
function shownPath(path: string): string {
  return /[\u0000-\u001f\u007f]/.test(path) ? JSON.stringify(path) : path;
}

function time(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

const MARK: Record<W.ChangeStatus, string> = { created: 'created', deleted: 'deleted', modified: '', mode: 'mode', type: 'type changed' };

/** `3 files changed +24 −7` (folders made or removed on the way are not counted). */
export function setHeadline(s: W.ChangeSetSummary, p: Paint = painter(false)): string {
  // A rename is one file changed, as in git's diffstat: its deleted half is not counted.
  const files = s.files.filter((f) => f.type !== 'dir' && f.renamedTo === undefined);
  if (files.length === 0) return `${plural(s.files.length, 'folder')} changed`;
  return `${plural(files.length, 'file')} changed ${counts(p, s.added, s.removed)}`;
}

/** True when the set's tool call was matched with its end by order (the agent gives no id). */
function pairedByOrder(src: W.ChangeSource): boolean {
  return (src.kind === 'tool' || src.kind === 'command') && src.pairedBy === 'order';
}

function renderSet(s: W.ChangeSetSummary, p: Paint, turnAgent: string | null): string[] {
  const state = s.state === 'applied' ? '' : p('yellow', ` [${s.state}]`);
  // The agent is named on the turn's line; a set's own only when it differs (or has no turn).
  const agent = s.agent && s.agent !== turnAgent ? p('dim', ` · ${s.agent}`) : '';
  const paired = pairedByOrder(s.source) ? p('dim', ' (paired by order)') : '';
  const lines = [`  ${p('bold', `#${s.id}`)}  ${s.label}  ${p('dim', setHeadline(s, p))}${agent}${paired}${state}`];
  if (s.state === 'expired') return lines;
  const shownFiles = s.files.filter((f) => f.renamedTo === undefined);
  // Folders made or removed on the way are left out beside files, but not one with a capture gap
  // (a skipped folder a command changed): what an undo leaves as it is is always named.
  const files = shownFiles.some((f) => f.type !== 'dir') ? shownFiles.filter((f) => f.type !== 'dir' || f.gap) : shownFiles;
  // A long set shows its first files; a file with a capture gap is always shown.
  const shown = files.length <= LIST_FILES_MAX ? files : files.filter((f, i) => i < LIST_FILES_MAX - 1 || f.gap);
  for (const f of shown) {
    const mark = MARK[f.status] ? ` ${p(f.status === 'deleted' ? 'red' : f.status === 'created' ? 'green' : 'cyan', `(${MARK[f.status]})`)}` : '';
    const gap = f.gap ? ` ${p('yellow', `[gap: ${f.gap}]`)}` : '';
    const undone =
      f.state === 'overwritten'
        ? ` ${p('yellow', '[no longer in place]')}`
        : f.partial
          ? ` ${p('yellow', '[partly undone]')}`
          : s.state === 'partial' && f.undone
            ? ` ${p('yellow', '[undone]')}`
            : '';
    if (f.renamedFrom !== undefined) {
      lines.push(`        ${shownPath(f.renamedFrom)} → ${shownPath(f.path)}  ${p('cyan', '(renamed)')}${undone}`);
      continue;
    }
    lines.push(`        ${shownPath(f.path)}  ${counts(p, f.added, f.removed)}${mark}${gap}${undone}${f.hunks ? hunksText(f.hunks, p) : ''}`);
  }
  const hidden = files.length - shown.length;
  if (hidden > 0) lines.push(p('dim', `        … ${plural(hidden, 'more file')}: takeback show ${s.id}`));
  return lines;
}

/**
 * `list --hunks PATH`: where the change's hunks of that file are now, as `--lines` takes them
 * (` · hunks at lines 5, 17-18`, ` · hunk at lines 3-5`, ` · hunk at line 5`; a hunk that only took
 * lines out as the line after its place),
 * and how many are no longer there.
 */
function hunksText(hunks: W.FileHunk[], p: Paint): string {
  const at = hunks.flatMap((h) => (h.now ? [h.now.lines <= 1 ? `${h.now.start}` : `${h.now.start}-${h.now.start + h.now.lines - 1}`] : []));
  const gone = hunks.length - at.length;
  const place = at.length > 0 ? ` · ${at.length > 1 ? 'hunks at lines' : at[0]!.includes('-') ? 'hunk at lines' : 'hunk at line'} ${at.join(', ')}` : '';
  return place + (gone > 0 ? p('dim', ` · ${plural(gone, 'hunk')} no longer in place`) : '');
}

/** At most this many files of a set are listed by `takeback list` (`show` lists them all). */
const LIST_FILES_MAX = 10;

/** A baseline made in the background, in one line: `baseline: 48,000 of 200,000 files kept …`. */
function baselineLine(b: { kept: number; files: number }): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `baseline: ${n(b.kept)} of ${n(b.files)} files kept, the rest in the background (a command's change to a file not yet kept is a capture gap)`;
}

/** `takeback list`: sets grouped by turn, newest first. */
export function renderList(r: W.ListResult, color: boolean, filter: { agent?: string; agents?: string[] } = {}): string {
  const p = painter(color);
  const out: string[] = [];
  if (!r.capture.commands) out.push(p('yellow', `! commands are not captured here: ${r.capture.reason}`), '');
  if (r.capture.baseline) out.push(p('yellow', `! ${baselineLine(r.capture.baseline)}`), '');
  if (r.sets.length === 0) {
    if (filter.agent !== undefined) {
      const known = filter.agents && filter.agents.length > 0 ? ` (agents with changes here: ${filter.agents.join(', ')})` : '';
      out.push(`No changes by ${filter.agent} in this workspace${known}.`);
    } else out.push('No changes recorded in this workspace yet.');
    return `${out.join('\n')}\n`;
  }
  const turns = new Map(r.turns.map((t) => [t.id, t]));
  let current: string | null | undefined;
  // A turn whose sets another's (a person's save) came between is headed again, shortly.
  const headed = new Set<string>();
  for (const s of r.sets) {
    if (s.turn !== current) {
      current = s.turn;
      if (out.length) out.push('');
      const t = s.turn ? turns.get(s.turn) : undefined;
      if (t && headed.has(t.id)) {
        out.push(p('bold', `Turn ${t.id}`) + p('dim', ' (continued)'));
      } else if (t) {
        headed.add(t.id);
        const label = t.label ? ` · "${t.label}"` : '';
        // The session, shortened: two sessions of one agent in one folder are told apart.
        const session = t.session ? p('dim', ` (session ${t.session.length > 8 ? t.session.slice(0, 8) : t.session})`) : '';
        const agent = t.agent ? ` · ${t.agent}${session}` : '';
        const open = t.end === null ? p('yellow', ' · in progress') : t.endLost ? p('yellow', ' · ended without its end event') : '';
        out.push(p('bold', `Turn ${t.id}`) + `${label}${agent} · ${time(t.start)}${open}`);
      } else {
        out.push(p('bold', s.turn ? `Turn ${s.turn}` : 'Outside any turn'));
      }
    }
    out.push(...renderSet(s, p, (s.turn ? turns.get(s.turn)?.agent : null) ?? null));
  }
  if (r.omittedTurns > 0) out.push('', p('dim', `${r.omittedTurns} older ${r.omittedTurns === 1 ? 'turn' : 'turns'} not shown: takeback list --all`));
  return `${out.join('\n')}\n`;
}

function stateText(s: W.FileState): string {
  if (!s.exists) return 'absent';
  const mode = s.mode !== undefined ? ` 0${s.mode.toString(8)}` : '';
  if (s.type === 'symlink') return `link → ${s.target}${mode}`;
  if (s.type === 'dir') return `folder${mode}`;
  return `${s.size} bytes${mode} ${s.sha256 ? s.sha256.slice(0, 12) : '(not kept)'}`;
}

/**
 * `takeback show ID`: the set's header, then per path its counts, states before and after, and —
 * given `diffs` (service/change-diff.ts) — what the agent did to it as a forward diff; a rename
 * is one entry ("old → new"). Then the set's history.
 */
export function renderShow(s: W.ChangeSetDetail, color: boolean, diffs?: readonly ChangeFileDiff[]): string {
  const p = painter(color);
  const out = [
    `${p('bold', `Change ${s.id}`)}  ${s.label}  [${s.state}]`,
    `turn ${s.turn ?? '-'}${s.agent ? ` · ${s.agent}` : ''} · ${time(s.time)} · ${setHeadline(s, p)}${
      pairedByOrder(s.source) ? ' · paired by order (the agent gives no tool call id)' : ''
    }`,
    '',
  ];
  const byPath = new Map(diffs?.map((d) => [d.path, d]));
  const renamedAway = new Set(diffs?.flatMap((d) => (d.renamedFrom === undefined ? [] : [d.renamedFrom])));
  for (const f of s.files) {
    if (renamedAway.has(f.path)) continue;
    const d = byPath.get(f.path);
    if (d?.renamedFrom !== undefined) {
      out.push(`  ${shownPath(d.renamedFrom)} → ${shownPath(f.path)}  (renamed, same bytes)`, p('dim', `      ${stateText(f.after)}`));
      continue;
    }
    out.push(`  ${shownPath(f.path)}  ${counts(p, f.added, f.removed)}  (${f.status})${f.gap ? p('yellow', ` [gap: ${f.gap}]`) : ''}`);
    out.push(p('dim', `      before: ${stateText(f.before)}`), p('dim', `      after:  ${stateText(f.after)}`));
    if (d?.note) out.push(p('dim', `      (${d.note})`));
    if (d?.diff) out.push(color ? colorDiff(chomp(d.diff), p) : chomp(d.diff), '');
  }
  out.push('', 'history:');
  for (const h of s.history) out.push(`  ${time(h.time)}  ${h.action}${h.forced ? ' (replacing later changes)' : ''}`);
  return `${out.join('\n')}\n`;
}

/** Width of the widest `+++---` bar of {@link renderStat}, in columns. */
const STAT_BAR = 40;

/**
 * `takeback show ID --stat`: git's diffstat — a line a path with its lines added and removed as a
 * bar of `+` and `-` (scaled to {@link STAT_BAR} columns when larger), `Bin 3 -> 5 bytes` for binary files,
 * `old => new` for a rename; then `N files changed, X insertions(+), Y deletions(-)`.
 */
export function renderStat(s: W.ChangeSetDetail, color: boolean, diffs: readonly ChangeFileDiff[]): string {
  const p = painter(color);
  const files = new Map(s.files.map((f) => [f.path, f]));
  // Folders made or removed on the way are not counted, as in the headline.
  const isFolder = (f: W.FileDetail | undefined) => (f?.after.exists ? f.after.type === 'dir' : f?.before.exists === true && f.before.type === 'dir');
  const rows = diffs.filter((d) => !isFolder(files.get(d.path))).map((d) => {
    const f = files.get(d.path);
    const added = d.renamedFrom === undefined ? (f?.added ?? 0) : 0;
    const removed = d.renamedFrom === undefined ? (f?.removed ?? 0) : 0;
    const name = d.renamedFrom === undefined ? shownPath(d.path) : `${shownPath(d.renamedFrom)} => ${shownPath(d.path)}`;
    const size = (st: W.FileState | undefined) => (st?.exists && st.type === 'file' ? st.size : 0);
    const binary = d.note?.includes('binary') ? `Bin ${size(f?.before)} -> ${size(f?.after)} bytes` : null;
    return { name, added, removed, binary };
  });
  const width = Math.max(0, ...rows.map((r) => r.name.length));
  const most = Math.max(0, ...rows.map((r) => r.added + r.removed));
  const digits = String(most).length;
  const scale = most > STAT_BAR ? STAT_BAR / most : 1;
  const bar = (n: number) => (n === 0 ? 0 : Math.max(1, Math.round(n * scale)));
  const out = rows.map((r) => {
    const count = r.binary ?? String(r.added + r.removed).padStart(digits);
    const graph = r.binary ? '' : ` ${p('green', '+'.repeat(bar(r.added)))}${p('red', '-'.repeat(bar(r.removed)))}`;
    return ` ${r.name.padEnd(width)} | ${count}${graph}`.trimEnd();
  });
  const added = rows.reduce((n, r) => n + r.added, 0);
  const removed = rows.reduce((n, r) => n + r.removed, 0);
  const parts = [`${plural(rows.length, 'file')} changed`];
  if (added > 0 || removed === 0) parts.push(`${added} insertion${added === 1 ? '' : 's'}(+)`);
  if (removed > 0 || added === 0) parts.push(`${removed} deletion${removed === 1 ? '' : 's'}(-)`);
  out.push(` ${parts.join(', ')}`);
  return `${out.join('\n')}\n`;
}

const ACTION_TEXT: Record<W.Action, string> = {
  'put-back': 'put back',
  remove: 'remove (the agent created it)',
  'bring-back': 'bring back (the agent deleted it)',
  'restore-mode': 'restore mode',
  'restore-link': 'restore link',
  none: 'already in place',
};

/** What a redo does to a path, by the same action names (it goes the other way: back to what the change made). */
const REDO_TEXT: Record<W.Action, string> = {
  'put-back': 'write again as it was before the undo',
  remove: 'remove again (as the change did)',
  'bring-back': 'create again (as the change did)',
  'restore-mode': 'mode as the change set it',
  'restore-link': 'link as the change made it',
  none: 'already in place',
};

/** What a merged write is called (the change taken back, or made again, over later edits that stay). */
const MERGED_TEXT = { undo: 'put back, keeping later changes', redo: 'write again as the change left it, keeping later changes' } as const;

function actionText(a: W.Action, direction: 'undo' | 'redo', merged = false): string {
  if (merged && a !== 'none') return MERGED_TEXT[direction];
  return direction === 'redo' ? REDO_TEXT[a] : ACTION_TEXT[a];
}

/** A diff without its final newlines (the layout adds its own); a line's own `\r` stays, as the file has it. */
function chomp(diff: string): string {
  return diff.replace(/\n+$/, '');
}

function colorDiff(diff: string, p: Paint): string {
  return diff
    .split('\n')
    .map((l) => (l.startsWith('+') && !l.startsWith('+++') ? p('green', l) : l.startsWith('-') && !l.startsWith('---') ? p('red', l) : l.startsWith('@@') ? p('cyan', l) : l))
    .join('\n');
}

/**
 * The lines that name the sets a turn's selector left as they are (a turn's edits no tool call
 * claimed, the person's saves), with how to take the first kind too.
 */
function leftOutLines(r: { skipped: { id: string; reason: string }[] }): string[] {
  return r.skipped
    .filter((s) => s.reason.startsWith('left as they are'))
    .map((s) => `#${s.id} ${s.reason}${s.reason === UNCLAIMED_REASON ? ` (undo ${s.id}, or --include-unclaimed, takes it back)` : ''}.`);
}

/** `takeback preview`. */
export function renderPreview(r: W.PreviewResult, color: boolean): string {
  const p = painter(color);
  const out: string[] = [];
  if (r.sets.length === 0) {
    out.push(`Nothing to ${r.direction}${r.skipped.length ? `: ${r.skipped.map((s) => `#${s.id} ${s.reason}`).join(', ')}` : ''}.`);
    return `${out.join('\n')}\n`;
  }
  out.push(p('bold', `${r.direction === 'undo' ? 'Undo' : 'Redo'} ${plural(r.sets.length, 'change')} (${r.sets.map((s) => `#${s}`).join(' ')}): ${plural(r.files.length, 'file')}`));
  for (const f of r.files) {
    const hint = f.conflict ? undoHint(f.conflict) : null;
    const conflict = f.conflict ? ` ${p('red', `CONFLICT: ${f.conflict.detail}${hint ? ` — ${hint}` : ''}`)}` : '';
    const gap = f.gap ? ` ${p('yellow', `GAP: ${f.gap.detail}`)}` : '';
    out.push('', `${p('bold', shownPath(f.path))}: ${f.gap ? 'cannot be restored' : actionText(f.action, r.direction, f.merged)}${conflict}${gap}`);
    if (f.note) out.push(p('dim', `  (${f.note})`));
    // Without colour the lines stay as they are: no need to split the diff and join it again.
    if (f.diff) out.push(color ? colorDiff(chomp(f.diff), p) : chomp(f.diff));
  }
  out.push('');
  out.push(...leftOutLines(r).map((l) => p('dim', l)));
  if (r.conflicts > 0) out.push(p('red', `The ${r.direction} would stop at the ${r.conflicts === 1 ? 'conflict' : 'conflicts'} above; --force replaces the later changes.`));
  if (r.gaps.length > 0) out.push(p('yellow', `${plural(r.gaps.length, 'capture gap')}: those files are left as they are.`));
  return `${out.join('\n')}\n`;
}

/** The undo that takes a conflict's later changes back too, as the command line says it ("`takeback undo 3 5` takes both back"), or null. */
function undoHint(c: { combined?: string[] }): string | null {
  return c.combined ? takesBackHint('takeback undo', c.combined) : null;
}

/**
 * A refusal's lines: one per conflicting file, "path: detail" (the detail says the reason and who
 * changed the file since), and the undos that take the later changes back too, each given once
 * (two files changed by the same later change have the same one), in the order of the files.
 */
function refusalLines(conflicts: W.ConflictFile[]): { lines: string[]; hints: string[] } {
  const hints: string[] = [];
  const lines = conflicts.map((c) => {
    const hint = undoHint(c);
    if (hint && !hints.includes(hint)) hints.push(hint);
    return `${shownPath(c.path)}: ${c.detail}`;
  });
  return { lines, hints };
}

/** `takeback undo` / `redo`. */
export function renderApply(r: W.ApplyResult, color: boolean): string {
  const p = painter(color);
  const verb = r.direction === 'undo' ? 'Undid' : 'Redid';
  const out: string[] = [];
  if (!r.written) {
    if (r.conflicts.length > 0) {
      // As git refuses: what did not happen, one line per file with its reason and who, then what to do.
      const { lines, hints } = refusalLines(r.conflicts);
      out.push(p('red', `Nothing was written: the ${r.direction} would replace later changes.`));
      for (const l of lines) out.push(`  ${l}`);
      for (const h of hints) out.push(`${h}.`);
      // A forced undo's exact inverse is one `redo --last`. A forced redo has none (an undo does
      // not bring back what it wrote over), so the two steps that do are named.
      const back =
        r.direction === 'undo'
          ? '"takeback redo --last" then puts back everything it replaced, in one step'
          : 'they are kept, as a change of their own, already undone, that "takeback list" shows: an undo of the same selector, then a redo of that change, brings them back';
      out.push(
        `${hints.length > 0 ? 'Or run' : 'Run'} it again with --force to replace the later changes (${back}); "takeback preview${r.direction === 'redo' ? ' --redo' : ''}" with the same selector shows them.`,
      );
    } else {
      out.push(`Nothing to ${r.direction}${r.skipped.length ? `: ${r.skipped.map((s) => `#${s.id} ${s.reason}`).join(', ')}` : ''}.`);
    }
  } else if (r.sets.length === 0) {
    out.push(`Nothing to ${r.direction}${r.skipped.length ? `: ${r.skipped.map((s) => `#${s.id} ${s.reason}`).join(', ')}` : ''}.`);
  } else {
    out.push(`${verb} ${plural(r.sets.length, 'change')} (${r.sets.map((s) => `#${s}`).join(' ')}): ${plural(r.applied.length, 'file')}${r.forced && r.conflicts.length ? ', replacing later changes' : ''}.`);
    for (const f of r.applied) out.push(`  ${shownPath(f.path)}: ${actionText(f.action, r.direction, f.merged)}`);
    out.push(...leftOutLines(r).map((l) => p('dim', `  ${l}`)));
  }
  for (const g of r.gaps) out.push(p('yellow', `  ${shownPath(g.path)}: not restored (${g.detail})`));
  for (const n of r.notes) out.push(p('dim', `  ${n}`));
  if (!r.complete) out.push(p('yellow', `Not complete: ${plural(r.gaps.length, 'file')} of the selected changes could not be ${r.direction === 'undo' ? 'taken back' : 'applied again'} (capture gaps, above).`));
  return `${out.join('\n')}\n`;
}

/** `takeback doctor`. */
/** Why the blob store keeps what it keeps, and what the retention rules take (doctor, gc). */
function storageLines(s: DoctorReport['storage'], mb: (n: number) => string): string[] {
  const u = s.use;
  const days = (ms: number) => `${Math.floor((Date.now() - ms) / 86_400_000)} days`;
  const out = [
    `            ${mb(u.sets.bytes)} for ${s.sets.live} change sets${s.sets.oldest !== null ? ` (oldest ${days(s.sets.oldest)} old)` : ''}, ${mb(u.working.bytes)} for snapshots and tool calls in flight, ${mb(u.young.bytes)} just stored, ${mb(u.unreferenced.bytes)} unreferenced (swept by \`takeback gc\`)`,
    `            sets expire after ${s.limits.retentionDays} days, and oldest first past ${mb(s.limits.maxJournalBytes)}: ${s.expired.byAge + s.expired.bySize} would expire now; ${s.sets.tombstones} expired`,
  ];
  if (s.snapshot && s.snapshot.tracked > 0) out.push(`            this workspace: ${s.snapshot.tracked} tracked files refer to git's objects, ${s.snapshot.copied} are copied`);
  const last = s.lastSweep;
  if (!last) out.push('last sweep: none yet');
  else {
    const ago = (ms: number) => {
      const m = Math.round((Date.now() - ms) / 60_000);
      return m < 60 ? `${m} min ago` : m < 2880 ? `${Math.round(m / 60)} h ago` : `${Math.round(m / 1440)} days ago`;
    };
    const what = last.swept ? `: swept ${last.swept.count} blob(s), ${mb(last.swept.bytes)}` : '';
    const how = last.slices && last.slices.steps > 1 ? ` in ${last.slices.steps} idle slices (longest ${last.slices.longestMs.toFixed(0)} ms)` : '';
    out.push(last.finished ? `last sweep: ${ago(last.finished)}${what}${how}` : `last sweep: claimed ${ago(last.at)}, not finished`);
  }
  return out;
}

/** One line per settings file that holds takeback's hooks: the agent, the file, and what doctor found of them. */
function hookLines(checks: DoctorReport['agents'], p: (style: Style, text: string) => string): string[] {
  return checks
    .filter((c) => c.installed !== 'none')
    .map((c, i) => {
      const state = [
        c.installed === 'all' ? 'every event' : p('yellow', 'some events'),
        c.current ? 'current' : p('yellow', 'another install'),
        c.trusted === null ? null : c.trusted ? 'trusted' : p('yellow', 'not trusted'),
      ].filter((x) => x !== null);
      return `${i === 0 ? 'hooks:     ' : '           '} ${c.agent} (${c.scope === 'user' ? 'user' : 'workspace'}: ${c.file}): ${state.join(', ')}`;
    });
}

/** The file watcher a capture daemon would use, in one line. */
function watcherLine(w: DoctorReport['watcher']): string {
  if (w.kind === 'none') return `watcher:    none (${w.why ?? 'off'}: every scan of a shell tool call walks the workspace)`;
  if (w.kind === 'watchman') return `watcher:    Watchman ${w.version} (the capture daemon's and the sidecar's file watcher; syncs without batching)`;
  return `watcher:    @parcel/watcher (${w.why ?? 'Watchman not used'})`;
}

/** The capture daemon, in one line. */
function daemonLine(d: DoctorReport['daemon']): string {
  const serving = d.http.filter((h) => h.alive).map((h) => `http hooks on 127.0.0.1:${h.port} (pid ${h.pid})`);
  if (serving.length > 0) return `daemon:     serving ${serving.join(', ')}`;
  return `daemon:     ${d.socket ? 'its socket is there' : 'not running: hooks run in-process'}`;
}

/** What `takeback gc` did. */
export function renderGc(r: GcReport): string {
  const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
  const verb = r.dryRun ? 'would expire' : 'expired';
  return [
    `${verb} ${r.expired.byAge} change set(s) older than ${r.limits.retentionDays} days and ${r.expired.bySize} to fit ${mb(r.limits.maxJournalBytes)} (${r.workspaces} workspaces)`,
    `${r.dryRun ? 'would sweep' : 'swept'} ${r.use.unreferenced.count} unreferenced blob(s), ${mb(r.use.unreferenced.bytes)}`,
    `kept ${mb(r.use.total.bytes - r.use.unreferenced.bytes)}: ${mb(r.use.sets.bytes)} for ${r.sets.live} change sets, ${mb(r.use.working.bytes)} for snapshots and tool calls in flight, ${mb(r.use.young.bytes)} stored in the last ${Math.round(r.limits.graceMs / 60000)} min`,
  ].join('\n') + '\n';
}

export function renderDoctor(d: DoctorReport, color: boolean): string {
  const p = painter(color);
  const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
  const out = [
    `takeback ${d.version}`,
    `workspace:  ${d.workspace}`,
    `journal:    ${d.journal}`,
    `hook log:   ${d.log}`,
    `capture:    file tools ${p('green', 'on')}, commands ${d.capture.commands ? p('green', 'on') : p('yellow', `off (${d.capture.reason})`)}`,
    ...(d.capture.baseline ? [`            ${p('yellow', baselineLine(d.capture.baseline))}`] : []),
    `snapshot:   ${d.snapshot ? `${d.snapshot.files} files, ${mb(d.snapshot.bytes)}` : 'none yet (taken at the first command or turn)'}; warm scans check stats ${d.scanCheck === 'native' ? 'in C (native/)' : 'in JavaScript (native/ not built by npm ci, or TAKEBACK_NATIVE=0)'}`,
    `changes:    ${d.sets.applied} applied, ${d.sets.undone} undone, ${d.sets.expired} expired; ${plural(d.turns.total, 'turn')} (${d.turns.open} open)`,
    `kept:       ${d.blobs.count} blobs, ${mb(d.blobs.bytes)} (shared by every workspace)`,
    ...storageLines(d.storage, mb),
    daemonLine(d.daemon),
    `            ${d.daemon.early ? "answers a command's begin once its snapshot is read, a command's end and a turn's end at once, recording them before the next event (TAKEBACK_HOOK_EARLY=0: once recorded)" : 'answers each hook once its event is recorded (TAKEBACK_HOOK_EARLY=0)'}`,
    watcherLine(d.watcher),
    `limits:     files over ${mb(d.limits.maxFileBytes)} not kept; commands captured up to ${d.limits.maxWorkspaceFiles} files / ${mb(d.limits.maxWorkspaceBytes)}, up to ${d.limits.maxBackgroundFiles} / ${mb(d.limits.maxBackgroundBytes)} where the capture daemon or the sidecar makes the baseline in the background`,
  ];
  out.push(...hookLines(d.agents, p));
  const hooked = d.agents.some((c) => c.installed !== 'none');
  if (!hooked) out.push(p('yellow', `! ${NO_AGENT_HOOKED}`));
  else if (d.problems.length === 0) out.push(p('green', 'no problems found'));
  for (const pr of d.problems) out.push(p('yellow', `! ${pr}`));
  return `${out.join('\n')}\n`;
}
