import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { CreateFile, DeleteFile, TextDocumentEdit, TextEdit, WorkspaceEdit } from 'vscode-languageserver/node';
import type * as W from '../../protocol/src/types.js';
import { MAX_DIFF_BYTES } from '../core/diffs.js';
import { readWorkspaceState } from '../core/fsstate.js';
import type { TxnOp } from '../core/journal/txns.js';
import { movingSets, recordStep, writeStep, type PreparedStep, type StepOp } from '../core/plan/apply.js';
import type { Action, PlannedFile } from '../core/plan/plan.js';
import { describeSelector, type Selector } from '../core/plan/select.js';
import { sameState, type FileState } from '../core/types.js';
import { applyStep, prepareEditorStep, type EditorReaders } from '../service/undo.js';
import { toAppliedFile, toConflictFile } from '../wire.js';
import type { Session } from './session.js';
import { decodeUtf8, editableText, eolOf, fromClientText, hasBom, lineEdits, toClientText } from './text.js';

/*
 * Undo and redo through the client's own buffers.
 *
 * 1. prepare (core, under the journal lock): plan against what the editor shows — unsaved text
 *    is what is "there now", merged over like any later edit (base = what the change left,
 *    ours = the document's text, theirs = what it found; redo likewise). Where the person's
 *    unsaved lines and the change's hunks overlap, or the merge is not text the buffer takes
 *    byte for byte, its path is an `unsaved-in-editor` conflict naming the lines;
 * 2. route each write: text files the editor can hold byte for byte go to the editor (minimal
 *    line edits against the version it gave us, CreateFile + text, DeleteFile); the rest
 *    (binary, modes, links, folders, odd encodings) is the server's to write, as is the disk
 *    under a document that already shows the result (a buffer not reloaded since the agent).
 *    A merge over unsaved text goes to that buffer only, and the step is recorded when the
 *    person saves it, with the buffer's text as what the step replaced;
 * 3. `workspace/applyEdit`, then verify what landed: an editor may answer `applied: true` after
 *    skipping an edit, so each open document must show the new text (didChange), a deleted file
 *    must be gone. Anything that did not land is reported and nothing is recorded or written;
 * 4. the server's own writes, as one transaction (core `writeStep`: re-checks that nothing moved);
 * 5. record (core `recordStep`) once every path is in place on disk: at once, or when the editor
 *    saves (didSave, or the disk seen matching on the watch's tick). Until then the step is
 *    pending and the result says which paths wait. A path sent for a file the client has no
 *    document of is confirmed by nothing but the disk (LSP4IJ edits such a file in memory, or
 *    skips it when its file system does not know it, and tells nothing either way): when it is
 *    neither opened nor saved within `verifyTimeoutMs`, the server writes it itself, as for a
 *    client without applyEdit, provided the disk still holds what the step found (an editor's
 *    own empty CreateFile aside); otherwise the step is dropped with a warning naming the file.
 */

/** How the editor makes one write: text edits on a document, a file it creates, one it deletes. */
type Routed =
  | { kind: 'text'; uri: string; version: number | null; edits: TextEdit[]; text: string }
  | { kind: 'create'; uri: string; text: string }
  | { kind: 'delete'; uri: string };

/** What goes to the editor for one write. */
type EditorOp = Routed & { o: StepOp };

/** How a write through the editor turned out. */
type Outcome = { o: StepOp; landed: 'editor' | 'disk' } | { o: StepOp; failed: string };

/** The mode a file gets when an editor creates it. */
const DEFAULT_MODE = 0o666 & ~process.umask();

/** True when every existing folder from the root to `path`'s parent is a real folder (an editor would follow a link). */
function parentsAreFolders(root: string, path: string): boolean {
  const segs = path.split('/');
  let dir = root;
  for (let i = 0; i < segs.length - 1; i++) {
    dir = join(dir, segs[i]!);
    try {
      const st = lstatSync(dir);
      if (st.isSymbolicLink() || !st.isDirectory()) return false;
    } catch {
      return true; // missing from here down: the editor makes them
    }
  }
  return true;
}

function blobText(session: Session, s: FileState): Buffer | null {
  if (!s.exists || s.type !== 'file' || !s.sha256) return null;
  try {
    return session.ws.journal.blobs.get(s.sha256);
  } catch {
    return null;
  }
}

