// A language client that behaves like the editors takeback's sidecar serves, for protocol tests:
// it advertises what the real editor advertises, keeps its own documents, applies
// workspace/applyEdit to them the way that editor does (including its quirks), sends
// didOpen/didChange/didSave like it, and records what the server sends.
//
// - `neovim`: Neovim 0.10's capabilities (applyEdit; resourceOperations create/rename/delete;
//   no `documentChanges: true`, though it handles them). Loads files it has not opened into
//   buffers (the takeback plugin attaches to every buffer, so they are didOpen'ed), skips a
//   TextDocumentEdit whose version is older than the buffer's and still answers applied: true.
//   Saves nothing itself; the plugin saves the buffers it changed after an undo (`saveEdited`).
// - `lsp4ij`: LSP4IJ 0.20's capabilities (documentChanges; create/delete/rename; code lens
//   refresh) and string ids for its own requests. Ignores versions, always answers applied: true,
//   edits files it has not opened in memory without telling the server, never saves (the IDE
//   saves later: `saveAll`). A text edit for a file its virtual file system does not know (not on
//   disk and not loaded, or one in `unknownToVfs`) is skipped silently; CreateFile truncates an
//   existing file whatever its options; RenameFile renames in place only (the new name in the old
//   folder); commands go to the server only when it lists them (`runCommand`); a
//   showMessageRequest is dismissed (-32800); unknown notifications are dropped (`dropped`).
// - `headless`: no capabilities at all (a script).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  createMessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type DataCallback,
  type Message,
  type MessageConnection,
  type MessageReader,
  type MessageWriter,
} from 'vscode-jsonrpc/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  ClientCapabilities,
  Command,
  CreateFile,
  DeleteFile,
  InitializeResult,
  RenameFile,
  TextDocumentEdit,
  TextEdit,
} from 'vscode-languageserver/node';
import { startServer } from '../../server/sidecar/server.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = path.join(REPO_ROOT, 'bin', 'takeback.js');

export type EditorKind = 'neovim' | 'lsp4ij' | 'headless';

/** What each editor advertises in `initialize` (the parts that matter here, as the editors send them). */
export function capabilitiesOf(kind: EditorKind): ClientCapabilities {
  if (kind === 'headless') return {};
  if (kind === 'neovim') {
    // Neovim 0.10 (runtime/lua/vim/lsp/protocol.lua, make_client_capabilities).
    return {
      general: { positionEncodings: ['utf-16'] },
      workspace: {
        applyEdit: true,
        workspaceFolders: true,
        configuration: true,
        workspaceEdit: { resourceOperations: ['rename', 'create', 'delete'] },
        semanticTokens: { refreshSupport: true },
        didChangeWatchedFiles: { dynamicRegistration: false, relativePatternSupport: true },
        inlayHint: { refreshSupport: true },
      },
      textDocument: {
        synchronization: { dynamicRegistration: false, willSave: true, willSaveWaitUntil: true, didSave: true },
        codeAction: {
          dynamicRegistration: true,
          codeActionLiteralSupport: { codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'refactor.extract', 'refactor.inline', 'refactor.rewrite', 'source', 'source.organizeImports'] } },
          isPreferredSupport: true,
          dataSupport: true,
          resolveSupport: { properties: ['edit'] },
        },
        codeLens: { dynamicRegistration: false },
      },
      window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: false } }, showDocument: { support: true } },
    };
  }
  // LSP4IJ 0.20 (com.redhat.devtools.lsp4ij: ClientCapabilitiesFactory): no failureHandling, no
  // normalizesLineEndings, no changeAnnotationSupport.
  return {
    general: { positionEncodings: ['utf-16'], staleRequestSupport: { cancel: true, retryOnContentModified: [] } },
    workspace: {
      applyEdit: true,
      workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'delete', 'rename'] },
      codeLens: { refreshSupport: true },
      executeCommand: { dynamicRegistration: true },
      configuration: true,
      workspaceFolders: true,
      didChangeWatchedFiles: { dynamicRegistration: true },
    },
    textDocument: {
      synchronization: { willSave: true, willSaveWaitUntil: true, didSave: true },
      codeLens: { dynamicRegistration: true, resolveSupport: { properties: ['command'] } },
      codeAction: {
        codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'refactor', 'refactor.extract', 'refactor.inline', 'refactor.rewrite', 'source', 'source.organizeImports'] } },
        resolveSupport: { properties: ['edit'] },
        dataSupport: true,
      },
    },
    window: { showMessage: { messageActionItem: { additionalPropertiesSupport: true } }, showDocument: { support: true }, workDoneProgress: true },
  };
}

