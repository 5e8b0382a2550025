import {
  ApplyWorkspaceEditRequest,
  CodeLensRefreshRequest,
  LogMessageNotification,
  MessageType,
  ShowMessageNotification,
  type ApplyWorkspaceEditResult,
  type ClientCapabilities,
  type Connection,
  type WorkspaceEdit,
} from 'vscode-languageserver/node';
import { ChangesDidChangeNotification, type ChangeReason } from '../../protocol/src/methods.js';

/*
 * Everything the server sends to the client, behind one small interface: the handlers call
 * this, the wiring binds it to the connection, and a test can pass one that records.
 */
export interface EditorClient {
  /** `workspace/applyEdit`. Rejects when the client fails the request. */
  applyEdit(label: string, edit: WorkspaceEdit): Promise<ApplyWorkspaceEditResult>;
  /** `window/showMessage` (a notification: never `showMessageRequest`, which Helix lacks). */
  showMessage(type: 'error' | 'warning' | 'info', message: string): void;
  /** `changes/didChange`, and `workspace/codeLens/refresh` when the client supports it. */
  journalChanged(reason: ChangeReason): void;
  /** `window/logMessage`. */
  log(message: string): void;
}

/** What the client can do, read once from its `initialize` capabilities. */
export interface ClientAbilities {
  applyEdit: boolean;
  /** Versioned `documentChanges` (with resource operations). Neovim handles them without advertising `documentChanges`. */
  documentChanges: boolean;
  create: boolean;
  delete: boolean;
  codeLensRefresh: boolean;
  /**
   * The client holds a file's final newline as a buffer option, not as text (Neovim's 'eol'):
   * no text edit can add or remove it, and a file it creates is one empty line. Set from
   * `clientInfo.name` at initialize.
   */
  eolOption?: boolean;
}

export function abilitiesOf(c: ClientCapabilities, allowEdits = true): ClientAbilities {
  const ws = c.workspace;
  const ops = ws?.workspaceEdit?.resourceOperations ?? [];
  const documentChanges = Boolean(ws?.workspaceEdit?.documentChanges) || ops.length > 0;
  return {
    applyEdit: allowEdits && ws?.applyEdit === true,
    documentChanges,
    create: documentChanges && ops.includes('create'),
    delete: documentChanges && ops.includes('delete'),
    codeLensRefresh: ws?.codeLens?.refreshSupport === true,
  };
}

const TYPES = { error: MessageType.Error, warning: MessageType.Warning, info: MessageType.Info } as const;

/** The client over a live connection. */
export function connectionClient(connection: Connection, abilities: () => ClientAbilities): EditorClient {
  return {
    applyEdit: (label, edit) => connection.sendRequest(ApplyWorkspaceEditRequest.type, { label, edit }),
    showMessage: (type, message) => {
      void connection.sendNotification(ShowMessageNotification.type, { type: TYPES[type], message });
    },
    journalChanged: (reason) => {
      void connection.sendNotification(ChangesDidChangeNotification.type, { reason });
      if (abilities().codeLensRefresh) connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
    },
    log: (message) => {
      void connection.sendNotification(LogMessageNotification.type, { type: MessageType.Log, message });
    },
  };
}
