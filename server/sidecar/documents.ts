import { EventEmitter } from 'node:events';
import { realpathSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { TextDocuments } from 'vscode-languageserver/node';
import type { Workspace } from '../core/open-workspace.js';
import { readWorkspaceState } from '../core/fsstate.js';
import type { CurrentReader } from '../core/plan/plan.js';
import type { BytesReader } from '../core/plan/preview.js';
import { holdsSecret, isSecretPath } from '../core/secrets.js';
import { sha256 } from '../core/store/blobs.js';
import type { FileState } from '../core/types.js';
import { toWorkspacePath } from '../core/workspace.js';
import { decodeUtf8, fromClientText, guessProfile, hasBom, IDENTITY, learnProfile, toClientText, type TextProfile } from './text.js';

/*
 * What the user sees: the documents the client has open (didOpen/didChange/didClose/didSave),
 * kept by vscode-languageserver's TextDocuments, each mapped to its workspace path and to the
 * way its text stands for the file's bytes (its profile, learned at open). The planner reads
 * through here, so unsaved text counts as the user's later work.
 */

/** One open document. */
export interface OpenDoc {
  uri: string;
  path: string;
  doc: TextDocument;
  profile: TextProfile;
}

export class Documents {
  private readonly byPath = new Map<string, string>();
  private readonly profiles = new Map<string, TextProfile>();
  private readonly events = new EventEmitter();
  /** Paths whose document changed since it was opened or last saved (the person typed, or the buffer was reloaded or edited). */
  private readonly changed = new Set<string>();
  /** Each open document's version when it was opened or last saved (by URI). */
  private readonly savedVersions = new Map<string, number>();
  /** The client's spelling of the workspace root (links not resolved), for URIs of files it has not opened. */
  private clientBase: string;

  constructor(
    private readonly ws: Workspace,
    clientRoot: string | null,
    /** The text documents, kept by vscode-languageserver (listening on the connection since before `initialize`). */
    readonly docs: TextDocuments<TextDocument>,
    /** The editor's name for people (`Neovim`, `Helix`; see `editorName`), said in conflicts and recorded with the person's saves. */
    readonly editor = 'the editor',
  ) {
    this.clientBase = ws.root;
    if (clientRoot) {
      try {
        const rel = relative(ws.root, realpathSync(clientRoot));
        if (rel === '') this.clientBase = resolve(clientRoot);
        else if (!rel.startsWith('..') && !rel.startsWith(sep)) this.clientBase = resolve(clientRoot, ...rel.split(sep).map(() => '..'));
      } catch {
        // The client's root does not exist: keep the real root.
      }
    }
    this.events.setMaxListeners(0);
    for (const d of this.docs.all()) this.opened(d);
    this.docs.onDidOpen((e) => this.opened(e.document));
    this.docs.onDidChangeContent((e) => {
      const path = this.pathOf(e.document.uri);
      if (path !== null) this.changed.add(path);
      if (path !== null) this.events.emit('change', path);
    });
    this.docs.onDidSave((e) => {
      this.savedVersions.set(e.document.uri, e.document.version);
      const path = this.pathOf(e.document.uri);
      if (path !== null) this.events.emit('save', path);
    });
    this.docs.onDidClose((e) => {
      const path = this.pathOf(e.document.uri);
      this.profiles.delete(e.document.uri);
      this.savedVersions.delete(e.document.uri);
      if (path !== null && this.byPath.get(path) === e.document.uri) this.byPath.delete(path);
      if (path !== null) this.changed.delete(path);
      if (path !== null) this.events.emit('change', path);
    });
  }

  private opened(doc: TextDocument): void {
    const path = this.pathOf(doc.uri);
    if (path === null) return;
    this.savedVersions.set(doc.uri, doc.version);
    this.byPath.set(path, doc.uri);
    const disk = this.diskText(path);
    const text = doc.getText();
    this.profiles.set(doc.uri, disk === null ? IDENTITY : (learnProfile(text, disk) ?? guessProfile(text, disk)));
    this.events.emit('change', path);
  }

  /** The workspace path of a `file:` URI, or null (another scheme, outside the workspace). */
  pathOf(uri: string): string | null {
    if (!uri.startsWith('file:')) return null;
    let abs: string;
    try {
      abs = fileURLToPath(uri);
    } catch {
      return null;
    }
    const direct = toWorkspacePath(this.ws.root, abs);
    if (direct !== null && this.clientBase === this.ws.root) return direct;
    const viaClient = toWorkspacePath(this.clientBase, abs);
    if (viaClient !== null) return viaClient;
    if (direct !== null) return direct;
    try {
      return toWorkspacePath(this.ws.root, join(realpathSync(dirname(abs)), basename(abs)));
    } catch {
      return null;
    }
  }

  /** The URI to name workspace path `path` by: the open document's, else one under the client's root. */
  uriOf(path: string): string {
    return this.byPath.get(path) ?? pathToFileURL(join(this.clientBase, ...path.split('/'))).href;
  }

  /** The open document for `path`, if any. */
  get(path: string): OpenDoc | undefined {
    const uri = this.byPath.get(path);
    const doc = uri ? this.docs.get(uri) : undefined;
    if (!uri || !doc) return undefined;
    return { uri, path, doc, profile: this.profiles.get(uri) ?? IDENTITY };
  }

  /** Every open document inside the workspace. */
  all(): OpenDoc[] {
    return [...this.byPath.keys()].map((p) => this.get(p)).filter((d): d is OpenDoc => d !== undefined);
  }

  /** The disk under `path`: absent, a text file (its text), or something else (a link, a folder, binary or unkept bytes). */
  private disk(path: string): { kind: 'absent' } | { kind: 'text'; text: string } | { kind: 'other' } {
    try {
      const r = readWorkspaceState(this.ws, path);
      if (!r.state.exists) return { kind: 'absent' };
      const text = r.bytes ? decodeUtf8(r.bytes) : null;
      return text === null ? { kind: 'other' } : { kind: 'text', text };
    } catch {
      return { kind: 'other' };
    }
  }

  private diskText(path: string): string | null {
    const d = this.disk(path);
    return d.kind === 'text' ? d.text : null;
  }

  /** The bytes the editor would save for its document of `path` (the file's mark kept), or null when none is open. */
  docBytes(path: string): Buffer | null {
    const d = this.get(path);
    if (!d) return null;
    const disk = this.diskText(path);
    return Buffer.from(fromClientText(d.doc.getText(), d.profile, disk !== null ? hasBom(disk) : false), 'utf8');
  }

  /**
   * True when the open document of `path` holds the user's unsaved work: its text differs from
   * the file on disk; or, the file being gone, it holds text other than `target` (what an undo
   * would bring back). A document over a link, a folder or a binary file is never counted.
   */
  unsaved(path: string, target?: FileState): boolean {
    const d = this.get(path);
    if (!d) return false;
    const disk = this.disk(path);
    if (disk.kind === 'other') return false;
    const text = d.doc.getText();
    if (disk.kind === 'text') return toClientText(disk.text, d.profile) !== text;
    if (text === '') return false;
    if (!target || !target.exists || target.type !== 'file' || !target.sha256) return true;
    return sha256(Buffer.from(fromClientText(text, d.profile, false), 'utf8')) !== target.sha256;
  }

  /** True when the open document of `path` shows the file text `text`. */
  shows(path: string, text: string): boolean {
    const d = this.get(path);
    return d !== undefined && d.doc.getText() === toClientText(text, d.profile);
  }

  /** A reader of current states that sees unsaved text: the state the file would have if saved. */
  stateReader(ws: Workspace): CurrentReader {
    return (path, abs) => {
      const disk = readWorkspaceState(ws, path, { abs }).state;
      if (!disk.exists || !this.unsaved(path)) return disk;
      const bytes = this.docBytes(path)!;
      const s: FileState = { exists: true, type: 'file', sha256: sha256(bytes), size: bytes.length, mode: disk.mode };
      return s;
    };
  }

  /**
   * A reader of current bytes that sees unsaved text (for previews). Unsaved text that holds a
   * secret, like a file on disk that does, is `'secret'`: a preview never prints it.
   */
  bytesReader(ws: Workspace): BytesReader {
    return (path, abs) => {
      if (this.unsaved(path)) {
        const bytes = this.docBytes(path);
        return bytes && (isSecretPath(path) || holdsSecret(bytes, path)) ? 'secret' : bytes;
      }
      const r = readWorkspaceState(ws, path, { abs });
      return r.gap === 'secret' ? 'secret' : (r.bytes ?? null);
    };
  }

  /**
   * True when the document of `path` changed (didChange) since it was opened or since the last
   * call for `path`, which starts the count again: a save of a document that did not change
   * writes nothing of the person's.
   */
  takeChanged(path: string): boolean {
    return this.changed.delete(path);
  }

  /**
   * True when the open document of `path` was edited (a didChange past the version it was opened
   * or last saved at): its text is the editor's own edit not yet saved, not a buffer left behind
   * by a file changed under it.
   */
  editedSinceSave(path: string): boolean {
    const d = this.get(path);
    if (!d) return false;
    const at = this.savedVersions.get(d.doc.uri);
    return at !== undefined && d.doc.version > at;
  }

  /** Calls `fn(path)` when a document opens, changes, closes (`change`) or is saved (`save`). Returns a disposer. */
  on(event: 'change' | 'save', fn: (path: string) => void): () => void {
    this.events.on(event, fn);
    return () => this.events.off(event, fn);
  }
}