interface Buffer {
  uri: string;
  version: number;
  text: string;
  /** Neovim's 'bomb': the file's byte-order mark, kept out of the text and written back on save. */
  bomb: boolean;
  /** Sent to the server with didOpen (Neovim: every buffer; LSP4IJ: files open in an editor). */
  open: boolean;
}

export class TestEditor {
  readonly buffers = new Map<string, Buffer>();
  readonly messages: { type: number; message: string }[] = [];
  /** The server's `window/logMessage` texts, in order. */
  readonly logs: string[] = [];
  readonly changes: { reason: string }[] = [];
  readonly edits: ApplyWorkspaceEditParams[] = [];
  /** URIs whose text edits this client skips while answering applied: true. */
  readonly skip = new Set<string>();
  /** Runs when an applyEdit arrives, before it is applied (the user typing at that moment). */
  beforeApply: (() => Promise<void>) | null = null;
  /** URIs changed by the last applyEdit (what Neovim's plugin saves afterwards). */
  edited = new Set<string>();
  lensRefreshes = 0;
  /** LSP4IJ: files on disk its virtual file system has not seen yet (made outside the IDE since its last refresh). */
  readonly unknownToVfs = new Set<string>();
  /** Methods of the notifications this client does not handle and dropped (LSP4IJ logs and drops them). */
  readonly dropped: string[] = [];
  /** Methods of the requests the server sent to this client, in order. */
  readonly requests: string[] = [];
  /** `executeCommandProvider.commands` from the server's initialize answer. */
  serverCommands: string[] = [];
  /** The name sent as `clientInfo.name` (set before initialize; the sidecar knows "Neovim"). */
  clientName: string | null = null;
  /**
   * Neovim's 'eol' (set before opening anything): a buffer holds its final newline as an option,
   * so an empty file is one empty line ("\n"), and no text edit adds or removes the final newline.
   */
  eolOption = false;

  constructor(
    readonly conn: MessageConnection,
    readonly root: string,
    readonly kind: EditorKind,
    private readonly dispose: () => void = () => undefined,
    private readonly exitOnClose = true,
  ) {
    conn.onRequest('workspace/applyEdit', (p: ApplyWorkspaceEditParams) => {
      this.requests.push('workspace/applyEdit');
      return this.applyEdit(p);
    });
    conn.onRequest('workspace/codeLens/refresh', () => {
      this.requests.push('workspace/codeLens/refresh');
      this.lensRefreshes++;
      return null;
    });
    // The person closes the balloon without picking an action: LSP4IJ cancels the request.
    conn.onRequest('window/showMessageRequest', () => {
      this.requests.push('window/showMessageRequest');
      return new ResponseError(-32800, 'dismissed');
    });
    conn.onNotification((method: string) => {
      this.dropped.push(method);
    });
    conn.onNotification('window/showMessage', (p: { type: number; message: string }) => {
      this.messages.push(p);
    });
    conn.onNotification('window/logMessage', (p: { message: string }) => {
      this.logs.push(p.message);
    });
    conn.onNotification('changes/didChange', (p: { reason: string }) => {
      this.changes.push(p);
    });
    conn.listen();
  }

  uri(rel: string): string {
    return pathToFileURL(path.join(this.root, rel)).href;
  }

  private file(uri: string): string {
    return fileURLToPath(uri);
  }

