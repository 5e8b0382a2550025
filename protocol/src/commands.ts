import type { Selector } from './selector.js';

/*
 * Commands for `workspace/executeCommand`, the UI for clients with no plugin: code lenses and
 * code actions carry them, and any client may send them. Each takes one argument, a
 * {@link Selector}. Results arrive through `window/showMessage` (never `showMessageRequest`:
 * Helix lacks it); the response is the same object `undo/apply` (or `undo/preview`) returns.
 * A command with conflicts and no force answers the `Conflicts` error (after a message).
 */

/** The commands the server lists in `executeCommandProvider.commands`. */
export const Commands = {
  /** Undo (no force). Arguments `[Selector]`. Response: `ApplyResult`. */
  undo: 'takeback.undo',
  /** Undo, replacing later changes (and unsaved text in the editor). Arguments `[Selector]`. Response: `ApplyResult`. */
  undoForce: 'takeback.undoForce',
  /** Redo (no force). Arguments `[Selector]`. Response: `ApplyResult`. */
  redo: 'takeback.redo',
  /** Show what an undo would do: a message with the diff. Arguments `[Selector]`. Response: `PreviewResult`. */
  preview: 'takeback.preview',
} as const;

export type CommandName = (typeof Commands)[keyof typeof Commands];

/** The arguments of every command. */
export type CommandArguments = [Selector];
