import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The first executable regular file called `name` in `env.PATH`, or undefined. */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      if (!statSync(p).isFile()) continue;
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * True when the `takeback` on PATH is the install whose script is `bin` (links resolved): then
 * agents' and editors' settings can say `takeback`, else they must name node and `bin`.
 */
export function takebackOnPathIs(bin: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const found = onPath('takeback', env);
  try {
    return found !== undefined && realpathSync(found) === realpathSync(bin);
  } catch {
    return false;
  }
}
