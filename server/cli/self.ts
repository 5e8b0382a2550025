import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { takebackOnPathIs } from '../path-lookup.js';

/** The package's root folder (where package.json is). */
export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** takeback's version, from package.json. */
export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The `takeback` script of this install. */
export const BIN = join(PACKAGE_ROOT, 'bin', 'takeback.js');

function quote(s: string): string {
  return /^[A-Za-z0-9_./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * A shell command line that runs this install of takeback with `args`: `takeback ARGS` when the
 * `takeback` on PATH is this install, else this node and this script by absolute path (a clone
 * used without `npm i -g`). Written into agents' and editors' settings.
 */
export function selfCommand(...args: string[]): string {
  const tail = args.map(quote).join(' ');
  return takebackOnPathIs(BIN) ? `takeback ${tail}` : `${quote(process.execPath)} ${quote(BIN)} ${tail}`;
}

/** The hook command for an agent's settings: `takeback hook claude-code` (see {@link selfCommand}). */
export function hookCommand(agent = 'claude-code'): string {
  return selfCommand('hook', agent);
}