function endsInNewline(text: string): boolean {
  return text.endsWith('\n');
}

/** The editor's part of write `op` (`bytes`: what it writes), or null when the server writes it. */
function route(session: Session, op: TxnOp, bytes: Buffer | null): Routed | null {
  const { abilities, docs, ws } = session;
  if (!abilities.applyEdit) return null;
  if (op.path.startsWith('/') || !parentsAreFolders(ws.root, op.path)) return null;
  const doc = docs.get(op.path);
  if (!op.to.exists) {
    if (!abilities.delete || !op.from.exists || op.from.type !== 'file') return null;
    return { kind: 'delete', uri: docs.uriOf(op.path) };
  }
  if (op.to.type !== 'file' || !bytes || bytes.length > MAX_DIFF_BYTES) return null;
  const target = editableText(bytes);
  if (target === null) return null;
  if (op.from.exists && op.from.type !== 'file') return null;
  const mode = op.from.exists ? op.from.mode : DEFAULT_MODE;
  if (op.to.mode !== mode) return null;

  if (doc) {
    // Against the document's own text, in the document's own terms (mark and line ends).
    const clientTarget = toClientText(target, doc.profile);
    if (fromClientText(clientTarget, doc.profile, hasBom(target)) !== target) return null;
    if (doc.profile.stripsBom && op.from.exists) {
      const cur = decodeUtf8(blobText(session, op.from) ?? Buffer.alloc(0));
      if (cur === null || hasBom(cur) !== hasBom(target)) return null; // the editor keeps the file's mark as it is
    }
    if (abilities.eolOption && endsInNewline(doc.doc.getText()) !== endsInNewline(clientTarget)) {
      // Neovim cannot add or remove the final newline by edits ('eol'): the server writes the
      // disk and the buffer is reloaded from it — only when the buffer holds nothing unsaved.
      const cur = blobText(session, op.from);
      const docBytes = docs.docBytes(op.path);
      if (cur && docBytes && cur.equals(docBytes)) return null;
    }
    return { kind: 'text', uri: doc.uri, version: doc.doc.version, edits: lineEdits(doc.doc.getText(), clientTarget), text: target };
  }
  // Not open: the editor loads the file itself, with its own reading of marks and line ends, so
  // only plain LF text goes that way.
  if (hasBom(target) || eolOf(target) !== 'lf') return null;
  if (!op.from.exists) {
    if (!abilities.create) return null;
    // Neovim sets 'eol' on a file it creates: text without a final newline is the server's to write.
    if (abilities.eolOption && target !== '' && !endsInNewline(target)) return null;
    return { kind: 'create', uri: docs.uriOf(op.path), text: target };
  }
  const curBytes = blobText(session, op.from);
  const cur = curBytes ? editableText(curBytes) : null;
  if (cur === null || hasBom(cur) || eolOf(cur) !== 'lf') return null;
  if (abilities.eolOption && endsInNewline(cur) !== endsInNewline(target)) return null;
  return { kind: 'text', uri: docs.uriOf(op.path), version: null, edits: lineEdits(cur, target), text: target };
}

/**
 * True when the open document of `path`, holding unsaved text, takes `bytes` (a merge over that
 * text, whose state is `target`) as text edits on its buffer, byte for byte: so the merge goes
 * to the buffer, and nothing is written on disk under it. False for what only the server could
 * write (odd encodings, a mode to change, a final newline Neovim cannot add or remove by edits):
 * such unsaved text stays a conflict.
 */
function holdsMerge(session: Session, path: string, bytes: Buffer, target: FileState): boolean {
  const doc = session.docs.get(path);
  if (!doc) return false;
  const r = route(session, { path, from: diskState(session, path), to: target }, bytes);
  if (r?.kind !== 'text') return false;
  return !session.abilities.eolOption || endsInNewline(doc.doc.getText()) === endsInNewline(toClientText(r.text, doc.profile));
}

/**
 * What a plan through this session's editor reads: the states and bytes of its documents
 * (unsaved text is what is there now), which paths hold unsaved text, the editor's name, and
 * which merges over unsaved text its buffers take.
 */
export function editorReaders(session: Session): Required<EditorReaders> {
  const { ws, docs } = session;
  return {
    state: docs.stateReader(ws),
    bytes: docs.bytesReader(ws),
    unsaved: (p, t) => docs.unsaved(p, t),
    editor: docs.editor,
    merges: (p, b, t) => holdsMerge(session, p, b, t),
  };
}

