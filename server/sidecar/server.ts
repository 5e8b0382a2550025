import type * as v from 'valibot';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  createConnection,
  ResponseError,
  StreamMessageWriter,
  TextDocuments,
  type Connection,
  type MessageReader,
  type MessageWriter,
  type RequestHandler,
  type RequestType,
  type ResponseMessage,
} from 'vscode-languageserver/node';
import { ErrorCodes } from '../../protocol/src/errors.js';
import * as M from '../../protocol/src/methods.js';
import * as capture from './capture.js';
import * as changes from './changes.js';
import { connectionClient } from './client.js';
import { codeActions } from './codeactions.js';
import { codeLenses } from './codelens.js';
import { executeCommand } from './commands.js';
import { guard, guardNote, toResponseError } from './errors.js';
import { BoundedMessageReader, DEFAULT_MAX_MESSAGE_BYTES } from './framing.js';
import { initialize } from './initialize.js';
import * as LSP from './lsp-params.js';
import { parseParams } from './params.js';
import type { Session } from './session.js';
import * as turns from './turns.js';
import * as undo from './undo.js';
import { checkPending } from './undo-through-editor.js';
import { onSave } from './saves.js';
import { JournalWatch } from './watch.js';
import { BackgroundBaselines, baselinePace, baselineProgress } from '../core/capture/baseline.js';
import { WorkspaceFeed } from '../core/capture/watch-feed.js';

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
  /**
   * Called once when the connection ends: on LSP's `exit` with 0 after `shutdown`, else 1; with 1
   * when the input stream ends or its framing is lost.
   */
  onExit?: (code: number) => void;
  /** The bound on one incoming message (bytes) when `input` is a stream. Default 64 MiB. */
  maxMessageBytes?: number;
  /** Told why the input was given up (a message over the bound, a header that is not LSP's), before `onExit(1)`. */
  onInputLost?: (reason: string) => void;
  /** Told when a request's handler starts and when it has settled: background work (serve.ts) runs only in between. */
  activity?: Activity;
  /**
   * Asked before every request and every person's save is handled: a promise that resolves once
   * what a capture daemon answered and has not recorded yet is recorded (null: nothing can be
   * waiting, go on at once). `takeback serve` asks the daemon of its TAKEBACK_HOME (the command
   * line wires it: the sidecar knows no daemon).
   */
  settle?: () => Promise<unknown> | null;
}

/** Requests in flight, as {@link ServerOptions.activity} hears of them: `begin` when one arrives, `end` when its answer is ready. */
export interface Activity {
  begin(): void;
  end(): void;
}

/**
 * LSP requests whose params vscode-languageserver reads before the handler runs (capabilities,
 * work-done and partial-result tokens): checked as they arrive, so that a bad shape is
 * InvalidParams rather than a throw inside the library. Their handlers check them again (a
 * server given a MessageReader of its own has no screen).
 */
const SCREENED: Record<string, v.GenericSchema> = {
  initialize: LSP.InitializeParams,
  'textDocument/codeLens': LSP.CodeLensParams,
  'textDocument/codeAction': LSP.CodeActionParams,
  'workspace/executeCommand': LSP.ExecuteCommandParams,
};

