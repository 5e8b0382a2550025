// A C program or preloaded library a test file needs, built once for that file.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/**
 * What `build(dir)` makes (its path, returned by `build`), built once for the test file that
 * calls this, in its own temporary folder named `<prefix>…` under /tmp, removed after the file's
 * tests: call at the top level; the getter gives the path once the file's tests run.
 */
export function builtForFile(prefix: string, build: (dir: string) => string): () => string {
  let dir = '';
  let out = '';
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), prefix));
    out = build(dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return () => out;
}