/** The workspace edit for `ops`: versioned documentChanges when the client takes them, else a plain `changes` map. */
function workspaceEdit(session: Session, ops: EditorOp[]): WorkspaceEdit | null {
  const zero = { line: 0, character: 0 };
  if (session.abilities.documentChanges) {
    const changes: (TextDocumentEdit | CreateFile | DeleteFile)[] = [];
    for (const e of ops) {
      if (e.kind === 'create') {
        changes.push({ kind: 'create', uri: e.uri, options: { overwrite: false, ignoreIfExists: true } });
        // The end is past the new, empty document (LSP allows it): an editor that holds an empty
        // file as one empty line (Neovim) replaces that line instead of keeping it after the text.
        if (e.text !== '') changes.push({ textDocument: { uri: e.uri, version: null }, edits: [{ range: { start: zero, end: { line: 1, character: 0 } }, newText: e.text }] });
      } else if (e.kind === 'text' && e.edits.length > 0) {
        changes.push({ textDocument: { uri: e.uri, version: e.version }, edits: e.edits });
      }
    }
    for (const e of ops) if (e.kind === 'delete') changes.push({ kind: 'delete', uri: e.uri, options: { ignoreIfNotExists: true } });
    return changes.length > 0 ? { documentChanges: changes } : null;
  }
  const changes: Record<string, TextEdit[]> = {};
  for (const e of ops) if (e.kind === 'text' && e.edits.length > 0) changes[e.uri] = e.edits;
  return Object.keys(changes).length > 0 ? { changes } : null;
}

function diskState(session: Session, path: string): FileState {
  const { ws } = session;
  return readWorkspaceState(ws, path).state;
}

/** Resolves true once `test()` holds (checked on document events and every 25 ms), false after `ms`. */
function until(session: Session, probe: () => boolean, ms: number): Promise<boolean> {
  // A look that fails (the file is unreadable for a moment) is a "not yet", never a crash in a timer.
  const test = () => {
    try {
      return probe();
    } catch {
      return false;
    }
  };
  if (test()) return Promise.resolve(true);
  return new Promise((res) => {
    const poll = setInterval(check, 25);
    const off = session.docs.on('change', check);
    const timer = setTimeout(() => finish(false), ms);
    function check() {
      if (test()) finish(true);
    }
    function finish(v: boolean) {
      clearInterval(poll);
      clearTimeout(timer);
      off();
      res(v);
    }
  });
}

/** Checks what one editor write left: in the open document, on disk, or nothing (failed). */
async function verify(session: Session, e: EditorOp, refusal: string | null): Promise<Outcome> {
  const { docs } = session;
  const path = e.o.op.path;
  const onDisk = () => sameState(diskState(session, path), e.o.op.to);
  const wait = session.options.verifyTimeoutMs;
  if (e.kind === 'delete') {
    if (await until(session, onDisk, refusal ? 0 : wait)) return { o: e.o, landed: 'disk' };
    return { o: e.o, failed: refusal ?? 'the editor did not delete it: still on disk' };
  }
  const shown = () => docs.shows(path, e.text);
  if (onDisk()) return { o: e.o, landed: 'disk' };
  if (docs.get(path)) {
    if (await until(session, () => shown() || onDisk(), wait)) return { o: e.o, landed: shown() ? 'editor' : 'disk' };
    return { o: e.o, failed: refusal ?? "the editor did not apply the edit: its text differs from the change's (was the edit skipped?)" };
  }
  // Not open in the editor (it edits files it has not opened in memory, and tells us nothing):
  // confirmed when it saves. Unless it said no, or the file it was to create is not there.
  if (refusal) return { o: e.o, failed: refusal };
  if (e.kind === 'create' && !diskState(session, path).exists) return { o: e.o, failed: 'the editor did not create it' };
  return { o: e.o, landed: 'editor' };
}

/**
 * A disk write for a path the planner found in place through the editor's eyes but whose disk
 * differs from the target; null when the disk is already there (or its bytes cannot be kept).
 * Null too for a step narrowed to lines (`byLines`) whose document's text is an edit made in the
 * editor since its last save (the person's own undo after a step by hunks brought the hunk's
 * text back): that step waits for the editor's save, since a write under the buffer changes the
 * file's mtime and an editor (Helix) then refuses the save as modified by another program.
 */
