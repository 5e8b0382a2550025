import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { hookCommandLine, hookIsCommandAlone, type HookCommand } from '../agents/hook-command.js';
import { takebackOnPathIs } from '../path-lookup.js';
import { packageRoot, packageVersion } from '../core/package-info.js';
import { shellQuote } from './shell-quote.js';

/** The package's root folder (where package.json is). */
export const PACKAGE_ROOT = packageRoot();

/** takeback's version, from package.json. */
export const VERSION: string = packageVersion();

/** The `takeback` script of this install. */
export const BIN = join(PACKAGE_ROOT, 'bin', 'takeback.js');

/** This install's hook client (native/hook-client.c), built by `npm ci` where a C compiler is. */
export const HOOK_CLIENT = join(PACKAGE_ROOT, 'native', 'build-hook', 'takeback-hook');

/** Whether {@link HOOK_CLIENT} is there and may be run. */
function hookClientBuilt(): boolean {
  try {
    accessSync(HOOK_CLIENT, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

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

/**
 * The hook command for an agent's settings, harmless where takeback is not installed (see
 * agents/hook-command.ts): `if command -v takeback …; then NODE_EXTRA_CA_CERTS= takeback hook
 * claude-code; fi` when the `takeback` on PATH is this install, else this node and this script by
 * absolute path with the `takeback` on PATH as the fallback; `exec takeback …` where the
 * agent's hook is that command line alone (`spec`, the agent's entry in agents/registry.ts: see
 * hookIsCommandAlone; undefined: not known to be). `env`: more assignments for the takeback
 * process (each ending with a space), put before {@link HOOK_ENV_PREFIX}.
 * `personal` (a settings file of one person's, see HookCommand) with this install on PATH and its
 * hook client built: the client and this script by absolute path, the `takeback` on PATH the
 * fallback. The caller passes the spec so that this module, which every command loads, does not
 * load the agents' registry (and the capture code it holds).
 */
export function hookCommand(agent: string, spec: HookSpec | undefined, env = '', where: { personal: boolean } = { personal: false }): string {
  const onPath = takebackOnPathIs(BIN);
  const program =
    onPath && where.personal && hookClientBuilt()
      ? ({ kind: 'client', client: shellQuote(HOOK_CLIENT), bin: shellQuote(BIN) } as const)
      : onPath
        ? ({ kind: 'path' } as const)
        : ({ kind: 'install', node: shellQuote(process.execPath), bin: shellQuote(BIN) } as const);
  return hookCommandLine(agent, program, `${env}${HOOK_ENV_PREFIX}`, { exec: spec !== undefined && hookIsCommandAlone(spec) });
}

/** What {@link hookCommand} reads of an agent's spec. */
export type HookSpec = Parameters<typeof hookIsCommandAlone>[0];

/** {@link hookCommand} for `agent` (its `spec`) as `init` takes it: the extra assignments given when the hook is written. */
export function hookCommandOf(agent: string, spec: HookSpec | undefined): HookCommand {
  return (env, where) => hookCommand(agent, spec, env, where);
}
