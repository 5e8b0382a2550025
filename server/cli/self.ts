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
 * What a hook command starts with: Node reads the CA bundle `NODE_EXTRA_CA_CERTS` names at every
 * start, before any code runs (≈ 50 ms of a ≈ 80 ms start on a machine that sets it:
 * bench/RESULTS.md), and a hook makes no network connection. Emptied for the hook's process alone.
 */
export const HOOK_ENV_PREFIX = 'NODE_EXTRA_CA_CERTS= ';

/** The hook command for an agent's settings: `NODE_EXTRA_CA_CERTS= takeback hook claude-code` (see {@link selfCommand}, {@link HOOK_ENV_PREFIX}). */
export function hookCommand(agent = 'claude-code'): string {
  return `${HOOK_ENV_PREFIX}${selfCommand('hook', agent)}`;
}