function diskCatchUp(session: Session, f: PlannedFile, byLines: boolean): StepOp | null {
  const { ws } = session;
  if (byLines && session.docs.editedSinceSave(f.path)) return null;
  const now = readWorkspaceState(ws, f.path, { blobs: ws.journal.blobs });
  if (now.gap || sameState(now.state, f.target)) return null;
  const bytes = blobText(session, f.target);
  if (f.target.exists && f.target.type === 'file' && !bytes) return null;
  const action: Action = !f.target.exists ? 'remove' : !now.state.exists ? 'bring-back' : 'put-back';
  return { op: { path: f.path, from: now.state, to: f.target }, bytes, file: { ...f, action, current: now.state } };
}

/** A request for one undo or redo. */
export interface StepRequest {
  selector: Selector;
  direction: 'undo' | 'redo';
  force: boolean;
  /** `command`: from a code lens or code action (results are shown as messages). */
  origin: 'request' | 'command';
}

/** The step running now for each session: steps of one client run one after another. */
const running = new WeakMap<Session, Promise<unknown>>();

/**
 * Undoes or redoes through the client when it can apply edits, else on disk (the command line's
 * transaction). Steps of one client run one at a time, in the order asked. Throws the engine's
 * errors (not found, expired, ...).
 */
export function runStep(session: Session, req: StepRequest): Promise<W.ApplyResult> {
  const before = running.get(session) ?? Promise.resolve();
  const next = before.then(
    () => runOne(session, req),
    () => runOne(session, req),
  );
  running.set(session, next.catch(() => undefined));
  return next;
}

async function runOne(session: Session, req: StepRequest): Promise<W.ApplyResult> {
  const { ws, docs, client } = session;
  const readers = editorReaders(session);
  if (!session.abilities.applyEdit) {
    const r = applyStep(ws, req.selector, req.direction, { force: req.force, read: readers.state, unsaved: readers.unsaved, editor: readers.editor });
    if (r.written && r.sets.length > 0) client.journalChanged(req.direction === 'undo' ? 'undone' : 'redone');
    return r;
  }

  const step = prepareEditorStep(ws, req.selector, req.direction, { force: req.force, ...readers });
  const base = {
    direction: req.direction,
    conflicts: step.conflicts.map(toConflictFile),
    gaps: step.gaps,
    skipped: step.plan.skipped,
    forced: req.force,
    complete: step.gaps.length === 0,
  };
  if (step.blocked) return { ...base, sets: [], applied: [], written: false, notes: [] };
  pendingOf(session).dropOverlapping(step);

  const toEditor: EditorOp[] = [];
  const toDisk: StepOp[] = [];
  for (const o of step.ops) {
    const e = route(session, o.op, o.bytes);
    if (e) toEditor.push({ ...e, o });
    else toDisk.push(o);
  }

  // Paths the editor already shows as the step leaves them — a buffer never reloaded since the
  // agent changed the file still holds the text from before — but whose disk differs: the server
  // writes the disk under it (nothing of the user's is in that buffer to lose). Narrowed to
  // lines, a buffer edited since its save is the editor's to save: the step is recorded then.
  const catchUp: StepOp[] = [];
  for (const f of step.inPlace) {
    const o = diskCatchUp(session, f, req.selector.lines !== undefined);
    if (o) catchUp.push(o);
  }
  toDisk.push(...catchUp);

  // The editor's part.
  let refusal: string | null = null;
  const edit = workspaceEdit(session, toEditor);
  if (edit) {
    const label = `takeback: ${req.direction} ${describeSelector(req.selector)}`;
    try {
      const answer = await client.applyEdit(label, edit);
      if (!answer.applied) refusal = `the editor refused the edit${answer.failureReason ? `: ${answer.failureReason}` : ''}`;
    } catch (e) {
      refusal = `the editor failed the edit: ${(e as Error).message}`;
    }
  }
  const outcomes = await Promise.all(toEditor.map((e) => verify(session, e, refusal)));
  const landed = outcomes.filter((x): x is { o: StepOp; landed: 'editor' | 'disk' } => 'landed' in x);
  const failed: W.FailedFile[] = outcomes.filter((x): x is { o: StepOp; failed: string } => 'failed' in x).map((x) => ({ path: x.o.op.path, reason: x.failed }));
  const viaEditor = landed.map((x) => toAppliedFile(x.o.file, 'editor'));
  const stopped = (notes: string[]): W.ApplyResult => ({ ...base, sets: [], applied: viaEditor, written: viaEditor.length > 0, notes, pending: [], failed });

  if (failed.length > 0) {
    return stopped([
      `nothing was recorded as ${req.direction === 'undo' ? 'undone' : 'redone'} and takeback wrote none of its own part${viaEditor.length > 0 ? "; what landed is in the editor (its undo takes it back), or run the step again to finish it" : ''}`,
    ]);
  }

  // The server's part, as one transaction.
  let notes: string[] = [];
  try {
    notes = writeStep(ws, step, toDisk).notes;
  } catch (e) {
    for (const o of toDisk) failed.push({ path: o.op.path, reason: (e as Error).message });
    return stopped([`nothing was recorded as ${req.direction === 'undo' ? 'undone' : 'redone'}: ${(e as Error).message}`]);
  }

  const rec = recordStep(ws, step);
  const pending = rec.recorded ? [] : rec.missing;
  if (rec.recorded) {
    if (step.plan.sets.length > 0) client.journalChanged(req.direction === 'undo' ? 'undone' : 'redone');
  } else if (rec.stale) {
    notes.push(`not recorded: ${rec.stale}`);
  } else {
    pendingOf(session).add(session, step, pending, req);
  }
  const waiting = new Set(pending);
  // The paths sent for files the client has no document of: only the disk can confirm them.
  if (!rec.recorded && !rec.stale) {
    const unopened = toEditor.filter((e) => e.kind !== 'delete' && waiting.has(e.o.op.path) && !docs.get(e.o.op.path));
    if (unopened.length > 0) pendingOf(session).writeUnconfirmedLater(session, step, unopened.map((e) => ({ o: e.o, created: e.kind === 'create' })));
  }
  const caught = new Set(catchUp.map((o) => o.op.path));
  const applied = [
    ...step.ops.map((o) => toAppliedFile(o.file, toDisk.includes(o) ? 'disk' : 'editor')),
    ...catchUp.map((o) => toAppliedFile(o.file, 'disk')),
    ...step.inPlace.filter((f) => !caught.has(f.path)).map((f) => toAppliedFile(f, waiting.has(f.path) ? 'editor' : 'disk')),
  ];
  return { ...base, sets: movingSets(step), applied, written: true, notes, pending, failed: [] };
}

