import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { packageRoot } from '../core/package-info.js';
import type { AgentName, HookCheck } from './spec.js';
import { socketPath } from '../daemon/address.js';

/*
 * takeback's plugin for an opencode-like agent (clients/opencode/takeback.js), as `init` writes it
 * into the agent's plugins folder: the shipped file with its SETUP line filled in for this
 * install. Reading and rendering only (the hook's bundle takes this in): writing it is
 * opencode-install.ts's.
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
 * `doctor`'s check of takeback's plugin for `agent` at `file` (of `scope`): there (`all`) or not
 * (`none`), and current when it is exactly what `init` writes now for this install. The agents
 * ask for no trust in their plugins (`trusted`: null). Never throws.
 */
export function checkPlugin(agent: AgentName, scope: HookCheck['scope'], file: string): HookCheck {
  let text: string | null = null;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // no plugin there
  }
  if (text === null || !isTakebackPlugin(text)) return { agent, scope, file, installed: 'none', current: null, trusted: null };
  let current = false;
  try {
    const setup = readPluginSetup(text);
    current = setup !== null && text === renderPlugin(pluginTemplate(), thisInstall(agent, setup.made));
  } catch {
    current = false;
  }
  return { agent, scope, file, installed: 'all', current, trusted: null };
}
