import { join } from 'node:path';
import { takebackOnPathIs } from '../path-lookup.js';
import { packageRoot, packageVersion } from './package-info.js';

/** The package's root folder (where package.json is). */
export const PACKAGE_ROOT = packageRoot();

/** takeback's version, from package.json. */
export const VERSION: string = packageVersion();

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