/** One step whose text is in the editor and not yet saved. */
interface Waiting {
  step: PreparedStep;
  req: StepRequest;
  /** Path → the file text the editor must save there. */
  texts: Map<string, string | null>;
  missing: string[];
}

/**
 * Steps waiting for the editor to save. Checked when a document is saved and on the watch's
 * tick (an editor may save a file it never opened, telling us nothing): recorded once every
 * path is in place on disk; dropped, with a message, when a path changed to something else
 * before it was saved or when another process moved the sets.
 */
/** Each session's steps whose text is in the editor, waiting for it to be saved. */
const pendingBySession = new WeakMap<Session, PendingSteps>();

function pendingOf(session: Session): PendingSteps {
  let p = pendingBySession.get(session);
  if (!p) {
    p = new PendingSteps();
    pendingBySession.set(session, p);
  }
  return p;
}

/**
 * Records the session's steps whose files the editor has now saved (and drops those whose text
 * the person changed before saving); called on every save and by the journal watch.
 */
export function checkPending(session: Session): void {
  pendingBySession.get(session)?.check(session);
}

/** True when a step of the session through the editor that changes `path` still waits for a save (of `path` or another of its files). */
export function waitsForSave(session: Session, path: string): boolean {
  return pendingBySession.get(session)?.waits(path) ?? false;
}

class PendingSteps {
  private list: Waiting[] = [];

  add(session: Session, step: PreparedStep, missing: string[], req: StepRequest): void {
    const texts = new Map<string, string | null>();
    for (const path of missing) {
      const f = step.plan.files.find((x) => x.path === path);
      // A merge the buffer already holds (opened before the agent, edited since, not saved) has
      // no op, so its bytes were never stored: they are the plan's own.
      const b = f ? (f.merged ?? blobText(session, f.target)) : null;
      texts.set(path, b ? decodeUtf8(b) : null);
    }
    this.list.push({ step, req, texts, missing });
  }

