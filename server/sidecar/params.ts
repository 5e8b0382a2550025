import * as v from 'valibot';
import type { Selector as WireSelector } from '../../protocol/src/selector.js';
import type { Workspace } from '../core/open-workspace.js';
import { TakebackError } from '../core/errors.js';
import type { Selector } from '../core/types.js';
import { toWorkspacePath } from '../core/workspace.js';
import { invalidParams } from './errors.js';

/*
 * Incoming params, checked against their method's schema before anything is read or written: a
 * malformed request gets InvalidParams with a sentence naming the field and `data.field`, the
 * innermost field's name.
 */

/** How a schema's `expected` reads in a sentence. */
function expectation(expected: string | null): string {
  switch (expected) {
    case null:
      return 'something else';
    case 'Object':
      return 'an object';
    case 'Array':
      return 'an array';
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    default:
      return expected;
  }
}

/** The innermost field an issue is about, and its dotted path (`selector.ids`), or null for the params themselves. */
function fieldOf(issue: v.BaseIssue<unknown>): { name: string; path: string } | null {
  const keys = (issue.path ?? []).map((p) => p.key);
  const names = keys.filter((k): k is string => typeof k === 'string');
  if (names.length === 0) return null;
  const path = keys.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join('');
  return { name: names[names.length - 1]!, path };
}

/** One sentence for the first issue: `id is required (a string)`, `selector must be an object, not 5`. */
function sentence(issue: v.BaseIssue<unknown>, field: { name: string; path: string } | null): string {
  const what = field?.path ?? 'params';
  if (issue.kind === 'validation') return `${what} ${issue.message}`;
  if (issue.type === 'strict_object' && issue.expected === 'never') return `${what}: no such field`;
  if (issue.input === undefined && field) return `${what} is required (${expectation(issue.expected)})`;
  return `${what} must be ${expectation(issue.expected)}, not ${issue.received}`;
}

/** The params checked against `schema` (its output, with defaults); throws InvalidParams naming the field. */
export function parseParams<const S extends v.GenericSchema>(method: string, schema: S, raw: unknown): v.InferOutput<S> {
  const r = v.safeParse(schema, raw, { abortEarly: true });
  if (r.success) return r.output;
  const issue = r.issues[0];
  const field = fieldOf(issue);
  throw invalidParams(method, sentence(issue, field), field?.name);
}

/**
 * A checked selector for the engine: `paths` (workspace-relative, or absolute inside the
 * workspace) made workspace-relative, `lines` as given, absent fields left out. A path outside the workspace (or
 * with a NUL): OutsideWorkspace.
 */
export function workspaceSelector(method: string, ws: Workspace, sel: v.InferOutput<typeof WireSelector>): Selector {
  const out: Selector = {};
  if (sel.ids !== undefined) out.ids = sel.ids;
  if (sel.turn !== undefined) out.turn = sel.turn;
  if (sel.last !== undefined) out.last = sel.last;
  if (sel.afterTurn !== undefined) out.afterTurn = sel.afterTurn;
  if (sel.includeUnclaimed) out.includeUnclaimed = true;
  if (sel.paths?.length) {
    out.paths = sel.paths.map((p) => {
      const rel = p.includes('\0') ? null : toWorkspacePath(ws.root, p);
      if (rel === null) throw new TakebackError('outside-workspace', `${method}: ${p} is outside the workspace ${ws.root}`, { path: p });
      return rel;
    });
  }
  if (sel.lines !== undefined) out.lines = { start: sel.lines.start, end: sel.lines.end };
  return out;
}
