import { fileURLToPath } from 'node:url';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { ResponseError, TextDocumentSyncKind, type InitializeParams, type InitializeResult, type TextDocuments } from 'vscode-languageserver/node';
import { ErrorCodes } from '../../protocol/src/errors.js';
import { SERVER_NAME, type InitializationOptions } from '../../protocol/src/initialize.js';
import { openEngine, type Engine } from '../core/engine.js';
import { abilitiesOf, type ClientAbilities, type EditorClient } from './client.js';
import { ACTION_KIND } from './codeactions.js';
import { COMMAND_NAMES } from './commands.js';
import { Documents } from './documents.js';
import type { Session } from './session.js';
import { PendingSteps } from './undo-through-editor.js';

const DEFAULTS = { verifyTimeoutMs: 2000, watchIntervalMs: 500 };

/** The workspace folder the client names: `rootUri`, else the first workspace folder, else `rootPath`. */
function rootOf(p: InitializeParams): string | null {
  const uri = p.rootUri ?? p.workspaceFolders?.[0]?.uri ?? null;
  if (uri && uri.startsWith('file:')) return fileURLToPath(uri);
  return p.rootPath ?? null;
}

function positive(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : fallback;
}

/**
 * LSP's `initialize`: opens the journal of the client's workspace, reads what the client can do
 * (applyEdit, documentChanges, code lens refresh, code action literals) and its
 * initializationOptions, and answers takeback's capabilities.
 */
export function initialize(
  params: InitializeParams,
  ctx: { env?: NodeJS.ProcessEnv; cwd?: string; version: string; textDocuments: TextDocuments<TextDocument>; client: (abilities: ClientAbilities) => EditorClient },
): { session: Session; literals: boolean; result: InitializeResult } {
  const root = rootOf(params) ?? ctx.cwd ?? process.cwd();
  let engine: Engine;
  try {
    engine = openEngine({ workspace: root, env: ctx.env });
  } catch (e) {
    throw new ResponseError(ErrorCodes.InternalError, `takeback: cannot open the journal of ${root}: ${(e as Error).message}`, null);
  }
  const init = (params.initializationOptions ?? {}) as InitializationOptions;
  const abilities = abilitiesOf(params.capabilities, init.applyEdits !== false);
  if (params.clientInfo?.name === 'Neovim') abilities.eolOption = true;
  const literals = Boolean(params.capabilities.textDocument?.codeAction?.codeActionLiteralSupport);
  const session: Session = {
    engine,
    docs: new Documents(engine, root, ctx.textDocuments),
    client: ctx.client(abilities),
    abilities,
    pending: new PendingSteps(),
    options: {
      verifyTimeoutMs: positive(init.verifyTimeoutMs, DEFAULTS.verifyTimeoutMs),
      watchIntervalMs: Math.max(10, positive(init.watchIntervalMs, DEFAULTS.watchIntervalMs)),
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