  async initialize(initializationOptions: object = {}): Promise<InitializeResult> {
    const r = await this.conn.sendRequest<InitializeResult>('initialize', {
      processId: null,
      rootUri: pathToFileURL(this.root).href,
      capabilities: capabilitiesOf(this.kind),
      initializationOptions: { watchIntervalMs: 50, verifyTimeoutMs: 1500, ...initializationOptions },
      clientInfo: { name: this.clientName ?? `test-${this.kind}` },
    });
    this.serverCommands = r.capabilities.executeCommandProvider?.commands ?? [];
    await this.conn.sendNotification('initialized', {});
    return r;
  }

  /**
   * Runs a code lens's or code action's command as the editor does. LSP4IJ sends it to the server
   * only when the server listed it in `executeCommandProvider.commands` (else it looks for an IDE
   * action of that id, and shows an error): throws for a command not listed.
   */
  runCommand<R>(command: Command): Promise<R> {
    if (this.kind === 'lsp4ij' && !this.serverCommands.includes(command.command)) {
      throw new Error(`LSP4IJ: no action for ${command.command} (the server lists ${this.serverCommands.join(', ')})`);
    }
    return this.conn.sendRequest<R>('workspace/executeCommand', { command: command.command, arguments: command.arguments });
  }

  request<R>(method: string, params?: unknown): Promise<R> {
    return this.conn.sendRequest<R>(method, params);
  }

