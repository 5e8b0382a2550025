import * as v from 'valibot';
import { InitializationOptions } from '../../protocol/src/initialize.js';
import { maybe, StringList } from '../../protocol/src/selector.js';

/*
 * Schemas for the parts of LSP's own params the sidecar reads. Loose: every other field LSP
 * defines passes through unread; a field read here of the wrong shape is InvalidParams.
 */

const Uri = v.object({ uri: v.string() });
/** LSP's `uinteger`: a line or character offset is a whole number, 0 or more (a negative or fractional one would become a range of lines no selector takes). */
const UInteger = v.pipe(v.number(), v.integer(), v.minValue(0));
const Position = v.object({ line: UInteger, character: UInteger });

/** `initialize`: the workspace (`rootUri`, `workspaceFolders`, `rootPath`), what the client can do, takeback's options. */
export const InitializeParams = v.looseObject({
  processId: maybe(v.number()),
  rootUri: maybe(v.string()),
  rootPath: maybe(v.string()),
  workspaceFolders: maybe(v.array(v.looseObject({ uri: v.string() }))),
  clientInfo: maybe(v.looseObject({ name: v.string() })),
  initializationOptions: maybe(InitializationOptions),
  capabilities: v.looseObject({
    workspace: maybe(
      v.looseObject({
        applyEdit: maybe(v.boolean()),
        workspaceEdit: maybe(v.looseObject({ documentChanges: maybe(v.boolean()), resourceOperations: maybe(StringList) })),
        codeLens: maybe(v.looseObject({ refreshSupport: maybe(v.boolean()) })),
      }),
    ),
    textDocument: maybe(v.looseObject({ codeAction: maybe(v.looseObject({ codeActionLiteralSupport: maybe(v.looseObject({})) })) })),
  }),
});

/** `textDocument/codeLens`. */
export const CodeLensParams = v.looseObject({ textDocument: Uri });

/** `textDocument/codeAction`. */
export const CodeActionParams = v.looseObject({
  textDocument: Uri,
  range: v.object({ start: Position, end: Position }),
  context: v.looseObject({ only: maybe(StringList) }),
});

/** `workspace/executeCommand`: a command name and its arguments. */
export const ExecuteCommandParams = v.looseObject({ command: v.string(), arguments: maybe(v.array(v.unknown())) });
