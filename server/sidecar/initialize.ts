import { fileURLToPath } from 'node:url';
import type * as v from 'valibot';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { ResponseError, TextDocumentSyncKind, type ClientCapabilities, type InitializeResult, type TextDocuments } from 'vscode-languageserver/node';
import { ErrorCodes } from '../../protocol/src/errors.js';
import { SERVER_NAME } from '../../protocol/src/initialize.js';
import { foldSpill } from '../core/capture/queued.js';
import { repairLostEnds } from '../core/capture/repair.js';
import { SIDECAR_BUSY_MS } from '../core/journal/journal.js';
import { openWorkspace, type Workspace } from '../core/open-workspace.js';
import { abilitiesOf, type ClientAbilities, type EditorClient } from './client.js';
import { ACTION_KIND } from './codeactions.js';
import { COMMAND_NAMES } from './commands.js';
import { Documents } from './documents.js';
import { invalidParams } from './errors.js';
import type { InitializeParams } from './lsp-params.js';
import type { Session } from './session.js';

const DEFAULTS = { verifyTimeoutMs: 2000, watchIntervalMs: 500 };

type Params = v.InferOutput<typeof InitializeParams>;

/**
 * The workspace folder the client names: `rootUri`, else the first workspace folder, else
 * `rootPath`. A `file:` URI that names no local path (a host, a bad escape) is InvalidParams.
 */
function rootOf(p: Params): string | null {
  const field = p.rootUri != null ? 'rootUri' : 'workspaceFolders';
  const uri = p.rootUri ?? p.workspaceFolders?.[0]?.uri ?? null;
  if (uri && uri.startsWith('file:')) {
    try {
      return fileURLToPath(uri);
    } catch (e) {
      throw invalidParams('initialize', `${field} ${JSON.stringify(uri)} is not a local file URI: ${(e as Error).message}`, field);
    }
  }
  return p.rootPath ?? null;
}

/**
 * The editor's name for people from its `clientInfo.name`: `Neovim`, `Helix` (Helix sends
 * `helix`), a name in lower case with its first letter raised; `the editor` when it gives none.
 */
export function editorName(clientName: string | undefined): string {
  const name = clientName?.trim() ?? '';
  if (name === '') return 'the editor';
  return /^[a-z][a-z-]*$/.test(name) ? `${name[0]!.toUpperCase()}${name.slice(1)}` : name;
}

/**
 * LSP's `initialize`: opens the journal of the client's workspace, reads what the client can do
 * (applyEdit, documentChanges, code lens refresh, code action literals) and its
 * initializationOptions, and answers takeback's capabilities. `params` are checked already
 * (lsp-params.ts). Throws InvalidParams for a root URI that names no local path, InternalError
 * when the journal cannot be opened.
 */
export function initialize(
  params: Params,
  ctx: { env?: NodeJS.ProcessEnv; cwd?: string; version: string; textDocuments: TextDocuments<TextDocument>; client: (abilities: ClientAbilities) => EditorClient },
): { session: Session; literals: boolean; result: InitializeResult } {
  const root = rootOf(params) ?? ctx.cwd ?? process.cwd();
  let ws: Workspace;
  try {
    ws = openWorkspace({ workspace: root, env: ctx.env, busyMs: SIDECAR_BUSY_MS });
    // Events the hooks queued while the journal could not take them come first.
    if (ws.journal.spilled) foldSpill(ws);
    // Then the tool calls and turns a journal left mid-way holds open for good (their end lost).
    repairLostEnds(ws);
  } catch (e) {
    throw new ResponseError(ErrorCodes.InternalError, `takeback: cannot open the journal of ${root}: ${(e as Error).message}`, null);
  }
  const init = params.initializationOptions ?? {};
  const abilities = abilitiesOf(params.capabilities as ClientCapabilities, init.applyEdits !== false);
  if (params.clientInfo?.name === 'Neovim') abilities.eolOption = true;
  const literals = Boolean(params.capabilities.textDocument?.codeAction?.codeActionLiteralSupport);
  const session: Session = {
    ws,
    docs: new Documents(ws, root, ctx.textDocuments, editorName(params.clientInfo?.name)),
    client: ctx.client(abilities),
    abilities,
    options: {
      verifyTimeoutMs: init.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs,
      watchIntervalMs: Math.max(10, init.watchIntervalMs ?? DEFAULTS.watchIntervalMs),
    },
  };
  const result: InitializeResult = {
    capabilities: {
      textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
      codeLensProvider: { resolveProvider: false },
      codeActionProvider: literals ? { codeActionKinds: [ACTION_KIND] } : true,
      executeCommandProvider: { commands: COMMAND_NAMES },
    },
    serverInfo: { name: SERVER_NAME, version: ctx.version },
  };
  return { session, literals, result };
}
