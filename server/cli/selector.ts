import type { Command } from 'commander';
import type { Workspace } from '../core/open-workspace.js';
import { TakebackError } from '../core/errors.js';
import { parseLines } from '../core/plan/hunks.js';
import type { Selector } from '../core/plan/select.js';
import { toWorkspacePath } from '../core/workspace.js';

/*
 * Which change sets preview, undo and redo act on: ids, a turn, the last, everything after a
 * turn, narrowed to files.
 */

/** The selector options of preview, undo and redo, as commander gives them. */
export type SelectorOpts = { turn?: string; last?: boolean; afterTurn?: string; includeUnclaimed?: boolean; file?: string[]; lines?: string };

/**
 * With `--file`, a step whose every selected change was left out because it does not touch
 * those files is `not-found` (exit 3), not "nothing to do" (exit 0): a mistyped path must not
 * look like success.
 */
export function untouchedFiles(o: SelectorOpts, r: { sets: string[]; skipped: { id: string; reason: string }[] }): void {
  if (!o.file?.length || r.sets.length > 0 || r.skipped.length === 0) return;
  if (r.skipped.every((s) => s.reason === 'does not touch that file')) {
    const ids = r.skipped.map((s) => `#${s.id}`).join(' ');
    throw new TakebackError('not-found', `${ids} ${r.skipped.length === 1 ? 'does' : 'do'} not touch ${o.file.join(', ')}`, { paths: o.file });
  }
}

/**
 * The selector the options name; `--file` paths (relative to the current folder) narrow it to
 * those files, and `--lines A[-B]` (with exactly one `--file`) to the hunks touching those lines
 * of it. Throws `usage` for a bad `--lines`, `outside-workspace` for a path outside.
 */
export function selectorFrom(ws: Workspace, ids: string[], o: SelectorOpts): Selector {
  const paths = (o.file ?? []).map((f) => {
    const rel = toWorkspacePath(ws.root, f, process.cwd());
    if (rel === null) throw new TakebackError('outside-workspace', `${f} is outside the workspace ${ws.root}`, { path: f });
    return rel;
  });
  let lines: Selector['lines'];
  if (o.lines !== undefined) {
    if (paths.length !== 1) throw new TakebackError('usage', '--lines needs exactly one --file');
    lines = parseLines(o.lines) ?? undefined;
    if (!lines) throw new TakebackError('usage', `--lines takes A or A-B (line numbers from 1, A <= B), not ${JSON.stringify(o.lines)}`);
  }
  if (o.includeUnclaimed && o.turn === undefined && o.afterTurn === undefined) throw new TakebackError('usage', '--include-unclaimed goes with --turn or --after-turn');
  return {
    ids: ids.length ? ids : undefined,
    turn: o.turn,
    last: o.last,
    afterTurn: o.afterTurn,
    ...(o.includeUnclaimed ? { includeUnclaimed: true } : {}),
    paths: paths.length ? paths : undefined,
    ...(lines ? { lines } : {}),
  };
}

/** Adds the selector's argument and options (and `--json`) to `c`: preview, undo, redo. */
export function selectorOptions(c: Command): Command {
  return c
    .argument('[ids...]', 'change set ids')
    .option('--turn <T>', 'every change of turn T')
    .option('--last', 'the newest change (redo: what the last undo took back, e.g. a whole turn)')
    .option('--after-turn <T>', 'everything after turn T (rewind to that boundary)')
    .option('--include-unclaimed', "with --turn or --after-turn: also what changed during a turn that no tool call claimed (left as it is by default when the agent reports its tool calls)")
    .option('--file <path...>', 'only these files (with --last: the newest change, or undo, that touched them)')
    .option('--lines <A[-B]>', "with one --file: only the change's hunks that touch these lines of the file as it is now")
    .option('--json', 'print JSON');
}