  /** Opens a file (its disk text) and tells the server. */
  async open(rel: string): Promise<void> {
    const uri = this.uri(rel);
    const { text, bomb } = this.read(uri);
    const b: Buffer = { uri, version: 1, text, bomb, open: true };
    this.buffers.set(uri, b);
    await this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'plaintext', version: 1, text } });
  }

  /** A file's text as this editor holds it (Neovim keeps a byte-order mark out of the text). */
  private read(uri: string): { text: string; bomb: boolean } {
    const file = this.file(uri);
    const raw = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const bomb = this.kind === 'neovim' && raw.startsWith('\uFEFF');
    const text = bomb ? raw.slice(1) : raw;
    return { text: this.eolOption && text === '' ? '\n' : text, bomb };
  }

  /** The user types: replaces the whole text (unsaved). */
  async type(rel: string, text: string): Promise<void> {
    const b = this.buffers.get(this.uri(rel))!;
    const doc = TextDocument.create(b.uri, 'plaintext', b.version, b.text);
    const range = { start: { line: 0, character: 0 }, end: doc.positionAt(b.text.length) };
    b.text = text;
    b.version++;
    await this.conn.sendNotification('textDocument/didChange', { textDocument: { uri: b.uri, version: b.version }, contentChanges: [{ range, text }] });
  }

  /** What Neovim's plugin does for a file the server wrote (via: 'disk'): reload its unmodified buffer. */
  async reload(rel: string): Promise<void> {
    const b = this.buffers.get(this.uri(rel));
    if (!b) return;
    const { text } = this.read(b.uri);
    if (text === b.text) return;
    await this.type(rel, text);
  }

  text(rel: string): string | undefined {
    return this.buffers.get(this.uri(rel))?.text;
  }

  /** Writes a buffer to disk, and tells the server (didSave) when it is open. */
  async save(uri: string): Promise<void> {
    const b = this.buffers.get(uri);
    if (!b) return;
    fs.mkdirSync(path.dirname(this.file(uri)), { recursive: true });
    fs.writeFileSync(this.file(uri), (b.bomb ? '\uFEFF' : '') + b.text);
    if (b.open) await this.conn.sendNotification('textDocument/didSave', { textDocument: { uri } });
  }

  /** What Neovim's plugin does after an undo: save the buffers the edit changed. */
  async saveEdited(): Promise<void> {
    for (const uri of this.edited) await this.save(uri);
    this.edited.clear();
  }

  /** What an IDE does now and then: save every document whose text differs from the disk. */
  async saveAll(): Promise<void> {
    for (const b of this.buffers.values()) {
      const file = this.file(b.uri);
      const disk = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
      if (disk !== (b.bomb ? '\uFEFF' : '') + b.text) await this.save(b.uri);
    }
  }

  private async load(uri: string): Promise<Buffer> {
    let b = this.buffers.get(uri);
    if (b) return b;
    const { text, bomb } = this.read(uri);
    // Neovim: a buffer, attached to the server (didOpen). LSP4IJ: an in-memory document, not open in an editor.
    const open = this.kind === 'neovim';
    b = { uri, version: open ? 1 : 0, text, bomb, open };
    this.buffers.set(uri, b);
    if (open) await this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'plaintext', version: 1, text } });
    return b;
  }

  /** LSP4IJ: true when its virtual file system knows `uri` (loaded, or on disk and refreshed). */
  private inVfs(uri: string): boolean {
    return this.buffers.has(uri) || (fs.existsSync(this.file(uri)) && !this.unknownToVfs.has(uri));
  }

  private async textEdit(uri: string, version: number | null, edits: TextEdit[], versioned: boolean): Promise<void> {
    // LSP4IJ: with documentChanges, a file its virtual file system does not know is skipped
    // silently; with `changes`, a missing file is made.
    if (this.kind === 'lsp4ij' && versioned && !this.inVfs(uri)) return;
    const b = await this.load(uri);
    if (this.skip.has(uri)) return;
    // Neovim skips an edit for an older version (and answers applied: true); LSP4IJ ignores versions.
    if (this.kind === 'neovim' && version !== null && version > 0 && b.version > version) return;
    const sorted = [...edits].sort((x, y) => y.range.start.line - x.range.start.line || y.range.start.character - x.range.start.character);
    const doc = TextDocument.create(uri, 'plaintext', b.version, b.text);
    const next = TextDocument.applyEdits(doc, edits);
    // With 'eol' set the buffer keeps its final newline whatever the edits say (Neovim).
    const before = b.text;
    b.text = this.eolOption && b.text.endsWith('\n') && !next.endsWith('\n') ? `${next}\n` : next;
    b.version++;
    this.edited.add(uri);
    if (b.open && this.eolOption) {
      // The buffer's text as it is (Neovim reports its lines, not the edits it was sent).
      const range = { start: { line: 0, character: 0 }, end: doc.positionAt(before.length) };
      await this.conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: b.version }, contentChanges: [{ range, text: b.text }] });
    } else if (b.open) {
      await this.conn.sendNotification('textDocument/didChange', {
        textDocument: { uri, version: b.version },
        contentChanges: sorted.map((e) => ({ range: e.range, text: e.newText })),
      });
    }
  }

  private async applyEdit(p: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
    this.edits.push(p);
    if (this.beforeApply) await this.beforeApply();
    this.edited = new Set();
    const ops: (TextDocumentEdit | CreateFile | DeleteFile | RenameFile)[] = p.edit.documentChanges
      ? [...p.edit.documentChanges]
      : Object.entries(p.edit.changes ?? {}).map(([uri, edits]) => ({ textDocument: { uri, version: null }, edits }));
    for (const op of ops) {
      if ('kind' in op) {
        if (op.kind === 'create') {
          const file = this.file(op.uri);
          // LSP4IJ reads neither option: an existing file is truncated.
          if (this.kind !== 'lsp4ij' && fs.existsSync(file) && !op.options?.overwrite) {
            if (op.options?.ignoreIfExists) continue;
          }
          fs.mkdirSync(path.dirname(file), { recursive: true });
          fs.writeFileSync(file, '');
          this.unknownToVfs.delete(op.uri);
          const b = await this.load(op.uri);
          const was = b.text;
          b.text = this.eolOption ? '\n' : '';
          this.edited.add(op.uri);
          if (b.open && was !== b.text) {
            b.version++;
            const range = { start: { line: 0, character: 0 }, end: TextDocument.create(op.uri, 'plaintext', 0, was).positionAt(was.length) };
            await this.conn.sendNotification('textDocument/didChange', { textDocument: { uri: op.uri, version: b.version }, contentChanges: [{ range, text: b.text }] });
          }
        } else if (op.kind === 'delete') {
          const file = this.file(op.uri);
          if (fs.existsSync(file)) fs.rmSync(file, { recursive: Boolean(op.options?.recursive) });
          const b = this.buffers.get(op.uri);
          if (b) {
            this.buffers.delete(op.uri);
            this.edited.delete(op.uri);
            if (b.open) await this.conn.sendNotification('textDocument/didClose', { textDocument: { uri: op.uri } });
          }
        } else if (this.kind === 'lsp4ij') {
          // LSP4IJ renames in place: the new name, in the old folder.
          const from = this.file(op.oldUri);
          const to = path.join(path.dirname(from), path.basename(this.file(op.newUri)));
          if (fs.existsSync(from)) fs.renameSync(from, to);
          const b = this.buffers.get(op.oldUri);
          if (b) {
            this.buffers.delete(op.oldUri);
            b.uri = pathToFileURL(to).href;
            this.buffers.set(b.uri, b);
          }
        } else {
          throw new Error(`unexpected ${op.kind}`);
        }
      } else {
        await this.textEdit(op.textDocument.uri, op.textDocument.version, op.edits as TextEdit[], Boolean(p.edit.documentChanges));
      }
    }
    return { applied: true };
  }

  /** Resolves when `test()` holds, checking every 20 ms; rejects after `ms`. */
  async until(test: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
    const end = Date.now() + ms;
    while (!test()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * LSP's shutdown, then exit — except in this process: vscode-languageserver ends the process
   * on `exit`, so an in-process server gets only `shutdown` and its streams closed.
   */
  async close(sendExit = this.exitOnClose): Promise<void> {
    try {
      await this.conn.sendRequest('shutdown');
      if (sendExit) await this.conn.sendNotification('exit');
    } catch {
      // already gone
    }
    this.dispose();
    this.conn.dispose();
  }
}

/**
 * A client's connection. LSP4IJ (lsp4j with `jsonRpc.useIntegerIds` false, its default) sends
 * its requests with string ids: the writer sends each request's id as a string, and the reader
 * gives the answers back to vscode-jsonrpc under the number it chose.
 */
function connection(kind: EditorKind, reader: MessageReader, writer: MessageWriter): MessageConnection {
  if (kind !== 'lsp4ij') return createMessageConnection(reader, writer);
  const sent = new Set<string>();
  const stringIds: MessageWriter = {
    onError: writer.onError,
    onClose: writer.onClose,
    write(msg: Message) {
      const m = msg as Message & { id?: unknown; method?: string };
      if (typeof m.method === 'string' && typeof m.id === 'number') {
        sent.add(String(m.id));
        return writer.write({ ...m, id: String(m.id) } as Message);
      }
      return writer.write(msg);
    },
    end: () => writer.end(),
    dispose: () => writer.dispose(),
  };
  const answers: MessageReader = {
    onError: reader.onError,
    onClose: reader.onClose,
    onPartialMessage: reader.onPartialMessage,
    listen(callback: DataCallback) {
      return reader.listen((msg) => {
        const m = msg as Message & { id?: unknown; method?: string };
        if (m.method === undefined && typeof m.id === 'string' && sent.delete(m.id)) callback({ ...m, id: Number(m.id) } as Message);
        else callback(msg);
      });
    },
    dispose: () => reader.dispose(),
  };
  return createMessageConnection(answers, stringIds);
}

/** Server and client in this process, over a pair of in-memory streams. */
export function inProcess(root: string, kind: EditorKind, env: NodeJS.ProcessEnv): TestEditor {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  startServer({ input: toServer, output: toClient, env, cwd: root, version: 'test' });
  const conn = connection(kind, new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
  return new TestEditor(
    conn,
    root,
    kind,
    () => {
      toServer.end();
      toClient.end();
    },
    false,
  );
}

/** The built `takeback serve` over real stdio. */
export function overStdio(root: string, kind: EditorKind, env: NodeJS.ProcessEnv): { editor: TestEditor; child: ChildProcess; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, 'serve', '--stdio'], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  const conn = connection(kind, new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const editor = new TestEditor(conn, root, kind, () => undefined);
  return { editor, child, stderr: () => err };
}
