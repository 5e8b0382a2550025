import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { TakebackError } from '../core/errors.js';
import { isTakebackPlugin, pluginTemplate, readPluginSetup, renderPlugin, thisInstall } from './opencode-plugin.js';

/*
 * `takeback init opencode|kilo [--remove]`: takeback's plugin in the agent's plugins folder
 * (opencode's `.opencode/plugins/`, Kilo Code's `.kilo/plugins/`, or the user's), put there or
 * taken out again with the folders `init` made for it that are left empty. Loaded by `init` only.
 */

/**
 * What opencode and the Kilo Code CLI write into each config folder they read at start: their
 * plugin package installed (its `package.json`, a lock file, `node_modules`) and a `.gitignore`
 * that names these, itself included (Kilo's also its `agent-manager.json`, which it keeps there).
 */
const AGENT_INSTALL = ['.gitignore', 'node_modules', 'package.json', 'package-lock.json', 'pnpm-lock.yaml', 'bun.lock', 'yarn.lock', 'agent-manager.json'];
/** The plugin packages they install there. */
const AGENT_PLUGIN_PACKAGES = ['@opencode-ai/plugin', '@kilocode/plugin'];

/**
 * Deletes the agent's own start-up install from config folder `dir` when that is all the folder
 * holds: every entry one of AGENT_INSTALL, a `.gitignore` naming only those (itself among them),
 * and a `package.json`, if any, that asks for nothing but the agent's plugin package. Anything
 * else there (a file of the user's, a dependency they added) and nothing is deleted.
 */
function removeAgentInstall(dir: string): void {
  let names: string[];
  let ignored: string[];
  try {
    names = readdirSync(dir);
    ignored = readFileSync(join(dir, '.gitignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '');
  } catch {
    return;
  }
  if (!names.every((n) => AGENT_INSTALL.includes(n)) || !ignored.includes('.gitignore') || !ignored.every((n) => AGENT_INSTALL.includes(n))) return;
  if (names.includes('package.json')) {
    try {
      const pkg: unknown = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (typeof pkg !== 'object' || pkg === null || Object.keys(pkg).some((k) => k !== 'dependencies')) return;
      const deps: unknown = (pkg as { dependencies?: unknown }).dependencies ?? {};
      if (typeof deps !== 'object' || deps === null || Object.keys(deps).some((d) => !AGENT_PLUGIN_PACKAGES.includes(d))) return;
    } catch {
      return;
    }
  }
  for (const n of names) rmSync(join(dir, n), { recursive: true, force: true });
}

/**
 * Puts takeback's plugin for `agent` at `file` (made with its folders as needed), or with
 * `remove` deletes it and the folders `init` made for it that are now empty, or that hold only
 * the agent's own start-up install (see removeAgentInstall). Running it twice changes nothing;
 * running it from another install rewrites the SETUP line. A file of that name that is not
 * takeback's is refused (`usage`) and left as it is.
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
      // The agent's config folder init made holds, once the plugins folder is gone, what the
      // agent installed there at start for itself: that goes with it.
      if (i === 1) removeAgentInstall(dir);
      try {
        rmdirSync(dir);
      } catch {
        break; // not empty (the user's files): kept
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
