import type { Selector } from '../../protocol/src/types.js';
import type { Engine } from '../core/engine.js';
import { TakebackError } from '../core/errors.js';
import { toWorkspacePath } from '../core/workspace.js';
import { invalidParams } from './errors.js';

/*
 * Checks of incoming params: a malformed request gets InvalidParams naming the field, before
 * anything is read or written.
 */

type Obj = Record<string, unknown>;

export function object(method: string, p: unknown, optional = false): Obj {
  if ((p === undefined || p === null) && optional) return {};
  if (typeof p !== 'object' || p === null || Array.isArray(p)) throw invalidParams(method, 'params must be an object');
  return p as Obj;
}

export function str(method: string, o: Obj, key: string, required: true): string;
export function str(method: string, o: Obj, key: string, required?: false): string | undefined;
export function str(method: string, o: Obj, key: string, required = false): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) {
    if (required) throw invalidParams(method, `${key} is required (a string)`, key);
    return undefined;
  }
  if (typeof v !== 'string') throw invalidParams(method, `${key} must be a string, not ${JSON.stringify(v)}`, key);
  return v;
}

export function bool(method: string, o: Obj, key: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalidParams(method, `${key} must be true or false, not ${JSON.stringify(v)}`, key);
  return v;
}

export function strings(method: string, o: Obj, key: string): string[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw invalidParams(method, `${key} must be an array of strings`, key);
  return v as string[];
}

export function direction(method: string, o: Obj): 'undo' | 'redo' {
  const v = o.direction ?? 'undo';
  if (v !== 'undo' && v !== 'redo') throw invalidParams(method, `direction must be "undo" or "redo", not ${JSON.stringify(v)}`, 'direction');
  return v;
}

/**
 * A selector: exactly one of ids/turn/last/afterTurn, and `paths` (workspace-relative, or
 * absolute inside the workspace) made workspace-relative. A path outside: OutsideWorkspace.
 */
export function selector(method: string, engine: Engine, raw: unknown, field = 'selector'): Selector {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidParams(method, `${field} must be an object like {"ids": ["12"]}, {"turn": "t3"}, {"last": true} or {"afterTurn": "t2"}`, field);
  const o = raw as Obj;
  for (const k of Object.keys(o)) {
    if (!['ids', 'turn', 'last', 'afterTurn', 'paths'].includes(k)) throw invalidParams(method, `${field}.${k} is not a selector field (ids, turn, last, afterTurn, paths)`, `${field}.${k}`);
  }
  const sel: Selector = {
    ids: strings(method, o, 'ids'),
    turn: str(method, o, 'turn'),
    last: bool(method, o, 'last'),
    afterTurn: str(method, o, 'afterTurn'),
  };
  const kinds = [sel.ids?.length, sel.turn !== undefined, sel.last, sel.afterTurn !== undefined].filter(Boolean).length;
  if (kinds !== 1) throw invalidParams(method, `${field} needs exactly one of ids, turn, last, afterTurn`, field);
  const paths = strings(method, o, 'paths');
  if (paths?.length) {
    sel.paths = paths.map((p) => {
      const rel = p.includes('\0') ? null : toWorkspacePath(engine.root, p);
      if (rel === null) throw new TakebackError('outside-workspace', `${method}: ${p} is outside the workspace ${engine.root}`, { path: p });
      return rel;
    });
  }
  for (const k of Object.keys(sel) as (keyof Selector)[]) if (sel[k] === undefined) delete sel[k];
  return sel;
}