/** Creates the server on `opts.input`/`opts.output` and starts listening. */
export function startServer(opts: ServerOptions): Connection {
  const writer = isWritable(opts.output) ? new StreamMessageWriter(opts.output) : opts.output;
  const reader = isReadable(opts.input)
    ? new BoundedMessageReader(opts.input, {
        maxMessageBytes: opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
        reject: (id, error) => void writer.write({ jsonrpc: '2.0', id, error } as ResponseMessage),
        screen: (r) => {
          const schema = SCREENED[r.method];
          if (!schema) return null;
          try {
            parseParams(r.method, schema, r.params);
            return null;
          } catch (e) {
            return toResponseError(e).toJson();
          }
        },
        lost: (reason) => opts.onInputLost?.(`takeback: input given up: ${reason}`),
      })
    : opts.input;
  const connection = createConnection(reader, writer);
  const log = (m: string) => connection.console.error(m);
  const textDocuments = new TextDocuments(TextDocument);
  let session: Session | null = null;
  let watch: JournalWatch | null = null;
  /** The workspace's file watcher, whose hints narrow the scans of captures and turns. */
  let feed: WorkspaceFeed | null = null;
  /** The workspace's baseline, when it is kept in the background (a large workspace outside git). */
  let baselines: BackgroundBaselines | null = null;
  let literals = false;
  let shutDown = false;

  // What an agent's hooks were answered for comes first: every request and person's save waits
  // for the capture daemon's records (opts.settle), and a request for the saves recorded before it.
  let saves: Promise<unknown> = Promise.resolve();
  let savesPending = 0;
  const afterCapture = <P, R>(fn: (params: P) => R | Promise<R>) => {
    if (!opts.settle) return fn;
    return (params: P): R | Promise<R> => {
      const wait = opts.settle!();
      if (!wait && savesPending === 0) return fn(params);
      return Promise.resolve(wait)
        .then(() => saves)
        .then(() => fn(params));
    };
  };
  const recordSave = (s: Session, path: string): void | Promise<void> => {
    const wait = opts.settle?.() ?? null;
    if (!wait && savesPending === 0) return onSave(s, path);
    savesPending++;
    const mine = saves.then(() => wait).then(() => onSave(s, path));
    saves = mine.catch(() => {}).finally(() => savesPending--);
    return mine;
  };

  // A request handler: errors become JSON-RPC errors (guard), and `activity` hears of it.
  const activity = opts.activity;
  const handle = <P, R>(fn: (params: P) => R | Promise<R>): ((params: P) => Promise<R>) => {
    const guarded = guard(log, afterCapture(fn), () => session?.ws.journal.dir ?? null);
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

  // One of the protocol's requests, bound by its type: tsc holds the handler's params to the
  // method's schema and its result to the method's result type. Params are checked first.
  const request = <S extends v.GenericSchema, P, R>(
    req: { method: string; params: S; type: RequestType<P, R, void> },
    fn: (s: Session, params: v.InferOutput<S>) => NoInfer<R> | Promise<NoInfer<R>>,
  ) => connection.onRequest<P, R, void>(req.type, handle((p: P) => fn(ready(), parseParams(req.method, req.params, p))) as RequestHandler<P, R, void>);

  // Lifecycle. One initialize a connection: a second would open another workspace's journal
  // under the first one's documents and pending steps.
  connection.onInitialize((raw) => {
    if (session) throw new ResponseError(ErrorCodes.InvalidRequest, 'takeback: initialize was already sent on this connection');
    const params = parseParams('initialize', LSP.InitializeParams, raw);
    const r = initialize(params, { ...opts, textDocuments, client: (abilities) => connectionClient(connection, () => abilities) });
    const s = (session = r.session);
    literals = r.literals;
    s.docs.on('save', guardNote(log, () => checkPending(s)));
    // After the steps waiting for it: a save that completes one is that step's.
    s.docs.on('save', guardNote(log, (path: string) => recordSave(s, path)));
    watch = new JournalWatch(s, log);
    feed = new WorkspaceFeed(s.ws.home, 1, log);
    baselines = new BackgroundBaselines(() => s.ws, () => {}, log, baselinePace(process.env));
    return r.result;
  });
  connection.onInitialized(() => {
    watch?.start();
    // The watcher starts now, to be trusted by the time the first command is captured.
    void feed?.sync(session?.ws.root ?? '/');
    // A baseline left unfinished (by a capture daemon that stopped) goes on here.
    if (session && baselineProgress(session.ws)) baselines?.wake(session.ws);
  });
  connection.onShutdown(() => {
    shutDown = true;
    watch?.stop();
  });
  let ended = false;
  const end = (code: number) => {
    if (ended) return;
    ended = true;
    watch?.stop();
    baselines?.close();
    baselines = null;
    feed?.close();
    feed = null;
    try {
      session?.ws.journal.close();
    } catch (e) {
      log(`takeback: closing the journal: ${(e as Error).message}`);
    }
    session = null;
    opts.onExit?.(code);
  };
  connection.onExit(() => end(shutDown ? 0 : 1));
  reader.onClose(() => end(shutDown ? 0 : 1));

  // What the user sees: open documents, with unsaved text (documents.ts).
  textDocuments.listen(connection);

  // The protocol's methods (protocol/src/methods.ts).
  request(M.ChangesListRequest, changes.list);
  request(M.ChangesShowRequest, changes.show);
  request(M.UndoPreviewRequest, undo.preview);
  request(M.UndoApplyRequest, undo.apply);
  // Those that scan the workspace first sync with its watcher, and their scans get its hints.
  const watched =
    <P, R>(fn: (s: Session, p: P) => R) =>
    async (s: Session, p: P): Promise<R> => {
      const f = feed;
      if (!f) return fn(s, p);
      await f.sync(s.ws.root);
      return f.scope(() => fn(s, p));
    };
  request(M.CaptureBeginRequest, watched(capture.begin));
  request(M.CaptureEndRequest, watched(capture.end));
  request(M.TurnBeginRequest, watched(turns.begin));
  request(M.TurnEndRequest, watched(turns.end));

  // A UI for clients with no plugin: code lenses, code actions, their commands.
  connection.onCodeLens(handle((p) => codeLenses(ready(), parseParams('textDocument/codeLens', LSP.CodeLensParams, p))));
  connection.onCodeAction(handle((p) => codeActions(ready(), parseParams('textDocument/codeAction', LSP.CodeActionParams, p), literals)));
  connection.onExecuteCommand(handle((p) => executeCommand(ready(), parseParams('workspace/executeCommand', LSP.ExecuteCommandParams, p))));

  connection.listen();
  return connection;
}

/** A Node stream, not one of vscode-jsonrpc's readers or writers (which have `onError` and no `pipe`). */
function isReadable(x: MessageReader | NodeJS.ReadableStream): x is NodeJS.ReadableStream {
  return typeof (x as NodeJS.ReadableStream).pipe === 'function';
}

function isWritable(x: MessageWriter | NodeJS.WritableStream): x is NodeJS.WritableStream {
  return !('onError' in x);
}