  /**
   * After `verifyTimeoutMs`, writes on disk the paths of waiting step `step` that the editor was
   * sent for files it has no document of and that neither it opened nor saved since (see 5. at
   * the top), then records what is in place. A path the disk no longer holds as the step found it
   * (an editor's empty `CreateFile` aside: `created`) drops the step, with a warning naming it.
   */
  writeUnconfirmedLater(session: Session, step: PreparedStep, paths: { o: StepOp; created: boolean }[]): void {
    const timer = setTimeout(() => {
      try {
        this.writeUnconfirmed(session, step, paths);
      } catch {
        // The session ended meanwhile (its journal closed): nothing is left to tell.
      }
    }, session.options.verifyTimeoutMs);
    // A sidecar that is shutting down does not stay up for it.
    timer.unref();
  }

  /** The write {@link writeUnconfirmedLater} makes when its time comes. */
  private writeUnconfirmed(session: Session, step: PreparedStep, paths: { o: StepOp; created: boolean }[]): void {
    const w = this.list.find((x) => x.step === step);
    if (!w) return; // recorded, superseded or dropped meanwhile
    const what = `${w.req.direction} of ${describeSelector(w.req.selector)}`;
    const ops: StepOp[] = [];
    for (const { o, created } of paths) {
      const path = o.op.path;
      if (!w.missing.includes(path) || session.docs.get(path)) continue; // saved, or opened: the editor has it
      const now = diskState(session, path);
      if (sameState(now, o.op.to)) continue;
      const emptyMade = created && now.exists && now.type === 'file' && now.size === 0;
      if (!sameState(now, o.op.from) && !emptyMade) {
        this.list = this.list.filter((x) => x !== w);
        session.client.showMessage('warning', `takeback: ${what} not recorded: the editor did not confirm its edit of ${path}, and ${path} changed on disk meanwhile`);
        return;
      }
      ops.push(emptyMade ? { ...o, op: { ...o.op, from: now } } : o);
    }
    try {
      writeStep(session.ws, step, ops);
    } catch (e) {
      this.list = this.list.filter((x) => x !== w);
      session.client.showMessage('warning', `takeback: ${what} not recorded: ${(e as Error).message}`);
      return;
    }
    this.check(session);
  }

  /** True when a waiting step changes `path`. */
  waits(path: string): boolean {
    return this.list.some((w) => w.step.plan.files.some((f) => f.path === path));
  }

  /** Forgets waiting steps that share a set with `step` (a newer step on the same sets supersedes them). */
  dropOverlapping(step: PreparedStep): void {
    const ids = new Set(step.plan.sets.map((s) => s.id));
    this.list = this.list.filter((w) => !w.step.plan.sets.some((s) => ids.has(s.id)));
  }

  /** Records what is now in place; reports what can no longer be. */
  check(session: Session): void {
    if (this.list.length === 0) return;
    const keep: Waiting[] = [];
    for (const w of this.list) {
      const files = new Map(w.step.plan.files.map((f) => [f.path, f]));
      const stillMissing = w.missing.filter((p) => !sameState(diskState(session, p), files.get(p)!.target));
      if (stillMissing.length === 0) {
        const rec = recordStep(session.ws, w.step);
        if (rec.recorded) {
          session.client.journalChanged(w.req.direction === 'undo' ? 'undone' : 'redone');
          if (w.req.origin === 'command') session.client.showMessage('info', `takeback: ${w.req.direction} of ${describeSelector(w.req.selector)} saved and recorded`);
          continue;
        }
        if (rec.stale) {
          session.client.showMessage('warning', `takeback: ${w.req.direction} of ${describeSelector(w.req.selector)} not recorded: ${rec.stale}`);
          continue;
        }
        w.missing = rec.missing;
        keep.push(w);
        continue;
      }
      // A path whose open document no longer shows the step's text will not be saved as it: give up.
      const lost = stillMissing.find((p) => {
        const text = w.texts.get(p);
        return session.docs.get(p) !== undefined && (text == null || !session.docs.shows(p, text));
      });
      if (lost) {
        session.client.showMessage('warning', `takeback: ${w.req.direction} of ${describeSelector(w.req.selector)} not recorded: ${lost} changed in the editor before it was saved`);
        continue;
      }
      w.missing = stillMissing;
      keep.push(w);
    }
    this.list = keep;
  }
}
