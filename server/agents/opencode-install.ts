import { existsSync, mkdirSync, readFileSync, rmdirSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { TakebackError } from '../core/errors.js';
import { isTakebackPlugin, pluginTemplate, readPluginSetup, renderPlugin, thisInstall } from './opencode-plugin.js';

/*
 * `takeback init opencode|kilo [--remove]`: takeback's plugin in the agent's plugins folder
 * (opencode's `.opencode/plugins/`, Kilo Code's `.kilo/plugins/`, or the user's), put there or
 * taken out again with the folders `init` made for it that are left empty. Loaded by `init` only.
 */

/**
 * Puts takeback's plugin for `agent` at `file` (made with its folders as needed), or with
 * `remove` deletes it and the folders `init` made for it that are now empty. Running it twice
 * changes nothing; running it from another install rewrites the SETUP line. A file of that name
 * that is not takeback's is refused (`usage`) and left as it is.
 */
export function installPlugin(agent: string, file: string, remove = false): { file: string; changed: boolean; action: 'added' | 'removed' }[] {
  const current = existsSync(file) ? readFileSync(file, 'utf8') : null;
  if (current !== null && !isTakebackPlugin(current)) {
    throw new TakebackError('usage', `${file} is not takeback's plugin; move it away first, nothing was changed`);
  }
  if (remove) {
    if (current === null) return [{ file, changed: false, action: 'removed' }];
    const made = readPluginSetup(current)?.made ?? 0;
    unlinkSync(file);
    let dir = dirname(file);
    for (let i = 0; i < made; i++, dir = dirname(dir)) {
      try {
        rmdirSync(dir);
      } catch {
        break; // not empty (the agent's own files, or the user's): kept
      }
    }
    return [{ file, changed: true, action: 'removed' }];
  }
  // The folders this call makes, counted from the file's own; a rewrite keeps the first count.
  let made = current === null ? 0 : (readPluginSetup(current)?.made ?? 0);
  if (current === null) {
    const dir = dirname(file);
    if (!existsSync(dir)) made = existsSync(dirname(dir)) ? 1 : 2;
    mkdirSync(dir, { recursive: true });
  }
  const next = renderPlugin(pluginTemplate(), thisInstall(agent, made));
  if (next === current) return [{ file, changed: false, action: 'added' }];
  writeFileAtomic.sync(file, next, { mode: 0o644 });
  return [{ file, changed: true, action: 'added' }];
}
