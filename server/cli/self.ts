import { accessSync, constants, readFileSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's root folder (where package.json is). */
export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** takeback's version, from package.json. */
export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The `takeback` script of this install. */
export const BIN = join(PACKAGE_ROOT, 'bin', 'takeback.js');

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

function quote(s: string): string {
  return /^[A-Za-z0-9_./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * A shell command line that runs this install of takeback with `args`: `takeback ARGS` when the
 * `takeback` on PATH is this install, else this node and this script by absolute path (a clone
 * used without `npm i -g`). Written into agents' and editors' settings.
 */
export function selfCommand(...args: string[]): string {
  const found = onPath('takeback');
  const tail = args.map(quote).join(' ');
  try {
    if (found && realpathSync(found) === realpathSync(BIN)) return `takeback ${tail}`;
  } catch {
    // fall through
  }
  return `${quote(process.execPath)} ${quote(BIN)} ${tail}`;
}

/** The hook command for an agent's settings: `takeback hook claude-code` (see {@link selfCommand}). */
export function hookCommand(agent = 'claude-code'): string {
  return selfCommand('hook', agent);
}
