import * as v from 'valibot';
import { maybe } from './selector.js';

/*
 * What takeback adds to LSP's `initialize`. Everything else is LSP's: the workspace root comes
 * from `rootUri` (else the first of `workspaceFolders`, else the server's current folder), and
 * the client's capabilities decide how an undo is delivered (`workspace.applyEdit`,
 * `workspace.workspaceEdit.documentChanges` / `resourceOperations`,
 * `workspace.codeLens.refreshSupport`).
 */

/**
 * `initializationOptions` a client may send. All optional; a client may send none. A field of
 * the wrong type makes `initialize` fail with `InvalidParams`.
 */
export const InitializationOptions = v.object({
  /**
   * How long (ms) to wait after `workspace/applyEdit` for the client's open documents to show
   * the edits (`didChange`) before a path counts as failed. Default 2000.
   */
  verifyTimeoutMs: maybe(v.pipe(v.number(), v.minValue(0))),
  /** How often (ms) the server looks for journal changes made by other processes. Default 500 (at least 10). */
  watchIntervalMs: maybe(v.pipe(v.number(), v.minValue(0))),
  /** False: never use `workspace/applyEdit`, write to disk as for a client without it. Default true. */
  applyEdits: maybe(v.boolean()),
});
export type InitializationOptions = v.InferInput<typeof InitializationOptions>;

/** `serverInfo.name` in the `initialize` result. */
export const SERVER_NAME = 'takeback';
