/*
 * What takeback adds to LSP's `initialize`. Everything else is LSP's: the workspace root comes
 * from `rootUri` (else the first of `workspaceFolders`, else the server's current folder), and
 * the client's capabilities decide how an undo is delivered (`workspace.applyEdit`,
 * `workspace.workspaceEdit.documentChanges` / `resourceOperations`,
 * `workspace.codeLens.refreshSupport`).
 */

/** `initializationOptions` a client may send. All optional; a client may send none. */
export interface InitializationOptions {
  /**
   * How long (ms) to wait after `workspace/applyEdit` for the client's open documents to show
   * the edits (`didChange`) before a path counts as failed. Default 2000.
   */
  verifyTimeoutMs?: number;
  /** How often (ms) the server looks for journal changes made by other processes. Default 500. */
  watchIntervalMs?: number;
  /** False: never use `workspace/applyEdit`, write to disk as for a client without it. Default true. */
  applyEdits?: boolean;
}

/** `serverInfo.name` in the `initialize` result. */
export const SERVER_NAME = 'takeback';
