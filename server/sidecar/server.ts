import { TextDocument } from 'vscode-languageserver-textdocument';
import { createConnection, ResponseError, TextDocuments, type Connection, type MessageReader, type MessageWriter } from 'vscode-languageserver/node';
import { ErrorCodes } from '../../protocol/src/errors.js';
import * as M from '../../protocol/src/methods.js';
import * as changes from './changes.js';
import { connectionClient } from './client.js';
import { codeActions } from './codeactions.js';
import { codeLenses } from './codelens.js';
import { executeCommand } from './commands.js';
import { guard, guardNote } from './errors.js';
import { initialize } from './initialize.js';
import type { Session } from './session.js';
import { JournalWatch } from './watch.js';

/*
 * The sidecar's wiring: every message the server handles, bound to its handler, on one screen.
 * Handlers live one feature a file and reach the client only through `EditorClient`
 * (client.ts); the engine they call (server/core) knows nothing of JSON-RPC.
 */

export interface ServerOptions {
  /** Where messages come from and go to: stdio for `takeback serve`, a pair of in-memory streams in tests. */
  input: MessageReader | NodeJS.ReadableStream;
  output: MessageWriter | NodeJS.WritableStream;
  /** The environment (TAKEBACK_HOME, limits). Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** The workspace when the client names none. Default: the current folder. */
  cwd?: string;
  version: string;
  /** Called on LSP's `exit` with 0 after `shutdown`, else 1 (vscode-languageserver then ends the process). */
  onExit?: (code: number) => void;
  /** Told when a request's handler starts and when it has settled: background work (serve.ts) runs only in between. */
  activity?: Activity;
}

/** Requests in flight, as {@link ServerOptions.activity} hears of them: `begin` when one arrives, `end` when its answer is ready. */
export interface Activity {
  begin(): void;
  end(): void;
}

/** Creates the server on `opts.input`/`opts.output` and starts listening. */
export function startServer(opts: ServerOptions): Connection {
  const connection = createConnection(opts.input as MessageReader, opts.output as MessageWriter);
  const log = (m: string) => connection.console.error(m);
  const textDocuments = new TextDocuments(TextDocument);
  let session: Session | null = null;
  let watch: JournalWatch | null = null;
  let literals = false;
  let shutDown = false;

  // A request handler: errors become JSON-RPC errors (guard), and `activity` hears of it.
  const activity = opts.activity;
  const handle = <P, R>(fn: (params: P) => R | Promise<R>): ((params: P) => Promise<R>) => {
    const guarded = guard(log, fn);
    if (!activity) return guarded;
    return (params: P) => {
      activity.begin();
      return guarded(params).finally(() => activity.end());
    };
  };

  const ready = (): Session => {
    if (!session) throw new ResponseError(ErrorCodes.ServerNotInitialized, 'takeback: initialize first');
    return session;
  };

  // Lifecycle.
  connection.onInitialize((params) => {
    const r = initialize(params, { ...opts, textDocuments, client: (abilities) => connectionClient(connection, () => abilities) });
    const s = (session = r.session);
    literals = r.literals;
    s.docs.on('save', guardNote(log, () => s.pending.check(s)));
    watch = new JournalWatch(s, log);
    return r.result;
  });
  connection.onInitialized(() => watch?.start());
  connection.onShutdown(() => {
    shutDown = true;
    watch?.stop();
  });
  connection.onExit(() => {
    watch?.stop();
    try {
      session?.engine.journal.close();
    } catch (e) {
      log(`takeback: closing the journal: ${(e as Error).message}`);
    }
    session = null;
    opts.onExit?.(shutDown ? 0 : 1);
  });

  // What the user sees: open documents, with unsaved text (documents.ts).
  textDocuments.listen(connection);

  // The protocol's methods (protocol/src/methods.ts).
  connection.onRequest(M.ChangesListRequest.method, handle((p: unknown) => changes.list(ready(), p)));
  connection.onRequest(M.ChangesShowRequest.method, handle((p: unknown) => changes.show(ready(), p)));
  connection.onRequest(M.UndoPreviewRequest.method, handle((p: unknown) => changes.preview(ready(), p)));
  connection.onRequest(M.UndoApplyRequest.method, handle((p: unknown) => changes.apply(ready(), p)));
  connection.onRequest(M.CaptureBeginRequest.method, handle((p: unknown) => changes.beginCapture(ready(), p)));
  connection.onRequest(M.CaptureEndRequest.method, handle((p: unknown) => changes.endCapture(ready(), p)));
  connection.onRequest(M.TurnBeginRequest.method, handle((p: unknown) => changes.beginTurn(ready(), p)));
  connection.onRequest(M.TurnEndRequest.method, handle((p: unknown) => changes.endTurn(ready(), p)));

  // A UI for clients with no plugin: code lenses, code actions, their commands.
  connection.onCodeLens(handle((p) => codeLenses(ready(), p)));
  connection.onCodeAction(handle((p) => codeActions(ready(), p, literals)));
  connection.onExecuteCommand(handle((p) => executeCommand(ready(), p)));

  connection.listen();
  return connection;
}
