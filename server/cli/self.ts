import { join } from 'node:path';
import { takebackOnPathIs } from '../path-lookup.js';
import { packageRoot, packageVersion } from '../core/package-info.js';
import { shellQuote } from './shell-quote.js';

/** The package's root folder (where package.json is). */
export const PACKAGE_ROOT = packageRoot();

/** takeback's version, from package.json. */
export const VERSION: string = packageVersion();

/** The `takeback` script of this install. */
export const BIN = join(PACKAGE_ROOT, 'bin', 'takeback.js');

/**
 * A shell command line that runs this install of takeback with `args`: `takeback ARGS` when the
 * `takeback` on PATH is this install, else this node and this script by absolute path (a clone
 * used without `npm i -g`). Written into agents' and editors' settings.
 */
export function selfCommand(...args: string[]): string {
  const tail = args.map(shellQuote).join(' ');
  return takebackOnPathIs(BIN) ? `takeback ${tail}` : `${shellQuote(process.execPath)} ${shellQuote(BIN)} ${tail}`;
}

/**
 * What a hook command starts with: NODE_EXTRA_CA_CERTS emptied for the hook's process, for the
 * start-up time bin/takeback.js's first lines save (why: there). Written into the command itself
 * because a hook that runs Node by path skips those lines.
 */
export const HOOK_ENV_PREFIX = 'NODE_EXTRA_CA_CERTS= ';

/** The hook command for an agent's settings: `NODE_EXTRA_CA_CERTS= takeback hook claude-code` (see {@link selfCommand}, {@link HOOK_ENV_PREFIX}). */
export function hookCommand(agent = 'claude-code'): string {
  return `${HOOK_ENV_PREFIX}${selfCommand('hook', agent)}`;
}
