import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * Which takeback this is: its folder and version. Shared by the command line (self.ts) and the
 * hook's forwarding client (forward.ts, through daemon/address.ts), which must start in a few
 * milliseconds. This file sits at dist/server/core/, and the bundles that take it in at
 * dist/server/cli/: `import.meta.url` is three levels below the package either way.
 */

// `require`, not `import`, for node:fs: importing it as an ES module builds its namespace, which
// loads fs/promises and the file streams (milliseconds a hook would pay for nothing).
const { readFileSync } = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

/** The package's root folder (where package.json is). */
export function packageRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
}

let version: string | undefined;

/** takeback's version (package.json's `version`), or `0` when it cannot be read. */
export function packageVersion(): string {
  if (version === undefined) {
    try {
      version = String((JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: unknown }).version ?? '0');
    } catch {
      version = '0';
    }
  }
  return version;
}
