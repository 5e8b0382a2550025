import { existsSync, mkdirSync, readFileSync, rmdirSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { TakebackError } from '../core/errors.js';
import { packageRoot } from '../core/package-info.js';
import { socketPath } from '../daemon/address.js';

/*
 * takeback's plugin in an opencode-like agent's plugins folder (opencode's `.opencode/plugins/`,
 * Kilo Code's `.kilo/plugins/`, or the user's): `init` copies clients/opencode/takeback.js there
 * with its SETUP line filled in for this install, `init --remove` deletes the copy and the
 * folders `init` made for it that are left empty.
 */

/** What the plugin's SETUP line holds (see clients/opencode/takeback.js). */
export interface PluginSetup {
  /** The agent's name as takeback records it: `opencode` or `kilo`. */
  agent: string;
  /** The Node that runs takeback (absolute), or null: the `takeback` on PATH. */
  node: string | null;
  /** This install's `bin/takeback.js` (absolute), or null. */
  bin: string | null;
  /** The file name of this install's capture daemon socket under `$TAKEBACK_HOME/run`, or null. */
  socket: string | null;
  /** How many folders `init` made for the file: 0, its own, or its own and its parent. */
  made: number;
}

/** The first line of takeback's plugin: how a file is known to be takeback's. */
const MARKER = '// takeback-plugin:';
const SETUP_LINE = /^const SETUP = (\{.*\});$/m;

/** The plugin's source as shipped (clients/opencode/takeback.js). */
export function pluginTemplate(): string {
  return readFileSync(join(packageRoot(), 'clients', 'opencode', 'takeback.js'), 'utf8');
}

/** True when `text` is a takeback plugin file (by its first line). */
export function isTakebackPlugin(text: string): boolean {
  return text.startsWith(MARKER);
}

/** The SETUP of a takeback plugin file's text, or null when it has none that parses. */
export function readPluginSetup(text: string): PluginSetup | null {
  const m = SETUP_LINE.exec(text);
  if (!m) return null;
  try {
    return JSON.parse(m[1]!) as PluginSetup;
  } catch {
    return null;
  }
}

/** The plugin's source with its SETUP line set to `setup`. Throws when the template has no SETUP line. */
export function renderPlugin(template: string, setup: PluginSetup): string {
  if (!SETUP_LINE.test(template)) throw new Error('the plugin template has no SETUP line');
  return template.replace(SETUP_LINE, () => `const SETUP = ${JSON.stringify(setup)};`);
}

/** This install's SETUP for agent `agent` (`made` folders made for the file). */
export function thisInstall(agent: string, made: number): PluginSetup {
  return { agent, node: process.execPath, bin: join(packageRoot(), 'bin', 'takeback.js'), socket: basename(socketPath('/')), made };
}

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
