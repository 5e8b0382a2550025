import type { Command } from 'commander';
import type { Workspace } from '../core/open-workspace.js';
import { checkId } from '../core/errors.js';

/**
 * What the program (main.ts) gives each command's module (commands/*.ts) to register its command
 * with: a handler ends with {@link done}, the exit code it sets is the process's.
 */
export interface CommandContext {
  /**
   * Checks the ids `cmd` names (see {@link checkIds}), then opens the workspace its
   * `--workspace` names (default: the one around the current folder). {@link done} closes it.
   */
  open(cmd: Command): Promise<Workspace>;
  /** Ends the command with exit code `code` (README.md's codes), closing the workspace {@link open} opened. */
  done(code: number): void;
  /** Whether to colour standard output (asked once, on first use: see output.ts's `colorOut`). */
  color(): boolean;
  /** Loads the sidecar's module for `serve` (see `MainOptions.loadSidecar`). */
  loadSidecar(): Promise<typeof import('../sidecar/serve.js')>;
}

/** The one-line help of `--workspace`, written on the program and on every command. */
export const WORKSPACE_HELP = 'the workspace (default: the enclosing git root, else the nearest folder up from here whose journal has records, else the current folder)';

/**
 * Checks the ids a command names (change set ids, `--id`, `--turn`, `--after-turn`) against
 * `^[A-Za-z0-9_-]{1,64}$` before anything touches the disk (the journal is not even opened).
 * Throws `invalid-id`.
 */
export function checkIds(cmd: Command): void {
  const o = cmd.opts() as { id?: unknown; turn?: unknown; afterTurn?: unknown };
  if (o.id !== undefined) checkId(o.id, cmd.parent?.name() === 'turn' ? 'turn id' : 'capture id');
  if (o.turn !== undefined) checkId(o.turn, 'turn id');
  if (o.afterTurn !== undefined) checkId(o.afterTurn, 'turn id');
  if (['show', 'preview', 'undo', 'redo'].includes(cmd.name())) for (const id of cmd.args) checkId(id, 'change set id');
}
