// A workspace opened in this process: a real temporary folder and a private journal home: the
// capture functions record change sets against files on disk, and a real undo step moves them,
// with no child process. For tests of the core (planner, selectors) that run in a second.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { openWorkspace, type Workspace } from '../../server/core/open-workspace.js';
import { runStep, type ApplyResult } from '../../server/core/plan/apply.js';
import { selectSets } from '../../server/core/plan/select.js';
import type { ChangeSet, Selector } from '../../server/core/types.js';
import { captureBegin, captureEnd, turnBegin, turnEnd } from '../../server/service/capture.js';

/** A workspace opened in this process (its root a real path), with helpers that change it through the capture functions. */
export interface UnitWorkspace extends Workspace {
  /** `root`'s path for workspace path `rel`. */
  abs(rel: string): string;
  /** Writes `data` at `rel` (folders made on the way), with `mode` if given. */
  write(rel: string, data: string | Buffer, mode?: number): void;
  /** The bytes at `rel`. */
  read(rel: string): Buffer;
  /**
   * A file tool's call on `paths` (workspace paths, or absolute ones): `captureBegin`, then
   * `change`, then `captureEnd`. Returns the set recorded, or null when nothing changed.
   */
  tool(paths: string[], change: () => void): ChangeSet | null;
  /** A turn around `fn` (`turnBegin` … `turnEnd`); returns the turn's id. */
  turn(fn: () => void): string;
  /** A real undo (or redo) step of what `sel` names, through `runStep`. */
  step(sel: Selector, direction: 'undo' | 'redo', opts?: { force?: boolean }): ApplyResult;
  /** Expires sets `ids` as the sweep does (their kept copies dropped). */
  expire(...ids: string[]): void;
}

const opened: { ws: Workspace; dirs: string[] }[] = [];

afterEach(() => {
  for (const o of opened.splice(0)) {
    o.ws.journal.close();
    for (const d of o.dirs) fs.rmSync(d, { recursive: true, force: true });
  }
});

let calls = 0;

/**
 * A fresh workspace folder and journal home under the system's temp folder, closed and removed
 * after the test. `env` adds to the environment it is opened with (e.g. `TAKEBACK_MAX_FILE_BYTES`).
 */
export function unitWorkspace(env: NodeJS.ProcessEnv = {}): UnitWorkspace {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-unit-ws-')));
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-unit-home-')));
  const base = openWorkspace({ workspace: root, env: { PATH: process.env.PATH, TAKEBACK_HOME: home, ...env } });
  opened.push({ ws: base, dirs: [root, home] });
  const abs = (rel: string) => (path.isAbsolute(rel) ? rel : path.join(root, rel));
  const ws: UnitWorkspace = {
    ...base,
    abs,
    write(rel, data, mode) {
      fs.mkdirSync(path.dirname(abs(rel)), { recursive: true });
      fs.writeFileSync(abs(rel), data);
      if (mode !== undefined) fs.chmodSync(abs(rel), mode);
    },
    read: (rel) => fs.readFileSync(abs(rel)),
    tool(paths, change) {
      const id = `c${++calls}`;
      captureBegin(ws, { id, paths: paths.map(abs), tool: 'Write' });
      change();
      const r = captureEnd(ws, { id });
      return r.set ? ws.journal.sets.get(r.set.id) : null;
    },
    turn(fn) {
      const { turn } = turnBegin(ws, { label: 'a turn' });
      fn();
      turnEnd(ws, { id: turn.id });
      return turn.id;
    },
    step: (sel, direction, opts = {}) => runStep(ws, () => selectSets(ws.journal, sel, direction), direction, opts),
    expire: (...ids) => ws.journal.write(() => ws.journal.sets.expire(ids)),
  };
  return ws;
}
