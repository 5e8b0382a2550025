import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';

/*
 * How the agents that trust folders (Qwen Code, Copilot CLI) tell whether a folder is one they
 * trust, or inside one: by the folder's path as written and with its links followed, so that a
 * folder trusted through a link is found either way.
 */

/** `p` resolved, and also with its links followed when it exists (absolute paths, one or two). */
export function pathForms(p: string): string[] {
  const forms = new Set([resolve(p)]);
  try {
    forms.add(realpathSync(p));
  } catch {
    // Not there: compared as written.
  }
  return [...forms];
}

/** Whether `folder` is `dir` or inside it, in any of the forms of each (see {@link pathForms}). */
export function isWithin(folder: string, dir: string): boolean {
  const dirs = pathForms(dir);
  return pathForms(folder).some((f) =>
    dirs.some((d) => {
      const rel = relative(d, f);
      return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
    }),
  );
}
