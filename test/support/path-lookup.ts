// Finding programs on PATH, for the tests that drive real editors and agent CLIs.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** Is `file` a regular file we may execute? */
export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** First executable called `name` on PATH, as an absolute path. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}
